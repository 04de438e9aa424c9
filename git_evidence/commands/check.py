"""``git evidence check [RANGE…] [--base REF]``: judge ranges as the server would
(``gate/checking.py``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from git_evidence.gate.checking import check
from git_evidence.gate.report import given_options
from git_evidence.plumbing import lookups
from git_evidence.plumbing.git import Git

if TYPE_CHECKING:
    import argparse

    from git_evidence.gate.report import Rendering, Report


def run(args: argparse.Namespace) -> tuple[Report, Rendering]:
    git = Git()
    # Reads only: its lookups and objects share one cat-file each (plumbing/lookups.py).
    with lookups.live(git):
        return check(
            git,
            args.ranges or ["HEAD"],
            base=args.base,
            draft=args.policy,
            as_name=args.as_name,
            max_findings=args.max_findings,
            options=given_options(args),
        )
