"""``git evidence pre-push``: the client hook. Hands its arguments, input and
environment to the gate (``gate/outgoing.py``), which judges what the push sends
against what this clone knows of the remote, as the server would; under the
pre-commit framework (no remote given) the push its ``PRE_COMMIT_*`` variables
describe."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from git_evidence.gate.outgoing import outgoing
from git_evidence.plumbing import lookups
from git_evidence.plumbing.git import Git
from git_evidence.terminal import console

if TYPE_CHECKING:
    import argparse

    from git_evidence.gate.report import Rendering, Report


def run(args: argparse.Namespace) -> tuple[Report, Rendering]:
    git = Git()
    # Reads only: its lookups and objects share one cat-file each (plumbing/lookups.py).
    with lookups.live(git):
        lines = None if args.remote is None else sys.stdin.buffer.read()
        say = None if args.format == "json" else console.say  # JSON: a note of the report
        return outgoing(
            git, args.remote, lines, os.environ, say=say, max_findings=args.max_findings
        )
