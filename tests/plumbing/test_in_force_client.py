"""A client that passes no refs to ``in_force.resolve`` asks only the refs it reads, of
the object reader: the same policy, ref and commit as when every ref is listed, in each
place a client finds its policy, and the pre-commit hook lists no ref."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.repos import Work, evidence, git

from git_evidence.plumbing import lookups
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import InForce, resolve

STRICT = '[paths]\nproduct = ["src/**"]\nfixture = ["tests/data/**"]\n'
LOOSE = '[paths]\nproduct = ["src/**", "tests/**"]\n'
ON_TRUNK = (
    '[rules]\nbase = "refs/heads/trunk"\nprotected = ["refs/heads/trunk"]\n'
    '[paths]\nproduct = ["lib/**"]\n'
)


def _both(path: Path) -> tuple[InForce, InForce]:
    git = Git(cwd=str(path))
    listed = resolve(git, refs=git.refs(), cached=False)
    with lookups.live(git):
        asked = resolve(git, cached=False)
    return asked, listed


@pytest.fixture
def work(tmp_path: Path) -> Work:
    repo = Work(tmp_path / "w")
    git(tmp_path, "init", "-q", "-b", "main", str(repo.path))
    repo.commit("policy", {".git-evidence.toml": STRICT, "src/a.py": "1\n"})
    return repo


def test_the_local_main_when_no_remote_was_fetched(work: Work) -> None:
    asked, listed = _both(work.path)
    assert asked == listed and asked.ref == "refs/heads/main"


def test_the_remote_s_main_wins_over_the_local_one(work: Work) -> None:
    work.git("update-ref", "refs/remotes/origin/main", work.head())
    work.commit("loosened here only", {".git-evidence.toml": LOOSE})
    asked, listed = _both(work.path)
    assert asked == listed and asked.ref == "refs/remotes/origin/main"
    assert "tests/**" not in asked.policy.paths.get("product", ())


def test_head_when_there_is_no_main(work: Work) -> None:
    work.git("branch", "-q", "-m", "main", "topic")
    asked, listed = _both(work.path)
    assert asked == listed and asked.ref == "HEAD" and asked.rev == work.head()


def test_an_unborn_head_reads_the_defaults(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main", str(tmp_path / "u"))
    asked, listed = _both(tmp_path / "u")
    assert asked == listed and asked.rev is None and asked.origin == "default"


def test_a_policy_naming_another_base_is_read_from_the_remote_s_copy(work: Work) -> None:
    work.commit("trunk is the base", {".git-evidence.toml": ON_TRUNK})
    work.git("update-ref", "refs/remotes/origin/main", work.head())
    trunk = work.commit("on trunk", {"lib/b.py": "1\n"})
    work.git("update-ref", "refs/remotes/origin/trunk", trunk)
    work.commit("loosened on main", {".git-evidence.toml": LOOSE})
    asked, listed = _both(work.path)
    assert asked == listed and asked.ref == "refs/remotes/origin/trunk"
    assert asked.rev == trunk


def test_the_pre_commit_hook_lists_no_ref(work: Work, tmp_path: Path) -> None:
    work.write("src/a.py", "2\n")
    work.git("add", "src/a.py")
    trace = tmp_path / "trace"
    result = evidence(work.path, "pre-commit", env={"GIT_TRACE": str(trace)})
    assert result.returncode == 0, result.stdout + result.stderr
    commands = [
        line.split("trace: built-in: ", 1)[1]
        for line in trace.read_text().splitlines()
        if "trace: built-in: " in line
    ]
    assert not any(c.startswith("git for-each-ref") for c in commands), commands
    assert not any(c.startswith("git rev-parse") for c in commands), commands
