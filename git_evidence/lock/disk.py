"""A manifest of the lock roots from the files on disk, in the shape ``manifest.py``
builds from git objects (path → Entry), so the two compare with ``manifest.compare``.

Every file counts, tracked or not, ignored or not, except the excluded globs: an
untracked file under a root is an input the tests read. Links are never followed:
their text is hashed, as git stores it. In a checkout, a tracked file git finds
unchanged since its index entry (and whose stat data equal the entry's to the
nanosecond) is its entry's blob, unread (``unchanged_in_index``).

Also the other way round: the blobs a checkout's files hold, for a cold pin to hash
from disk rather than inflate (``from_checkout``), each file standing for its blob
only when its git object id is the blob's."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from git_evidence.core.facts import Entry
from git_evidence.core.paths import GITLINK_MODE, SYMLINK_MODE
from git_evidence.lock.manifest import LFS_MAX, Excluder, Hashed, lfs_pointer, whole
from git_evidence.plumbing.git import Git

if TYPE_CHECKING:
    from git_evidence.plumbing.checkout import IndexEntry

CHUNK = 1 << 20
# A checkout's file larger than this is not read whole to stand for its blob: git
# streams it instead.
WHOLE_MAX = 64 << 20
REGULAR = ("100644", "100755")
LOW32 = 0xFFFFFFFF


def worktree_manifest(
    top: str,
    roots: tuple[str, ...],
    exclude: tuple[str, ...],
    locked: Mapping[str, Entry],
    *,
    submodules: bool = True,
    checkout: Git | None = None,
) -> dict[str, Entry]:
    """The files on disk under ``roots`` of the tree at ``top``.

    ``checkout``: ``top`` is that repository's working tree, and a file is compared as
    git would check it in: ``git hash-object`` applies the conversions
    its attributes ask for (``eol``, ``text``, filters), so a checkout whose
    ``.gitattributes`` turns LF into CRLF matches its lock; one git process hashes them
    all, and only files that differ are read here. Without it (the judge's exported
    workspace, which has no repository) the bytes on disk are what tests read.

    A file whose lock entry is an LFS pointer matches when its bytes are the object
    the pointer names (git-lfs has smudged it). ``submodules``: a directory holding
    ``.git`` is recorded by its HEAD commit (a checkout); without it (an exported
    workspace, where ``.git`` is only ever something a test wrote) such a directory is
    files like any other, and an empty directory where the lock has a gitlink is that
    gitlink, as an export leaves an uninitialised submodule."""
    excluded = Excluder(exclude)
    files: dict[str, Entry] = {}
    regular: dict[str, int] = {}  # path → st_mode of each regular file
    for root in roots:
        start = os.path.join(top, root)
        if os.path.islink(start) or os.path.isfile(start):
            _add_file(files, regular, top, root, excluded)
            continue
        for directory, subdirs, names in os.walk(start):
            rel_dir = os.path.relpath(directory, top).replace(os.sep, "/")
            for sub in list(subdirs):
                path = f"{rel_dir}/{sub}"
                full = os.path.join(directory, sub)
                if os.path.islink(full):
                    subdirs.remove(sub)
                    _add_file(files, regular, top, path, excluded)
                elif submodules and os.path.exists(os.path.join(full, ".git")):
                    subdirs.remove(sub)  # a submodule: recorded by its commit
                    head = Git(cwd=full).resolve_commit("HEAD")
                    if head and not excluded(path):
                        files[path] = Entry(GITLINK_MODE, head)
                elif not submodules and _uninitialised(locked.get(path), full):
                    subdirs.remove(sub)
                    files[path] = locked[path]
            for name in names:
                _add_file(files, regular, top, f"{rel_dir}/{name}", excluded)
    blobs = _checked_in(checkout, top, roots, regular) if checkout is not None else {}
    for path, st_mode in regular.items():
        mode = "100755" if st_mode & stat.S_IXUSR else "100644"
        locked_entry = locked.get(path)
        blob = blobs.get(path, "")
        if blob and locked_entry is not None and locked_entry.blob == blob:
            files[path] = locked_entry._replace(mode=mode)  # the locked bytes, as git stores them
        else:
            files[path] = _hash_file(top, path, mode, blob)
    for path, entry in files.items():
        pointer = locked.get(path)
        if (
            pointer is not None
            and pointer.lfs is not None
            and entry.lfs is None
            and pointer.lfs == f"sha256:{entry.sha256} {entry.size}"
        ):
            files[path] = pointer
    return dict(sorted(files.items()))


def _uninitialised(entry: Entry | None, full: str) -> bool:
    return entry is not None and entry.mode == GITLINK_MODE and not os.listdir(full)


def _checked_in(
    git: Git, top: str, roots: Sequence[str], regular: Mapping[str, int]
) -> dict[str, str]:
    """The blob id of each regular file as git would check it in: the index's for a
    file unchanged since its entry was written, git's hash (one process for all) for
    the others."""
    from git_evidence.plumbing import checkout  # a work tree's check only: no hook loads it

    blobs = unchanged_in_index(checkout.index_entries(git, roots) or (), top)
    blobs.update(checkout.checked_in_blobs(git, [path for path in regular if path not in blobs]))
    return blobs


def unchanged_in_index(entries: Iterable[IndexEntry], top: str) -> dict[str, str]:
    """The blob of each regular file of the work tree at ``top`` that is unchanged
    since git wrote its index entry, so its bytes need no hashing: ``entries`` are the
    index's (``checkout.index_entries``: git's own ``-m`` test lists a modified file
    twice). On top of it the file's change and modification times must equal the
    entry's to the nanosecond (git compares whole seconds: a file rewritten with its
    old size and time within the second of the last refresh passes git, not this), and
    its size and inode too. A file marked assume-unchanged or skip-worktree, unmerged,
    or listed as modified is left out: its bytes are hashed."""
    clean: dict[str, str] = {}
    changed: set[str] = set()
    for entry in entries:
        if (
            entry.tag != "H"
            or entry.stage != "0"
            or entry.mode not in REGULAR
            or not _same_stat(os.path.join(top, entry.path), entry)
        ):
            changed.add(entry.path)  # modified (C), marked (h, S, s), unmerged (M), restatted
        else:
            clean[entry.path] = entry.oid
    return {path: oid for path, oid in clean.items() if path not in changed}


def _same_stat(full: str, recorded: IndexEntry) -> bool:
    """The file's stat data are the entry's: change and modification times to the
    nanosecond, inode and size (as the index keeps them, in 32 bits)."""
    try:
        info = os.lstat(full)
    except OSError:
        return False
    return (
        divmod(info.st_ctime_ns, 10**9) == recorded.ctime
        and divmod(info.st_mtime_ns, 10**9) == recorded.mtime
        and info.st_ino & LOW32 == recorded.ino
        and info.st_size & LOW32 == recorded.size
    )


def _add_file(
    files: dict[str, Entry], regular: dict[str, int], top: str, path: str, excluded: Excluder
) -> None:
    """Record a link by its text; note a regular file, hashed once all are known."""
    if excluded(path):
        return
    full = os.path.join(top, path)
    info = os.lstat(full)
    if stat.S_ISLNK(info.st_mode):
        data = os.fsencode(os.readlink(full))
        files[path] = Entry(SYMLINK_MODE, "", len(data), hashlib.sha256(data).hexdigest())
    elif stat.S_ISREG(info.st_mode):
        regular[path] = info.st_mode


def _hash_file(top: str, path: str, mode: str, blob: str) -> Entry:
    """A file's bytes on disk (``blob``: what git would store for it, when known)."""
    # O_NOFOLLOW: a file swapped for a link after the lstat is refused, not followed.
    fd = os.open(os.path.join(top, path), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb", buffering=0) as handle:
        chunk = handle.read(CHUNK)
        # Small files (every LFS pointer among them) are read once, whole.
        lfs = lfs_pointer(chunk) if len(chunk) <= LFS_MAX else None
        digest = hashlib.sha256(chunk)
        size = len(chunk)
        while chunk:
            chunk = handle.read(CHUNK)
            digest.update(chunk)
            size += len(chunk)
    if size > LFS_MAX:
        lfs = None
    return Entry(mode, blob, size, digest.hexdigest(), lfs)


def from_checkout(top: str, wanted: Mapping[str, Sequence[tuple[str, str]]]) -> dict[str, Hashed]:
    """Each blob of ``wanted`` (blob id → its files' modes and paths) whose bytes a
    regular file of the checkout at ``top`` holds: read from disk, not inflated from
    the object store (a blob deep in a pack's delta chains costs far more). A file
    stands for its blob only if its git object id is the blob's id, so its bytes are
    the blob's, whatever the checkout holds (another revision, a change of the same
    size and time, a conversion its attributes ask for); the others are left to git."""
    found: dict[str, Hashed] = {}
    for oid, users in wanted.items():
        for mode, path in users:
            data = _whole_file(os.path.join(top, path)) if mode in REGULAR else None
            if data is None:
                continue
            algorithm = hashlib.sha1 if len(oid) == 40 else hashlib.sha256
            named = algorithm(b"blob %d\0" % len(data))
            named.update(data)
            if named.hexdigest() == oid:
                found[oid] = whole(data)
                break
    return found


def _whole_file(full: str) -> bytes | None:
    """The bytes of the regular file at ``full`` (no link followed at its end, nothing
    special opened for reading), or None."""
    try:
        fd = os.open(
            full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except OSError:
        return None
    with os.fdopen(fd, "rb", buffering=0) as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > WHOLE_MAX:
            return None
        return handle.read()
