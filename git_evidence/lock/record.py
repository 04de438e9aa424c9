"""The lock record: a manifest pinned as a git note. A note is exactly one canonical
JSON record's bytes (no trailing newline, nothing else), on commits of protected
branches; the pin digest is ``sha256:`` of those bytes (``pin_digest``, the one place
it is computed). Here: the record (``Lock``), its canonical form, built by hand for
speed, and its strict parsing (``parse_note``); where notes are found and read is
store.py's, so the record is tested from bytes alone."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from git_evidence.core.errors import EvidenceError
from git_evidence.core.facts import Entry
from git_evidence.core.oids import Oid
from git_evidence.core.paths import GITLINK_MODE
from git_evidence.core.records import canonical_json, digest, no_duplicate_keys

SCHEMA = 1


class Lock:
    """One pin: the commit, its lock roots' tree ids and files, who pinned it and when.
    Immutable (its note bytes and digest are computed once, when first asked)."""

    commit: Oid
    roots: tuple[str, ...]
    trees: Mapping[str, str | None]
    files: Mapping[str, Entry]
    pinned_by: str
    pinned_at: str

    def __init__(
        self,
        commit: Oid,
        roots: tuple[str, ...],
        trees: Mapping[str, str | None],
        files: Mapping[str, Entry],
        pinned_by: str,
        pinned_at: str,
    ) -> None:
        fields = zip(
            ("commit", "roots", "trees", "files", "pinned_by", "pinned_at"),
            (commit, roots, trees, files, pinned_by, pinned_at),
            strict=True,
        )
        for name, value in fields:
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"a Lock is immutable: cannot set {name}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"a Lock is immutable: cannot delete {name}")

    def _fields(self) -> tuple[object, ...]:
        return (self.commit, self.roots, self.trees, self.files, self.pinned_by, self.pinned_at)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Lock) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # its mappings are not hashable

    def __repr__(self) -> str:
        return (
            f"Lock(commit={self.commit!r}, roots={self.roots!r}, {len(self.files)} files, "
            f"pinned_by={self.pinned_by!r}, pinned_at={self.pinned_at!r})"
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "commit": self.commit,
            "roots": list(self.roots),
            "trees": dict(self.trees),
            "files": {path: entry.as_json() for path, entry in self.files.items()},
            "pinned_by": self.pinned_by,
            "pinned_at": self.pinned_at,
        }

    @functools.cached_property
    def canonical(self) -> bytes:
        """The note's bytes. Built by hand, as ``json.dumps(sort_keys=True,
        separators=(",", ":"))`` would (a test holds them equal), five times faster:
        a lock of 10,000 files is written on every pin."""
        files = ",".join(
            f"{_string(path)}:{_entry_json(self.files[path])}" for path in sorted(self.files)
        )
        head = {"commit": self.commit}
        tail = {
            "pinned_at": self.pinned_at,
            "pinned_by": self.pinned_by,
            "roots": list(self.roots),
            "schema": SCHEMA,
            "trees": dict(self.trees),
        }
        return (
            canonical_json(head)[:-1]
            + b',"files":{'
            + files.encode()
            + b"},"
            + canonical_json(tail)[1:]
        )

    def summary(self) -> CachedLock:
        return CachedLock(
            self.commit,
            dict(self.trees),
            self.digest,
            len(self.files),
            self.pinned_by,
            self.pinned_at,
            outside_roots(self.trees, self.files),
        )

    @functools.cached_property
    def digest(self) -> str:
        return pin_digest(self.canonical)

    def same_content(self, trees: Mapping[str, str | None], files: Mapping[str, Entry]) -> bool:
        return dict(self.trees) == dict(trees) and dict(self.files) == dict(files)


@functools.cache
def _quoting() -> Callable[[str], str]:
    # json's own quoting, imported with the first note written: a hook that reads only
    # the validated-note cache loads no json
    from json.encoder import encode_basestring_ascii

    return encode_basestring_ascii


def _string(text: str) -> str:
    return _quoting()(text)


def _entry_json(entry: Entry) -> str:
    # keys in sorted order: blob, lfs, mode, sha256, size (a gitlink: commit, mode)
    if entry.mode == GITLINK_MODE:
        return f'{{"commit":"{entry.blob}","mode":"{entry.mode}"}}'
    lfs = ""
    if entry.lfs is not None:
        oid, _, size = entry.lfs.partition(" ")
        lfs = f'"lfs":{{"oid":{_string(oid)},"size":{int(size)}}},'
    return (
        f'{{"blob":"{entry.blob}",{lfs}"mode":"{entry.mode}","sha256":"{entry.sha256}",'
        f'"size":{entry.size}}}'
    )


def pin_digest(canonical: bytes) -> str:
    """The pin digest of a lock record's canonical bytes: what ``lock``, ``show-lock``,
    ``freeze add``, the ledger's pin lookup and ``verify`` all cite."""
    return digest(canonical)


class LockInvalid(EvidenceError):
    """A note that is not exactly one valid lock record."""

    rule = "lock-invalid"


def _invalid(annotated: Oid, what: str) -> LockInvalid:
    return LockInvalid(
        f"the note on {annotated[:12]} {what}",
        fix=f"a lock writer re-pins: git evidence lock {annotated[:12]}",
    )


BOM = b"\xef\xbb\xbf"


def _exact_record(data: bytes, annotated: Oid) -> None:
    """A note is one record's bytes and nothing else; say what else it holds. (Whether
    the record itself is canonical is known only once it is parsed.)"""
    records = [line for line in data.split(b"\n") if line.strip()]
    if len(records) > 1:
        raise _invalid(annotated, f"holds {len(records)} records (a notes merge joined two locks?)")
    if data.startswith(BOM):
        raise _invalid(annotated, "starts with a byte order mark")
    if b"\r" in data:
        raise _invalid(annotated, "has a carriage return (CRLF line ending?)")
    if data.endswith(b"\n"):
        raise _invalid(
            annotated,
            "ends with a newline: a note is the canonical record's bytes exactly "
            "(`git notes add -F FILE` or `-m` adds one; `git evidence lock` writes it as is)",
        )
    if data != data.strip():
        raise _invalid(annotated, "has whitespace around the record")


def parse_note(data: bytes, annotated: Oid, *, known_canonical: bool = False) -> Lock:
    """Exactly one canonical lock record pinning ``annotated``, byte for byte, or
    LockInvalid. ``known_canonical``: this very blob was validated before (LockCache)."""
    import json

    if not known_canonical:
        _exact_record(data, annotated)
    try:
        # A canonical record was written from a dict: it has no duplicate key to look
        # for (the hook costs more than the parse itself on a 10,000-file note).
        doc = (
            json.loads(data)
            if known_canonical
            else json.loads(data, object_pairs_hook=no_duplicate_keys)
        )
    except ValueError as exc:
        raise _invalid(annotated, f"is not JSON: {exc}") from None
    lock = _lock_from(doc, annotated, checked=known_canonical)
    if not known_canonical and lock.canonical != data:
        raise _invalid(
            annotated,
            "is not in canonical form (key order, spacing or escapes differ from the "
            "record git evidence writes), so its bytes do not hash to its pin digest",
        )
    return lock


def _lock_from(doc: Any, annotated: Oid, *, checked: bool = False) -> Lock:
    def bad(why: str) -> LockInvalid:
        return _invalid(annotated, f"is not a lock: {why}")

    if not isinstance(doc, dict):
        raise bad("not a JSON object")
    if doc.get("schema") != SCHEMA:
        raise bad(f"schema {doc.get('schema')!r}, expected {SCHEMA}")
    keys = {"schema", "commit", "roots", "trees", "files", "pinned_by", "pinned_at"}
    if set(doc) != keys:
        raise bad(f"fields {sorted(set(doc) ^ keys)} are wrong")
    if doc["commit"] != annotated:
        raise bad(f"it pins {str(doc['commit'])[:12]} but is attached to {annotated[:12]}")
    roots, trees, files = doc["roots"], doc["trees"], doc["files"]
    if not (isinstance(roots, list) and all(isinstance(r, str) for r in roots)):
        raise bad("roots is not a list of paths")
    if not (isinstance(trees, dict) and set(trees) == set(roots)):
        raise bad("trees does not name each root")
    if not isinstance(files, dict):
        raise bad("files is not an object")
    entries: dict[str, Entry] = {}
    if checked:
        try:
            entries = _checked_entries(files)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise bad(f"a file's record is malformed ({exc})") from None
    for path, raw in () if checked else files.items():
        try:
            entries[path] = _entry(raw)
        except (KeyError, TypeError, ValueError) as exc:
            raise bad(f"file {path!r}: {exc}") from None
    if not all(isinstance(doc[k], str) for k in ("pinned_by", "pinned_at")):
        raise bad("pinned_by and pinned_at must be strings")
    return Lock(annotated, tuple(roots), trees, entries, doc["pinned_by"], doc["pinned_at"])


_MODE = re.compile(r"1[0-7]{5}")
_OID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _entry(raw: Any) -> Entry:
    """One file of a note, its fields' shapes checked (they make the hand-built
    canonical form safe to compare)."""
    if not isinstance(raw, dict):
        raise TypeError("not an object")
    if raw.get("mode") == GITLINK_MODE:
        if set(raw) != {"mode", "commit"}:
            raise ValueError("a gitlink has mode and commit only")
        if not isinstance(raw["commit"], str) or not _OID.fullmatch(raw["commit"]):
            raise ValueError("the gitlink's commit is malformed")
        return Entry(GITLINK_MODE, str(raw["commit"]))
    allowed = {"mode", "blob", "size", "sha256", "lfs"}
    if not set(raw) <= allowed or not {"mode", "blob", "size", "sha256"} <= set(raw):
        raise ValueError("fields must be mode, blob, size, sha256 (and lfs)")
    if not isinstance(raw["size"], int) or isinstance(raw["size"], bool) or raw["size"] < 0:
        raise TypeError("size is not a whole number")
    for key, shape in (("mode", _MODE), ("blob", _OID), ("sha256", _SHA256)):
        if not isinstance(raw[key], str) or not shape.fullmatch(raw[key]):
            raise ValueError(f"{key} {raw[key]!r} is malformed")
    lfs = None
    if "lfs" in raw:
        oid = raw["lfs"]["oid"]
        # The entry keeps "<oid> <size>": an oid with a space would not split back.
        if not isinstance(oid, str) or " " in oid:
            raise ValueError(f"lfs oid {oid!r} is malformed")
        lfs = f"{oid} {int(raw['lfs']['size'])}"
    return Entry(str(raw["mode"]), str(raw["blob"]), raw["size"], str(raw["sha256"]), lfs)


def _checked_entries(files: Mapping[str, Any]) -> dict[str, Entry]:
    """The files of a note validated before (LockCache): read, not checked again."""
    entries: dict[str, Entry] = {}
    for path, raw in files.items():
        mode = raw["mode"]
        if mode == GITLINK_MODE:
            entries[path] = Entry(mode, raw["commit"])
            continue
        lfs = raw.get("lfs")
        entries[path] = Entry(
            mode,
            raw["blob"],
            raw["size"],
            raw["sha256"],
            None if lfs is None else f"{lfs['oid']} {int(lfs['size'])}",
        )
    return entries


class CachedLock(NamedTuple):
    """What a validated note says, without its files (``outside``: how many of them
    lie under none of its roots that have a tree: a revision with those very root
    trees lacks them)."""

    commit: Oid
    trees: dict[str, str | None]
    digest: str
    files: int = 0
    pinned_by: str = ""
    pinned_at: str = ""
    outside: int = 0


def outside_roots(trees: Mapping[str, str | None], paths: Iterable[str]) -> int:
    """How many of ``paths`` are neither a root with something at it in ``trees`` nor
    under one: what a manifest built on these very trees drops."""
    present = [root for root, tree in trees.items() if tree is not None]
    exact, under = set(present), tuple(root + "/" for root in present)
    return sum(1 for path in paths if not (path.startswith(under) or path in exact))
