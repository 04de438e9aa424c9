"""The judge's workspace: a tree exported from git objects into a
temporary directory outside the repository's worktree, sharing nothing with its git
directory, so the candidate's tests cannot write the repository's refs, notes or
objects (a ``git worktree`` would let them).

The export is written from ``git ls-tree`` and one ``git cat-file --batch``, blob
bytes as stored: ``git archive`` would apply the tree's own ``export-ignore`` and
``export-subst`` attributes and drop or rewrite files, and the workspace must hold the
bytes the lock pins. A patch is applied to a temporary index of the base with its new
objects in a private object directory: the repository is not written either."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from dataclasses import dataclass

from git_evidence.core.errors import EvidenceError, GitError, UsageError
from git_evidence.core.oids import Oid
from git_evidence.core.path_globs import fold_path
from git_evidence.core.paths import GITLINK_MODE, SYMLINK_MODE
from git_evidence.plumbing import batch
from git_evidence.plumbing.git import Git

PREFIX = "git-evidence-judge-"


@dataclass(frozen=True)
class Area:
    """One judgement's temporary directory: workspaces ``ws-1``, ``ws-2``, …, a
    scratch directory for run files (hits, JUnit XML, output), and git's private
    index and object directory for a patch."""

    root: str

    def workspace(self, number: int) -> str:
        return os.path.join(self.root, f"ws-{number}")

    @property
    def scratch(self) -> str:
        return os.path.join(self.root, "scratch")


def make_area(worktree: str | None) -> Area:
    """A fresh temporary directory, refused when it would lie inside ``worktree``."""
    root = tempfile.mkdtemp(prefix=PREFIX)
    if worktree is not None:
        real, top = os.path.realpath(root), os.path.realpath(worktree)
        if real == top or real.startswith(top.rstrip(os.sep) + os.sep):
            remove(root)
            raise EvidenceError(
                f"the temporary directory {root} is inside the repository's worktree",
                fix="point TMPDIR outside the repository: the candidate's workspace must "
                "share nothing with it",
            )
    os.mkdir(os.path.join(root, "scratch"))
    return Area(root)


def remove(path: str) -> None:
    """Remove a workspace whatever its tests did to its permissions."""
    if not os.path.lexists(path):
        return
    with contextlib.suppress(OSError):
        os.chmod(path, stat.S_IRWXU)
    for directory, subdirs, _ in os.walk(path):
        for sub in subdirs:
            full = os.path.join(directory, sub)
            if not os.path.islink(full):
                with contextlib.suppress(OSError):
                    os.chmod(full, stat.S_IRWXU)
    shutil.rmtree(path, ignore_errors=True)


class PatchInvalid(Exception):
    """``git apply --check`` refused the patch; the message is git's."""


def patched_tree(git: Git, base: str, patch: bytes, area: Area) -> tuple[Git, Oid]:
    """The tree of ``base`` with ``patch`` applied, and a Git that can read its new
    objects (written into the area, read-only alternates onto the repository's)."""
    objects = os.path.join(area.root, "objects")
    os.makedirs(objects, exist_ok=True)
    alternates = [git.git_path("objects")]
    if git.env.get("GIT_ALTERNATE_OBJECT_DIRECTORIES"):
        alternates.append(git.env["GIT_ALTERNATE_OBJECT_DIRECTORIES"])
    private = Git(
        cwd=git.cwd,
        env={
            **git.env,
            "GIT_INDEX_FILE": os.path.join(area.root, "index"),
            "GIT_OBJECT_DIRECTORY": objects,
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": os.pathsep.join(alternates),
        },
    )
    private.read_tree(base)
    for check in (True, False):
        try:
            private.apply_cached(patch, check=check)
        except GitError as exc:
            reason = (
                exc.stderr.decode("utf-8", "replace").strip()
                or f"git apply exited {exc.returncode}"
            )
            raise PatchInvalid(reason) from None
    return private, private.write_tree()


def export_tree(git: Git, treeish: str, dest: str) -> int:
    """Write every file of ``treeish`` under ``dest`` (created); the number of files.
    Symlinks are written as links (their text as stored), gitlinks as empty
    directories (an uninitialised submodule), executables with their mode."""
    os.mkdir(dest)
    by_blob: dict[str, list[tuple[str, bytes]]] = {}
    links: set[bytes] = set()
    count = 0
    for mode, oid, path in git.ls_tree(treeish, []):
        rel = _safe_path(path)
        count += 1
        if mode == GITLINK_MODE:
            _parent(dest, rel, links)
            os.makedirs(os.path.join(os.fsencode(dest), rel), exist_ok=True)
            continue
        by_blob.setdefault(oid, []).append((mode, rel))
        if mode == SYMLINK_MODE:
            links.add(rel)
    _write_blobs(git, dest, by_blob, links)
    return count


def copy_workspace(src: str, dest: str) -> None:
    """Another workspace like ``src`` (for ``--jobs``): links copied as links."""
    shutil.copytree(src, dest, symlinks=True)


def _safe_path(path: str) -> bytes:
    """The path as bytes; a path git would never check out (``..``, ``.git``, empty or
    absolute components) stops the export."""
    parts = path.split("/")
    if any(p in ("", ".", "..") or fold_path(p) == ".git" for p in parts):
        raise EvidenceError(
            f"the tree holds a path no checkout would write: {path!r}",
            fix="the base or candidate is malformed (git fsck); it cannot be judged",
        )
    return os.fsencode(path)


def _parent(dest: str, rel: bytes, links: set[bytes]) -> bytes:
    """Create the directories above ``rel``, never through a link the export wrote."""
    parts = rel.split(b"/")
    for depth in range(1, len(parts)):
        if b"/".join(parts[:depth]) in links:
            raise EvidenceError(
                f"the tree puts {os.fsdecode(rel)!r} under a symlink",
                fix="the base or candidate is malformed (git fsck); it cannot be judged",
            )
    full = os.path.join(os.fsencode(dest), rel)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    return full


def _write_blobs(
    git: Git, dest: str, by_blob: dict[str, list[tuple[str, bytes]]], links: set[bytes]
) -> None:
    """Read the blobs in bulk (``batch.read_blobs``, the lock's reader) and write each
    where the tree puts it, never through a link the export wrote."""

    def take(oid: str, _size: int, content: batch.Content) -> None:
        if isinstance(content, memoryview):
            data = bytes(content)
        else:  # larger than the reader's buffer: pieces of a buffer it reuses
            data = b"".join([bytes(piece) for piece in content])
        for mode, rel in by_blob[oid]:
            full = _parent(dest, rel, links)
            if mode == SYMLINK_MODE:
                os.symlink(data, full)
                continue
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(full, flags, 0o777 if mode == "100755" else 0o666)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)

    batch.read_blobs(git, list(by_blob), take)


def read_patch(path: str) -> bytes:
    """The patch file a judgement is asked to apply to the base."""
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"cannot read the patch {path}: {exc.strerror}") from None
