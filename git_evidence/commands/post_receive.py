"""``git evidence post-receive``: pin what each accepted push brought to a protected
branch (``lock/received.py``) and say what is news: pins inside the push, pins left
to a lock writer, a tip whose lock changed, a ref that could not be pinned."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from git_evidence.core.errors import EXIT_ERROR, PREFIX
from git_evidence.gate.ranges import parse_receive_lines
from git_evidence.gate.report import WIDTH, wrap
from git_evidence.lock.received import NotPinned, pin_received
from git_evidence.plumbing.git import Git
from git_evidence.policy.identity import server_pusher
from git_evidence.terminal import console

if TYPE_CHECKING:
    import argparse


def short_digest(digest: str) -> str:
    """``sha256:`` and 12 hex digits: enough to tell pins apart in a push report
    (`git evidence show-lock` prints the whole digest)."""
    kind, _, hexdigits = digest.partition(":")
    return f"{kind}:{hexdigits[:12]}" if hexdigits else digest[:19]


def run(args: argparse.Namespace) -> int:
    updates = parse_receive_lines(sys.stdin.buffer.read())
    status = 0
    for done in pin_received(Git(), updates, server_pusher(os.environ)):
        if isinstance(done, NotPinned):
            command = f"git evidence lock {done.new[:12]} --push origin"
            _say(f"could not pin {done.ref} at {done.new[:12]}: {done.message}")
            _say(f"To fix: a lock writer pins it by hand: {command}", first="  ", keep=command)
            status = EXIT_ERROR
            continue
        if done.earlier:
            _say(
                f"pinned {len(done.earlier)} earlier commit(s) of {done.ref} whose lock roots "
                f"changed: {', '.join(done.earlier)}"
            )
        if done.skipped:  # a pin was written: the pinning module is loaded already
            from git_evidence.lock.pinning import MAX_RANGE_PINS

            command = "git evidence lock REV --push"
            _say(
                f"left {done.skipped} older commit(s) of {done.ref} whose lock roots changed "
                f"unpinned (at most {MAX_RANGE_PINS} pins a push); a lock writer "
                f"pins one when needed: {command}",
                keep=command,
            )
        if done.digest is not None:  # a pin that only repeats the lock before it is not news
            _say(f"pinned {done.ref} at {done.new[:12]}: {short_digest(done.digest)}")
    return status


def _say(text: str, first: str = f"{PREFIX}: ", keep: str = "") -> None:
    """A line of the push report, wrapped to fit 80 columns under `remote: ` (and
    GitLab's prefix, which it then carries)."""
    narrower = len(console.GITLAB_PREFIX) if console.gitlab() else 0
    lines = wrap(text, WIDTH - narrower, first=first, keep=keep)
    sys.stderr.write(console.for_pusher("".join(line + "\n" for line in lines)))
