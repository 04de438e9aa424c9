"""The judging pipeline shared by every judging command:
ref updates → ranges → classified commits → findings → report."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Sequence
from datetime import datetime, timezone

from git_evidence import ledger, lockcheck, rules
from git_evidence.budget import PROGRESS
from git_evidence.git import CatFile, Git, blob_id, is_zero
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
        PROGRESS.stage = "diffing the pushed commits"
        PROGRESS.listed = lambda: sum(len(p.commits) for p in plans)
        summaries = {}
        for commit in stream_commits(git, plans):
            summaries[commit.oid] = rules.summarize(commit, classifier, ledger_path)
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
            verdict.findings += _lock_findings(git, cat, verdict.facts, policy, view, who)
            touched = (
                [(c, change) for c in verdict.facts.commits for change in summaries[c].ledger]
                if verdict.facts.revlist
                else []
            )
            if touched:
                verdict.findings += _ledger_findings(git, cat, verdict.facts, touched, policy, pins)
    return Report(who, policy, verdicts)


def _ledger_findings(
    git: Git,
    cat: CatFile,
    facts: UpdateFacts,
    touched: list[tuple[str, tuple[str, str, str, str]]],
    policy: Policy,
    pins: Callable[[str], bool],
) -> list[rules.Finding]:
    """Each commit's change to the freeze ledger, then the range's as a whole."""
    now = datetime.now(timezone.utc)  # the server's clock, never a commit's date

    read: dict[str, bytes] = {}  # a ledger is read once per blob, however often named

    def blob(oid: str | None) -> bytes | None:
        if oid is None or is_zero(oid):
            return None
        if oid not in read:
            read[oid] = cat.read(oid)
        return read[oid]

    @functools.cache
    def pair(old: str | None, new: str | None) -> tuple[bytes | None, bytes | None]:
        """The old and new ledger. When the new one starts with the old one (its first
        bytes hash to the old blob's id), the old blob is never read: a one-line append
        to a long ledger inflates one blob, not two."""
        after = blob(new)
        if old is None or is_zero(old) or after is None or old in read:
            return blob(old), after
        size = git.object_size(old)
        if size <= len(after) and blob_id(memoryview(after)[:size], old) == old:
            return after[:size], after
        return blob(old), after

    @functools.cache
    def check(old_oid: str | None, new_oid: str | None) -> list[ledger.Problem]:
        old, new = pair(old_oid, new_oid)
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
        problems += [(commit, p) for p in check(old, None if status == "D" else new)]
    if not problems and facts.commit is not None:
        revs = [facts.base, facts.commit] if facts.base else [facts.commit]
        ends = [
            hit[0] if hit and hit[1] == "blob" else None
            for hit in git.batch_check([f"{rev}:{policy.ledger_path}" for rev in revs])
        ]
        start, tip = (ends[0], ends[1]) if facts.base else (None, ends[0])
        if start is not None or tip is not None:
            whole = check(start, tip)
            problems += [(None, p) for p in whole if p.rule == "ledger-rewrite"]
    return rules.judge_ledger(facts, problems, policy.ledger_path)


def _lock_findings(
    git: Git, cat: CatFile, facts: UpdateFacts, policy: Policy, view: RefView, who: Identity
) -> list[rules.Finding]:
    if facts.notes and not facts.update.is_delete and who.lock_writer(policy):
        old = None if facts.update.is_create else facts.update.old
        problems = lockcheck.check_notes_update(
            git, cat, old, facts.update.new, policy.notes_ref, policy.lock_exclude
        )
        return rules.judge_notes(facts, problems)
    if facts.revlist is None or facts.commit is None or rules.judge_ref(facts, policy, who):
        return []
    found = lockcheck.lock_facts(
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
