"""A manifest of the fixture tree, built from git objects, never from a checkout:
``git ls-tree -r`` lists the lock roots and one ``git cat-file --batch`` streams the
blobs to be hashed. Also: comparing two manifests."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import NamedTuple, Protocol, cast

from git_evidence.core.errors import GitError
from git_evidence.core.facts import Drift, Entry
from git_evidence.core.oids import Oid
from git_evidence.core.paths import GITLINK_MODE, fold_path, glob_regex
from git_evidence.plumbing.git import Git, widen_pipe

LFS_HEADER = b"version https://git-lfs.github.com/spec/v1\n"
LFS_MAX = 1024  # git-lfs never writes a larger pointer


class Manifest(Protocol):
    """What a manifest is built on: a previous one's root trees and files (a
    ``lock.Lock`` is one; manifest.py knows no lock)."""

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


PARALLEL_MIN = 400  # blobs a second cat-file process must have to be worth starting
PARALLEL_MAX = 4  # cat-file processes at most


def hash_blobs(
    git: Git, oids: Sequence[str], progress: Callable[[int, int], None] | None = None
) -> dict[str, Hashed]:
    """SHA-256 of each blob, streamed through ``git cat-file --batch --buffer``.

    Inflating the objects is most of the work (a checkout's ``sha256sum`` reads them
    inflated already), so a long list is cut into contiguous parts (each keeps its
    objects' delta bases near), one ``cat-file`` process for each CPU up to
    PARALLEL_MAX, each read by its own thread; hashlib releases the GIL while it
    hashes, so the inflating and the hashing run on every core."""
    if not oids:
        return {}
    count = max(1, min(PARALLEL_MAX, _cpus(), len(oids) // PARALLEL_MIN))
    step = -(-len(oids) // count)
    parts = [oids[i : i + step] for i in range(0, len(oids), step)]
    done = [0]
    guard = threading.Lock()

    def advance(n: int) -> None:
        if progress is not None:
            with guard:
                done[0] += n
                progress(done[0], len(oids))

    results: list[dict[str, Hashed]] = [{} for _ in parts]
    failures: list[BaseException] = []

    def work(index: int) -> None:
        try:
            results[index] = _hash_part(git, parts[index], advance)
        except BaseException as exc:  # handed to the calling thread
            failures.append(exc)

    helpers = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(1, len(parts))]
    for helper in helpers:
        helper.start()
    work(0)
    for helper in helpers:
        helper.join()
    if failures:
        raise failures[0]
    merged = results[0]
    for part in results[1:]:
        merged.update(part)
    return merged


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        return os.cpu_count() or 1


def _hash_part(git: Git, oids: Sequence[str], advance: Callable[[int], None]) -> dict[str, Hashed]:
    """One ``cat-file --batch --buffer`` for ``oids``: a thread writes every request
    and closes git's input while this one reads the objects (``BlobReader``)."""
    proc = git.popen("cat-file", "--batch", "--buffer", buffered=True)
    assert proc.stdin is not None and proc.stdout is not None
    stdin = proc.stdin
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
    reader = BlobReader(cast(io.BufferedReader, proc.stdout))
    result: dict[str, Hashed] = {}
    sha256 = hashlib.sha256
    try:
        for count, oid in enumerate(oids, start=1):
            size, data = reader.next_blob(oid)
            if data is None:  # larger than the buffer: hashed piece by piece
                digest = sha256()
                for piece in reader.pieces(size):
                    digest.update(piece)
                result[oid] = Hashed(size, digest.hexdigest(), None)
            else:
                lfs = lfs_pointer(bytes(data)) if size <= LFS_MAX else None
                result[oid] = Hashed(size, sha256(data).hexdigest(), lfs)
            if count % 500 == 0 or count == len(oids):
                advance(500 if count % 500 == 0 else count % 500)
    finally:
        # Closing our end first: a git still writing gets EPIPE instead of blocking
        # the writer thread on a full request pipe.
        proc.stdout.close()
        writer.join()
        proc.wait()
    if failure:
        raise failure[0]
    return result


class BlobReader:
    """The output of ``git cat-file --batch`` (``<oid> blob <size>\\n<content>\\n`` per
    object), read in chunks of up to a mebibyte into one buffer and cut with
    ``bytearray.find``: no read per object, no copy of an object that fits.

    git 2.39 writes each blob with its own syscalls, and a reader woken by each write
    pays a wake-up and a read per object (most of a cold lock's time, profiled). So the
    pipe is widened to a mebibyte where Linux allows it, and a read that follows a
    short one waits a millisecond for git to fill it: a few dozen reads for 10 MB
    instead of thousands. git fills a mebibyte in about 5 ms; when a nap lets it fill
    half the pipe (a busy machine oversleeps), the reader stops napping. The first
    EAGER bytes are read without naps: a stream of a few hundred small blobs (a
    project's goldens, the blobs a commit changed) is over before the wake-ups it
    saves would add up to one nap, and napping made it wait 20-30 ms for nothing."""

    CHUNK = 1 << 20
    NAP = 0.001  # seconds
    SHORT = 1 << 17  # a read shorter than this is followed by a nap
    EAGER = 2 << 20  # bytes read before the first nap

    def __init__(self, stream: io.BufferedReader) -> None:
        self._stream = stream
        self._buf = bytearray(self.CHUNK)
        self._view = memoryview(self._buf)
        self._start = self._end = 0  # unread bytes: buf[start:end]
        self._nap = widen_pipe(stream, self.CHUNK) >= self.CHUNK
        self._short = False  # the last read was short: nap before the next one
        self._read = 0  # bytes read so far

    def _fill(self, need: int) -> None:
        """Read until ``need`` unread bytes are buffered (``need`` <= CHUNK)."""
        buf, start, end = self._buf, self._start, self._end
        if start == end:
            start = end = 0
        elif len(buf) - start < need:
            buf[: end - start] = buf[start:end]  # equal lengths: no resize
            start, end = 0, end - start
        while end - start < need:
            napped = self._short
            if napped:
                time.sleep(self.NAP)
            got = self._stream.readinto1(self._view[end:])
            if not got:
                raise _cat_file_error(b"the object stream ended early")
            end += got
            self._read += got
            if napped and got >= self.CHUNK // 2:
                # git filled half the pipe meanwhile: on a busy machine a nap lasts
                # longer than asked, and git would wait on a full pipe. No more naps.
                self._nap = False
            self._short = self._nap and got < self.SHORT and self._read >= self.EAGER
        self._start, self._end = start, end

    def next_blob(self, oid: str) -> tuple[int, memoryview | None]:
        """The next object's size, and its content (a view valid until the next call),
        or None when it does not fit the buffer: then read it with ``pieces``."""
        buf = self._buf
        newline = buf.find(b"\n", self._start, self._end)
        while newline < 0:
            if self._end - self._start > 1024:  # no header is this long
                raise _cat_file_error(b"malformed object header")
            self._fill(self._end - self._start + 1)
            newline = buf.find(b"\n", self._start, self._end)
        header = buf[self._start : newline].split()
        if len(header) != 3 or header[1] != b"blob":
            raise _cat_file_error(f"blob {oid} is missing or not a blob".encode())
        size = int(header[2])
        head = newline + 1 - self._start
        if head + size + 1 > len(buf):
            self._start = newline + 1
            return size, None
        if self._end - self._start < head + size + 1:
            self._fill(head + size + 1)
        body = self._start + head
        if buf[body + size] != 0x0A:
            raise _cat_file_error(f"blob {oid} is not followed by a newline".encode())
        self._start = body + size + 1
        return size, self._view[body : body + size]

    def pieces(self, size: int) -> Iterator[memoryview]:
        """The content of a blob too large for the buffer, in order, and its newline."""
        left = size
        while left:
            if self._start == self._end:
                self._fill(min(left, self.SHORT))
            take = min(left, self._end - self._start)
            yield self._view[self._start : self._start + take]
            self._start += take
            left -= take
        self._fill(1)
        if self._buf[self._start] != 0x0A:
            raise _cat_file_error(b"a large blob is not followed by a newline")
        self._start += 1


def _cat_file_error(why: bytes) -> GitError:
    return GitError(["git", "cat-file", "--batch", "--buffer"], 128, b"", why)


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
    """The trees and files of ``rev`` under ``roots``.

    From a previous lock: a root whose tree equals the lock's is copied from it; a root
    whose tree changed is the lock's files with what ``git diff-tree`` reports between
    the two trees applied (git reads only the subtrees whose ids differ, so a re-pin
    after one changed file lists one directory, not 10,000 files); blobs the lock
    already hashed are not read again. Other roots are listed with ``ls-tree``. Only
    listed or changed paths go through the exclusions: a path unchanged since the
    previous lock keeps the place it has there (as a whole unchanged root always did)."""
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
    hashed = hash_blobs(git, list(pending), progress)
    for oid, users in pending.items():
        got = hashed[oid]
        for mode, path in users:
            files[path] = Entry(mode, oid, got.size, got.sha256, got.lfs)
    return trees, dict(sorted(files.items()))


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
