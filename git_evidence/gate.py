"""The judging pipeline shared by every judging command:
ref updates → ranges → classified commits → findings → report."""

from __future__ import annotations

import gc
from collections.abc import Sequence

from git_evidence import lock, rules
from git_evidence.git import CatFile, Git
from git_evidence.identity import Identity
from git_evidence.policy import Policy
from git_evidence.ranges import (
    RefUpdate,
    RefView,
    UpdateFacts,
    plan_updates,
    settle_plans,
    stream_commits,
)
from git_evidence.report import Report


def judge(
    git: Git,
    updates: Sequence[RefUpdate],
    policy: Policy,
    view: RefView,
    who: Identity,
    *,
    named_refs: bool = True,
) -> Report:
    """``named_refs=False`` judges ranges that are not ref updates (``check``)."""
    plans = plan_updates(git, updates, policy, view)
    for plan in plans:
        plan.named_ref = named_refs
    classifier = policy.classifier()
    # The stream allocates only acyclic objects (tuples, strings); the cyclic collector
    # would rescan every live summary again and again on a large push.
    collecting = gc.isenabled()
    gc.disable()
    try:
        summaries = {c.oid: rules.summarize(c, classifier) for c in stream_commits(git, plans)}
    finally:
        if collecting:
            gc.enable()
    settle_plans(plans)
    verdicts = [
        rules.judge_update(p, [summaries[c] for c in p.commits], policy, who) for p in plans
    ]
    with CatFile(git) as cat:
        for verdict in verdicts:
            verdict.findings += _lock_findings(git, cat, verdict.facts, policy, view, who)
    return Report(who, policy, verdicts)


def _lock_findings(
    git: Git, cat: CatFile, facts: UpdateFacts, policy: Policy, view: RefView, who: Identity
) -> list[rules.Finding]:
    if facts.notes and not facts.update.is_delete and who.lock_writer(policy):
        old = None if facts.update.is_create else facts.update.old
        return rules.judge_notes(facts, lock.check_notes_update(git, cat, old, facts.update.new))
    if facts.revlist is None or facts.commit is None or rules.judge_ref(facts, policy, who):
        return []
    found = lock.lock_facts(
        git,
        cat,
        policy.notes_ref,
        policy.lock_roots,
        policy.lock_exclude,
        facts.base,
        facts.commit,
        view.notes,
    )
    return rules.judge_lock(facts, found, policy, who)
