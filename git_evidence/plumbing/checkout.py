"""A checkout's files as git sees them: the index entries under some paths with the
stat data git recorded for each (``ls-files --debug``), and the blob id git would store
for a file on disk after the conversions its attributes ask for (``hash-object
--stdin-paths``). The lock reads them to hash only what changed in a work tree.

Apart from git.py because only a work tree's lock check asks them (``verify
--worktree``, the judge's export): the hooks, which never hash a checkout, never load
this."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import NamedTuple

from git_evidence.core.errors import GitError
from git_evidence.core.oids import Oid
from git_evidence.plumbing.git import Git

# git's stat checks as it ships them, whatever the checkout's configuration says: the
# change time counts, and no file system monitor vouches for a file git did not look at.
STAT_CHECKS = (
    *("-c", "core.fsmonitor=false", "-c", "core.checkStat=default"),
    *("-c", "core.trustctime=true"),
)
# One entry of `ls-files -s -v -z --debug`: "<tag> <mode> <oid> <stage>\t<path>\0" and
# its stat data, as git recorded them (times to the nanosecond, 32-bit fields).
ENTRY = re.compile(
    rb"([A-Za-z?]) ([0-7]+) ([0-9a-f]+) ([0-3])\t([^\0]*)\0"
    rb"  ctime: (\d+):(\d+)\n  mtime: (\d+):(\d+)\n  dev: \d+\tino: (\d+)\n"
    rb"  uid: \d+\tgid: \d+\n  size: (\d+)\tflags: [0-9a-f]+\n"
)


class IndexEntry(NamedTuple):
    """One line of ``ls-files -v -s --debug``: git's tag (``H`` cached, ``C`` modified,
    ``h``/``S``/``s`` marked assume-unchanged or skip-worktree, ``M`` unmerged), the
    entry's mode, blob and stage, its path (as ``os.walk`` names it) and the stat data
    the index holds for it (times as seconds and nanoseconds; inode and size in 32
    bits)."""

    tag: str
    mode: str
    oid: Oid
    stage: str
    path: str
    ctime: tuple[int, int]
    mtime: tuple[int, int]
    ino: int
    size: int


def index_entries(git: Git, roots: Sequence[str]) -> list[IndexEntry] | None:
    """The index entries under ``roots`` (names, not patterns), each cached one once
    and each that git finds modified once more tagged ``C``: one ``ls-files -c -m -s -v
    -z --debug`` with git's stat checks as shipped (``STAT_CHECKS``), so ``-m`` is
    git's own test (stat data, and the bytes where an entry is racily clean, as ``git
    status`` decides). None when the output does not parse (another git's ``--debug``
    format): the caller then trusts no entry. A failure of git is an error."""
    if not roots:
        return []
    out = git.out(
        *STAT_CHECKS,
        "--literal-pathspecs",
        *("ls-files", "-c", "-m", "-s", "-v", "-z", "--debug", "--", *roots),
    )
    entries: list[IndexEntry] = []
    at = 0
    for match in ENTRY.finditer(out):
        if match.start() != at:
            return None
        at = match.end()
        tag, mode, oid, stage = (field.decode("latin-1") for field in match.groups()[:4])
        c_s, c_ns, m_s, m_ns, ino, size = (int(n) for n in match.groups()[5:])
        path = os.fsdecode(match.group(5))
        entries.append(
            IndexEntry(tag, mode, Oid(oid), stage, path, (c_s, c_ns), (m_s, m_ns), ino, size)
        )
    return entries if at == len(out) else None


def checked_in_blobs(git: Git, paths: Sequence[str]) -> dict[str, str]:
    """The blob id git would store for each file (relative to the top of ``git``'s
    working tree) after the clean conversions its attributes ask for: one
    ``git hash-object --stdin-paths``. Every path is C-quoted as git unquotes it, so any
    byte in a name is safe. ``core.safecrlf`` is off: a file whose endings do not
    round-trip is a difference to report, not an error. A failure of git, or an answer
    that is not one id a path, is an error."""
    if not paths:
        return {}
    data = b"".join(c_quote(os.fsencode(p)) + b"\n" for p in paths)
    out = git.out("-c", "core.safecrlf=false", "hash-object", "--stdin-paths", input=data)
    oids = out.decode().split()
    if len(oids) != len(paths):
        raise GitError(
            ["git", "hash-object", "--stdin-paths"], 128, out, b"one blob id per path expected"
        )
    return dict(zip(paths, oids, strict=True))


_PLAIN = bytes(range(0x20, 0x7F)).replace(b'"', b"").replace(b"\\", b"")


def c_quote(raw: bytes) -> bytes:
    """A path as a C-style quoted string (git's ``unquote_c_style`` reads it back)."""
    if not raw.translate(None, _PLAIN):  # nothing to escape: the bytes themselves
        return b'"' + raw + b'"'
    out = bytearray(b'"')
    for byte in raw:
        if byte in b'"\\':
            out += b"\\" + bytes([byte])
        elif byte < 0x20 or byte >= 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    out += b'"'
    return bytes(out)
