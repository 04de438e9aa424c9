"""``git evidence check [RANGE…] [--base REF]``: judge ranges as the server would."""

from __future__ import annotations

from typing import TYPE_CHECKING

from git_evidence.gate import pipeline
from git_evidence.gate.checking import check_range, policy_and_base, policy_only
from git_evidence.gate.report import Rendering, Report, given_options, join
from git_evidence.plumbing import lookups
from git_evidence.plumbing.context import require_commit
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import AskedRefs
from git_evidence.policy.identity import client_identity

if TYPE_CHECKING:
    import argparse


def run(args: argparse.Namespace) -> tuple[Report, Rendering]:
    git = Git()
    # Reads only: its lookups and objects share one cat-file each (plumbing/lookups.py).
    with lookups.live(git):
        refs = AskedRefs(git)  # the few refs it reads, asked of the object reader
        ranges = args.ranges or ["HEAD"]
        if args.base or not all(".." in text for text in ranges):
            policy, base = policy_and_base(git, refs, args.base, args.policy)
        else:  # every range names its bottom: no default base to look for
            policy, base = policy_only(git, refs, None, args.policy), None
        who = client_identity(git.config_bool("evidence.trusted"), args.as_name)
        parts = []
        for text in ranges:
            start, sep, end = text.partition("..")
            bottom: str | None
            if sep:
                bottom, top = (
                    require_commit(git, start or "HEAD"),
                    require_commit(git, end or "HEAD"),
                )
            else:
                bottom, top = base, require_commit(git, text)
            parts.append(check_range(git, refs, policy, who, bottom, top, text))
        report = join(who, policy, parts)
        return report, pipeline.rendering(git, report, args.max_findings, given_options(args))
