"""Writing objects and moving refs: trees built from the trees they change, commits
rewritten as raw objects, refs moved only from the value they were read at (what
``split`` writes). git.py, batch.py and stream.py read; this writes, as notes.py writes
notes. Like git.py it decides nothing.

Trees: a split's new tree is its parent's tree with some of the commit's rows applied.
Only the directories on the changed paths are rebuilt, each read through the open
``cat-file --batch`` and written by one ``git mktree -z --batch`` (git sorts and checks
the entries): the work follows the change, not the repository's size, and neither the
working tree nor any index is read or written. A temporary index (``read-tree``,
``update-index --index-info``, ``write-tree`` under ``GIT_INDEX_FILE``) gives the same
trees but reads and writes every path of the tree on each split: 75 ms per split at
12,000 files, against under 5 ms here, and one split may take 300 ms in all.

Commits: computed here (their ids too) and written in one pack through ``git
unpack-objects --strict`` (``index-pack --stdin --strict`` past fetch's 100-object
limit), so git checks their format and links; one process for a whole range.

Why plumbing and not GitPython, measured (git 2.39, GitPython 3.2, a 5,000-file tree):

* ``IndexFile.from_tree`` moves the repository's own index aside while ``read-tree``
  runs (``TemporaryFileSwap``): a concurrent git, or a Ctrl-C, would find no index.
* ``IndexFile.new`` + ``write_tree`` walk and write the whole tree in Python: ~90 ms
  for 5,000 files, linear in the tree; ``import git`` adds ~55 ms.
* GitPython encodes paths as strict UTF-8 (``write_tree`` raises UnicodeEncodeError on
  a non-UTF-8 file name), decodes and re-encodes messages (a message that is not valid
  in its encoding comes back with other bytes), and has no SHA-256 repositories.

A rewrite must keep every byte it does not mean to change: commits are copied with
only their tree, parents and first line changed.
"""

from __future__ import annotations

import hashlib
import struct
import subprocess
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from git_evidence.core.errors import EvidenceError, GitError
from git_evidence.core.oids import Oid
from git_evidence.plumbing import batch
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.stream import finish

TREE_MODE = b"40000"
GITLINK_MODE = b"160000"
# A rewritten commit no longer matches its signature: drop it rather than keep a
# signature that fails verification.
_DROPPED_HEADERS = (b"tree", b"parent", b"gpgsig", b"gpgsig-sha256")
_PACK_TYPES = {"commit": 1, "tree": 2, "blob": 3}
# Below this many objects fetch unpacks loose objects rather than keep a pack
# (transfer.unpackLimit's default).
UNPACK_LIMIT = 100


class TreeEdit(NamedTuple):
    """One path to set (``mode``, ``oid``) or, with mode ``000000``, remove: a row of
    ``diff-tree --raw``, its new side."""

    mode: str
    oid: Oid
    path: bytes


class RefMoved(EvidenceError):
    """A ref was not where it was read: nothing was written."""

    rule = "ref-moved"


def object_id(kind: str, data: bytes, like: str) -> Oid:
    """The id git gives an object of ``kind`` with ``data``, in the hash of ``like``."""
    digest = hashlib.sha256() if len(like) == 64 else hashlib.sha1()
    digest.update(b"%s %d\0" % (kind.encode(), len(data)))
    digest.update(data)
    return Oid(digest.hexdigest())


@dataclass
class _Dir:
    """The edits under one directory: its own entries, and its subdirectories'."""

    entries: dict[bytes, TreeEdit] = field(default_factory=dict)
    subdirs: dict[bytes, _Dir] = field(default_factory=dict)


class TreeBuilder:
    """Builds trees from a tree and edits, through one ``git mktree -z --batch``
    (started when the first tree is written)."""

    def __init__(self, git: Git, cat: CatFile) -> None:
        self._git = git
        self._cat = cat
        self._proc: subprocess.Popen[bytes] | None = None

    def build(self, base_tree: Oid | None, edits: Sequence[TreeEdit]) -> Oid:
        """``base_tree`` (None: the empty tree) with ``edits`` applied. Setting a path
        replaces whatever stands there, a directory included, and a file in the way of
        a new directory is replaced by it (as ``update-index --index-info`` does); a
        directory left empty disappears, as git stores none."""
        root = _Dir()
        for edit in edits:
            *parents, name = edit.path.split(b"/")
            node = root
            for part in parents:
                node = node.subdirs.setdefault(part, _Dir())
            node.entries[name] = edit
        tree = self._write(base_tree, root, top=True)
        assert tree is not None  # the top tree is written even when empty
        return tree

    def _write(self, tree: Oid | None, node: _Dir, top: bool = False) -> Oid | None:
        entries = self._read(tree) if tree else {}
        for name, edit in node.entries.items():  # in diff-tree's order, as git applies them
            if edit.mode.strip("0"):
                entries[name] = (edit.mode.lstrip("0").encode(), edit.oid)
            elif name in entries and entries[name][0] != TREE_MODE:
                del entries[name]
        for name, sub in node.subdirs.items():
            current = entries.get(name)
            inside = current[1] if current and current[0] == TREE_MODE else None
            new = self._write(inside, sub)
            if new is not None:
                entries[name] = (TREE_MODE, new)
            elif inside is not None:
                del entries[name]
        if not entries and not top:
            return None
        return self._mktree(entries)

    def _read(self, tree: Oid) -> dict[bytes, tuple[bytes, Oid]]:
        data = self._cat.read(tree)
        width = len(tree) // 2
        entries: dict[bytes, tuple[bytes, Oid]] = {}
        at = 0
        while at < len(data):
            space = data.index(b" ", at)
            nul = data.index(b"\0", space)
            oid = Oid(data[nul + 1 : nul + 1 + width].hex())
            entries[data[space + 1 : nul]] = (data[at:space], oid)
            at = nul + 1 + width
        return entries

    def _mktree(self, entries: dict[bytes, tuple[bytes, Oid]]) -> Oid:
        rows = []
        for name, (mode, oid) in entries.items():
            kind = b"tree" if mode == TREE_MODE else b"commit" if mode == GITLINK_MODE else b"blob"
            rows.append(b"%s %s %s\t%s\0" % (mode, kind, oid.encode(), name))
        if self._proc is None:
            self._proc = self._git.popen("mktree", "-z", "--batch")
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(b"".join(rows) + b"\0")  # an empty record ends the tree
            proc.stdin.flush()
            line = proc.stdout.readline()
        except OSError:
            line = b""
        if not line:  # git ended: what it said, then its pipes closed
            stderr = proc.stderr.read() if proc.stderr else b""
            self.close()
            raise GitError(["git", "mktree", "-z", "--batch"], proc.returncode or 128, b"", stderr)
        return Oid(line.decode().strip())

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            finish(proc)

    def __enter__(self) -> TreeBuilder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def rewrite_commit(raw: bytes, tree: Oid, parents: Sequence[Oid], suffix: bytes = b"") -> bytes:
    """The raw commit ``raw`` with another tree and parents, and ``suffix`` appended to
    the first line of its message; every other header (author, committer and their
    dates, encoding) and every other byte of the message is kept. A signature is
    dropped."""
    head, sep, message = raw.partition(b"\n\n")
    if not sep:  # a commit with no message has no blank line either
        head, message = raw.rstrip(b"\n"), b""
    kept: list[bytes] = []
    dropping = False
    for line in head.split(b"\n"):
        if line.startswith(b" "):  # continuation of a multi-line header
            if not dropping:
                kept.append(line)
            continue
        dropping = line.split(b" ", 1)[0] in _DROPPED_HEADERS
        if not dropping:
            kept.append(line)
    lines = [b"tree " + tree.encode(), *(b"parent " + p.encode() for p in parents), *kept]
    return b"\n".join(lines) + b"\n\n" + _suffixed(message, suffix)


def _suffixed(message: bytes, suffix: bytes) -> bytes:
    """``suffix`` at the end of the first line (before its CR, if it has one)."""
    if not suffix:
        return message
    end = message.find(b"\n")
    first, rest = (message, b"") if end < 0 else (message[:end], message[end:])
    if first.endswith(b"\r"):
        first, rest = first[:-1], b"\r" + rest
    return (first + suffix if first.strip() else suffix.strip()) + rest


def tree_of(raw: bytes) -> Oid:
    """The tree id of a raw commit."""
    if not raw.startswith(b"tree "):
        raise EvidenceError("a commit object does not start with its tree", fix="run git fsck")
    return Oid(raw[5 : raw.index(b"\n")].decode())


def write_objects(git: Git, objects: Sequence[tuple[Oid, str, bytes]]) -> None:
    """Write ``(id, type, data)`` objects whose ids the caller computed (``object_id``)
    as one pack, through ``unpack-objects`` (loose objects) or, for many, ``index-pack``
    (one pack file), as a fetch would; ``--strict`` has git check every object's format
    and that what it names exists. Then every id must name an object of its type."""
    if not objects:
        return
    like = objects[0][0]
    parts = [b"PACK", struct.pack(">II", 2, len(objects))]
    for _, kind, data in objects:
        size = len(data)
        header = bytearray()
        byte = (_PACK_TYPES[kind] << 4) | (size & 0x0F)
        size >>= 4
        while size:
            header.append(byte | 0x80)
            byte, size = size & 0x7F, size >> 7
        header.append(byte)
        parts += [bytes(header), zlib.compress(data, 1)]
    pack = b"".join(parts)
    pack += (hashlib.sha256 if len(like) == 64 else hashlib.sha1)(pack).digest()
    if len(objects) < UNPACK_LIMIT:
        git.run("unpack-objects", "-q", "--strict", input=pack)
    else:
        git.run("index-pack", "--stdin", "--strict", input=pack)
    found = batch.check(git, [oid for oid, _, _ in objects])
    for (oid, kind, _), hit in zip(objects, found, strict=True):
        if hit != (oid, kind):
            raise GitError(
                ["git", "cat-file", "--batch-check"],
                0,
                b"",
                f"{kind} {oid} was not written as computed: nothing was moved".encode(),
            )


def move_refs(git: Git, moves: Sequence[tuple[str, Oid, Oid | None]], message: str) -> None:
    """Move every ``(ref, new, old)`` at once, each only if it still points at ``old``
    (None: only if it does not exist yet); all or nothing (``update-ref --stdin``).
    ``HEAD`` is moved itself (a detached HEAD), never the branch it might name."""
    commands = []
    for ref, new, old in moves:
        if ref == "HEAD":
            commands.append(b"option no-deref\0")
        if old is None:
            commands.append(b"create %s\0%s\0" % (_ref_bytes(ref), new.encode()))
        else:
            commands.append(b"update %s\0%s\0%s\0" % (_ref_bytes(ref), new.encode(), old.encode()))
    try:
        git.run("update-ref", "-m", message, "-z", "--stdin", input=b"".join(commands))
    except GitError as failed:
        for ref, _new, old in moves:
            now = ref_value(git, ref)
            if now != old:
                where = f"is at {now[:12]}" if now else "does not exist"
                expected = old[:12] if old else "no such ref"
                raise RefMoved(
                    f"{ref} changed while this ran (it {where}, expected {expected}): "
                    "nothing was moved",
                    fix="look at what moved it, then run the command again",
                ) from failed
        raise


def _ref_bytes(ref: str) -> bytes:
    return ref.encode("utf-8", "surrogateescape")


def ref_value(git: Git, ref: str) -> Oid | None:
    """The object ``ref`` points at itself (a detached HEAD, a branch), or None."""
    code, out = git.run(
        "rev-parse", "--verify", "--quiet", "--end-of-options", ref, ok_codes=(0, 1, 128)
    )
    return Oid(out.decode().strip()) if code == 0 and out.strip() else None
