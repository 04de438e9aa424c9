"""A revision, or the working tree, compared with the lock in force at it: the lock
found (the revision's own note, else the nearest pin), read through the validated-note
cache, and the files that differ from it. ``verify``'s first half; its second judges
the range (gate/checking.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from git_evidence.core.facts import Drift, LockRef
from git_evidence.core.oids import Oid
from git_evidence.lock import manifest, record, store
from git_evidence.lock.disk import worktree_manifest
from git_evidence.lock.record import LockInvalid
from git_evidence.lock.scan import scan_note
from git_evidence.plumbing.git import Git
from git_evidence.policy.schema import Policy


class Compared(NamedTuple):
    """What the comparison found: the lock in force (None: none, ``problem`` says why),
    what it pins (None when it is missing or invalid), and the drift from it."""

    found: LockRef | None
    summary: record.CachedLock | None
    problem: str | None
    drift: list[Drift]


def compare(git: Git, rev: Oid, policy: Policy, *, worktree: bool) -> Compared:
    """``rev``'s manifest (``worktree``: the files on disk, untracked and ignored ones
    included) compared with the lock in force at ``rev``."""
    # One batch-check: REV's own note, whether there are notes at all, REV's roots.
    roots = list(policy.lock_roots)
    at = (f"{rev}:{root}" for root in roots)
    own, (ref, *root_hits) = store.own_notes(git, policy.notes_ref, [rev], policy.notes_ref, *at)
    found = store.lock_in_force(git, policy.notes_ref, rev, own.get(rev), ref is not None)
    rev_trees = manifest.tree_ids(roots, root_hits)
    summary: record.CachedLock | None = None
    problem = None
    drift: list[Drift] = []
    if found is None:
        problem = (
            f"no lock in force at {rev[:12]}: fetch the locks (git fetch origin "
            f"{policy.notes_ref}:{policy.notes_ref}) or have a lock writer pin one"
        )
    else:
        cache = store.LockCache(git)
        summary = cache.get(found.blob)
        data = None
        if summary is None and not worktree:
            # A note read for the first time (a clone that fetched it): scanned, where
            # it has the common shape, in place of building its files one by one; the
            # scan says what the full parse would (lock/scan.py), and the cache learns it.
            data = git.blob_bytes(found.blob)
            scanned = scan_note(data, found.commit)
            if scanned is not None:
                summary = scanned.summary
                cache.put(found.blob, summary)
        # A valid note whose root trees equal REV's, and that pins no file outside
        # them: REV's manifest is its files (build_manifest copies them), no drift.
        fast = (
            summary is not None
            and not worktree
            and summary.commit == found.commit
            and not summary.outside
            and _trees_at(git, rev, list(summary.trees), rev_trees) == summary.trees
        )
        if not fast:
            try:
                pinned = store.read_lock(git, found, cache, data)
            except LockInvalid as exc:
                problem, summary = exc.message, None
            else:
                summary = pinned.summary()
                if worktree:
                    top = git.work_tree("--worktree")
                    actual = worktree_manifest(
                        top, pinned.roots, policy.lock_exclude, pinned.files, checkout=Git(cwd=top)
                    )
                else:
                    trees = _trees_at(git, rev, list(pinned.roots), rev_trees)
                    _, actual = manifest.build_manifest(
                        git, rev, pinned.roots, policy.lock_exclude, pinned, trees=trees
                    )
                drift = manifest.compare(pinned.files, actual)

    return Compared(found, summary, problem, drift)


def _trees_at(
    git: Git, rev: str, roots: list[str], known: Mapping[str, str | None]
) -> dict[str, str | None]:
    """``rev``'s tree for each of ``roots``, from ``known`` when it has them all."""
    if all(root in known for root in roots):
        return {root: known[root] for root in roots}
    return manifest.root_trees(git, rev, roots)
