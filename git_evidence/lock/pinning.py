"""Writing locks: pin one revision, or every first-parent commit of an
accepted range whose lock-root trees differ from the pin before it (plus the new tip),
so a commit in the middle of a push has a lock of its own.

Which commits need a pin is known from their root tree ids alone: one ``rev-list`` and
one ``cat-file --batch-check`` for the whole range. Only those commits are listed and
hashed (reusing every hash the pin before them holds), and all their notes are written
by one ``git fast-import``, which refuses to move the notes ref when another writer
moved it meanwhile; then the notes are written again on top of the new tip."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence

from git_evidence.core.errors import EvidenceError
from git_evidence.core.facts import LockRef
from git_evidence.core.oids import Oid, blob_id
from git_evidence.core.records import now_utc
from git_evidence.lock.disk import from_checkout
from git_evidence.lock.manifest import OnDisk, build_manifest, root_trees
from git_evidence.lock.record import Lock, LockInvalid
from git_evidence.lock.store import LockCache, lock_in_force, own_notes, previous_lock, read_lock
from git_evidence.lock.walk import Trees, Walk, first_parent_walk, tree_ids
from git_evidence.plumbing import notes
from git_evidence.plumbing.git import Git

WRITE_ATTEMPTS = 5  # concurrent post-receive hooks each move the notes ref once
MAX_RANGE_PINS = 50  # pins one push may write (the newest ones, the tip included)
# Notes up to this many bytes in all are written inline by fast-import; larger ones as
# blobs first (`notes.write_blobs` says why).
INLINE_NOTES = 64 << 10


def pin(
    git: Git,
    rev: Oid,
    roots: Sequence[str],
    exclude: Sequence[str],
    notes_ref: str,
    pinned_by: str,
    progress: Callable[[int, int], None] | None = None,
    checkout: str | None = None,
) -> tuple[Lock, bool]:
    """Write the lock note for ``rev``; ``(lock, written)``. A rev whose own note is a
    valid lock of the same trees is left as it is (re-pinning is idempotent); a note
    that is not (not byte-exact, another commit's, broken) is replaced. ``checkout``:
    the top of a working tree whose files may hold the blobs a cold pin hashes
    (``from_checkout`` says which do).

    One ``cat-file --batch-check`` answers where ``rev``'s note would be, where the
    notes ref is and the root trees; the lock before it is looked for only when
    ``rev`` has no note of its own."""
    own_found, (tip_hit, *at) = own_notes(
        git, notes_ref, [rev], notes_ref, *(f"{rev}:{root}" for root in roots)
    )
    own = own_found.get(rev)
    tip = tip_hit[0] if tip_hit is not None else None
    trees = tree_ids(roots, at)
    cache = LockCache(git)
    start = _valid(git, cache, rev, own)
    if start is not None and start.roots == tuple(roots) and dict(start.trees) == trees:
        return start, False
    if own is None and tip is not None:
        found = lock_in_force(git, notes_ref, rev, None, any_notes=True)
        start = _valid(git, cache, found.commit, found.blob) if found is not None else None
    wanted = [(rev, trees)]
    # A cold pin hashes every blob: those the checkout's files hold are read from disk.
    # A re-pin reads only the few blobs changed since the lock before it, from git.
    on_disk = None
    if start is None and checkout is not None:
        on_disk = functools.partial(from_checkout, checkout)
    return pin_commits(
        git, wanted, roots, exclude, notes_ref, pinned_by, start, progress, ({}, tip), on_disk
    )[-1]


def pin_range(
    git: Git,
    tip: Oid,
    exclude: Sequence[str],
    roots: Sequence[str],
    lock_exclude: Sequence[str],
    notes_ref: str,
    pinned_by: str,
    walk: Walk | None = None,
) -> tuple[list[tuple[Lock, bool]], int, bool]:
    """Pin what an accepted update brought to a protected ref: each first-parent
    commit of ``tip --not exclude`` whose root trees differ from the pin before it,
    and ``tip`` (a commit, or a tag of one). ``(lock, written)`` for each, oldest
    first, the tip last; how many older ones were left unpinned (past
    MAX_RANGE_PINS); and whether the tip's lock roots differ from the lock before the
    range (False: the tip's pin only repeats it, to keep it near). ``walk``: the
    range's ``first_parent_walk`` when the caller has it."""
    walk = walk or first_parent_walk(git, tip, exclude, roots, notes_ref)
    known: tuple[dict[Oid, Oid], Oid | None] | None = None
    if not walk.pins:  # nothing new on the first-parent line (a ref created at a known commit)
        tip = git.resolve_commit(tip) or tip
        start = previous_lock(git, notes_ref, tip)
        pins = [(tip, root_trees(git, tip, roots))]
    else:
        tip = walk.pins[-1][0]  # the last of the walk is the tip's commit (a tag peeled)
        pins, known = walk.pins, (walk.own, walk.notes_tip)
        if walk.before is None:  # a root commit: no lock before it
            start = None
        elif walk.before_note is not None:  # the lock in force at the parent is its own
            start = _valid(git, LockCache(git), walk.before, walk.before_note)
        else:
            start = previous_lock(git, notes_ref, walk.before)
    wanted = needs_pin(pins, tip, roots, start)
    # A first push of a long history would pin every fixture change it ever had. The
    # newest ones are those tags and branches start from; an older commit left out
    # is still judged by its own bytes (its lock-stale is a notice).
    kept = wanted[-MAX_RANGE_PINS:]
    results = pin_commits(git, kept, roots, lock_exclude, notes_ref, pinned_by, start, known=known)
    repeats = (
        start is not None and start.roots == tuple(roots) and dict(start.trees) == dict(pins[-1][1])
    )
    return results, len(wanted) - len(kept), not repeats


def needs_pin(
    walk: Sequence[tuple[Oid, Mapping[str, str | None]]],
    tip: Oid,
    roots: Sequence[str],
    start: Lock | None,
) -> list[tuple[Oid, Trees]]:
    """The commits of ``walk`` (oldest first, with their root trees) whose trees
    differ from the lock before them (``start``, then each pin), and ``tip``."""
    before = dict(start.trees) if start is not None and start.roots == tuple(roots) else None
    wanted: list[tuple[Oid, Trees]] = []
    for commit, trees in walk:
        if dict(trees) != before or commit == tip:
            wanted.append((commit, dict(trees)))
            before = dict(trees)
    return wanted


def pin_commits(
    git: Git,
    wanted: Sequence[tuple[Oid, Trees]],
    roots: Sequence[str],
    exclude: Sequence[str],
    notes_ref: str,
    pinned_by: str,
    start: Lock | None,
    progress: Callable[[int, int], None] | None = None,
    known: tuple[dict[Oid, Oid], Oid | None] | None = None,
    on_disk: OnDisk | None = None,
) -> list[tuple[Lock, bool]]:
    """Pin each of ``wanted`` (oldest first, with its root trees), reusing the hashes
    of the lock before it; a commit whose own note is already a valid lock of those
    trees keeps it. All new notes are written in one notes commit. ``known``: the
    notes ``wanted`` already have and the notes ref's value, when the caller looked."""
    roots_key = tuple(roots)
    cache = LockCache(git)
    if known is None:  # one batch-check: the notes of `wanted` and the notes ref's value
        found, (ref,) = own_notes(git, notes_ref, [c for c, _ in wanted], notes_ref)
        known = found, ref[0] if ref is not None else None
    own, tip = known
    current = start
    results: list[tuple[Lock, bool]] = []
    for commit, trees in wanted:
        existing = _valid(git, cache, commit, own.get(commit))
        if existing is not None and existing.roots == roots_key and dict(existing.trees) == trees:
            current = existing
            results.append((existing, False))
            continue
        _, files = build_manifest(
            git, commit, roots, exclude, current, progress, trees=trees, on_disk=on_disk
        )
        current = Lock(commit, roots_key, trees, files, pinned_by, now_utc())
        results.append((current, True))
    write_notes(git, notes_ref, tip, [lock for lock, written in results if written], cache)
    return results


def _valid(git: Git, cache: LockCache, commit: Oid, blob: Oid | None) -> Lock | None:
    if blob is None:
        return None
    try:
        return read_lock(git, LockRef(commit, blob), cache)
    except LockInvalid:
        return None  # replaced by a valid pin: this is how a broken note is repaired


def write_notes(
    git: Git, notes_ref: str, tip: Oid | None, locks: Sequence[Lock], cache: LockCache
) -> None:
    """Attach each lock's canonical bytes, exactly, as its commit's note, by one notes
    commit on top of the notes ref (``tip`` first, then its value when another writer
    moved it meanwhile): small notes inline, large ones written as blobs first by one
    ``hash-object``. The cache learns each note under the blob id git gives it."""
    if not locks:
        return
    attached: dict[Oid, Oid | bytes]
    if sum(len(lock.canonical) for lock in locks) <= INLINE_NOTES:
        # Small notes go inline through fast-import: one process less for a push.
        blobs = [blob_id(lock.canonical, lock.commit) for lock in locks]
        attached = {lock.commit: lock.canonical for lock in locks}
    else:
        blobs = notes.write_blobs(git, [lock.canonical for lock in locks])
        attached = {lock.commit: blob for lock, blob in zip(locks, blobs, strict=True)}
    message = f"git evidence: pin {len(attached)} commit(s)\n"
    for attempt in range(WRITE_ATTEMPTS):
        if attempt:
            tip = git.ref_oid(notes_ref)
        if notes.write_notes(git, notes_ref, tip, attached, message):
            break
    else:
        raise EvidenceError(
            f"{notes_ref} kept moving while the lock was written ({WRITE_ATTEMPTS} tries)",
            fix="run the pin again: git evidence lock REV",
        )
    for lock, blob in zip(locks, blobs, strict=True):
        cache.put(blob, lock)
