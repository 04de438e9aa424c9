"""A manifest of the lock roots from the files on disk, in the shape ``manifest.py``
builds from git objects (path → Entry), so the two compare with ``manifest.compare``.

Every file counts, tracked or not, ignored or not, except the excluded globs: an
untracked file under a root is an input the tests read. Links are never followed:
their text is hashed, as git stores it."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping

from git_evidence.git import Git
from git_evidence.manifest import LFS_MAX, Entry, Excluder, lfs_pointer
from git_evidence.paths import GITLINK_MODE, SYMLINK_MODE

CHUNK = 1 << 20


def worktree_manifest(
    top: str,
    roots: tuple[str, ...],
    exclude: tuple[str, ...],
    locked: Mapping[str, Entry],
    *,
    submodules: bool = True,
) -> dict[str, Entry]:
    """The files on disk under ``roots`` of the tree at ``top``.

    A file whose lock entry is an LFS pointer matches when its bytes are the object
    the pointer names (git-lfs has smudged it). ``submodules``: a directory holding
    ``.git`` is recorded by its HEAD commit (a checkout); without it (an exported
    workspace, where ``.git`` is only ever something a test wrote) such a directory is
    files like any other, and an empty directory where the lock has a gitlink is that
    gitlink, as an export leaves an uninitialised submodule."""
    excluded = Excluder(exclude)
    files: dict[str, Entry] = {}
    for root in roots:
        start = os.path.join(top, root)
        if os.path.islink(start) or os.path.isfile(start):
            _add_file(files, top, root, excluded)
            continue
        for directory, subdirs, names in os.walk(start):
            rel_dir = os.path.relpath(directory, top).replace(os.sep, "/")
            for sub in list(subdirs):
                path = f"{rel_dir}/{sub}"
                full = os.path.join(directory, sub)
                if os.path.islink(full):
                    subdirs.remove(sub)
                    _add_file(files, top, path, excluded)
                elif submodules and os.path.exists(os.path.join(full, ".git")):
                    subdirs.remove(sub)  # a submodule: recorded by its commit
                    head = Git(cwd=full).resolve_commit("HEAD")
                    if head and not excluded(path):
                        files[path] = Entry(GITLINK_MODE, head)
                elif not submodules and _uninitialised(locked.get(path), full):
                    subdirs.remove(sub)
                    files[path] = locked[path]
            for name in names:
                _add_file(files, top, f"{rel_dir}/{name}", excluded)
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


def _add_file(files: dict[str, Entry], top: str, path: str, excluded: Excluder) -> None:
    if excluded(path):
        return
    full = os.path.join(top, path)
    info = os.lstat(full)
    if stat.S_ISLNK(info.st_mode):
        data = os.fsencode(os.readlink(full))
        files[path] = Entry(SYMLINK_MODE, "", len(data), hashlib.sha256(data).hexdigest())
        return
    if not stat.S_ISREG(info.st_mode):
        return
    mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
    # O_NOFOLLOW: a file swapped for a link after the lstat is refused, not followed.
    fd = os.open(full, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
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
    files[path] = Entry(mode, "", size, digest.hexdigest(), lfs)
