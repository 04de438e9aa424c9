"""The findings of what a push leaves in files and notes: a policy or labels file that
does not parse (pushed or staged: one decider each, the hints differ by ``staged``), the
lock (``decide_lock``), the notes a lock or verdict writer pushes, and the append-only
files (``decide_ledger``; the retry quota with its own hints, ``decide_quota``). Pure:
the problems the gathering side found, in; findings out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from git_evidence.core import paths
from git_evidence.core.oids import Oid
from git_evidence.rules.findings import (
    Finding,
    _accept,
    _finding,
    _literal,
    _range,
    hold_target,
    holds_block,
    settle_hold,
)
from git_evidence.rules.table import ALLOW, HOLD, REPIN_NAMED, RuleId

if TYPE_CHECKING:  # data types only: the rules import nothing that runs git
    from git_evidence.core.facts import Drift, FileProblem, LedgerProblem, LockFacts, UpdateFacts
    from git_evidence.policy.identity import Identity
    from git_evidence.policy.schema import Policy


def decide_verdict_notes(facts: UpdateFacts, problems: Sequence[str]) -> list[Finding]:
    """A verdict writer's push of the verdict notes ref: every note must be a verdict."""
    return [_finding("verdict-invalid", facts.update.ref, message=problem) for problem in problems]


def decide_policy_file(
    facts: UpdateFacts, problem: str | None, path: str, *, staged: bool = False
) -> list[Finding]:
    """A protected ref must be left with a policy file that parses and validates;
    ``staged``, the index must: committed, it would refuse every later commit and push
    that reads it."""
    if problem is None:
        return []
    if staged:
        hint: str | None = (
            f"correct {path} at the line named and stage it again (`git add -- {path}`); "
            "committed, a policy that does not parse refuses every later commit"
        )
    else:
        hint = None
    return [_file_finding(facts, problem, path, hint, staged)]


def decide_labels_file(
    facts: UpdateFacts, problem: str | None, path: str, *, staged: bool = False
) -> list[Finding]:
    """A protected ref must be left with a labels file that parses: every judgement and
    every ``pytest --evidence`` run reads it from there. ``staged``, the index must: the
    server refuses it on a protected ref."""
    if problem is None:
        return []
    shown = _literal(path)
    if staged:
        import shlex  # a refusal's hint only

        hint = (
            f"correct {shown} at the line named and stage it again (`git add -- "
            f"{shlex.quote(shown)}`); committed, labels that do not parse stop every "
            "judgement and `pytest --evidence` run"
        )
    else:
        hint = (
            f"{{ref}} would be left with a labels file that does not parse (every "
            f"judgement and `pytest --evidence` run would stop on it): correct {shown} at "
            "the line named (`git evidence labels check --rev {commit}` lists every "
            "problem) and push again"
        )
    return [_file_finding(facts, problem, path, hint, staged)]


def _file_finding(
    facts: UpdateFacts, problem: str, path: str, hint: str | None, staged: bool
) -> Finding:
    """policy-invalid for a file left that does not parse: a staged one names no commit."""
    return _finding(
        "policy-invalid",
        facts.update.ref,
        commit=None if staged else facts.commit,
        found={paths.POLICY: [path]},
        message=problem,
        hint=hint,
    )


def decide_file(facts: UpdateFacts, found: FileProblem, *, staged: bool = False) -> list[Finding]:
    """The finding of a policy or labels file gathered as not parsing."""
    decider = decide_policy_file if found.kind == "policy" else decide_labels_file
    return decider(facts, found.problem, found.path, staged=staged)


def decide_lock(
    facts: UpdateFacts, lock: LockFacts, policy: Policy, who: Identity, *, proposed: bool = False
) -> list[Finding]:
    """Findings from the lock roots and the lock in force at the update's base. A stale
    lock is a notice unless the policy requires a lock: the base
    is accepted history whatever its pin says, so it holds nothing by itself. A
    ``proposed`` range (evidence-proposed) changes the locked bytes as its proposal:
    that is no breach until an evidence writer brings it to a protected ref."""
    ref = facts.update.ref
    where = _range(facts, policy)
    base = where["base"]
    if lock.invalid is not None:
        locked = lock.found.commit[:12] if lock.found else base
        return [
            _finding(
                "lock-invalid",
                ref,
                commit=lock.found.commit if lock.found else None,
                message=lock.invalid,
                locked=locked,
                hint=None if locked else REPIN_NAMED,
            )
        ]
    findings: list[Finding] = []
    bound = holds_block(facts)
    accept = _accept(policy, hold_target(facts, policy))
    if lock.found is None and policy.lock_required:
        missing = _finding(
            "lock-missing",
            ref,
            message=f"no lock in force at {base}" if base else "no base: nothing is pinned",
            **where,
            accept=accept,
        )
        findings.append(settle_hold(missing, policy, who, bound=bound))
    if lock.found is not None and lock.stale:
        locked = lock.found.commit[:12]
        notice = "" if policy.lock_required else " (a notice: it holds nothing by itself)"
        stale = _finding(
            "lock-stale",
            ref,
            commit=facts.base,
            found=_drift_paths(lock.stale),
            details=_drift_details(lock.stale),
            message=f"the base differs from the lock pinned on {locked} in "
            f"{len(lock.stale)} file(s){notice}",
            decision=HOLD if policy.lock_required else ALLOW,
            **where,
            locked=locked,
            accept=accept,
        )
        findings.append(settle_hold(stale, policy, who, bound=bound))
    if lock.breach and not who.evidence_writer(policy) and not proposed:
        findings.append(
            _finding(
                "fixture-breach",
                ref,
                commit=facts.commit,
                found=_drift_paths(lock.breach),
                details=_drift_details(lock.breach),
                message=f"{len(lock.breach)} file(s) under the lock roots differ from "
                + (f"the base {base}" if base else "the lock in force"),
                **where,
            )
        )
    return findings


def _drift_paths(drift: Sequence[Drift]) -> dict[str, list[str]]:
    """The drifted paths by kind (``modified``, ``added``, ``removed``, …): the kind is
    said once, by the label. A removed file is named by the path it had; a renamed one
    is a removal and an addition (the gate compares trees without rename detection)."""
    by_kind: dict[str, list[str]] = {}
    for item in drift:
        by_kind.setdefault(item.kind, []).append(item.path)
    return by_kind


def _drift_details(drift: Sequence[Drift]) -> dict[str, str]:
    """What changed at each drifted path: ``(OLD -> NEW)``, digests or modes."""
    return {item.path: item.change() for item in drift}


def decide_notes(facts: UpdateFacts, problems: Sequence[str]) -> list[Finding]:
    """A lock writer's push of the notes ref: every note it adds must be a lock."""
    return [
        _finding("lock-invalid", facts.update.ref, message=problem, hint=REPIN_NAMED)
        for problem in problems
    ]


def decide_ledger(
    facts: UpdateFacts,
    problems: Sequence[tuple[Oid | None, LedgerProblem]],
    ledger_path: str,
    hints: Mapping[RuleId, tuple[str, str]] | None = None,
) -> list[Finding]:
    """Findings for an append-only file's changes (the freeze ledger; the retry quota
    with its own ``hints``, with a base and without): ``(commit or None for the range,
    problem)`` pairs from ledger.check_change or quota.check_change."""
    base = (facts.base or "")[:12]
    findings = []
    for commit, problem in problems:
        where = f"line {problem.line}: " if problem.line else ""
        hint = None if hints is None else hints[problem.rule][0 if base else 1]
        findings.append(
            _finding(
                problem.rule,
                facts.update.ref,
                commit=commit,
                found={paths.LEDGER: [ledger_path]},
                message=f"{ledger_path}: {where}{problem.message}",
                hint=hint,
                base=base,
                path=ledger_path,
            )
        )
    return findings


# The retry quota's own hints for the ledger's two rules: (with a base, without one).
QUOTA_HINTS: dict[RuleId, tuple[str, str]] = {
    "ledger-rewrite": (
        "the retry quota is append-only: restore its old bytes (`git checkout {base} -- "
        "{path}`) and append new lines only",
        "the retry quota is append-only: keep every line it had and append new lines only",
    ),
    "ledger-entry": (
        "append only lines `git evidence quota` writes: grants pushed by an evidence "
        "writer, spends pushed by CI (a ledger writer), never more spent than granted",
    )
    * 2,
}


def decide_quota(
    facts: UpdateFacts, problems: Sequence[tuple[Oid | None, LedgerProblem]], path: str
) -> list[Finding]:
    """Findings for the quota's changes: the ledger's, with the quota's hints."""
    return decide_ledger(facts, problems, path, hints=QUOTA_HINTS)
