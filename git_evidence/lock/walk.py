"""What an accepted push changed under the lock roots, read before anything is
pinned: the first-parent walk of the range (the commits that may need a pin, with
their root trees), and whether the lock in force before it still describes every one
of them, in which case post-receive writes nothing.

Kept apart from pinning.py, which hashes and writes: an ordinary push (no lock root
changed) loads neither the manifest builder nor the notes writer."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from git_evidence.core.facts import LockRef
from git_evidence.core.oids import Oid, is_oid
from git_evidence.lock.store import LONG, LockCache, first_parent_line, near_lock, own_notes
from git_evidence.plumbing import batch
from git_evidence.plumbing.git import Git
from git_evidence.policy.schema import POLICY_FILE

if TYPE_CHECKING:
    from git_evidence.core.facts import RefUpdate
    from git_evidence.policy.schema import Policy

Trees = dict[str, str | None]


def tree_ids(roots: Sequence[str], hits: Sequence[tuple[str, str] | None]) -> Trees:
    """Root → tree id (None: missing; ``type:oid`` when a non-tree stands there)."""
    return {
        root: None if hit is None else hit[0] if hit[1] == "tree" else f"{hit[1]}:{hit[0]}"
        for root, hit in zip(roots, hits, strict=True)
    }


class Walk(NamedTuple):
    """What one ``rev-list`` and one ``cat-file --batch-check`` say of an accepted
    range: the commits that may need a pin (oldest first, with their root trees), the
    first parent of the oldest and the note it has, the notes the commits kept have,
    and the notes ref's value."""

    pins: list[tuple[Oid, Trees]]
    before: Oid | None
    before_note: Oid | None
    own: dict[Oid, Oid]
    notes_tip: Oid | None


def first_parent_walk(
    git: Git, tip: Oid, exclude: Sequence[str], roots: Sequence[str], notes_ref: str
) -> Walk:
    """The first-parent commits of ``tip`` that ``exclude`` does not reach and that
    may need a pin, oldest first, each with its lock roots' tree ids: the first one
    (the pin before it may be stale), every one that changes a root against its first
    parent, and ``tip``. The others have their predecessor's trees. Two ``rev-list``
    (the one limited to the roots prunes unchanged trees without reading them) and one
    ``cat-file --batch-check`` for the commits kept, which also finds the note on the
    first one's parent (where the lock in force before the range is, as a rule: the
    pushed branch's last tip), the notes of the commits kept and the notes ref: a
    20,000-commit product push costs two walks, not 20,000 lookups per root. A push of
    one or two first-parent commits keeps both whatever they change: one walk."""
    listed = _from_line(git, tip, exclude)
    if listed is None:
        rows = git.first_parent_range(tip, exclude)
        commits = [row[0] for row in rows]
        before = rows[0][1] if rows and len(rows[0]) > 1 else None
    else:
        commits, before = listed
    if not commits:
        return Walk([], None, None, {}, None)
    changed: set[Oid] = set()
    if roots and len(commits) > 2:
        changed = git.first_parents_changing(tip, exclude, roots)
    last = len(commits) - 1
    kept = [c for i, c in enumerate(commits) if i in (0, last) or c in changed]
    at = [f"{commit}:{root}" for commit in kept for root in roots]
    looked = [before, *kept] if before is not None else kept
    own, (ref, *hits) = own_notes(git, notes_ref, looked, notes_ref, *at)
    width = len(roots)
    pins = [
        (commit, tree_ids(roots, hits[i * width : (i + 1) * width]))
        for i, commit in enumerate(kept)
    ]
    notes_tip = ref[0] if ref is not None else None
    before_note = own.get(before) if before is not None else None
    return Walk(pins, before, before_note, own, notes_tip)


def _from_line(git: Git, tip: Oid, exclude: Sequence[str]) -> tuple[list[Oid], Oid] | None:
    """The walk's commits (oldest first) and the first parent of the oldest, read from
    ``tip``'s first-parent line when the one commit excluded is on it within LONG (a
    fast-forward of a branch: the line the lock lookups read too), else None."""
    if len(exclude) != 1 or not is_oid(tip) or not is_oid(exclude[0]):
        return None
    line = first_parent_line(git, tip, LONG)
    if exclude[0] not in line:
        return None
    at = line.index(Oid(exclude[0]))
    return list(reversed(line[:at])), line[at]


def unmoved(git: Git, walk: Walk, roots: Sequence[str], notes_ref: str) -> bool:
    """Whether the lock in force before the walked range describes every commit of
    it, so that nothing needs a pin: every commit kept has the same root trees, and
    they are the trees of the lock in force at the range's first parent (its own
    note, else the nearest pin on its first-parent line, looked up by note path).

    Read from the validated-note cache only (no note is read): a lock that this
    repository has not validated, one too far back to be found by path, or one with
    files outside its roots answers False, and the caller pins as before."""
    if not walk.pins or walk.before is None or walk.notes_tip is None:
        return False
    trees = walk.pins[-1][1]
    if any(kept != trees for _, kept in walk.pins):
        return False  # a root changed inside the range
    if walk.before_note is not None:
        found: LockRef | None = LockRef(walk.before, walk.before_note)
    else:
        found = near_lock(git, notes_ref, f"{walk.before}^")
    if found is None:
        return False
    summary = LockCache(git).get(found.blob)
    return (
        summary is not None
        and summary.commit == found.commit
        and not summary.outside
        and dict(summary.trees) == trees  # the same roots (a note lists them sorted)
    )


def push_needs_no_pin(
    git: Git, updates: Sequence[RefUpdate], policy: Policy, has_notes: bool
) -> bool:
    """Whether post-receive, run after ``updates`` (each as the ref it moves), would
    pin nothing: no update creates or deletes a ref or moves the notes ref, none
    changes the policy file (post-receive reads the policy as the push leaves it),
    and every update of a protected ref is ``unmoved`` (``has_notes``: the notes ref
    exists). Asked by pre-receive before
    the refs move, with the same reads post-receive makes."""
    if any(u.is_create or u.is_delete or u.ref == policy.notes_ref for u in updates):
        return False
    if not any(policy.is_protected(u.ref) for u in updates):
        return True  # post-receive pins protected refs only
    if not has_notes:
        return False  # no lock yet: post-receive pins the first
    if policy.origin != "sealed":
        spots = [f"{rev}:{POLICY_FILE}" for u in updates for rev in (u.old, u.new)]
        hits = batch.check(git, spots)
        if any(hits[i] != hits[i + 1] for i in range(0, len(hits), 2)):
            return False
    roots, notes_ref = policy.lock_roots, policy.notes_ref
    for update in updates:
        if not policy.is_protected(update.ref):
            continue
        walk = first_parent_walk(git, update.new, [update.old], roots, notes_ref)
        if not unmoved(git, walk, roots, notes_ref):
            return False
    return True
