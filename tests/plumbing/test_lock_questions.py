"""The questions the lock asks of git, answered by name as git answers them: the
first-parent range of a push and the commits of it that change the lock roots, a
checkout's index entries with their recorded stat data, and the blob ids git would
store for files on disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.repos import git

from git_evidence.core.errors import GitError
from git_evidence.plumbing import checkout
from git_evidence.plumbing.git import Git


def _commit(repo: Path, message: str, files: dict[str, str]) -> str:
    for name, text in files.items():
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD").stdout.strip()


@pytest.fixture
def merged(small_repo: Path) -> tuple[Path, list[str]]:
    """base → fixture change → merge of a side branch (its commit touches the
    fixtures too) → product change: the first-parent line is four commits."""
    base = git(small_repo, "rev-parse", "HEAD").stdout.strip()
    fixture = _commit(small_repo, "fixture", {"tests/fixtures/a.json": "1\n"})
    git(small_repo, "checkout", "-q", "-b", "side", base)
    side = _commit(small_repo, "side", {"tests/fixtures/b.json": "2\n"})
    git(small_repo, "checkout", "-q", "-")
    git(small_repo, "merge", "-q", "--no-edit", "side")
    merge = git(small_repo, "rev-parse", "HEAD").stdout.strip()
    product = _commit(small_repo, "product", {"src/app.py": "x = 1\n"})
    return small_repo, [base, fixture, side, merge, product]


def test_the_first_parent_range_is_oldest_first_with_every_parent(
    merged: tuple[Path, list[str]],
) -> None:
    repo, (base, fixture, side, merge, product) = merged
    rows = Git(cwd=str(repo)).first_parent_range(product, [base])
    assert rows == [[fixture, base], [merge, fixture, side], [product, merge]]
    assert Git(cwd=str(repo)).first_parent_range(product, [product]) == []


def test_the_commits_changing_the_roots_follow_the_first_parent_only(
    merged: tuple[Path, list[str]],
) -> None:
    repo, (base, fixture, _side, merge, product) = merged
    changing = Git(cwd=str(repo)).first_parents_changing(product, [base], ["tests/fixtures"])
    assert changing == {fixture, merge}  # the side commit is not on the line
    assert Git(cwd=str(repo)).first_parents_changing(product, [base], ["nowhere"]) == set()


def test_an_unknown_tip_is_an_error_not_an_empty_range(small_repo: Path) -> None:
    with pytest.raises(GitError):
        Git(cwd=str(small_repo)).first_parent_range("0" * 40, [])


def test_index_entries_carry_the_recorded_stat_data(small_repo: Path) -> None:
    (entry,) = checkout.index_entries(Git(cwd=str(small_repo)), ["plain"]) or []
    info = os.lstat(small_repo / "plain")
    blob = git(small_repo, "rev-parse", "HEAD:plain").stdout.strip()
    assert (entry.tag, entry.mode, entry.oid, entry.stage, entry.path) == (
        "H",
        "100644",
        blob,
        "0",
        "plain",
    )
    assert entry.mtime == divmod(info.st_mtime_ns, 10**9)
    assert (entry.size, entry.ino) == (info.st_size, info.st_ino & 0xFFFFFFFF)


def test_a_modified_file_is_listed_twice_once_tagged_modified(small_repo: Path) -> None:
    (small_repo / "plain").write_text("changed, longer\n")
    entries = checkout.index_entries(Git(cwd=str(small_repo)), ["plain", "a b"]) or []
    assert sorted((e.path, e.tag) for e in entries) == [
        ("a b/c", "H"),
        ("plain", "C"),
        ("plain", "H"),
    ]


def test_a_root_named_like_a_pattern_is_a_name(small_repo: Path) -> None:
    assert checkout.index_entries(Git(cwd=str(small_repo)), ["*"]) == []


def test_checked_in_blobs_are_the_ids_git_would_store(small_repo: Path) -> None:
    odd = 'new\nline \\ "q"'
    (small_repo / odd).write_text("z\n")
    found = checkout.checked_in_blobs(Git(cwd=str(small_repo)), ["plain", odd])
    expected = git(small_repo, "hash-object", "plain").stdout.strip()
    assert found["plain"] == expected
    assert found[odd] == git(small_repo, "hash-object", "--stdin", input=b"z\n").stdout.strip()
