"""The judging pipeline shared by every judging command:
ref updates → ranges → classified commits → findings → report."""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from datetime import datetime, timezone

from git_evidence import ledger, lock, rules
from git_evidence.git import CatFile, Git, is_zero
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
        summaries = {
            c.oid: rules.summarize(c, classifier, ledger_path) for c in stream_commits(git, plans)
        }
    finally:
        if collecting:
            gc.enable()
    settle_plans(plans)
    verdicts = [
        rules.judge_update(p, [summaries[c] for c in p.commits], policy, who) for p in plans
    ]
    with CatFile(git) as cat:
        pins = lock.pin_lookup(git, cat, policy.notes_ref)
        for verdict in verdicts:
            verdict.findings += _lock_findings(git, cat, verdict.facts, policy, view, who)
            touched = (
                [(c, change) for c in verdict.facts.commits for change in summaries[c].ledger]
                if verdict.facts.revlist
                else []
            )
            if touched:
                verdict.findings += _ledger_findings(cat, verdict.facts, touched, policy, pins)
    return Report(who, policy, verdicts)


def _ledger_findings(
    cat: CatFile,
    facts: UpdateFacts,
    touched: list[tuple[str, tuple[str, str, str, str]]],
    policy: Policy,
    pins: Callable[[str], bool],
) -> list[rules.Finding]:
    """Each commit's change to the freeze ledger, then the range's as a whole."""
    now = datetime.now(timezone.utc)  # the server's clock, never a commit's date

    def blob(oid: str) -> bytes | None:
        return None if is_zero(oid) else cat.read(oid)

    def check(old: bytes | None, new: bytes | None) -> list[ledger.Problem]:
        return ledger.check_change(
            old,
            new,
            max_window_hours=policy.max_window_hours,
            now=now,
            writers=policy.ledger_writers,
            pin_exists=pins,
        )

    problems: list[tuple[str | None, ledger.Problem]] = []
    for commit, (status, old, new, path) in touched:
        if path != policy.ledger_path:  # a case or Unicode variant of the ledger's name
            problems.append(
                (
                    commit,
                    ledger.Problem(
                        "ledger-rewrite", None, f"{path!r} is another spelling of the ledger"
                    ),
                )
            )
            continue
        problems += [(commit, p) for p in check(blob(old), None if status == "D" else blob(new))]
    if not problems and facts.commit is not None:
        tip = cat.get(f"{facts.commit}:{policy.ledger_path}")
        start = cat.get(f"{facts.base}:{policy.ledger_path}") if facts.base else None
        if start is not None or tip is not None:
            whole = check(start[2] if start else None, tip[2] if tip else None)
            problems += [(None, p) for p in whole if p.rule == "ledger-rewrite"]
    return rules.judge_ledger(facts, problems, policy.ledger_path)


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
