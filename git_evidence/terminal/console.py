"""What reaches the terminal, the same way for every command: output held
back under ``-q`` until the command says it did not allow, the GitLab prefix on lines
a pusher must see, the one error shape, and a reader that stops reading."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TextIO

from git_evidence.core.errors import ERROR, PREFIX

# GitLab shows a server hook's output to the pusher only on lines with this prefix
# (https://docs.gitlab.com/administration/server_hooks/#custom-error-messages).
GITLAB_PREFIX = "GL-HOOK-ERR: "


def gitlab(env: Mapping[str, str] | None = None) -> bool:
    """True in a hook GitLab runs: it sets both of these for its hooks."""
    env = os.environ if env is None else env
    return bool(env.get("GL_ID") or env.get("GL_USERNAME"))


def for_pusher(text: str) -> str:
    """``text`` as lines a pusher sees: under GitLab each carries its prefix."""
    if not gitlab():
        return text
    return "".join(GITLAB_PREFIX + line for line in text.splitlines(keepends=True))


def say(text: str) -> None:
    """One message of ours for people, on stderr (one line unless ``text`` has more)."""
    sys.stderr.write(for_pusher(f"{PREFIX}: {text}\n"))


def error_json(rule: str, message: str, hint: str, **about: object) -> str:
    """The one shape of an error under ``--format json``, whatever the command:
    ``{"decision": "error", "error": {"rule", "message", "hint"}}``, and for a
    judgement whom it was for (``pusher``)."""
    import json  # here: only an error under --format json needs it

    doc = {"decision": ERROR, "error": {"rule": rule, "message": message, "hint": hint}}
    return json.dumps({**doc, **about}, indent=1)


class _Recorder(io.TextIOBase):
    """Stands in for stdout or stderr and records what was written, in order."""

    def __init__(self, chunks: list[tuple[TextIO, str]], target: TextIO) -> None:
        super().__init__()
        self._chunks = chunks
        self._target = target

    def write(self, text: str) -> int:
        self._chunks.append((self._target, text))
        return len(text)

    def isatty(self) -> bool:
        return False  # nothing recorded is a terminal: no progress lines


class Held:
    """``-q``: everything the command writes, kept until it ends. A command that ends
    allowed (exit 0) printed nothing; otherwise all of it is shown, in order."""

    def __init__(self) -> None:
        self.chunks: list[tuple[TextIO, str]] = []
        self.code: int | None = None

    def release(self) -> None:
        if self.code != 0:  # refused, could not decide, or stopped by an exception
            for stream, text in self.chunks:
                stream.write(text)
        self.chunks.clear()


@contextmanager
def holding(active: bool) -> Iterator[Held]:
    held = Held()
    if not active:
        yield held
        return
    saved = sys.stdout, sys.stderr
    sys.stdout = _Recorder(held.chunks, saved[0])
    sys.stderr = _Recorder(held.chunks, saved[1])
    try:
        yield held
    finally:
        sys.stdout, sys.stderr = saved
        held.release()


@contextmanager
def capturing_stdout(active: bool) -> Iterator[list[str]]:
    """What a command that renders only text prints, for ``--format json`` to wrap;
    on an exception it goes to stderr, so nothing said is lost."""
    lines: list[str] = []
    if not active:
        yield lines
        return
    saved = sys.stdout
    buffer = io.StringIO()
    sys.stdout = buffer
    failed = True
    try:
        yield lines
        failed = False
    finally:
        sys.stdout = saved
        lines += buffer.getvalue().splitlines()
        if failed and lines:
            sys.stderr.write("\n".join(lines) + "\n")


def silence() -> None:
    """After a broken pipe: point stdout and stderr at /dev/null, so that nothing
    (Python's own flush at exit included) writes to the closed pipe again. See the
    Python docs, "Note on SIGPIPE" (library/signal)."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    for stream in (sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                os.dup2(devnull, stream.fileno())
        except (OSError, ValueError):
            pass
    os.close(devnull)
