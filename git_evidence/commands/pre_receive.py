"""``git evidence pre-receive``: the server hook. Reads every ``<old> <new> <ref>``
line first, then judges each update against the server's current refs."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from git_evidence.gate import pipeline, time_budget
from git_evidence.gate.ranges import parse_receive_lines
from git_evidence.gate.report import Rendering, Report
from git_evidence.install import handoff
from git_evidence.lock import walk as lock_walk
from git_evidence.plumbing import lookups
from git_evidence.plumbing.context import (
    judged_refs,
    server_aliases,
    server_view,
)
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy.identity import server_pusher
from git_evidence.policy.schema import Policy

if TYPE_CHECKING:
    import argparse


# Pushes of at most this many commits a ref are walked here for post-receive (handoff.py).
HANDOFF_COMMITS = 64


def run(args: argparse.Namespace) -> tuple[Report, Rendering]:
    """Judges under the time budget, armed until the report is written (cli)."""
    time_budget.start(Policy().time_budget_s)  # until the policy says otherwise
    who = server_pusher(os.environ)
    time_budget.PROGRESS.pusher = who.describe()
    time_budget.PROGRESS.stage = "reading the hook input"
    lines = sys.stdin.buffer.read()
    updates = parse_receive_lines(lines)
    git = Git()
    # Reads only: its lookups and objects share one cat-file each (plumbing/lookups.py).
    with lookups.live(git):
        time_budget.PROGRESS.stage = "reading the policy"
        refs, symrefs = git.refs_and_symrefs()
        policy = resolve(git, refs=refs, server=True).policy
        time_budget.start(policy.time_budget_s)
        view = server_view(refs, policy)
        aliases = server_aliases(git, refs, symrefs, updates)
        updates, notes = judged_refs(updates, aliases, {*view.protected, policy.notes_ref})
        report = pipeline.decide(git, updates, policy, view, who, server_refs=refs, notes=notes)
        rendering = pipeline.rendering(git, report, args.max_findings)
        # A long push leaves its walk to post-receive, outside the time budget.
        short = all(len(d.facts.commits) <= HANDOFF_COMMITS for d in report.decisions)
        quiet = False
        if report.exit_code == 0 and short and "GIT_DIR" in os.environ:
            time_budget.PROGRESS.stage = "telling post-receive what to pin"
            quiet = lock_walk.push_needs_no_pin(git, updates, policy, view.notes)
        if quiet:
            handoff.say_quiet(lines)  # post-receive then starts no interpreter
        else:
            handoff.unsay()  # an earlier push's word under this id stands for nothing
        return report, rendering
