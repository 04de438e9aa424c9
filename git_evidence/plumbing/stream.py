"""git's output read while git runs: the one ``diff-tree --stdin`` a push is streamed
through (fed by a thread from ``rev-list --parents``), diffs of commit pairs read as
git writes them, a command started ahead and read later (``Later``), the widened pipe,
and the ``-z`` tokens they all give (``zsplit``, the raw diff's options).

Apart from git.py because these are processes that outlive a call, each with a thread
beside it: the places a reader that stops early must kill git, and where git must never
wait on a full pipe. They start git through ``StartsGit`` (a ``git.Git``), so git.py,
which reads with them, is not imported back."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import IO, Protocol

try:
    import fcntl
except ImportError:  # not on Windows: pipes keep their default size
    fcntl = None  # type: ignore[assignment]

from git_evidence.core.errors import GitError

# Plain raw rows, both object ids, no rename guessing, no user diff drivers.
RAW_DIFF = (
    "-r",
    "-z",
    "--raw",
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--ignore-submodules=none",
)


class StartsGit(Protocol):
    """What starts git in one repository with its sealed environment: a ``git.Git``."""

    def popen(self, *args: str, buffered: bool = False) -> subprocess.Popen[bytes]: ...


def finish(proc: subprocess.Popen[bytes]) -> int:
    """End a git process that was asked all it will be: its input closed (git ends
    on it), waited for, every pipe closed (a pipe left to the garbage collector is a
    ResourceWarning, an error where a project runs with ``-W error``). Its exit code."""
    if proc.stdin is not None:
        with contextlib.suppress(OSError):  # a git gone already: nothing to flush into
            proc.stdin.close()
    code = proc.wait()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()
    return code


def give_up(proc: subprocess.Popen[bytes]) -> None:
    """End a git process whose conversation went wrong (a question left half-answered):
    killed and reaped, its pipes closed, so that no answer of it is read again."""
    proc.kill()
    proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def zsplit(data: bytes) -> list[bytes]:
    """Split NUL-terminated git output; a trailing NUL gives no empty item."""
    if not data:
        return []
    parts = data.split(b"\0")
    if parts[-1] == b"":
        parts.pop()
    return parts


def diff_tree_stream(
    git: StartsGit, revlists: Sequence[Sequence[str]], members: Sequence[list[str]]
) -> Iterator[bytes]:
    """Yield raw NUL-separated tokens of ``git diff-tree --stdin`` for every commit
    that the ``rev-list`` argument lists in ``revlists`` select (each commit once);
    ``members[i]`` receives the commit ids of ``revlists[i]`` (boundary commits,
    with ``--boundary``, as ``-<oid>``; they are not diffed)."""
    for chunk in diff_tree_chunks(git, revlists, members):
        yield from chunk


def diff_tree_chunks(
    git: StartsGit,
    revlists: Sequence[Sequence[str]],
    members: Sequence[list[str]],
    parents: dict[str, list[str]] | None = None,
    known: Sequence[bytes | None] = (),
) -> Generator[list[bytes], None, None]:
    """``diff_tree_stream``'s tokens a list at a time (every whole token of one
    read), so a reader loops over lists instead of resuming a generator per token;
    closing it early stops git.

    One ``diff-tree`` process serves the whole push; a feeder thread streams the
    commit ids from ``rev-list`` into it while this generator parses the output.

    ``parents``, when given, is filled with each listed commit's parents (the
    listing is ``rev-list --parents``) before git answers: the endpoint rule's
    graph, and whether a range is one chain, come from it. ``known[i]``, when given,
    is what that listing would print, found without it (a range of one commit on its
    only parent): no rev-list is started for it. A merge is diffed as
    one combined diff (``-c``): the paths that differ from every parent, which git
    finds without walking what the merge took whole from one parent (a subtree
    pull, an octopus merge); diffing each merge against each parent in the stream
    instead cost a subtree pull's whole tree per merge.
    """
    diff = git.popen(
        "diff-tree",
        "--stdin",
        "-r",
        "-z",
        "--raw",
        "--no-renames",
        "-c",
        "--root",
        "--always",
        "--no-ext-diff",
        "--no-textconv",
        "--ignore-submodules=none",
        buffered=True,
    )

    # A pipe of a mebibyte: git goes on diffing while the reader works through
    # what it read (with the default 64 KiB, git waited on the reader a sixth of
    # the stream).
    assert diff.stdout is not None
    widen_pipe(diff.stdout, 1 << 20)

    def feed(stdin: IO[bytes]) -> None:
        seen: set[bytes] = set()
        # Read every list whole first: diff-tree takes them far slower than
        # rev-list gives them, and a rev-list left blocked on a full pipe would
        # hold its memory (the mapped pack) to the end of the push. The members
        # are then complete while the commits are diffed (the time budget's
        # refusal says how many of them were judged).
        listings = []
        for index, (args, member) in enumerate(zip(revlists, members, strict=False)):
            listed = known[index] if index < len(known) else None
            if listed is None:
                lister = git.popen("rev-list", "--parents", *args, "--", buffered=True)
                listed, stderr = lister.communicate()
                if lister.returncode != 0:
                    raise GitError(["git", "rev-list", *args], lister.returncode, b"", stderr)
            lines = []
            for words in map(bytes.split, listed.splitlines()):
                oid = sys.intern(words[0].decode())
                member.append(oid)
                # (a boundary's parents are not the range's)
                if parents is not None and oid[:1] != "-":
                    parents[oid] = [sys.intern(w.decode()) for w in words[1:]]
                lines.append(words[0] + b"\n")
            listings.append(lines)
        # Ranges of one push overlap (two branches off one base): each
        # commit is diffed once. A single range needs no bookkeeping.
        dedup = len(revlists) > 1
        for lines in listings:
            for line in lines:
                if line.startswith(b"-"):  # --boundary: excluded, not judged
                    continue
                if dedup:
                    if line in seen:
                        continue
                    seen.add(line)
                stdin.write(line)

    yield from fed_tokens(diff, feed, ["git", "diff-tree", "--stdin"])


def diff_pairs(git: StartsGit, pairs: Sequence[str], paths: Sequence[str]) -> Iterator[bytes]:
    """``<commit> [<parent>]`` lines through one ``diff-tree --stdin``, limited to
    ``paths`` when given: each line gives its commit id as a header (``--always``),
    then its rows, in the order of the lines (a lone commit is diffed against the
    empty tree). Tokens are read as git writes them: a merge's diff against a parent
    it shares little with can hold thousands of rows, which a whole reply would
    keep in memory at once."""
    if not pairs:
        return
    lines = "".join(f"{pair}\n" for pair in pairs).encode()
    limit = ("--", *paths) if paths else ()
    diff = git.popen("diff-tree", "--stdin", *RAW_DIFF, "--always", "--root", *limit)
    for tokens in fed_tokens(
        diff, lambda stdin: stdin.write(lines), ["git", "diff-tree", "--stdin"]
    ):
        yield from tokens


def diff_trees_later(git: StartsGit, old: str, new: str) -> Later:
    """``Git.diff_trees``, started now and read by a thread of its own: git works on
    another core while the caller goes on (``Later.tokens`` waits for it)."""
    return Later(git, ("diff-tree", *RAW_DIFF, old, new))


class Later:
    """A git command running while its caller works; its output is read meanwhile, so
    git never waits on a full pipe."""

    def __init__(self, git: StartsGit, args: Sequence[str]) -> None:
        self._args = list(args)
        self._proc = git.popen(*args, buffered=True)
        self._out = self._err = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        self._out, self._err = self._proc.communicate()

    def tokens(self) -> list[bytes]:
        """Its NUL-separated output, once git has ended; its failure raised here. The
        output is handed over: asked again, it is empty."""
        self._reader.join()
        code = self._proc.wait()
        if code != 0:
            raise GitError(["git", *self._args], code, b"", self._err)
        out, self._out = self._out, b""
        return zsplit(out)


def widen_pipe(stream: IO[bytes], size: int) -> int:
    """Ask Linux for a pipe of ``size`` bytes (``F_SETPIPE_SZ``); the size it has, or
    0 where pipes keep their size (elsewhere, over /proc/sys/fs/pipe-max-size, or past
    the user's pipe quota)."""
    setpipe = getattr(fcntl, "F_SETPIPE_SZ", None) if fcntl is not None else None
    if setpipe is None:
        return 0
    try:
        return int(fcntl.fcntl(stream.fileno(), setpipe, size))
    except OSError:
        return 0


def fed_tokens(
    proc: subprocess.Popen[bytes], feed: Callable[[IO[bytes]], object], command: list[str]
) -> Iterator[list[bytes]]:
    """The NUL-separated tokens ``proc`` writes, a list per read, while ``feed`` writes
    its input from a thread of its own (git answers while it reads: writing everything
    first could leave both blocked on full pipes); the input is closed after it. A
    reader that stops early kills ``proc`` and does not wait for the feeder; git's
    failure, then the feeder's, is raised at the end."""
    errors: list[BaseException] = []

    def writing() -> None:
        assert proc.stdin is not None
        try:
            feed(proc.stdin)
        except BaseException as exc:  # handed to the reading thread
            errors.append(exc)
        finally:
            with contextlib.suppress(OSError):
                proc.stdin.close()

    feeder = threading.Thread(target=writing, daemon=True)
    feeder.start()
    assert proc.stdout is not None
    rest = b""
    finished = False
    try:
        while chunk := proc.stdout.read(1 << 16):
            parts = (rest + chunk).split(b"\0") if rest else chunk.split(b"\0")
            rest = parts.pop()
            yield parts
        finished = True
    finally:
        if not finished:  # stopped early (the time budget, say): no waiting on the feeder,
            proc.kill()  # a daemon thread that ends with the broken pipe
            proc.wait()
            for stream in (proc.stdout, proc.stderr):
                if stream is not None:
                    stream.close()
    feeder.join()
    stderr = proc.stderr.read() if proc.stderr else b""
    code = finish(proc)
    if code != 0:
        raise GitError(command, code, b"", stderr)
    if errors:
        raise errors[0]
    if rest:
        yield [rest]
