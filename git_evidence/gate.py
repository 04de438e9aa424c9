"""The judging pipeline shared by every judging command:
ref updates → ranges → classified commits → findings → report."""

from __future__ import annotations

import gc
from collections.abc import Sequence

from git_evidence import ledgercheck, lockcheck, quota, quotacheck, rules
from git_evidence.budget import PROGRESS
from git_evidence.git import CatFile, Git
from git_evidence.identity import Identity
from git_evidence.paths import fold_path
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
        ledger_path = fold_path(policy.ledger_path)
        quota_path = fold_path(policy.quota_path)
        PROGRESS.stage = "diffing the pushed commits"
        PROGRESS.listed = lambda: sum(len(p.commits) for p in plans)
        summaries = {}
        for commit in stream_commits(git, plans):
            summaries[commit.oid] = rules.summarize(commit, classifier, ledger_path, quota_path)
            PROGRESS.commits += 1
    finally:
        if collecting:
            gc.enable()
    settle_plans(plans)
    verdicts = [
        rules.judge_update(p, [summaries[c] for c in p.commits], policy, who) for p in plans
    ]
    PROGRESS.stage = "checking the lock and the freeze ledger"
    with CatFile(git) as cat:
        pins = lockcheck.pin_lookup(git, cat, policy.notes_ref)
        for verdict in verdicts:
            facts = verdict.facts
            if facts.notes:
                verdict.findings += _notes_findings(git, cat, facts, policy, who)
            if not verdict.judged or facts.commit is None:
                continue
            found = lockcheck.lock_facts(git, cat, policy, facts.base, facts.commit, view.notes)
            verdict.findings += rules.judge_lock(facts, found, policy, who)
            touched = [(c, change) for c in facts.commits for change in summaries[c].ledger]
            if touched:
                problems = ledgercheck.ledger_problems(git, cat, facts, touched, policy, pins)
                verdict.findings += rules.judge_ledger(facts, problems, policy.ledger_path)
            spent = [(c, change) for c in facts.commits for change in summaries[c].quota]
            if spent:
                faults = quotacheck.quota_problems(git, cat, facts, spent, policy, who)
                verdict.findings += quota.judge_quota(facts, faults, policy.quota_path)
    return Report(who, policy, verdicts)


def _notes_findings(
    git: Git, cat: CatFile, facts: UpdateFacts, policy: Policy, who: Identity
) -> list[rules.Finding]:
    """A lock writer's update of the notes ref: every note it adds must be a lock of
    its commit (anyone else's is refused by notes-forge already)."""
    if facts.update.is_delete or not who.lock_writer(policy):
        return []
    old = None if facts.update.is_create else facts.update.old
    problems = lockcheck.check_notes_update(git, cat, old, facts.update.new, policy)
    return rules.judge_notes(facts, problems)
