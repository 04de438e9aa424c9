"""``git evidence pre-commit``: judge the staged change against HEAD as one commit of
the current branch (a hold blocks only on a protected branch, as on the server).

During a merge (MERGE_HEAD exists) only the paths whose staged content differs from
HEAD *and* from every merged head count, as for a merge commit on the server.

Nothing is committed yet, so the hints speak of the index (`git restore --staged`),
and a committed policy that does not parse lets through the one commit that fixes it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from git_evidence.core.errors import PolicyError
from git_evidence.core.paths import Change
from git_evidence.gate import carried, decision, staged
from git_evidence.gate.report import PLAIN, Rendering, Report
from git_evidence.plumbing import lookups
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy.identity import Identity, client_identity
from git_evidence.policy.schema import POLICY_FILE
from git_evidence.rules.table import CLIENT_POLICY_FIX
from git_evidence.terminal import console

if TYPE_CHECKING:
    import argparse


def run(args: argparse.Namespace) -> tuple[Report, Rendering]:
    git = Git()
    # Reads only: its lookups and objects share one cat-file each (plumbing/lookups.py).
    with lookups.live(git):
        change = staged.staged_changes(git)
        who = client_identity(git.config_bool("evidence.trusted"))
        try:
            policy = resolve(git).policy  # asks only the refs it reads
        except PolicyError as exc:
            return _broken_policy(git, exc, change.changes, who), PLAIN
        return decision.decide(staged.gather(git, change, policy), policy, who), PLAIN


def _broken_policy(
    git: Git, exc: PolicyError, changes: tuple[Change, ...], who: Identity
) -> Report:
    """The committed policy does not parse: the commit that corrects it, alone, is let
    through; anything else is refused (exit 2) with how to make that commit."""
    if [c.path for c in changes] == [POLICY_FILE] and carried.staged_policy(git, changes)[
        0
    ] is None:
        # Said even though the hook allows: the policy in force is broken.
        console.say(
            f"{exc.message}; this commit corrects {POLICY_FILE} alone: allowed here, the "
            "server validates it (policy-invalid)"
        )
        return Report(who, None, staged=True)
    exc.fix = CLIENT_POLICY_FIX
    raise exc
