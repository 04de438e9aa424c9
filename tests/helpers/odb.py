"""The independent reader: what a repository holds, read by GitPython's pure-Python
object database (``gitdb``: loose objects and packs parsed in Python, no git process),
and repositories generated for it to read (``git fast-import``, so that any path, mode
and history can be written).

The tool never imports GitPython; the tests hold the tool's own plumbing to what this
reader reads. The raw changes of a commit are computed here from the trees alone (with
renames off, a change is a leaf whose mode or object differs), so a disagreement points
at one of the two readers, never at a shared assumption."""

from __future__ import annotations

import subprocess
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import git as gitpython  # GitPython, under the name that does not hide the tests' `git`
from git.objects.fun import tree_entries_from_data

ZERO = "0" * 40
NO_MODE = "000000"
# A leaf of a flattened tree: (mode as git writes it in a raw row, object id).
Leaf = tuple[str, str]


class Independent:
    """One repository as GitPython's pure-Python object database reads it."""

    def __init__(self, path: Path) -> None:
        with warnings.catch_warnings():
            # GitPython deprecates this database for reading repositories it does not
            # trust, and as slower than asking git: here its being pure Python, apart
            # from git, is the point.
            warnings.simplefilter("ignore", DeprecationWarning)
            self.repo = gitpython.Repo(str(path), odbt=gitpython.GitDB)
        assert isinstance(self.repo.odb, gitpython.GitDB)

    def close(self) -> None:
        self.repo.close()

    def __enter__(self) -> Independent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def object(self, oid: str) -> tuple[str, bytes]:
        """``(type, content)`` of an object, inflated (and its deltas applied) in
        Python."""
        stream = self.repo.odb.stream(bytes.fromhex(oid))
        return stream.type.decode(), stream.read()

    def commit(self, oid: str) -> tuple[str, list[str]]:
        """A commit's tree and parents, read from its raw object."""
        kind, data = self.object(oid)
        assert kind == "commit"
        tree, parents = "", []
        for line in data.split(b"\n\n", 1)[0].split(b"\n"):
            name, _, value = line.partition(b" ")
            if name == b"tree":
                tree = value.decode()
            elif name == b"parent":
                parents.append(value.decode())
        return tree, parents

    def tree(self, oid: str) -> list[tuple[int, str, str]]:
        """``(mode, name, object id)`` of each entry of one tree, GitPython's parse."""
        kind, data = self.object(oid)
        assert kind == "tree"
        return [(mode, name, sha.hex()) for sha, mode, name in tree_entries_from_data(data)]

    def leaves(self, tree: str | None, prefix: str = "") -> dict[str, Leaf]:
        """Every non-tree entry under ``tree`` (None: the empty tree), by full path."""
        found: dict[str, Leaf] = {}
        if tree is None:
            return found
        for mode, name, oid in self.tree(tree):
            path = prefix + name
            if mode >> 12 == 4:
                found.update(self.leaves(oid, path + "/"))
            else:
                found[path] = (f"{mode:06o}", oid)
        return found

    def changes(self, commit: str) -> set[tuple[str, str, str, str, str, str]]:
        """What ``diff-tree -r --raw --no-renames -c --root`` lists for ``commit``:
        ``(status, old mode, new mode, old id, new id, path)``, the old side being the
        first parent's. A merge lists the paths whose result differs from every
        parent (git's combined rows): added where every parent lacks the path,
        deleted where the result lacks it, else modified."""
        tree, parents = self.commit(commit)
        new = self.leaves(tree)
        olds = [self.leaves(self.commit(p)[0]) for p in parents] or [{}]
        rows = set()
        for path in set(new).union(*olds):
            after = new.get(path)
            befores = [old.get(path) for old in olds]
            if any(before == after for before in befores):
                continue
            first = befores[0]
            if len(befores) > 1:
                status = "A" if all(b is None for b in befores) else "D" if after is None else "M"
            elif first is None:
                status = "A"
            elif after is None:
                status = "D"
            else:
                status = "M" if _kind(first[0]) == _kind(after[0]) else "T"
            old_mode, old_oid = first or (NO_MODE, ZERO)
            new_mode, new_oid = after or (NO_MODE, ZERO)
            rows.add((status, old_mode, new_mode, old_oid, new_oid, path))
        return rows

    def notes(self, ref: str) -> dict[str, str]:
        """Annotated object → note blob, from the notes commit's tree (its fan-out
        directories joined back into the annotated object's id)."""
        commit = self.repo.commit(ref).hexsha  # the ref read by GitPython itself
        tree, _ = self.commit(commit)
        return {path.replace("/", ""): oid for path, (_, oid) in self.leaves(tree).items()}


def _kind(mode: str) -> str:
    return mode[:-4]  # 100 regular, 120 symlink, 160 gitlink (040: trees, never a leaf)


# -- repositories written by fast-import ----------------------------------------------


@dataclass
class Commit:
    """One commit to write: its first parent is the commit before it (the first one
    has none), ``merge`` names earlier commits (by index) as further parents; each
    ``set`` is ``path -> (mode, content)`` (a gitlink's content is the commit id it
    names), each ``remove`` a path."""

    set: Mapping[bytes, tuple[str, bytes]] = field(default_factory=dict)
    remove: Sequence[bytes] = ()
    merge: Sequence[int] = ()


def quoted(path: bytes) -> bytes:
    """A path as fast-import reads it: C-style quoted, every byte outside printable
    ASCII as an octal escape (a newline, a non-UTF-8 byte)."""
    out = bytearray(b'"')
    for byte in path:
        if byte in b'"\\':
            out += b"\\" + bytes([byte])
        elif 0x20 <= byte < 0x7F:
            out.append(byte)
        else:
            out += b"\\%03o" % byte
    return bytes(out + b'"')


def fast_import(path: Path, commits: Sequence[Commit], branch: str = "main") -> list[str]:
    """Write ``commits`` into the repository at ``path`` on ``branch``; their ids."""
    stream = bytearray()
    for index, commit in enumerate(commits, start=1):
        message = b"commit %d" % index
        stream += b"commit refs/heads/%s\nmark :%d\n" % (branch.encode(), index)
        stream += b"committer C <c@example.com> %d +0000\n" % (1_700_000_000 + index)
        stream += b"data %d\n%s\n" % (len(message), message)
        if index > 1:
            stream += b"from :%d\n" % (index - 1)
        for other in commit.merge:
            stream += b"merge :%d\n" % (other + 1)
        for name in commit.remove:
            stream += b"D %s\n" % quoted(name)
        for name, (mode, content) in commit.set.items():
            if mode == "160000":
                stream += b"M 160000 %s %s\n" % (content, quoted(name))
            else:
                stream += b"M %s inline %s\ndata %d\n%s\n" % (
                    mode.encode(),
                    quoted(name),
                    len(content),
                    content,
                )
    stream += b"".join(b"get-mark :%d\n" % i for i in range(1, len(commits) + 1))
    done = subprocess.run(
        ["git", "fast-import", "--quiet", "--force"],
        cwd=path,
        input=bytes(stream),
        capture_output=True,
        check=True,
    )
    return done.stdout.decode().split()
