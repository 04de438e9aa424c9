"""A manifest of the fixture tree, built from git objects, never from a checkout:
``git ls-tree -r`` lists the lock roots (a previous manifest patched with ``diff-tree``)
and ``cat-file --batch --buffer`` (``batch.read_blobs``) streams the blobs to be
hashed (a caller may hand it those a checkout's files provably hold: ``on_disk``).
Also: comparing two manifests. It builds on any previous ``Manifest`` (trees and
files), so it never imports the lock."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import NamedTuple, Protocol

from git_evidence.core.errors import GitError
from git_evidence.core.facts import Drift, Entry
from git_evidence.core.oids import Oid
from git_evidence.core.path_globs import fold_path, glob_regex
from git_evidence.core.paths import GITLINK_MODE
from git_evidence.lock.walk import tree_ids as tree_ids  # where it was first
from git_evidence.plumbing import batch
from git_evidence.plumbing.git import Git

LFS_HEADER = b"version https://git-lfs.github.com/spec/v1\n"
LFS_MAX = 1024  # git-lfs never writes a larger pointer


class Manifest(Protocol):
    """What a manifest is built on: a previous one's root trees and files (a
    ``record.Lock`` is one; manifest.py knows no lock)."""

    @property
    def trees(self) -> Mapping[str, str | None]: ...

    @property
    def files(self) -> Mapping[str, Entry]: ...


class Listed(NamedTuple):
    """A manifest as ``build_manifest`` returns it, to build another on."""

    trees: Mapping[str, str | None]
    files: Mapping[str, Entry]


class Hashed(NamedTuple):
    size: int
    sha256: str
    lfs: str | None


# Blob id → the files (mode, path) that hold it, in; the blobs hashed elsewhere, out.
OnDisk = Callable[[Mapping[Oid, Sequence[tuple[str, str]]]], dict[str, Hashed]]


def hash_blobs(
    git: Git, oids: Sequence[str], progress: Callable[[int, int], None] | None = None
) -> dict[str, Hashed]:
    """SHA-256 (and the LFS pointer a small blob may be) of each blob, read in bulk
    (``batch.read_blobs``: one ``cat-file`` process per CPU, hashed in their threads)."""
    return batch.read_blobs(git, oids, _hashed, progress)


def _hashed(_oid: str, size: int, content: batch.Content) -> Hashed:
    if isinstance(content, memoryview):
        return whole(content)
    digest = hashlib.sha256()  # larger than the reader's buffer: hashed piece by piece
    for piece in content:
        digest.update(piece)
    return Hashed(size, digest.hexdigest(), None)


def whole(content: bytes | memoryview) -> Hashed:
    """A blob's size, SHA-256 and the LFS pointer it may be, from its whole bytes."""
    size = len(content)
    lfs = lfs_pointer(bytes(content)) if size <= LFS_MAX else None
    return Hashed(size, hashlib.sha256(content).hexdigest(), lfs)


def lfs_pointer(data: bytes) -> str | None:
    if not data.startswith(LFS_HEADER):
        return None
    fields = dict(
        line.split(" ", 1) for line in data.decode("utf-8", "replace").splitlines() if " " in line
    )
    oid, size = fields.get("oid", ""), fields.get("size", "")
    if not oid.startswith("sha256:") or " " in oid or not size.isdigit():
        return None
    return f"{oid} {size}"


class Excluder:
    def __init__(self, globs: Iterable[str]) -> None:
        alternatives = [glob_regex(g) for g in globs]
        self._regex = (
            re.compile("|".join(f"(?:{a})" for a in alternatives)) if alternatives else None
        )

    def __call__(self, path: str) -> bool:
        return self._regex is not None and self._regex.fullmatch(fold_path(path)) is not None

    def among(self, paths: Sequence[str]) -> set[str]:
        """The excluded ones of ``paths``, as ``__call__`` says. ASCII paths without a
        backslash (nearly all) are folded in one pass over their joined text."""
        if self._regex is None or not paths:
            return set()
        text = "\0".join(paths)
        folded: list[str] = []
        if text.isascii() and "\\" not in text:
            folded = _TRAILING_EACH.sub("", text.lower()).split("\0")
        if len(folded) != len(paths):  # not ASCII (or a NUL, which git never lists)
            folded = [fold_path(path) for path in paths]
        match = self._regex.fullmatch
        return {path for path, fold in zip(paths, folded, strict=True) if match(fold)}


# fold_path's ASCII case (lower case, no trailing dots or spaces on a component) for
# NUL-separated paths: a run of dots and spaces before a slash, a NUL or the end.
_TRAILING_EACH = re.compile(r"[. ]+(?=[/\0]|\Z)")


def root_trees(git: Git, rev: str, roots: Sequence[str]) -> dict[str, str | None]:
    """Each root's tree id at ``rev``; None where the root is missing, and the object
    id prefixed with its type where something else (a file, a link) stands there."""
    return tree_ids(roots, batch.check(git, [f"{rev}:{root}" for root in roots]))


def build_manifest(
    git: Git,
    rev: str,
    roots: Sequence[str],
    exclude: Sequence[str],
    previous: Manifest | None = None,
    progress: Callable[[int, int], None] | None = None,
    trees: Mapping[str, str | None] | None = None,
    on_disk: OnDisk | None = None,
    hashed: bool = True,
) -> tuple[dict[str, str | None], dict[str, Entry]]:
    """The trees and files of ``rev`` under ``roots``.

    From a previous lock: a root whose tree equals the lock's is copied from it; a root
    whose tree changed is the lock's files with what ``git diff-tree`` reports between
    the two trees applied (git reads only the subtrees whose ids differ, so a re-pin
    after one changed file lists one directory, not 10,000 files); blobs the lock
    already hashed are not read again. Other roots are listed with ``ls-tree``. Only
    listed or changed paths go through the exclusions: a path unchanged since the
    previous lock keeps the place it has there (as a whole unchanged root always did).
    ``on_disk``: the blobs whose bytes a checkout holds, hashed from there (disk.py's
    ``from_checkout``: only where the bytes are the blob's); the rest are read from git.
    ``hashed=False``: a blob no previous entry hashed is listed by its id alone (no
    size, no SHA-256), for a comparison that hashes only what differs (``drift_between``)."""
    trees = dict(trees) if trees is not None else root_trees(git, rev, roots)
    files: dict[str, Entry] = {}
    copied: list[str] = []  # roots taken from the previous lock (then patched)
    patches: list[tuple[str, list[tuple[str, str, Oid, str]]]] = []
    to_list: list[str] = []
    for root in roots:
        new = trees[root]
        old = previous.trees.get(root) if previous is not None else None
        if new is None:
            continue
        if old == new:
            copied.append(root)
        elif old is not None and _is_tree(old) and _is_tree(new):
            try:
                patches.append((root, git.changed_files(old, new)))
                copied.append(root)
            except GitError:  # the lock names a tree this repository lacks
                to_list.append(root)
        else:
            to_list.append(root)
    if copied:
        assert previous is not None
        exact = set(copied)  # a root that is itself a file (or link) in both
        under = tuple(root + "/" for root in copied)
        files.update((p, e) for p, e in previous.files.items() if p.startswith(under) or p in exact)
    excluded = Excluder(exclude)
    listed: list[tuple[str, Oid, str]] = []  # (mode, object id, path) to record
    for root, changes in patches:
        # Deletions first: a file replaced by a directory (or the reverse) is reported
        # as a deletion and additions of the same paths.
        for status, _, _, path in changes:
            if status == "D":
                files.pop(f"{root}/{path}", None)
        for status, mode, oid, path in changes:
            if status != "D":
                listed.append((mode, oid, f"{root}/{path}"))
    if to_list:
        listed.extend(git.ls_tree(rev, to_list))
    known: dict[str, Entry] | None = None
    pending: dict[Oid, list[tuple[str, str]]] = {}
    dropped = excluded.among([path for _, _, path in listed])
    for mode, oid, path in listed:
        if path in dropped:
            files.pop(path, None)
            continue
        if mode == GITLINK_MODE:
            files[path] = Entry(mode, oid)
            continue
        if known is None:
            known = {} if previous is None else _hashes(previous)
        old_entry = known.get(oid)
        if old_entry is not None:
            files[path] = Entry(mode, oid, old_entry.size, old_entry.sha256, old_entry.lfs)
        else:
            pending.setdefault(oid, []).append((mode, path))
    if not hashed:
        for oid, users in pending.items():
            files.update((path, Entry(mode, oid)) for mode, path in users)
        return trees, dict(sorted(files.items()))
    found = on_disk(pending) if on_disk is not None and pending else {}
    found.update(hash_blobs(git, [oid for oid in pending if oid not in found], progress))
    for oid, users in pending.items():
        got = found[oid]
        for mode, path in users:
            files[path] = Entry(mode, oid, got.size, got.sha256, got.lfs)
    return trees, dict(sorted(files.items()))


def drift_between(
    git: Git,
    base: str,
    new: str,
    roots: Sequence[str],
    exclude: Sequence[str],
    trees: tuple[Mapping[str, str | None], Mapping[str, str | None]],
) -> list[Drift]:
    """What ``new`` changes under ``roots`` against ``base`` when no lock gives the
    base's hashes: both sides listed by blob id, and only the blobs of the paths that
    differ hashed. Equal mode and blob id mean equal bytes, so the paths left out are
    the ones a comparison of two fully hashed manifests finds equal, and the paths kept
    are compared hashed: the same drift, read from the few blobs that changed."""
    base_trees, new_trees = trees
    _, before = build_manifest(git, base, roots, exclude, trees=base_trees, hashed=False)
    listed = Listed(base_trees, before)
    _, after = build_manifest(git, new, roots, exclude, listed, trees=new_trees, hashed=False)
    # compare() reads digests, which these entries lack: mode and blob id tell here
    paths = [p for p in sorted(set(before) | set(after)) if before.get(p) != after.get(p)]
    old = {p: before[p] for p in paths if p in before}
    now = {p: after[p] for p in paths if p in after}
    unhashed = {
        e.blob for e in (*old.values(), *now.values()) if e.mode != GITLINK_MODE and e.size is None
    }
    got = hash_blobs(git, sorted(unhashed)) if unhashed else {}

    def full(entry: Entry) -> Entry:
        if entry.blob not in unhashed or entry.mode == GITLINK_MODE:
            return entry
        hit = got[entry.blob]
        return Entry(entry.mode, entry.blob, hit.size, hit.sha256, hit.lfs)

    return compare({p: full(e) for p, e in old.items()}, {p: full(e) for p, e in now.items()})


def _is_tree(recorded: str) -> bool:
    """A root's recorded id names a tree (``tree_ids`` prefixes anything else)."""
    return ":" not in recorded


def _hashes(previous: Manifest) -> dict[str, Entry]:
    """Blob id → an entry of ``previous`` with that blob (its size and hashes)."""
    return {e.blob: e for e in previous.files.values() if e.mode != GITLINK_MODE}


def compare(locked: Mapping[str, Entry], actual: Mapping[str, Entry]) -> list[Drift]:
    drift: list[Drift] = []
    for path in sorted(set(locked) | set(actual)):
        old, new = locked.get(path), actual.get(path)
        if old == new:
            continue
        if old is None:
            drift.append(Drift(path, "added", None, new))
        elif new is None:
            drift.append(Drift(path, "removed", old, None))
        elif old.digest == new.digest and old.mode != new.mode:
            drift.append(Drift(path, "mode", old, new))
        elif old.digest != new.digest or old.mode != new.mode:
            kind = "lfs" if (old.lfs or new.lfs) and old.lfs != new.lfs else "modified"
            drift.append(Drift(path, kind, old, new))
    return drift
