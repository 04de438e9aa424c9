"""`git evidence init`'s command line: the file it writes, --dry-run, --force, a bare
repository, and the draft in force by `check --policy`."""

from __future__ import annotations

import json
from pathlib import Path

from helpers.repos import evidence, git


def _project(root: Path) -> Path:
    repo = root / "p"
    git(root, "init", "-q", "-b", "main", str(repo))
    for path in ("src/app.py", "tests/test_app.py", "tests/data/in.json", "README.md"):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(f"{path}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    (repo / "src/app.py").write_text("changed\n")
    (repo / "tests/data/in.json").write_text("changed\n")
    git(repo, "commit", "-q", "-am", "mixed")
    (repo / "src/app.py").write_text("again\n")
    git(repo, "commit", "-q", "-am", "product")
    return repo


def test_init_writes_a_draft_that_parses_and_names_why(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    out = evidence(repo, "init", "--commits", "2")
    assert out.returncode == 0, out.stderr
    text = (repo / ".git-evidence.toml").read_text()
    assert '"tests/data/**"' in text and "data folder under tests" in text
    assert evidence(repo, "policy", "--policy", ".git-evidence.toml").returncode == 0
    assert "allowed 0, held 0, refused 2" in out.stdout  # the tip: the lock's drift
    assert "mixed-commit 1" in out.stdout


def test_dry_run_prints_the_draft_and_writes_nothing(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    out = evidence(repo, "init", "--dry-run")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("# A draft policy") and "[paths]" in out.stdout
    assert not (repo / ".git-evidence.toml").exists()


def test_init_never_overwrites_a_policy_without_force(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    (repo / ".git-evidence.toml").write_text("# mine\n")
    out = evidence(repo, "init")
    assert out.returncode == 2 and "exists already" in out.stderr and "--force" in out.stderr
    assert (repo / ".git-evidence.toml").read_text() == "# mine\n"
    assert evidence(repo, "init", "--force").returncode == 0
    assert (repo / ".git-evidence.toml").read_text().startswith("# A draft policy")


def test_init_in_a_bare_repository_prints_with_dry_run_only(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    out = evidence(bare, "init")
    assert out.returncode == 2 and "--dry-run" in out.stderr
    doc = json.loads(evidence(bare, "init", "--dry-run", "--format", "json").stdout)
    assert doc["written"] is None and doc["classes"]["fixture"]["count"] == 1


def test_a_history_shorter_than_asked_is_judged_whole(tmp_path: Path) -> None:
    repo = _project(tmp_path)
    doc = json.loads(evidence(repo, "init", "--dry-run", "--format", "json").stdout)
    assert doc["history"]["start"] is None and doc["history"]["check"] is None
    assert doc["history"]["commits"] == 3
