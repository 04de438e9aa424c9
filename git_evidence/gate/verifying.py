"""``verify`` as one library call: a revision (or the working tree) compared with the
lock in force at it (``lock/compare.py``), then the range from the protected base
judged as ``check`` judges it. Verified only when the lock exists, nothing drifted,
the base still matches its lock (a stale lock holds no push unless the policy says
so, but verify is where bytes are held to their pin) and the range is allowed."""

from __future__ import annotations

from collections.abc import Mapping

from git_evidence.core.errors import EXIT_ALLOW
from git_evidence.core.oids import Oid
from git_evidence.core.slots import Frozen
from git_evidence.gate.report import Report
from git_evidence.ledger.freezes import freeze_notes
from git_evidence.lock.compare import Compared, compare
from git_evidence.plumbing import lookups, repo_dirs
from git_evidence.plumbing.context import require_commit
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy.identity import client_identity
from git_evidence.policy.schema import Policy


class Verified(Frozen):
    rev: Oid
    policy: Policy
    compared: Compared  # the lock in force and the drift from it
    checked: Report  # the range from the base, judged

    @property
    def stale(self) -> bool:
        """The base no longer matches its lock: a stale lock holds no push unless the
        policy says so, but verify is where bytes are held to their pin."""
        return any(f.rule == "lock-stale" for v in self.checked.decisions for f in v.findings)

    @property
    def ok(self) -> bool:
        return (
            self.compared.summary is not None
            and not self.compared.drift
            and not self.stale
            and self.checked.exit_code == EXIT_ALLOW
        )


def verify(git: Git, rev: str, *, base: str | None, draft: str | None, worktree: bool) -> Verified:
    """``rev`` (``worktree``: the files on disk) against its lock, and the range from
    ``base`` (default: the client's base) judged for this clone's pusher."""
    # Reads only: its lookups and objects share one cat-file each (plumbing/lookups.py).
    with lookups.live(git):
        commit = repo_dirs.commit_noting_dirs(git, rev) or require_commit(git, rev)
        refs: Mapping[str, Oid] | None = None
        bottom: Oid | None
        if base:  # the policy is read there: no refs to list unless a range is judged
            bottom = require_commit(git, base)
            policy = resolve(git, draft=draft, at=bottom).policy
        else:
            from git_evidence.gate.checking import policy_and_base

            refs = git.refs()
            policy, bottom = policy_and_base(git, refs, None, draft)
        compared = compare(git, commit, policy, worktree=worktree)
        checked = _checked(git, refs, policy, bottom, commit)
    return Verified(commit, policy, compared, checked)


def _checked(
    git: Git, refs: Mapping[str, Oid] | None, policy: Policy, base: Oid | None, rev: Oid
) -> Report:
    who = client_identity(git.config_bool("evidence.trusted"))
    label = f"{base[:12]}..{rev[:12]}" if base else rev[:12]
    if rev == base:
        # An empty range: nothing to judge. What the gate would say about the base (a
        # lock that is stale, invalid or missing there) is what was compared.
        said = f"{label}: nothing to judge ({rev[:12]} is the base)"
        return Report(who, policy, notes=(said, *freeze_notes(git, policy, rev, base)))
    # The judging machinery is imported only when there is a range to judge.
    from git_evidence.gate.checking import check_range

    return check_range(git, refs if refs is not None else git.refs(), policy, who, base, rev, label)
