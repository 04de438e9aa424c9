"""`verify --worktree` takes a tracked file's blob from the index where git finds the
file unchanged (`git ls-files -m`, git's own stat and racy-clean tests) and its stat
data equal the entry's to the nanosecond, and hashes the rest: the answer equals the
one hashing every file, and a change stat data could hide from a shortcut is still
reported: the same size and modification time (within the second of the last
refresh, which git's whole-second compare misses), a racily clean entry, a file
marked assume-unchanged or skip-worktree, a checkout told to ignore the change time.
What git was asked is read from GIT_TRACE."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.repos import Work, evidence

FIXTURE = "tests/fixtures/a.json"


@pytest.fixture
def locked(work: Work) -> Work:
    work.commit(
        "fixtures",
        {"tests/fixtures/b/c.txt": "c\n", "tests/fixtures/d.sh": "echo\n", FIXTURE: '{"a": 1}\n'},
    )
    assert evidence(work.path, "lock", "HEAD").returncode == 0  # the lock in this clone
    return work


def verify(work: Work, tmp_path: Path, **env: str) -> tuple[dict[str, Any], str]:
    trace = tmp_path / f"trace-{len(list(tmp_path.glob('trace-*')))}"
    result = evidence(
        work.path,
        "verify",
        "--worktree",
        "--base",
        "HEAD",
        "--format",
        "json",
        env={"GIT_TRACE": str(trace), **env},
    )
    doc: dict[str, Any] = json.loads(result.stdout)
    commands = "\n".join(
        line.split("trace: built-in: git ", 1)[1]
        for line in trace.read_text().splitlines()
        if "trace: built-in: git " in line
    )
    return doc, commands


def drift(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(d["path"], d["kind"]) for d in doc["drift"]]


def settle(work: Work, path: Path) -> None:
    """Date ``path`` a while back and have git refresh its entry: the entry is then
    older than the index, not racily clean, and git trusts its stat data alone."""
    past = time.time_ns() - 600 * 10**9
    os.utime(path, ns=(past, past))
    work.git("update-index", "--refresh")


def rewrite_same_size_and_time(path: Path, text: str) -> None:
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_an_unchanged_checkout_hashes_no_file(locked: Work, tmp_path: Path) -> None:
    doc, commands = verify(locked, tmp_path)
    assert doc["matches"] and not doc["drift"], doc
    assert "ls-files" in commands and "hash-object" not in commands, commands


def test_the_index_shortcut_agrees_with_hashing_every_file(locked: Work, tmp_path: Path) -> None:
    (locked.path / "tests/fixtures/b/c.txt").write_text("changed\n")
    (locked.path / "tests/fixtures/new.txt").write_text("untracked\n")
    os.chmod(locked.path / "tests/fixtures/d.sh", 0o755)
    (locked.path / FIXTURE).unlink()
    shortcut, commands = verify(locked, tmp_path)
    assert "ls-files" in commands
    every, _ = verify(locked, tmp_path, GIT_INDEX_FILE=str(tmp_path / "no-index"))
    assert shortcut["drift"] == every["drift"] and shortcut["lock"] == every["lock"]
    assert drift(shortcut) == [
        ("tests/fixtures/a.json", "removed"),
        ("tests/fixtures/b/c.txt", "modified"),
        ("tests/fixtures/d.sh", "mode"),
        ("tests/fixtures/new.txt", "added"),
    ]


def test_a_fixture_changed_with_the_same_size_and_mtime_is_caught(
    locked: Work, tmp_path: Path
) -> None:
    """Rewritten within the second of the refresh, as a rule: git's status misses it
    (whole seconds), the change time to the nanosecond does not."""
    settle(locked, locked.path / FIXTURE)
    rewrite_same_size_and_time(locked.path / FIXTURE, '{"a": 2}\n')
    doc, _ = verify(locked, tmp_path)
    assert drift(doc) == [(FIXTURE, "modified")]


def test_a_racily_clean_fixture_changed_in_place_is_caught(locked: Work, tmp_path: Path) -> None:
    """The entry's time is not before the index's: git compares the bytes."""
    path = locked.path / FIXTURE
    future = time.time_ns() + 3600 * 10**9
    os.utime(path, ns=(future, future))
    locked.git("update-index", "--refresh")  # the entry now carries the future time
    rewrite_same_size_and_time(path, '{"a": 3}\n')
    doc, _ = verify(locked, tmp_path)
    assert drift(doc) == [(FIXTURE, "modified")]


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_a_fixture_marked_for_git_to_ignore_is_still_compared(
    locked: Work, tmp_path: Path, flag: str
) -> None:
    locked.git("update-index", flag, FIXTURE)
    (locked.path / FIXTURE).write_text('{"a": "changed"}\n')
    assert locked.git("status", "--porcelain", "--", FIXTURE).stdout == ""  # git looks away
    doc, _ = verify(locked, tmp_path)
    assert drift(doc) == [(FIXTURE, "modified")]


def test_a_checkout_told_to_ignore_the_change_time_is_not_believed(
    locked: Work, tmp_path: Path
) -> None:
    settle(locked, locked.path / FIXTURE)
    locked.git("config", "core.trustctime", "false")
    locked.git("config", "core.checkStat", "minimal")
    rewrite_same_size_and_time(locked.path / FIXTURE, '{"a": 4}\n')
    assert locked.git("status", "--porcelain", "--", FIXTURE).stdout == ""  # git is fooled
    doc, _ = verify(locked, tmp_path)
    assert drift(doc) == [(FIXTURE, "modified")]
