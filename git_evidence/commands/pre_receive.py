"""``git evidence pre-receive``: the server hook. Hands its input and environment to
the gate (``gate/receive.py``: every ``<old> <new> <ref>`` line read first, then each
update judged against the server's current refs), then tells post-receive whether the
push needs a pin."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from git_evidence.gate.receive import receive
from git_evidence.install import handoff

if TYPE_CHECKING:
    import argparse

    from git_evidence.gate.report import Rendering, Report


def run(args: argparse.Namespace) -> tuple[Report, Rendering]:
    """Judges under the time budget, armed until the report is written (cli)."""
    received = receive(sys.stdin.buffer, os.environ, args.max_findings)
    if received.quiet is not None:
        handoff.say_quiet(received.quiet)  # post-receive then starts no interpreter
    else:
        handoff.unsay()  # an earlier push's word under this id stands for nothing
    return received.report, received.rendering
