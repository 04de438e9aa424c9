"""The note store: where the lock in force for a commit is found (the note on its
nearest first-parent ancestor, looked up by note path before any listing), the notes of
given commits in one ``cat-file --batch-check``, the lock of a note read (validated in
full once), and the validated-note cache in the repository.

Apart from record.py, which is the record itself (bytes in, a ``Lock`` out): this is
where the records live in git, and what reading them there costs."""

from __future__ import annotations

import contextlib
import marshal
import os
from collections.abc import Sequence
from typing import Any

from git_evidence.core.facts import LockRef
from git_evidence.core.oids import ZERO_OID, Oid, is_oid
from git_evidence.lock.record import CachedLock, Lock, LockInvalid, parse_note
from git_evidence.plumbing import batch
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.repo_dirs import common_dir

CACHE_DIR = "locks-v3"

# First-parent commits whose notes are looked up by path before every note is listed,
# the nearest FIRST of them on their own (each path costs ~50 µs at 20,000 notes).
NEAR = 64
FIRST = 8


def lock_in_force(
    git: Git, notes_ref: str, rev: Oid, own: Oid | None, any_notes: bool
) -> LockRef | None:
    """``find_lock`` for a caller that has looked up ``rev``'s own note (``own_notes``)
    and whether ``notes_ref`` exists in a ``cat-file --batch-check`` of its own."""
    if own is not None:
        return LockRef(rev, own)
    if not any_notes:
        return None
    return find_lock(git, notes_ref, f"{rev}^")  # ``rev`` itself has none


def find_lock(git: Git, notes_ref: str, rev: str) -> LockRef | None:
    """The lock in force at the commit ``rev`` names (``<commit>^`` included: None for
    a root's parent): the note on its nearest first-parent ancestor, itself included.

    The first NEAR are looked up by their note paths (``cat-file --batch-check``, the
    nearest FIRST, then the rest): a pin a few commits back (the pushed branch's last
    tip, as a rule) costs two processes however many notes the ref holds, where a
    server pins every push and its notes only grow. Past them, every note is listed
    once and the first-parent line walked on."""
    near = _first_parent_ids(git, rev)
    found = _nearest(git, notes_ref, near)
    if found is not None or len(near) < NEAR:
        return found  # None: the whole first-parent line was looked up
    notes = git.notes(notes_ref)
    if not notes:
        return None
    for commit in git.first_parents(rev):
        if commit in notes:
            return LockRef(commit, notes[commit])
    return None


def near_lock(git: Git, notes_ref: str, rev: str) -> LockRef | None:
    """``find_lock`` among the NEAR nearest first-parent commits only (looked up by
    note path): None when none of them has a note, however far back a pin is."""
    return _nearest(git, notes_ref, _first_parent_ids(git, rev))


# A listing from a pushed tip long enough for a push of up to 65 commits and the NEAR
# commits before it: the lock check, the nearest pin and post-receive's walk all read
# it (``first_parent_line``).
LONG = NEAR + 66
# The first-parent listings this process made, per repository: a commit id names its
# first-parent line for good, so a later question about a commit on one is answered
# from it.
_LINES: dict[tuple[str, str | None], list[tuple[list[Oid], int]]] = {}


def first_parent_line(git: Git, rev: str, count: int) -> list[Oid]:
    """``rev`` (a commit id, or ``<id>^``) and its first-parent ancestors, nearest
    first, at most ``count``: from a listing made before in this process when one holds
    them all (or reached the root), else one ``rev-list``."""
    target, skip = (rev[:-1], 1) if rev.endswith("^") else (rev, 0)
    if not is_oid(target):
        return git.first_parent_ids(rev, count)
    known = _LINES.setdefault((git.cwd or os.getcwd(), os.environ.get("GIT_DIR")), [])
    for line, asked in known:
        if target in line:
            at = line.index(Oid(target)) + skip
            if len(line) - at >= count or len(line) < asked:
                return line[at : at + count]
    line = git.first_parent_ids(target, count + skip)
    known.append((line, count + skip))
    return line[skip:]


def _first_parent_ids(git: Git, rev: str) -> list[Oid]:
    return first_parent_line(git, rev, NEAR)


def _nearest(git: Git, notes_ref: str, near: Sequence[Oid]) -> LockRef | None:
    # Groups of at most 2 * FIRST commits (three note paths each): within a read-only
    # command each is a question to its one open batch-check, not a process.
    groups = [near[:FIRST]] + [near[i : i + 2 * FIRST] for i in range(FIRST, len(near), 2 * FIRST)]
    for group in groups:
        if not group:
            break
        own, _ = own_notes(git, notes_ref, group)
        nearest = next((commit for commit in group if commit in own), None)
        if nearest is not None:
            return LockRef(nearest, own[nearest])
    return None


def own_notes(
    git: Git, notes_ref: str, commits: Sequence[Oid], *also: str
) -> tuple[dict[Oid, Oid], list[tuple[Oid, str] | None]]:
    """The note blob each of ``commits`` has (at one of its ``note_paths``), and the
    answers for the object expressions ``also``: one ``cat-file --batch-check``."""
    per = len(note_paths(notes_ref, ZERO_OID))
    spots = [spot for commit in commits for spot in note_paths(notes_ref, commit)]
    hits = batch.check(git, [*spots, *also])
    own: dict[Oid, Oid] = {}
    for i, commit in enumerate(commits):
        at = hits[i * per : (i + 1) * per]  # a note blob at one of its note paths
        blob = next((hit[0] for hit in at if hit is not None and hit[1] == "blob"), None)
        if blob is not None:
            own[commit] = blob
    return own, hits[len(spots) :]


class LockCache:
    """What full validation learned about a note blob, kept in the repository
    (``<git dir>/git-evidence/locks-v3/<blob>``). A blob id names its content, so an
    entry can never describe another note; only processes that can write the git
    directory (the server's own hooks) can add one. An entry is ``marshal``'s plain
    values (loading runs no code, and needs no json), stamped with the summary's
    fields and the size and time of the module that validates a note, so an upgrade
    (or an edit of a development tree) that makes validation stricter never takes an
    entry it would refuse; the directory's version changes with the entry's shape
    (v2: a note must be the record's exact bytes; v3: marshal, stamped)."""

    def __init__(self, git: Git) -> None:
        self._git = git
        self._dir: str | None = None

    def _path(self, blob: str) -> str:
        if self._dir is None:
            # One lookup a process (the lock check and verify each open a cache), none
            # when repo_dirs.commit_noting_dirs asked already or git gave a hook its GIT_DIR.
            self._dir = os.path.join(common_dir(self._git), "git-evidence", CACHE_DIR)
        return os.path.join(self._dir, blob)

    def get(self, blob: str) -> CachedLock | None:
        try:
            with open(self._path(blob), "rb") as handle:
                stamp, values = marshal.load(handle)
            if stamp != _stamp() or not stamp:
                return None
            summary = CachedLock(*values)
            if not (isinstance(summary.trees, dict) and isinstance(summary.digest, str)):
                return None
            return summary
        except (OSError, EOFError, ValueError, TypeError):
            return None

    def put(self, blob: str, lock: Lock | CachedLock) -> None:
        """Learn a validated note: its lock, or the summary a scan of it proved."""
        summary = lock.summary() if isinstance(lock, Lock) else lock
        stamp = _stamp()
        if not stamp:
            return
        path = self._path(blob)
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            record: Any = (stamp, tuple(summary))
            data = marshal.dumps(record)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(tmp, "wb") as handle:
                handle.write(data)
            os.replace(tmp, path)
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                os.unlink(tmp)  # a cache that cannot be written only costs time


def _stamp() -> tuple[object, ...]:
    """What an entry is stamped with: its version, the summary's fields, and the size
    and time of ``record.py``, which validates a note (empty when it cannot be read:
    then nothing is kept or taken)."""
    try:
        info = os.stat(os.path.join(os.path.dirname(os.path.abspath(__file__)), "record.py"))
    except OSError:
        return ()
    return (CACHE_DIR, CachedLock._fields, info.st_size, info.st_mtime_ns)


def read_lock(
    git: Git, found: LockRef, cache: LockCache | None = None, data: bytes | None = None
) -> Lock:
    """The lock of a note, validated in full unless the cache has seen this blob."""
    cache = cache or LockCache(git)
    known = cache.get(found.blob)
    lock = parse_note(
        git.blob_bytes(found.blob) if data is None else data,
        found.commit,
        known_canonical=known is not None and known.commit == found.commit,
    )
    if known is None:
        cache.put(found.blob, lock)
    return lock


def previous_lock(
    git: Git, notes_ref: str, rev: str, cache: LockCache | None = None
) -> Lock | None:
    """The lock in force at ``rev`` to reuse hashes from; a broken note is never
    trusted for reuse."""
    found = find_lock(git, notes_ref, rev)
    if found is None:
        return None
    try:
        return read_lock(git, found, cache)
    except LockInvalid:
        return None


def note_paths(notes_ref: str, commit: str) -> list[str]:
    """Where ``commit``'s note can live in the notes tree (git fans out as it grows)."""
    return [
        f"{notes_ref}:{commit}",
        f"{notes_ref}:{commit[:2]}/{commit[2:]}",
        f"{notes_ref}:{commit[:2]}/{commit[2:4]}/{commit[4:]}",
    ]
