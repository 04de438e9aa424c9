"""One ``git cat-file --batch-check`` and one ``--batch`` kept running for a block of
reads: a hook or a check asks a few lookups and objects at a time (the policy blob,
the pushed tips peeled to commits, each commit's note and its ancestors' notes, the
links a change follows), and a process for each costs more than the answers. Inside
``with live(git):`` every short ``batch.check`` of that ``Git`` goes to the one
lookup process, and every ``CatFile`` of it to the one object reader, both hung on the
``Git`` itself (``git.live``) for the block's length; outside it (and for a long list
of lookups) each starts its own.

Only for blocks that write nothing: a process that runs on would go on answering from
what it read of the refs as they were. Apart from batch.py, which stays the one parser
of the answers, because this is a lifetime (start, ask, close) rather than a
protocol."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator, Sequence

from git_evidence.core.errors import EvidenceError
from git_evidence.core.oids import Oid
from git_evidence.plumbing import batch
from git_evidence.plumbing.stream import StartsGit, finish, give_up

COMMAND = ["git", "cat-file", "--batch-check"]


class _Live:
    """The running process and the asking side of it: each list is written whole and
    its answers read line by line (a short list fits in the pipes both ways, so neither
    side waits on the other)."""

    def __init__(self, git: StartsGit) -> None:
        self._git = git
        self._proc: subprocess.Popen[bytes] | None = None

    def ask(self, specs: Sequence[str]) -> list[tuple[Oid, str] | None]:
        query = b"".join(batch.spec_line(spec) for spec in specs)
        try:
            return self._answers(query, len(specs))
        except BaseException:
            # Answers left unread would be taken for the next list's: this process is
            # given up, and the next list starts another.
            self._abandon()
            raise

    def _answers(self, query: bytes, asked: int) -> list[tuple[Oid, str] | None]:
        if self._proc is None:
            self._proc = self._git.popen("cat-file", "--batch-check")
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(query)
            proc.stdin.flush()
        except BrokenPipeError:
            raise self._failed(0, asked) from None
        result: list[tuple[Oid, str] | None] = []
        for _ in range(asked):
            line = proc.stdout.readline(batch.MAX_HEADER)
            if not line.endswith(b"\n"):
                raise self._failed(len(result), asked)
            hit = batch.parse_header(line)
            result.append(hit[:2] if hit else None)
        return result

    def _failed(self, answered: int, asked: int) -> EvidenceError:
        return EvidenceError(
            f"{' '.join(COMMAND)} answered {answered} of {asked} lookups",
            fix="check that the repository is intact (git fsck); nothing was allowed",
        )

    def _abandon(self) -> None:
        if self._proc is not None:
            give_up(self._proc)
            self._proc = None

    def close(self) -> None:
        if self._proc is not None:
            finish(self._proc)
            self._proc = None


@contextlib.contextmanager
def live(git: batch.ReadsGit) -> Iterator[None]:
    """Within the block, ``batch.check(git, …)`` of a short list asks one persistent
    process, and each ``CatFile(git)`` one shared reader (each started by its first
    question, both closed when the block ends): both hang on ``git.live`` while the
    block runs. Nested blocks share the outer one's."""
    if git.live is not None:
        yield
        return
    one = _Live(git)
    reader = batch.CatFile(git)
    git.live = batch.Live(one.ask, reader)
    try:
        yield
    finally:
        git.live = None
        one.close()
        reader.close()
