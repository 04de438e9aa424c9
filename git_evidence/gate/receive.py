"""A push as the server's ``pre-receive`` judges it: every ``<old> <new> <ref>`` line
read first, then each update judged against the server's refs as they are, under the
time budget, and whether post-receive would pin anything for it. The hook's command
reads its input and environment and calls ``receive``; it alone writes the word for
post-receive (``install/handoff.py``), since the gate writes nothing."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from git_evidence.core.slots import Frozen
from git_evidence.gate import pipeline, time_budget
from git_evidence.gate.ranges import parse_receive_lines
from git_evidence.lock import walk as lock_walk
from git_evidence.plumbing import lookups
from git_evidence.plumbing.context import server_push
from git_evidence.plumbing.git import Git
from git_evidence.policy.identity import server_pusher
from git_evidence.policy.schema import Policy

if TYPE_CHECKING:
    from typing import BinaryIO

    from git_evidence.gate.report import Rendering, Report

# Pushes of at most this many commits a ref are walked here for post-receive (handoff.py).
HANDOFF_COMMITS = 64


class Received(Frozen):
    """A push judged: its report, how to render it, and the word for post-receive:
    the push's lines when it needs no pin (post-receive then starts no interpreter),
    None when post-receive must run (any earlier word at its path taken back)."""

    report: Report
    rendering: Rendering
    quiet: bytes | None


def receive(stdin: BinaryIO, environ: Mapping[str, str], max_findings: int | None) -> Received:
    """Judge the push git describes on ``stdin``, for the pusher ``environ`` names,
    under the time budget: armed first with the default (reading the input may wait),
    then with the policy's; it stays armed until the report is written (cli)."""
    time_budget.start(Policy().time_budget_s)  # until the policy says otherwise
    who = server_pusher(environ)
    time_budget.PROGRESS.pusher = who.describe()
    time_budget.PROGRESS.stage = "reading the hook input"
    lines = stdin.read()
    updates = parse_receive_lines(lines)
    git = Git()
    # Reads only: its lookups and objects share one cat-file each (plumbing/lookups.py).
    with lookups.live(git):
        time_budget.PROGRESS.stage = "reading the policy"
        push = server_push(git, updates)
        policy, view, updates = push.policy, push.view, push.updates
        time_budget.start(policy.time_budget_s)
        report = pipeline.decide(
            git, updates, policy, view, who, server_refs=push.refs, notes=push.notes
        )
        rendering = pipeline.rendering(git, report, max_findings)
        # A long push leaves its walk to post-receive, outside the time budget.
        short = all(len(d.facts.commits) <= HANDOFF_COMMITS for d in report.decisions)
        quiet = False
        if report.exit_code == 0 and short and "GIT_DIR" in environ:
            time_budget.PROGRESS.stage = "telling post-receive what to pin"
            quiet = lock_walk.push_needs_no_pin(git, updates, policy, view.notes)
        return Received(report, rendering, lines if quiet else None)
