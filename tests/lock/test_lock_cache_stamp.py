"""The validated-note cache is plain values ``marshal`` writes (no json to load),
stamped with the code that validated the note: an entry stamped otherwise, broken, or
of another shape is never taken, and the note is validated again."""

from __future__ import annotations

import marshal
from pathlib import Path

import pytest
from helpers.repos import git

from git_evidence.core.oids import Oid
from git_evidence.lock import pinning, store
from git_evidence.lock.record import CachedLock
from git_evidence.lock.store import LockCache
from git_evidence.plumbing import repo_dirs
from git_evidence.plumbing.git import Git

NOTES = "refs/notes/evidence"


@pytest.fixture
def pinned(tmp_path: Path) -> tuple[Git, Oid, Path]:
    """A pinned commit: the repository, the note's blob and its cache entry."""
    repo_dirs.COMMON_DIRS.clear()
    git(tmp_path, "init", "-q")
    (tmp_path / "tests" / "fixtures").mkdir(parents=True)
    (tmp_path / "tests" / "fixtures" / "a.json").write_text("{}\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "fixtures")
    repo = Git(cwd=str(tmp_path))
    tip = Oid(git(tmp_path, "rev-parse", "HEAD").stdout.strip())
    pinning.pin(repo, tip, ["tests/fixtures"], [], NOTES, "test")
    blob = Oid(git(tmp_path, "notes", f"--ref={NOTES}", "list", tip).stdout.strip())
    entry = tmp_path / ".git" / "git-evidence" / store.CACHE_DIR / blob
    assert entry.exists()
    return repo, blob, entry


def test_an_entry_is_plain_marshal_values_stamped_with_the_validating_code(
    pinned: tuple[Git, Oid, Path],
) -> None:
    repo, blob, entry = pinned
    stamp, values = marshal.loads(entry.read_bytes())
    assert stamp == store._stamp() and stamp[0] == store.CACHE_DIR
    assert LockCache(repo).get(blob) == CachedLock(*values)


def test_a_planted_entry_stamped_by_other_code_is_not_taken(
    pinned: tuple[Git, Oid, Path],
) -> None:
    repo, blob, entry = pinned
    stamp, values = marshal.loads(entry.read_bytes())
    forged = (*stamp[:-1], stamp[-1] + 1)  # as written by another version of record.py
    entry.write_bytes(marshal.dumps((forged, values)))
    assert LockCache(repo).get(blob) is None


@pytest.mark.parametrize(
    "data",
    [b"", b"\x00garbage", b'{"commit": "x"}', marshal.dumps(("only one",))],
    ids=["empty", "garbage", "the old json entry", "another shape"],
)
def test_a_broken_entry_is_validated_again(pinned: tuple[Git, Oid, Path], data: bytes) -> None:
    repo, blob, entry = pinned
    entry.write_bytes(data)
    assert LockCache(repo).get(blob) is None


def test_an_entry_whose_values_are_of_the_wrong_kind_is_not_taken(
    pinned: tuple[Git, Oid, Path],
) -> None:
    repo, blob, entry = pinned
    stamp, values = marshal.loads(entry.read_bytes())
    entry.write_bytes(marshal.dumps((stamp, (values[0], "not a dict", *values[2:]))))
    assert LockCache(repo).get(blob) is None
