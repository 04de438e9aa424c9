"""A manifest of the fixture tree, built from git objects, never from a checkout:
``git ls-tree -r`` lists the lock roots and one ``git cat-file --batch`` streams the
blobs to be hashed. Also: comparing two manifests."""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol, cast

from git_evidence.errors import GitError
from git_evidence.git import Git
from git_evidence.paths import GITLINK_MODE, fold_path, glob_regex

LFS_HEADER = b"version https://git-lfs.github.com/spec/v1\n"
LFS_MAX = 1024  # git-lfs never writes a larger pointer


class Entry(NamedTuple):
    """One file of a manifest. A gitlink has only ``mode`` and ``blob`` (the commit)."""

    mode: str
    blob: str
    size: int | None = None
    sha256: str | None = None
    lfs: str | None = None  # "sha256:<hex> <size>" when the blob is an LFS pointer

    def as_json(self) -> dict[str, Any]:
        if self.mode == GITLINK_MODE:
            return {"mode": self.mode, "commit": self.blob}
        doc: dict[str, Any] = {
            "mode": self.mode,
            "blob": self.blob,
            "size": self.size,
            "sha256": self.sha256,
        }
        if self.lfs is not None:
            oid, _, size = self.lfs.partition(" ")
            doc["lfs"] = {"oid": oid, "size": int(size)}
        return doc

    @property
    def digest(self) -> str:
        if self.mode == GITLINK_MODE:
            return f"commit:{self.blob}"
        return f"sha256:{self.sha256}"


class Manifest(Protocol):
    """What a manifest is built on: a previous one's root trees and files (a
    ``lock.Lock`` is one; manifest.py knows no lock)."""

    @property
    def trees(self) -> Mapping[str, str | None]: ...

    @property
    def files(self) -> Mapping[str, Entry]: ...


class Hashed(NamedTuple):
    size: int
    sha256: str
    lfs: str | None


def hash_blobs(
    git: Git, oids: Sequence[str], progress: Callable[[int, int], None] | None = None
) -> dict[str, Hashed]:
    """SHA-256 of each blob, streamed through one ``git cat-file --batch``.

    A thread writes the requests while this one reads; hashlib releases the GIL on
    large buffers, so git's inflating and our hashing run on both cores."""
    if not oids:
        return {}
    proc = git.popen("cat-file", "--batch", buffered=True)
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, cast(io.BufferedReader, proc.stdout)
    failure: list[BaseException] = []

    def feed() -> None:
        try:
            stdin.write(b"".join(oid.encode() + b"\n" for oid in oids))
        except BaseException as exc:  # handed to the reading thread
            failure.append(exc)
        finally:
            with contextlib.suppress(OSError):
                stdin.close()

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    result: dict[str, Hashed] = {}
    buffer = bytearray(1 << 20)
    try:
        for count, oid in enumerate(oids, start=1):
            header = stdout.readline().split()
            if len(header) != 3 or header[1] != b"blob":
                raise GitError(
                    ["git", "cat-file", "--batch"],
                    128,
                    b"",
                    f"blob {oid} is missing or not a blob".encode(),
                )
            size = int(header[2])
            if size + 1 > len(buffer):
                buffer = bytearray(size + 1)
            view = memoryview(buffer)[: size + 1]
            got = 0
            while got < size + 1:
                n = stdout.readinto(view[got:])
                if not n:
                    raise GitError(
                        ["git", "cat-file", "--batch"], 128, b"", b"object stream ended early"
                    )
                got += n
            data = view[:size]
            lfs = lfs_pointer(bytes(data)) if size <= LFS_MAX else None
            result[oid] = Hashed(size, hashlib.sha256(data).hexdigest(), lfs)
            if progress is not None and (count % 500 == 0 or count == len(oids)):
                progress(count, len(oids))
    finally:
        writer.join()
        stdout.close()
        proc.wait()
    if failure:
        raise failure[0]
    return result


def lfs_pointer(data: bytes) -> str | None:
    if not data.startswith(LFS_HEADER):
        return None
    fields = dict(
        line.split(" ", 1) for line in data.decode("utf-8", "replace").splitlines() if " " in line
    )
    oid, size = fields.get("oid", ""), fields.get("size", "")
    if not oid.startswith("sha256:") or not size.isdigit():
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


def root_trees(git: Git, rev: str, roots: Sequence[str]) -> dict[str, str | None]:
    """Each root's tree id at ``rev``; None where the root is missing, and the object
    id prefixed with its type where something else (a file, a link) stands there."""
    return tree_ids(roots, git.batch_check([f"{rev}:{root}" for root in roots]))


def tree_ids(roots: Sequence[str], hits: Sequence[tuple[str, str] | None]) -> dict[str, str | None]:
    """Root → tree id (None: missing; ``type:oid`` when a non-tree stands there)."""
    return {
        root: None if hit is None else hit[0] if hit[1] == "tree" else f"{hit[1]}:{hit[0]}"
        for root, hit in zip(roots, hits, strict=True)
    }


def build_manifest(
    git: Git,
    rev: str,
    roots: Sequence[str],
    exclude: Sequence[str],
    previous: Manifest | None = None,
    progress: Callable[[int, int], None] | None = None,
    trees: Mapping[str, str | None] | None = None,
) -> tuple[dict[str, str | None], dict[str, Entry]]:
    """The trees and files of ``rev`` under ``roots``. Roots whose tree equals the
    previous lock's are copied from it; blobs it already hashed are not read again."""
    trees = dict(trees) if trees is not None else root_trees(git, rev, roots)
    files: dict[str, Entry] = {}
    to_list = []
    for root in roots:
        same = (
            previous is not None
            and trees[root] is not None
            and previous.trees.get(root) == trees[root]
        )
        if same:
            assert previous is not None
            prefix = root + "/"
            files.update(
                (p, e) for p, e in previous.files.items() if p == root or p.startswith(prefix)
            )
        elif trees[root] is not None:
            to_list.append(root)
    known: dict[str, Entry] = {}
    if previous is not None:
        known = {e.blob: e for e in previous.files.values() if e.mode != GITLINK_MODE}
    excluded = Excluder(exclude)
    pending: dict[str, list[tuple[str, str]]] = {}
    if to_list:
        for mode, oid, path in git.ls_tree(rev, to_list):
            if excluded(path):
                continue
            if mode == GITLINK_MODE:
                files[path] = Entry(mode, oid)
            elif oid in known:
                old = known[oid]
                files[path] = Entry(mode, oid, old.size, old.sha256, old.lfs)
            else:
                pending.setdefault(oid, []).append((mode, path))
    hashed = hash_blobs(git, list(pending), progress)
    for oid, users in pending.items():
        got = hashed[oid]
        for mode, path in users:
            files[path] = Entry(mode, oid, got.size, got.sha256, got.lfs)
    return trees, dict(sorted(files.items()))


class Drift(NamedTuple):
    path: str
    kind: str  # added | removed | modified | mode | lfs
    old: Entry | None
    new: Entry | None

    def describe(self) -> str:
        old = self.old.digest[:23] if self.old else "-"
        new = self.new.digest[:23] if self.new else "-"
        if self.kind == "mode":
            return (
                f"{self.path}: mode {self.old.mode if self.old else '-'} -> "
                f"{self.new.mode if self.new else '-'}"
            )
        return f"{self.path}: {self.kind} ({old} -> {new})"


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
