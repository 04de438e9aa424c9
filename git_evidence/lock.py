"""The lock: a manifest of the fixture tree pinned as a git note (SPEC §8).

Built from git objects, never from a checkout: ``git ls-tree -r`` lists the roots and
one ``git cat-file --batch`` streams the blobs to be hashed. Each root's tree id is
recorded too, so a revision whose root trees equal the lock's is verified without
reading a blob, and a re-pin hashes only blobs the previous lock has not seen.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import os
import re
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, NamedTuple, cast

from git_evidence.errors import EvidenceError, GitError
from git_evidence.git import CatFile, Git
from git_evidence.ledger import no_duplicate_keys
from git_evidence.paths import GITLINK_MODE, fold_path, glob_regex

SCHEMA = 1
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


@dataclass(frozen=True)
class Lock:
    commit: str
    roots: tuple[str, ...]
    trees: Mapping[str, str | None]
    files: Mapping[str, Entry]
    pinned_by: str
    pinned_at: str

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
        )

    @functools.cached_property
    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(self.canonical).hexdigest()

    def same_content(self, trees: Mapping[str, str | None], files: Mapping[str, Entry]) -> bool:
        return dict(self.trees) == dict(trees) and dict(self.files) == dict(files)


_string = json.encoder.encode_basestring_ascii


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


def canonical_json(doc: Any) -> bytes:
    """Sorted keys, no spaces, ASCII (non-UTF-8 path bytes survive as escapes)."""
    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


class LockInvalid(EvidenceError):
    """A note that is not exactly one valid lock record."""

    rule = "lock-invalid"


# -- hashing -----------------------------------------------------------------------------


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


# -- manifests ---------------------------------------------------------------------------


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
    return _tree_ids(roots, git.batch_check([f"{rev}:{root}" for root in roots]))


def build_manifest(
    git: Git,
    rev: str,
    roots: Sequence[str],
    exclude: Sequence[str],
    previous: Lock | None = None,
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


# -- the note ----------------------------------------------------------------------------


def now_utc() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_note(data: bytes, annotated: str, *, known_canonical: bool = False) -> Lock:
    """Exactly one canonical lock record pinning ``annotated``, or LockInvalid.
    ``known_canonical``: this very blob was validated before (LockCache)."""
    text = data.decode("utf-8", "replace").strip("\n")
    records = [line for line in text.split("\n") if line.strip()]
    if len(records) != 1:
        raise LockInvalid(
            f"the note on {annotated[:12]} holds {len(records)} records "
            "(a notes merge joined two locks?)",
            fix="a lock writer re-pins: git evidence lock " + annotated[:12],
        )
    try:
        doc = json.loads(records[0], object_pairs_hook=no_duplicate_keys)
    except ValueError as exc:
        raise LockInvalid(
            f"the note on {annotated[:12]} is not JSON: {exc}",
            fix="a lock writer re-pins: git evidence lock " + annotated[:12],
        ) from None
    lock = _lock_from(doc, annotated, checked=known_canonical)
    if not known_canonical and lock.canonical != records[0].encode():
        raise LockInvalid(
            f"the note on {annotated[:12]} is not in canonical form: its "
            "digest does not match its content",
            fix="a lock writer re-pins: git evidence lock " + annotated[:12],
        )
    return lock


def _lock_from(doc: Any, annotated: str, *, checked: bool = False) -> Lock:
    def bad(why: str) -> LockInvalid:
        return LockInvalid(
            f"the note on {annotated[:12]} is not a lock: {why}",
            fix="a lock writer re-pins: git evidence lock " + annotated[:12],
        )

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
    for path, raw in files.items():
        try:
            entries[path] = _entry(raw, checked)
        except (KeyError, TypeError, ValueError) as exc:
            raise bad(f"file {path!r}: {exc}") from None
    if not all(isinstance(doc[k], str) for k in ("pinned_by", "pinned_at")):
        raise bad("pinned_by and pinned_at must be strings")
    return Lock(annotated, tuple(roots), trees, entries, doc["pinned_by"], doc["pinned_at"])


_MODE = re.compile(r"1[0-7]{5}")
_OID = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
_SHA256 = re.compile(r"[0-9a-f]{64}")


def _entry(raw: Any, checked: bool = False) -> Entry:
    """One file of a note. ``checked``: the note was validated before, skip the field
    shapes (they only make the hand-built canonical form safe to compare)."""
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
    for key, shape in () if checked else (("mode", _MODE), ("blob", _OID), ("sha256", _SHA256)):
        if not isinstance(raw[key], str) or not shape.fullmatch(raw[key]):
            raise ValueError(f"{key} {raw[key]!r} is malformed")
    lfs = None
    if "lfs" in raw:
        lfs = f"{raw['lfs']['oid']} {int(raw['lfs']['size'])}"
    return Entry(str(raw["mode"]), str(raw["blob"]), raw["size"], str(raw["sha256"]), lfs)


class LockRef(NamedTuple):
    commit: str  # the commit the note is attached to
    blob: str  # the note blob


def find_lock(git: Git, notes_ref: str, rev: str) -> LockRef | None:
    """The lock in force at ``rev``: the note on its nearest first-parent ancestor."""
    blob = git.note_of(notes_ref, rev)
    if blob is not None:
        return LockRef(rev, blob)
    notes = git.notes(notes_ref)
    if not notes:
        return None
    for commit in git.first_parents(rev):
        if commit in notes:
            return LockRef(commit, notes[commit])
    return None


class CachedLock(NamedTuple):
    """What a validated note says, without its files."""

    commit: str
    trees: dict[str, str | None]
    digest: str
    files: int = 0
    pinned_by: str = ""
    pinned_at: str = ""


class LockCache:
    """What full validation learned about a note blob, kept in the repository
    (``<git dir>/git-evidence/locks/<blob>``). A blob id names its content, so an
    entry can never describe another note; only processes that can write the git
    directory (the server's own hooks) can add one."""

    def __init__(self, git: Git) -> None:
        self._git = git
        self._dir: str | None = None

    def _path(self, blob: str) -> str:
        if self._dir is None:
            git_dir = os.environ.get("GIT_DIR") if self._git.cwd is None else None
            common = git_dir or self._git.text("rev-parse", "--git-common-dir")
            if self._git.cwd and not os.path.isabs(common):
                common = os.path.join(self._git.cwd, common)
            self._dir = os.path.join(common, "git-evidence", "locks")
        return os.path.join(self._dir, blob)

    def get(self, blob: str) -> CachedLock | None:
        try:
            with open(self._path(blob), encoding="utf-8") as handle:
                doc = json.load(handle)
            return CachedLock(
                doc["commit"],
                doc["trees"],
                doc["digest"],
                doc["files"],
                doc["pinned_by"],
                doc["pinned_at"],
            )
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, blob: str, lock: Lock) -> None:
        path = self._path(blob)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            tmp = f"{path}.{os.getpid()}.tmp"
            with open(tmp, "w", encoding="utf-8") as handle:
                json.dump(lock.summary()._asdict(), handle)
            os.replace(tmp, path)
        except OSError:
            pass  # a cache that cannot be written only costs time


def read_lock(git: Git, found: LockRef, cache: LockCache | None = None) -> Lock:
    cache = cache or LockCache(git)
    known = cache.get(found.blob)
    lock = parse_note(
        git.blob_bytes(found.blob),
        found.commit,
        known_canonical=known is not None and known.commit == found.commit,
    )
    if known is None:
        cache.put(found.blob, lock)
    return lock


def pin(
    git: Git,
    rev: str,
    roots: Sequence[str],
    exclude: Sequence[str],
    notes_ref: str,
    pinned_by: str,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Lock, bool]:
    """Write the lock note for ``rev``; ``(lock, written)``. A rev whose lock already
    holds the same manifest is left as it is (re-pinning is idempotent)."""
    previous: Lock | None = None
    cache = LockCache(git)
    existing = find_lock(git, notes_ref, rev)
    if existing is not None:
        try:
            previous = read_lock(git, existing, cache)
        except LockInvalid:
            previous = None  # a broken note is replaced, never trusted for reuse
    trees, files = build_manifest(git, rev, roots, exclude, previous, progress)
    if (
        previous is not None
        and previous.commit == rev
        and previous.same_content(trees, files)
        and previous.roots == tuple(roots)
    ):
        return previous, False
    lock = Lock(rev, tuple(roots), trees, files, pinned_by, now_utc())
    blob = git.write_blob(lock.canonical)
    git.add_note(notes_ref, rev, blob)
    cache.put(blob, lock)
    return lock, True


def terminal_progress(label: str) -> Callable[[int, int], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done == total else ""
        sys.stderr.write(f"\r{label}: hashed {done}/{total} blobs{end}")
        sys.stderr.flush()

    return show


# -- comparing ---------------------------------------------------------------------------


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


# -- the lock in a judgement -------------------------------------------------------------


def note_paths(notes_ref: str, commit: str) -> list[str]:
    """Where ``commit``'s note can live in the notes tree (git fans out as it grows)."""
    return [
        f"{notes_ref}:{commit}",
        f"{notes_ref}:{commit[:2]}/{commit[2:]}",
        f"{notes_ref}:{commit[:2]}/{commit[2:4]}/{commit[4:]}",
    ]


def peek_trees(data: bytes, annotated: str) -> dict[str, str | None]:
    """The root trees of a lock note without parsing its files: the canonical form
    puts ``commit`` first and ``trees`` last. Anything else is LockInvalid."""
    fix = "a lock writer re-pins: git evidence lock " + annotated[:12]
    text = data.strip(b"\n")
    if b"\n" in text:
        count = len([r for r in text.split(b"\n") if r.strip()])
        raise LockInvalid(
            f"the note on {annotated[:12]} holds {count} records (a notes merge joined two locks?)",
            fix=fix,
        )
    if not text.startswith(b'{"commit":"' + annotated.encode() + b'","files":'):
        raise LockInvalid(
            f"the note on {annotated[:12]} does not pin that commit, or is "
            "not a canonical lock record",
            fix=fix,
        )
    at = text.rfind(b',"trees":')
    try:
        trees = json.loads(text[at + len(b',"trees":') : -1]) if at > 0 else None
    except ValueError:
        trees = None
    if (
        not text.endswith(b"}}")
        or not isinstance(trees, dict)
        or not all(isinstance(v, (str, type(None))) for v in trees.values())
    ):
        raise LockInvalid(f"the note on {annotated[:12]} has no readable root trees", fix=fix)
    return trees


@dataclass
class LockFacts:
    """What the lock says about one ref update; the rules turn it into findings."""

    found: LockRef | None = None
    invalid: str | None = None
    breach: list[Drift] | None = None  # new vs the lock, drift the update brings
    stale: list[Drift] | None = None  # base vs the lock
    digest: str | None = None


def lock_facts(
    git: Git,
    cat: CatFile,
    notes_ref: str,
    roots_hint: Sequence[str],
    exclude: Sequence[str],
    base: str | None,
    new: str,
    notes_known: bool,
) -> LockFacts:
    """Compare ``new`` (and ``base``) with the lock in force at ``base``.

    The common case is one ``cat-file --batch-check`` and no blob read: the note on
    the base itself (post-receive pins every new protected tip), already validated
    (LockCache), whose root trees (``roots_hint``, the policy's) equal new's. Otherwise
    the note is read, and blobs are read only where root trees differ."""
    facts = LockFacts()
    if base is None or not notes_known:
        return facts
    cache = LockCache(git)
    # One round trip: where the base's note is, and new's root trees.
    spots = note_paths(notes_ref, base)
    hits = git.batch_check([*spots, *(f"{new}:{root}" for root in roots_hint)])
    blob = next((h[0] for h in hits[: len(spots)] if h is not None and h[1] == "blob"), None)
    if blob is not None:
        known = cache.get(blob)
        new_trees = _tree_ids(roots_hint, hits[len(spots) :])
        if known is not None and known.commit == base and known.trees == new_trees:
            facts.found, facts.digest = LockRef(base, blob), known.digest
            return facts
        found = LockRef(base, blob)
    else:
        located = find_lock(git, notes_ref, base)
        if located is None:
            return facts
        found = located
    facts.found = found
    data = cat.read(found.blob)
    try:
        trees = peek_trees(data, found.commit)
        roots = list(trees)
        new_trees = _trees_via(cat, new, roots)
        if new_trees == trees:
            return facts
        known = cache.get(found.blob)
        lock = parse_note(
            data, found.commit, known_canonical=known is not None and known.commit == found.commit
        )
        if known is None:
            cache.put(found.blob, lock)
    except LockInvalid as exc:
        facts.invalid = exc.message
        return facts
    facts.digest = lock.digest
    _, new_files = build_manifest(git, new, roots, exclude, lock, trees=new_trees)
    if base == lock.commit:
        base_files: Mapping[str, Entry] = lock.files
    else:
        base_trees = _trees_via(cat, base, roots)
        base_files = (
            lock.files
            if base_trees == trees
            else build_manifest(git, base, roots, exclude, lock, trees=base_trees)[1]
        )
        facts.stale = compare(lock.files, base_files)
    facts.breach = [
        d for d in compare(lock.files, new_files) if new_files.get(d.path) != base_files.get(d.path)
    ]
    return facts


def _tree_ids(
    roots: Sequence[str], hits: Sequence[tuple[str, str] | None]
) -> dict[str, str | None]:
    """Root → tree id (None: missing; ``type:oid`` when a non-tree stands there)."""
    return {
        root: None if hit is None else hit[0] if hit[1] == "tree" else f"{hit[1]}:{hit[0]}"
        for root, hit in zip(roots, hits, strict=True)
    }


def _trees_via(cat: CatFile, rev: str, roots: Sequence[str]) -> dict[str, str | None]:
    hits = [cat.get(f"{rev}:{root}") for root in roots]
    return _tree_ids(roots, [None if h is None else (h[0], h[1]) for h in hits])


def check_notes_update(
    git: Git, cat: CatFile, old: str | None, new: str, notes_ref: str, exclude: Sequence[str]
) -> list[str]:
    """Problems with the notes an update of the notes ref adds or changes: each must be
    one canonical lock record, and must describe the commit it is attached to (its root
    trees, and its files: blobs the lock in force at the parent has not vouched for are
    hashed), so a lock writer's slip cannot pin bytes the commit does not have."""
    out = git.out("diff-tree", "-r", "-z", "--raw", "--no-renames", old or git.empty_tree(), new)
    problems = []
    tokens = out.split(b"\0")
    for meta, raw in zip(tokens[0::2], tokens[1::2], strict=False):
        if not meta.startswith(b":"):
            continue
        fields = meta.decode().split()
        if fields[-1] == "D":
            continue
        annotated = raw.decode("utf-8", "replace").replace("/", "")
        try:
            pinned = parse_note(cat.read(fields[3]), annotated)
        except LockInvalid as exc:
            problems.append(exc.message)
            continue
        problem = _describes_its_commit(git, pinned, notes_ref, exclude)
        if problem:
            problems.append(problem)
    return problems


def _describes_its_commit(
    git: Git, pinned: Lock, notes_ref: str, exclude: Sequence[str]
) -> str | None:
    commit = pinned.commit
    if git.resolve_commit(commit) != commit:
        return f"the note on {commit[:12]} annotates no commit of this repository"
    trees = root_trees(git, commit, pinned.roots)
    if trees != dict(pinned.trees):
        return f"the note on {commit[:12]} records root trees that commit does not have"
    parent = git.resolve_commit(f"{commit}^")
    previous = None
    if parent is not None:
        found = find_lock(git, notes_ref, parent)
        if found is not None:
            try:
                previous = read_lock(git, found)
            except LockInvalid:
                previous = None
    _, files = build_manifest(git, commit, pinned.roots, exclude, previous, trees=trees)
    drift = compare(pinned.files, files)
    if drift:
        return (
            f"the note on {commit[:12]} does not match that commit's files: "
            f"{len(drift)} differ ({drift[0].describe()})"
        )
    return None


def pin_lookup(git: Git, cat: CatFile, notes_ref: str) -> Callable[[str], bool]:
    """``pin_exists(digest)``: is it the digest of a lock note on ``notes_ref``? Notes
    are hashed as they are (a valid note's bytes are its canonical form); validated
    ones answer from the cache without being read."""
    known: set[str] = set()
    pending: list[str] | None = None
    cache = LockCache(git)

    def exists(digest: str) -> bool:
        nonlocal pending
        if digest in known:
            return True
        if pending is None:
            pending = list(git.notes(notes_ref).values())
        while pending:
            blob = pending.pop()
            summary = cache.get(blob)
            got = (
                summary.digest
                if summary
                else "sha256:" + hashlib.sha256(cat.read(blob)).hexdigest()
            )
            known.add(got)
            if got == digest:
                return True
        return False

    return exists
