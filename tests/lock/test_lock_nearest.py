"""`lock.find_lock` looks up the nearest first-parent commits by note path before it
lists every note: the answer must equal the plain walk (every note listed, the
first-parent line followed), with fanned-out notes trees, pins far back, notes on
second parents, and none at all."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path

import pytest
from helpers.repos import git

from git_evidence.core.facts import LockRef
from git_evidence.core.oids import Oid
from git_evidence.lock.store import NEAR, find_lock
from git_evidence.plumbing.git import Git

NOTES = "refs/notes/evidence"


def build(root: Path, length: int, noted: set[int], side_noted: bool) -> list[Oid]:
    """A first-parent line of ``length`` commits (a side branch merged in at the
    middle), notes on the commits numbered in ``noted`` (and on the side branch's
    commit when ``side_noted``). Returns the line's commit ids, oldest first."""
    git(root, "init", "-q")
    out = ["blob", "mark :1", "data 5", "note", ""]
    middle = length // 2
    for i in range(length):
        out += ["commit refs/heads/main", f"mark :{i + 10}", f"committer a <a> {i} +0000"]
        out += ["data 2", f"{i % 10}"]
        if i:
            out.append(f"from :{i + 9}")
        if i == middle:
            out.append("merge :5")  # the side commit
        out.append("")
        if i == middle - 1:  # the side commit, forked from here
            out += ["commit refs/heads/side", "mark :5", "committer a <a> 1 +0000", "data 1"]
            out += ["s", f"from :{i + 10}", ""]
    out += [f"commit {NOTES}", "committer a <a> 0 +0000", "data 1", "n"]
    out += [f"N :1 :{i + 10}" for i in sorted(noted)]
    if side_noted:
        out.append("N :1 :5")
    out += ["", f"get-mark :{length + 9}", ""]
    text = "\n".join(out)
    proc = subprocess.run(
        ["git", "fast-import", "--quiet"], cwd=root, input=text.encode(), capture_output=True
    )
    assert proc.returncode == 0, proc.stderr.decode()
    line = git(root, "rev-list", "--first-parent", "--reverse", "main").stdout.split()
    return [Oid(c) for c in line]


def plain_walk(root: Path, rev: str) -> LockRef | None:
    """Every note listed, then the first-parent line followed: what find_lock did."""
    notes = {}
    for entry in git(root, "notes", f"--ref={NOTES}", "list").stdout.splitlines():
        blob, annotated = entry.split()
        notes[annotated] = blob
    for commit in git(root, "rev-list", "--first-parent", rev).stdout.split():
        if commit in notes:
            return LockRef(Oid(commit), Oid(notes[commit]))
    return None


@pytest.mark.parametrize(
    ("length", "noted", "side_noted"),
    [
        (40, {37}, False),  # a pin a few commits back
        (NEAR * 3, {0, 5}, False),  # the nearest pin far past NEAR: every note listed
        (NEAR * 3, set(), True),  # only the merged side commit has a note
        (NEAR - 5, set(), False),  # no notes, a line shorter than NEAR
        (300, set(range(0, 300, 2)) - set(range(250, 300)), False),  # fanned-out tree
    ],
    ids=["near", "far", "second-parent-only", "none", "fanout"],
)
def test_find_lock_equals_the_plain_walk(
    tmp_path: Path, length: int, noted: set[int], side_noted: bool
) -> None:
    line = build(tmp_path, length, noted, side_noted)
    repo = Git(cwd=str(tmp_path))
    for rev in {line[-1], line[len(line) // 2], line[0], *random.Random(7).sample(line, 5)}:
        assert find_lock(repo, NOTES, rev) == plain_walk(tmp_path, rev)


def test_a_fanned_out_notes_tree_is_read_by_path(tmp_path: Path) -> None:
    line = build(tmp_path, 300, set(range(290)), False)
    assert " tree " in git(tmp_path, "ls-tree", NOTES).stdout  # git fanned the notes out
    found = find_lock(Git(cwd=str(tmp_path)), NOTES, line[-1])
    assert found is not None and found.commit == line[289]
    assert found == plain_walk(tmp_path, line[-1])


def test_a_rev_that_names_no_commit_has_no_lock(tmp_path: Path) -> None:
    build(tmp_path, 3, {1}, False)
    assert find_lock(Git(cwd=str(tmp_path)), NOTES, Oid("1" * 40)) is None


class Listing(Git):
    """The real git, counting how often every note is listed."""

    listed = 0

    def notes(self, notes_ref: str) -> dict[Oid, Oid]:
        self.listed += 1
        return super().notes(notes_ref)


@pytest.mark.parametrize("fanned_out", [False, True], ids=["flat", "fanout"])
def test_a_pin_within_reach_is_found_without_listing_every_note(
    tmp_path: Path, fanned_out: bool
) -> None:
    length = 300 if fanned_out else 40
    line = build(tmp_path, length, set(range(length - 10)), False)
    repo = Listing(cwd=str(tmp_path))
    found = find_lock(repo, NOTES, line[-1])
    assert found is not None and found.commit == line[length - 11]
    assert repo.listed == 0


def test_a_pin_past_reach_lists_the_notes_once(tmp_path: Path) -> None:
    line = build(tmp_path, NEAR * 2, {3}, False)
    repo = Listing(cwd=str(tmp_path))
    found = find_lock(repo, NOTES, line[-1])
    assert found is not None and found.commit == line[3]
    assert repo.listed == 1


def test_the_lock_before_a_commit_is_asked_by_its_parent_expression(tmp_path: Path) -> None:
    line = build(tmp_path, 5, {1, 3}, False)
    repo = Git(cwd=str(tmp_path))
    before = find_lock(repo, NOTES, f"{line[3]}^")
    assert before is not None and before.commit == line[1]
    assert find_lock(repo, NOTES, f"{line[0]}^") is None  # a root has no parent
