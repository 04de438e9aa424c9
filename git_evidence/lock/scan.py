"""A note validated by scanning its bytes: the common shape of a lock record (printable
ASCII, no escape, files that are plain blobs) checked in a few passes over the bytes,
where ``record.parse_note`` builds and checks one object per file.

``scan_note`` says yes only where ``parse_note`` would accept the same bytes, and then
what it would say (the summary, and the paths of the files); anything else (a gitlink,
an LFS pointer, an escaped or non-ASCII path, a broken note) is left to ``parse_note``,
which says why. Apart from record.py because it is a shortcut whose proof is its own:

* printable ASCII without a backslash: every ``"`` delimits a string, and a string is
  its bytes (no escape to decode, none to write back);
* the note is ``P + S + T``, ``P`` the fixed head ``{"commit":"<commit>","files":{``
  and ``T`` from ``},"pinned_at":"`` on. ``parse_note(P + T)`` checks everything but
  the files (the same function, on the same record with no file);
* ``S`` is checked to be exactly what ``Lock.canonical`` writes for its files: each
  ``"path":{"blob":"<oid>","mode":"<mode>","sha256":"<hex>","size":<n>}``, joined by
  commas, the paths strictly increasing (bytes order is str order for ASCII), every
  field of the shape ``record._entry`` requires. Then ``P + S + T`` parses to the
  record of ``P + T`` with these files, whose canonical bytes are ``P + S + T``."""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import NamedTuple

from git_evidence.core.oids import Oid
from git_evidence.lock.record import CachedLock, LockInvalid, parse_note, pin_digest

PRINTABLE = bytes(range(0x20, 0x7F))
HEX = b"0123456789abcdef"
TAIL = b'},"pinned_at":"'
# The tokens of one file between two quotes, after its path: `:{`, `blob`, `:`, the
# blob id, `,`, `mode`, `:`, the mode, `,`, `sha256`, `:`, the hash, `,`, `size`,
# then `:<size>},` (`:<size>}` for the last file).
FIXED: tuple[tuple[int, bytes], ...] = (
    *((1, b":{"), (2, b"blob"), (3, b":"), (5, b","), (6, b"mode"), (7, b":")),
    *((9, b","), (10, b"sha256"), (11, b":"), (13, b","), (14, b"size")),
)
WIDTH = 16
# the size tokens joined by `"` (which no token holds): one `:<size>}` each, commas
# between, sizes written as Python writes an int, of fewer digits than its limit on
# parsing one (past it json.loads refuses the note)
SIZES = re.compile(rb'(?::(?:0|[1-9][0-9]{0,17})\},")*:(?:0|[1-9][0-9]{0,17})\}')
MODE = re.compile(rb"1[0-7]{5}")
GITLINK = b"160000"


class Scanned(NamedTuple):
    """What ``parse_note`` would say of a note: its summary and its files' paths."""

    summary: CachedLock
    paths: list[bytes]


def scan_note(data: bytes, annotated: Oid) -> Scanned | None:
    """``data``'s summary and paths when it is a valid lock record of the common shape
    pinning ``annotated``; None when the full parse must decide."""
    head = b'{"commit":"' + annotated.encode("ascii", "replace") + b'","files":{'
    if not data.startswith(head) or data.translate(None, PRINTABLE) or b"\\" in data:
        return None
    end = data.find(TAIL, len(head))
    if end < 0:
        return None
    try:
        empty = parse_note(head + data[end:], annotated)  # all but the files
    except LockInvalid:
        return None
    paths = _paths(data[len(head) : end])
    if paths is None:
        return None
    present = [root.encode() for root, tree in empty.trees.items() if tree is not None]
    # As record.outside_roots counts them: the paths sorted, those under a root (or
    # equal to it) are a run of them, found by bisection.
    runs = sorted(
        (bisect_left(paths, lo), bisect_left(paths, hi))
        for root in present
        for lo, hi in ((root, root + b"\0"), (root + b"/", root + b"0"))
    )
    covered, reach = 0, 0
    for start, stop in runs:
        covered += max(0, stop - max(start, reach))
        reach = max(reach, stop)
    summary = CachedLock(
        empty.commit,
        dict(empty.trees),
        pin_digest(data),
        len(paths),
        empty.pinned_by,
        empty.pinned_at,
        len(paths) - covered,
    )
    return Scanned(summary, paths)


def _paths(body: bytes) -> list[bytes] | None:
    """The paths of ``body`` (a files object's inside) when it is exactly what
    ``Lock.canonical`` writes for plain blob files; None otherwise."""
    if not body:
        return []
    tokens = body.split(b'"')
    count, rest = divmod(len(tokens) - 1, WIDTH)
    if tokens[0] or rest or not count:
        return None
    for at, want in FIXED:
        if tokens[1 + at :: WIDTH].count(want) != count:
            return None
    blobs, hashes = tokens[5::WIDTH], tokens[13::WIDTH]
    if not set(map(len, blobs)) <= {40, 64} or b"".join(blobs).translate(None, HEX):
        return None
    if set(map(len, hashes)) != {64} or b"".join(hashes).translate(None, HEX):
        return None
    modes = set(tokens[9::WIDTH])
    if GITLINK in modes or not all(MODE.fullmatch(mode) for mode in modes):
        return None  # a gitlink's record has other fields
    if not SIZES.fullmatch(b'"'.join(tokens[16::WIDTH])):
        return None
    paths = tokens[1::WIDTH]
    if not all(map(bytes.__lt__, paths, paths[1:])):
        return None  # not in order, or one twice
    return paths
