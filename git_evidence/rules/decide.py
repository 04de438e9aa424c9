"""The one decide pass: every finding of a push, a range or the staged change, from the
facts gathered first (``core.facts.PushFacts``). Every entry point (pre-receive,
pre-push, pre-commit, check, verify, ci) calls ``decide`` and nothing else of the rules'
deciders: what the findings of one update are, in which order, what a client hook adds
to a hint, and when a policy file that parses alone still breaks the server's policy,
is said here once. Pure: facts, the policy and who in; decisions and notes out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from git_evidence.core.slots import Frozen
from git_evidence.rules.commits import decide_ref, decide_staged, decide_update
from git_evidence.rules.files import (
    decide_file,
    decide_ledger,
    decide_lock,
    decide_notes,
    decide_quota,
    decide_verdict_notes,
)
from git_evidence.rules.findings import UpdateDecision, liftable_by_trust, worst
from git_evidence.rules.table import REJECT

if TYPE_CHECKING:  # data types only: the rules import nothing that runs git
    from git_evidence.core.facts import PushFacts, UpdateBundle, UpdateFacts
    from git_evidence.policy.identity import Identity
    from git_evidence.policy.schema import Policy

# A range `check` judges is no ref: what a push of it to a protected ref would meet
# about the files it leaves is a note.
UNPUSHED_FILES = (
    "a push of this to a protected ref is refused until the file parses: fix it and commit again"
)


class Decided(Frozen):
    """Each update's decision, and the notes the pass made (files a range leaves)."""

    decisions: list[UpdateDecision]
    notes: list[str]


def decide(push: PushFacts, policy: Policy, who: Identity) -> Decided:
    """Each update's findings, then what only the push as a whole says: the server's
    policy once the push is applied (pre-receive), the setting that lifts a client's
    refusal (pre-push)."""
    notes: list[str] = []
    if push.entry == "pre-commit":
        decisions = [_staged(bundle, push, policy, who) for bundle in push.updates]
    else:
        decisions = [_update(bundle, policy, who, notes) for bundle in push.updates]
    changed = [
        bundle.policy_changed and outcome.judged
        for outcome, bundle in zip(decisions, push.updates, strict=True)
    ]
    # Each policy file parses; together they must still give one policy.
    after = push.after_push
    if after is not None and any(changed) and worst(v.decision for v in decisions) != REJECT:
        decisions = [
            outcome.with_findings([*outcome.findings, *decide_file(outcome.facts, after)])
            if policy_changed
            else outcome
            for outcome, policy_changed in zip(decisions, changed, strict=True)
        ]
    if push.entry == "pre-push" and not who.trusted_clone:
        decisions = [
            outcome.with_findings(liftable_by_trust(f) for f in outcome.findings)
            for outcome in decisions
        ]
    return Decided(decisions, notes)


def judges_range(facts: UpdateFacts, policy: Policy, who: Identity) -> bool:
    """Whether the pass judges the commits of the update's range: it has one, and its
    ref is not refused on its own (``decide_ref``). The gate reads the lock, the ledger,
    the quota and the files a tip leaves only for such an update, as the pass reads them
    only then: a push refused by its ref name costs no more reading."""
    return (
        facts.revlist is not None
        and facts.commit is not None
        and not decide_ref(facts, policy, who)
    )


def _update(
    bundle: UpdateBundle, policy: Policy, who: Identity, notes: list[str]
) -> UpdateDecision:
    facts = bundle.facts
    outcome = decide_update(facts, bundle.commits, policy, who)
    findings = list(outcome.findings)
    if facts.notes and facts.update.ref.casefold() == policy.judge.notes_ref.casefold():
        findings += decide_verdict_notes(facts, bundle.verdicts)
    elif facts.notes:
        findings += decide_notes(facts, bundle.notes)
    if not outcome.judged or facts.commit is None:
        return outcome.with_findings(findings)
    files = [f for found in bundle.files for f in decide_file(facts, found)]
    if facts.protected:
        findings += files
    else:
        notes += [f"{f.rule}: {f.message} ({UNPUSHED_FILES})" for f in files]
    if bundle.lock is not None:
        proposed = any(f.rule == "evidence-proposed" for f in findings)
        findings += decide_lock(facts, bundle.lock, policy, who, proposed=proposed)
    findings += decide_ledger(facts, bundle.ledger, policy.ledger_path)
    findings += decide_quota(facts, bundle.quota, policy.quota_path)
    return outcome.with_findings(findings)


def _staged(bundle: UpdateBundle, push: PushFacts, policy: Policy, who: Identity) -> UpdateDecision:
    """The staged change, one commit of the current branch: its hints speak of the index."""
    facts = bundle.facts
    (summary,) = bundle.commits
    outcome = decide_staged(
        facts,
        summary,
        policy,
        who,
        protected=push.staged_protected,
        proposal=push.staged_proposal,
    )
    files = [f for found in bundle.files for f in decide_file(facts, found, staged=True)]
    return outcome.with_findings([*outcome.findings, *files]) if files else outcome
