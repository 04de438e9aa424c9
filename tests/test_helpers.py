"""The suite's own shortcuts answer as git does."""

from __future__ import annotations

from pathlib import Path

from helpers.repos import Work, _loose_head, git


def test_head_read_from_the_files_is_what_rev_parse_says(work: Work) -> None:
    work.commit("one", {"src/one.py": "1\n"})
    assert _loose_head(work.path / ".git") == git(work.path, "rev-parse", "HEAD").stdout.strip()


def test_head_of_a_packed_ref_or_a_detached_head_is_asked_of_git(work: Work) -> None:
    work.commit("one", {"src/one.py": "1\n"})
    git(work.path, "pack-refs", "--all")
    assert _loose_head(work.path / ".git") is None
    assert work.head() == git(work.path, "rev-parse", "HEAD").stdout.strip()
    git(work.path, "checkout", "-q", "--detach", "HEAD~1")
    assert _loose_head(work.path / ".git") is None
    assert work.head() == git(work.path, "rev-parse", "HEAD").stdout.strip()


def test_head_of_a_branch_with_no_commit_is_asked_of_git(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "empty")
    assert _loose_head(tmp_path / "empty" / ".git") is None
