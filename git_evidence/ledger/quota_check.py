"""The retry quota in a judgement: each commit's change to it, then the range's as a
whole, read from git and handed to ``quota.check_change``. The quota is
small (a line per grant or spend), so both sides are read whole."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from datetime import datetime, timezone

from git_evidence.core.facts import LedgerProblem, UpdateFacts
from git_evidence.core.oids import Oid, is_zero
from git_evidence.ledger import quota
from git_evidence.ledger.check import Touch, append_only_problems
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.git import Git
from git_evidence.policy.identity import Identity
from git_evidence.policy.schema import Policy


def quota_problems(
    git: Git,
    cat: CatFile,
    facts: UpdateFacts,
    touched: Sequence[Touch],
    policy: Policy,
    who: Identity,
) -> list[tuple[Oid | None, LedgerProblem]]:
    """``(commit, problem)`` for each commit's change; ``(None, problem)`` for the range
    (a rewrite no single commit shows: a merge that takes another history's quota)."""
    now = datetime.now(timezone.utc)  # the server's clock, never a commit's date
    writers = quota.Writers(
        policy.evidence_writers,
        policy.ledger_writers,
        pusher_grants=who.evidence_writer(policy),
        pusher_spends=who.ledger_writer(policy),
    )

    def blob(oid: str | None) -> bytes | None:
        return None if oid is None or is_zero(oid) else cat.read(oid)

    @functools.cache
    def check(old: str | None, new: str | None) -> list[LedgerProblem]:
        return quota.check_change(blob(old), blob(new), now=now, writers=writers)

    return append_only_problems(git, facts, touched, policy.quota_path, "the quota", check)
