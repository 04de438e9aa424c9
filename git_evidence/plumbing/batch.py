"""``git cat-file``: the one reader of objects by name, in the three modes its callers need,
and the one parser of its answers (``<oid> <type> <size>``, or ``<spec> missing``).

* lookups (``check``): one ``--batch-check`` for a list of object expressions, headers only: a
  blob's bytes are never read to learn that it exists;
* one at a time (``CatFile``): one persistent ``--batch`` asked object by object, for a caller
  whose next question depends on the last answer;
* in bulk (``read_blobs``): ``--batch --buffer`` for a long list of blobs known ahead, one
  process per CPU, the whole list written by a thread while the blobs are read into one buffer
  through a widened pipe (the lock's hashing).

Apart from git.py because it is a protocol of its own (framing, a reader that must never fall
out of step with git's answers, threads); it starts git through ``stream.StartsGit`` (a
``git.Git``), so git.py, which asks it for ``blob_at``, is not imported back."""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import NamedTuple, Protocol, TypeAlias, TypeVar, cast

from git_evidence.core.errors import EvidenceError, GitError
from git_evidence.core.oids import Oid
from git_evidence.plumbing.stream import StartsGit, finish, give_up, widen_pipe

T = TypeVar("T")

# A blob's content as ``read_blobs`` hands it over: whole (a view valid until the
# next blob), or, past the reader's buffer, its pieces in order.
Content: TypeAlias = memoryview | Iterator[memoryview]

PARALLEL_MIN = 400  # blobs a second cat-file process must have to be worth starting
PARALLEL_MAX = 4  # cat-file processes at most
MAX_HEADER = 1 << 16  # no answer's first line is longer (a spec is a line of input)
# Inside a ``lookups.live`` block, a short list of lookups goes to that block's one persistent
# ``--batch-check`` instead of a process of its own; a longer one gets its own, all at once.
LIVE_MAX = 64
# The commands a failure names.
ONE_AT_A_TIME = ["git", "cat-file", "--batch"]
BULK = ["git", "cat-file", "--batch", "--buffer"]


def spec_line(spec: str) -> bytes:
    """``spec`` as a line of ``cat-file``'s input: one spec a line, so one with a
    newline would name another object (and shift every later answer)."""
    if "\n" in spec:
        raise EvidenceError(
            f"cannot look up {spec!r}: it contains a newline",
            fix="name the object without a newline; nothing was allowed",
        )
    return spec.encode("utf-8", "surrogateescape") + b"\n"


def parse_header(header: bytes) -> tuple[Oid, str, int] | None:
    """``(object id, type, size)`` of an answer's first line, or None for "<spec>
    missing" (or "ambiguous"): the spec may hold spaces, and only a found line ends
    in a number."""
    fields = header.rstrip(b"\n").rsplit(b" ", 2)
    if len(fields) != 3 or not fields[2].isdigit():
        return None
    return Oid(fields[0].decode()), fields[1].decode(), int(fields[2])


class Live(NamedTuple):
    """A ``lookups.live`` block's one ``--batch-check`` (``check``, for short lists)
    and one ``--batch`` (``reader``), on its ``Git`` (``Git.live``) while it runs."""

    check: Callable[[Sequence[str]], list[tuple[Oid, str] | None]]
    reader: CatFile


class ReadsGit(StartsGit, Protocol):
    """A ``StartsGit`` that may be in a ``lookups.live`` block: a ``git.Git``."""

    live: Live | None


def check(git: ReadsGit, specs: Sequence[str]) -> list[tuple[Oid, str] | None]:
    """``(object id, type)`` of each rev expression (``rev:path`` included), or None
    when it names nothing: one ``cat-file --batch-check`` (the block's, in a
    ``lookups.live`` block)."""
    if not specs:
        return []
    if git.live is not None and len(specs) <= LIVE_MAX:
        return git.live.check(specs)
    query = b"".join(spec_line(spec) for spec in specs)
    proc = git.popen("cat-file", "--batch-check")
    out, err = proc.communicate(query)
    if proc.returncode != 0:
        raise GitError(["git", "cat-file", "--batch-check"], proc.returncode, out, err)
    result: list[tuple[Oid, str] | None] = []
    for line in out.split(b"\n")[:-1]:
        hit = parse_header(line)
        result.append(hit[:2] if hit else None)
    if len(result) != len(specs):
        raise EvidenceError(
            f"git cat-file --batch-check answered {len(result)} of {len(specs)} lookups",
            fix="check that the repository is intact (git fsck); nothing was allowed",
        )
    return result


class CatFile:
    """One persistent ``git cat-file --batch`` for many objects, asked one at a time
    (started by the first question). Inside a ``lookups.live`` block of the same Git,
    the block's reader (``Git.live``) answers instead."""

    def __init__(self, git: ReadsGit) -> None:
        self._git = git
        self._proc: subprocess.Popen[bytes] | None = None
        self._reader: _Reader | None = None
        self._turn = threading.Lock()

    def get(self, spec: str) -> tuple[Oid, str, bytes] | None:
        """``(object id, type, content)`` of any object expression (``rev:path``
        included), or None when it names nothing."""
        live = self._git.live
        if live is not None and live.reader is not self:
            return live.reader.get(spec)
        line = spec_line(spec)
        with self._turn:  # one question and its whole answer at a time
            try:
                return self._ask(line)
            except BaseException:  # half-answered: every later answer would be out of
                self._abandon()  # step; the next question starts another process
                raise

    def _ask(self, line: bytes) -> tuple[Oid, str, bytes] | None:
        if self._proc is None:
            self._proc = self._git.popen("cat-file", "--batch")
            assert self._proc.stdout is not None
            self._reader = _Reader(cast(io.BufferedReader, self._proc.stdout), ONE_AT_A_TIME)
        proc, reader = self._proc, self._reader
        assert proc.stdin is not None and proc.stderr is not None and reader is not None
        try:
            proc.stdin.write(line)
            proc.stdin.flush()
        except BrokenPipeError:  # git ended before the question (not a repository)
            raise GitError(ONE_AT_A_TIME, proc.wait(), b"", proc.stderr.read()) from None
        found = parse_header(reader.header())
        if found is None:
            return None
        oid, kind, size = found
        view = reader.content(size)
        if view is not None:
            data = bytes(view)
        else:  # each piece copied before the next read overwrites the buffer
            data = b"".join([bytes(piece) for piece in reader.pieces(size)])
        return oid, kind, data

    def read(self, oid: str) -> bytes:
        if (hit := self.get(oid)) is None:
            raise GitError(ONE_AT_A_TIME, 128, b"", f"object {oid} is missing".encode())
        return hit[2]

    def close(self) -> None:
        if self._proc is not None:
            finish(self._proc)
            self._proc = self._reader = None

    def _abandon(self) -> None:
        if self._proc is not None:
            give_up(self._proc)
            self._proc = self._reader = None

    def __enter__(self) -> CatFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_blobs(
    git: StartsGit,
    oids: Sequence[str],
    take: Callable[[str, int, Content], T],
    progress: Callable[[int, int], None] | None = None,
) -> dict[str, T]:
    """``take(oid, size, content)`` of each blob, by blob id, through ``cat-file --batch
    --buffer``; ``take`` runs in a reader's thread and must be done with ``content``
    when it returns. A blob that is missing, or not a blob, is a GitError.

    Inflating the objects is most of the work (a checkout's ``sha256sum`` reads them
    inflated already), so a long list is cut into contiguous parts (each keeps its
    objects' delta bases near), one ``cat-file`` process for each CPU up to
    PARALLEL_MAX, each read by its own thread; hashlib releases the GIL while it
    hashes, so inflating and hashing run on every core."""
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

    results: list[dict[str, T]] = [{} for _ in parts]
    failures: list[BaseException] = []

    def work(index: int) -> None:
        try:
            results[index] = _read_part(git, parts[index], take, advance)
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


def _read_part(
    git: StartsGit,
    oids: Sequence[str],
    take: Callable[[str, int, Content], T],
    advance: Callable[[int], None],
) -> dict[str, T]:
    """One ``cat-file --batch --buffer`` for ``oids``: a thread writes every request
    and closes git's input while this one reads the objects."""
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
    reader = _Reader(cast(io.BufferedReader, proc.stdout), BULK, bulk=True)
    result: dict[str, T] = {}
    try:
        for count, oid in enumerate(oids, start=1):
            size, view = reader.blob(oid)
            if view is not None:
                result[oid] = take(oid, size, view)
            else:  # larger than the buffer: handed over piece by piece
                pieces = reader.pieces(size)
                result[oid] = take(oid, size, pieces)
                for _ in pieces:  # what ``take`` left unread: the stream stays in step
                    pass
            if count % 500 == 0 or count == len(oids):
                advance(500 if count % 500 == 0 else count % 500)
    finally:
        # Closing our end first: a git still writing gets EPIPE instead of blocking
        # the writer thread on a full request pipe.
        proc.stdout.close()
        writer.join()
        finish(proc)
    if failure:
        raise failure[0]
    return result


class _Reader:
    """git's ``cat-file --batch`` answers (``<oid> <type> <size>\\n<content>\\n``, or a
    line alone), read in chunks of up to a mebibyte into one buffer and cut with
    ``bytearray.find``: no read per object, no copy of an object that fits.

    In bulk, git 2.39 writes each blob with its own syscalls, and a reader woken by
    each write pays a wake-up and a read per object (most of a cold lock's time,
    profiled). So the pipe is widened to a mebibyte where Linux allows it, and a read
    that follows a short one waits a millisecond for git to fill it: a few dozen reads
    for 10 MB instead of thousands. git fills a mebibyte in about 5 ms; when a nap lets
    it fill half the pipe (a busy machine oversleeps), the reader stops napping. The
    first EAGER bytes are read without naps: a stream of a few hundred small blobs (a
    project's goldens, the blobs a commit changed) is over before the wake-ups it
    saves would add up to one nap, and napping made it wait 20-30 ms for nothing. Asked
    one object at a time, it never naps: each answer is all there is to read."""

    CHUNK = 1 << 20
    NAP = 0.001  # seconds
    SHORT = 1 << 17  # a read shorter than this is followed by a nap
    EAGER = 2 << 20  # bytes read before the first nap

    def __init__(self, stream: io.BufferedReader, command: list[str], bulk: bool = False) -> None:
        self._stream = stream
        self._command = command
        self._buf = bytearray(self.CHUNK)
        self._view = memoryview(self._buf)
        self._start = self._end = 0  # unread bytes: buf[start:end]
        self._nap = bulk and widen_pipe(stream, self.CHUNK) >= self.CHUNK
        self._short = False  # the last read was short: nap before the next one
        self._read = 0  # bytes read so far

    def _error(self, why: bytes) -> GitError:
        return GitError(self._command, 128, b"", why)

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
                raise self._error(b"cat-file ended early")
            end += got
            self._read += got
            if napped and got >= self.CHUNK // 2:
                # git filled half the pipe meanwhile: on a busy machine a nap lasts
                # longer than asked, and git would wait on a full pipe. No more naps.
                self._nap = False
            self._short = self._nap and got < self.SHORT and self._read >= self.EAGER
        self._start, self._end = start, end

    def header(self) -> bytes:
        """The next answer's first line, without its newline."""
        buf = self._buf
        newline = buf.find(b"\n", self._start, self._end)
        while newline < 0:
            if self._end - self._start > MAX_HEADER:
                raise self._error(b"malformed object header")
            self._fill(self._end - self._start + 1)
            newline = buf.find(b"\n", self._start, self._end)
        line = bytes(self._view[self._start : newline])
        self._start = newline + 1
        return line

    def blob(self, oid: str) -> tuple[int, memoryview | None]:
        """The next answer, a blob's (else a GitError): its size and ``content``. The
        bulk mode's loop, once a blob: a header already buffered is read in place."""
        newline = self._buf.find(b"\n", self._start, self._end)
        fields: list[bytes] | list[bytearray]
        if newline < 0:
            fields = self.header().split()
        else:
            fields = self._buf[self._start : newline].split()
            self._start = newline + 1
        if len(fields) != 3 or fields[1] != b"blob":
            raise self._error(f"blob {oid} is missing or not a blob".encode())
        size = int(fields[2])
        return size, self.content(size)

    def content(self, size: int) -> memoryview | None:
        """The content of the object whose header was just read (a view valid until
        the next read), its newline consumed; None when it does not fit the buffer:
        then read it with ``pieces``."""
        if size + 1 > len(self._buf):
            return None
        if self._end - self._start < size + 1:
            self._fill(size + 1)
        body = self._start
        if self._buf[body + size] != 0x0A:
            raise self._error(b"an object is not followed by a newline")
        self._start = body + size + 1
        return self._view[body : body + size]

    def pieces(self, size: int) -> Iterator[memoryview]:
        """The content of an object too large for the buffer, in order, and its
        newline; each piece is a view valid until the next one is asked for."""
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
            raise self._error(b"a large object is not followed by a newline")
        self._start += 1
