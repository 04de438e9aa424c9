"""The rough edges of a first day with git evidence, each end to end: drift said once,
lines that fit 80 columns under `remote:`, a directory classified as one, client
hooks silent when they allow, `install` in a pre-commit-framework clone, and
`split --dry-run` / `install --dry-run` changing nothing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.locks import pin_main
from helpers.pushes import refused, remote
from helpers.repos import Work, clone_of, evidence, git, make_remote

AGENT, ALICE = "agent-bot", "alice"
LIMIT = 80


def too_wide(text: str, under_remote: bool = False) -> list[str]:
    """Lines past 80 columns (under `remote:`: only those, as git pads them)."""
    lines = text.splitlines()
    if under_remote:
        lines = [line.rstrip() for line in lines if line.startswith("remote: ")]
    return [line for line in lines if len(line) > LIMIT]


# -- drift said once ------------------------------------------------------------------


def test_a_fixture_breach_says_modified_once_per_file(work: Work) -> None:
    pin_main(work)
    (work.path / "tests/fixtures/b.json").chmod(0o755)
    work.commit("drift", {"tests/fixtures/a.json": '{"a": 2}\n'})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "fixture-breach")
    said = remote(result)
    assert "modified: tests/fixtures/a.json (" in said
    assert ": modified" not in said
    assert "mode: tests/fixtures/b.json (100644 -> 100755)" in said
    assert too_wide(result.stderr, under_remote=True) == []


def test_verify_says_modified_once_and_fits_80_columns(work: Work) -> None:
    pin_main(work)
    (work.path / "tests/fixtures/a.json").write_text('{"a": 3}\n')
    result = evidence(work.path, "verify", "--worktree")
    assert result.returncode == 1
    assert "  modified: tests/fixtures/a.json (" in result.stdout
    assert "a.json: modified" not in result.stdout
    assert too_wide(result.stdout) == []


def test_verify_of_a_match_fits_80_columns(work: Work) -> None:
    pin_main(work)
    result = evidence(work.path, "verify", "origin/main", "--base", "origin/main")
    assert result.returncode == 0, result.stdout
    assert too_wide(result.stdout) == []


def test_post_receive_lines_fit_80_columns_under_remote(work: Work) -> None:
    pin_main(work)
    for n in range(3):
        work.commit(f"fixture {n}", {"tests/fixtures/a.json": f'{{"a": {n + 10}}}\n'})
        work.commit(f"product {n}", {"src/app.py": f"v{n}\n"})
    result = work.push("origin", "HEAD:main", pusher=ALICE)
    assert result.returncode == 0, result.stderr
    assert "earlier commit(s) of refs/heads/main" in result.stderr
    assert too_wide(result.stderr, under_remote=True) == []


# -- classify a directory ---------------------------------------------------------------


def test_classify_a_directory_says_so_and_classifies_a_file_in_it(work: Work) -> None:
    result = evidence(work.path, "classify", "src", "tests", "tests/fixtures", "src/app.py")
    lines = result.stdout.splitlines()
    assert lines[0] == "src/\tproduct\ta directory: a file in it is product (glob src/**)"
    assert lines[1].startswith("tests/\ttest\ta directory: a file in it is test (glob tests/**)")
    assert "it holds evidence roots (tests/fixtures, " in lines[1]
    assert lines[2].startswith("tests/fixtures/\tfixture\ta directory")
    assert lines[3] == "src/app.py\tproduct\tglob src/**"
    doc = json.loads(evidence(work.path, "classify", "src", "--format", "json").stdout)
    (row,) = doc["paths"]
    assert row["directory"] is True and row["contents"]["class"] == "product"


def test_classify_a_path_ending_in_a_slash_is_a_directory_even_if_missing(work: Work) -> None:
    result = evidence(work.path, "classify", "src/new/")
    assert (
        result.stdout == "src/new/\tproduct\ta directory: a file in it is product (glob src/**)\n"
    )


def test_classify_a_directory_only_in_head(tmp_path: Path) -> None:
    work = Work(tmp_path / "w")
    git(tmp_path, "init", "-q", str(work.path))
    work.commit("x", {"src/deep/a.py": "x\n"})
    (work.path / "src/deep/a.py").unlink()
    (work.path / "src/deep").rmdir()
    assert evidence(work.path, "classify", "src/deep").stdout.startswith("src/deep/\tproduct\t")


# -- client hooks silent on allow -------------------------------------------------------


@pytest.fixture
def hooked(tmp_path: Path) -> Work:
    work = clone_of(tmp_path, make_remote(tmp_path), "hooked")
    assert evidence(work.path, "install").returncode == 0
    return work


def test_pre_commit_prints_nothing_when_it_allows(hooked: Work) -> None:
    hooked.write("src/app.py", "fixed\n")
    hooked.git("add", "-A")
    result = hooked.git("commit", "-qm", "fix", check=False)
    assert result.returncode == 0
    assert result.stderr == ""


def test_pre_commit_speaks_when_git_config_evidence_verbose_is_set(hooked: Work) -> None:
    hooked.git("config", "evidence.verbose", "true")
    hooked.write("src/app.py", "fixed\n")
    hooked.git("add", "-A")
    result = hooked.git("commit", "-qm", "fix", check=False)
    assert result.returncode == 0
    assert "allowed: the staged change" in result.stderr


def test_pre_commit_speaks_with_v(hooked: Work) -> None:
    hooked.write("src/app.py", "fixed\n")
    hooked.git("add", "-A")
    result = evidence(hooked.path, "-v", "pre-commit")
    assert result.returncode == 0
    assert "allowed: the staged change" in result.stderr


def test_pre_commit_still_speaks_when_it_refuses(hooked: Work) -> None:
    hooked.write("src/app.py", "bug\n")
    hooked.write("tests/fixtures/a.json", "{}\n")
    hooked.git("add", "-A")
    result = hooked.git("commit", "-qm", "mixed", check=False)
    assert result.returncode != 0
    assert "mixed-commit: " in result.stderr


def test_pre_push_prints_nothing_when_it_allows(hooked: Work) -> None:
    hooked.commit("fix", {"src/app.py": "fixed\n"})
    result = hooked.push("origin", "HEAD:main")
    assert result.returncode == 0, result.stderr
    assert "git-evidence" not in result.stderr


def test_a_hold_on_its_way_to_review_is_still_said(hooked: Work) -> None:
    hooked.git("checkout", "-qb", "feat")
    hooked.write("tests/test_new.py", "def test_new():\n    pass\n")
    hooked.git("add", "-A")
    result = hooked.git("commit", "-qm", "new test", check=False)
    assert result.returncode == 0
    assert "held for review before it reaches a protected branch" in " ".join(result.stderr.split())


# -- install in a pre-commit-framework clone ----------------------------------------------


def framework_clone(tmp_path: Path) -> Work:
    work = clone_of(tmp_path, make_remote(tmp_path), "framework")
    (work.path / ".pre-commit-config.yaml").write_text("repos: []\n")
    installed = subprocess.run(
        [
            sys.executable,
            "-m",
            "pre_commit",
            "install",
            "--hook-type",
            "pre-commit",
            "--hook-type",
            "pre-push",
        ],
        cwd=work.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    return work


def test_install_in_a_pre_commit_framework_clone_says_what_to_add_to_its_config(
    tmp_path: Path,
) -> None:
    work = framework_clone(tmp_path)
    hook = work.path / ".git" / "hooks" / "pre-commit"
    before = hook.read_text()
    result = evidence(work.path, "install")
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stdout.split())
    assert "the pre-commit framework manages pre-commit and pre-push here" in said
    assert "Add this to .pre-commit-config.yaml" in said
    assert "- id: git-evidence-commit" in result.stdout
    assert "- id: git-evidence-push" in result.stdout
    assert "pre-commit install --hook-type pre-commit --hook-type pre-push" in said
    assert "add these lines to it" not in said
    assert hook.read_text() == before
    fetch = work.git("config", "--get-all", "remote.origin.fetch").stdout.split()
    assert "+refs/notes/evidence*:refs/notes/evidence*" in fetch


# -- dry runs ---------------------------------------------------------------------------


def objects_of(work: Work) -> str:
    return work.git("count-objects", "-v").stdout


def test_split_dry_run_prints_the_split_and_changes_nothing(work: Work) -> None:
    work.commit("fix and golden", {"src/app.py": "fixed\n", "tests/goldens/out.txt": "new\n"})
    head, objects = work.head(), objects_of(work)
    result = evidence(work.path, "split", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "dry run: nothing was written and no branch moved" in result.stdout
    assert "(would move)" in result.stdout
    assert "fixture: tests/goldens/out.txt" in result.stdout
    assert "undo:" not in result.stdout
    assert work.head() == head
    assert objects_of(work) == objects
    real = evidence(work.path, "split")
    planned = [line for line in result.stdout.splitlines() if line.startswith(("split ", "  "))]
    assert planned == [
        line for line in real.stdout.splitlines() if line.startswith(("split ", "  "))
    ]


def test_split_dry_run_to_an_evidence_branch_creates_no_branch(work: Work) -> None:
    work.commit("fix and golden", {"src/app.py": "fixed\n", "tests/goldens/out.txt": "new\n"})
    result = evidence(work.path, "split", "--dry-run", "--evidence-branch", "golden")
    assert result.returncode == 0, result.stderr
    assert "golden: " in result.stdout and "would be created" in result.stdout
    assert work.git("branch", "--list", "golden").stdout == ""
    doc = json.loads(evidence(work.path, "split", "--dry-run", "--format", "json").stdout)
    assert doc["dry_run"] is True and doc["decision"] == "split"


def test_install_dry_run_prints_what_it_would_do_and_changes_nothing(tmp_path: Path) -> None:
    work = clone_of(tmp_path, make_remote(tmp_path), "dry")
    config = (work.path / ".git" / "config").read_text()
    result = evidence(work.path, "install", "--dry-run")
    assert result.returncode == 0, result.stderr
    assert "would install pre-commit hook" in result.stdout
    assert "would fetch +refs/notes/evidence*:refs/notes/evidence*" in result.stdout
    assert "dry run: nothing was changed" in result.stdout
    assert not (work.path / ".git" / "hooks" / "pre-commit").exists()
    assert (work.path / ".git" / "config").read_text() == config


def test_install_server_dry_run_seals_nothing(tmp_path: Path) -> None:
    bare = tmp_path / "b.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    policy = tmp_path / "policy.toml"
    policy.write_text('[identities]\nevidence_writers = ["alice"]\n')
    result = evidence(bare, "install", "--server", "--policy", str(policy), "--dry-run")
    assert result.returncode == 0, result.stderr
    assert f"would seal policy: {policy}" in result.stdout
    assert not (bare / "hooks" / "pre-receive").exists()
    assert git(bare, "config", "evidence.policyFile", check=False).returncode == 1
