"""Changes → findings → decision (SPEC §6). Pure functions of data: no git here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from git_evidence import paths
from git_evidence.paths import EVIDENCE_CLASSES, Classifier, fold_path

if TYPE_CHECKING:  # data types only: the rules import nothing that runs git
    from git_evidence.identity import Identity
    from git_evidence.ledger import Problem
    from git_evidence.lockcheck import LockFacts
    from git_evidence.manifest import Drift
    from git_evidence.policy import Policy
    from git_evidence.ranges import CommitDiff, UpdateFacts

ALLOW, HOLD, REJECT = "allow", "hold", "reject"
SEVERITY = {ALLOW: 0, HOLD: 1, REJECT: 2}
# Classes that may ride along with anything, and those that make a change "product
# side" when they sit beside evidence (test code and unclassified paths included).
NON_EVIDENCE_SIDE = frozenset({paths.PRODUCT, paths.TEST, paths.OTHER})

# rule id → (decision, one line saying how to fix it). `{…}` fields are filled in.
RULES: dict[str, tuple[str | None, str]] = {
    "mixed-commit": (
        REJECT,
        "split commit {commit}: commit the evidence paths alone and the rest alone "
        "(`git rebase -i {base}`, mark it `edit`, `git reset HEAD~`, two commits), "
        "then have an evidence writer push the evidence commit",
    ),
    "mixed-range": (
        REJECT,
        "push the evidence commits apart from the product commits: drop them from this "
        "branch (`git rebase -i {base}`) and have an evidence writer push them alone",
    ),
    "evidence-untrusted": (
        REJECT,
        "remove the evidence change from this push (`git rebase -i {base}`), or ask "
        "{writers} to push it on its own",
    ),
    "notes-forge": (
        REJECT,
        "only lock writers ({writers}) update {ref}; push without it "
        "(`git push <remote> <branch>`, not `--all`/`--mirror`)",
    ),
    "replace-ref": (
        REJECT,
        "replace refs change what git shows for an object and are never accepted: "
        "delete it (`git replace -d`) and push without it",
    ),
    "ref-namespace": (REJECT, "push to a ref under {namespaces} (policy [rules].allow_namespaces)"),
    "non-fast-forward": (
        REJECT,
        "protected history is never rewritten: fetch, rebase onto the server's {ref} "
        "(`git pull --rebase`) and push again",
    ),
    "protected-delete": (
        REJECT,
        "{ref} is protected and cannot be deleted (policy [rules].protected)",
    ),
    "not-a-commit": (REJECT, "push a ref that names a commit (a tag must peel to a commit)"),
    "other-path": (
        None,
        "these paths are in no class: classify them in [paths] with a reviewed policy "
        "change, or push them apart for review",
    ),
    "added-test": (
        None,
        "new test files are reviewed before they judge the product: push them in a "
        "change of their own for a person to accept",
    ),
    "test-edit": (
        None,
        "edited or deleted test files are reviewed: push them in a change of their own "
        "for a person to accept",
    ),
    "fixture-breach": (
        REJECT,
        "the bytes under the lock roots must match the lock: drop the change "
        "(`git rebase -i {base}`), or have an evidence writer push it; post-receive then "
        "pins the new tip",
    ),
    "lock-stale": (
        HOLD,
        "{base} no longer matches the lock pinned on {locked}: a lock writer reviews the "
        "drift and pins it (`git evidence lock {base}`, then `git push <remote> "
        "refs/notes/evidence`)",
    ),
    "lock-missing": (
        HOLD,
        "no lock is in force at {base} and the policy requires one: a lock writer pins it "
        "(`git evidence lock {base}`, then `git push <remote> refs/notes/evidence`)",
    ),
    "lock-invalid": (
        REJECT,
        "a lock writer re-pins {locked} (`git evidence lock {locked}`) and pushes "
        "refs/notes/evidence; a note is one canonical record written by git evidence",
    ),
    "ledger-rewrite": (
        REJECT,
        "the freeze ledger is append-only: restore its old bytes (`git checkout {base} -- "
        "{path}`) and append new lines only; CI appends them (`git evidence freeze add`)",
    ),
    "ledger-entry": (
        REJECT,
        "append only entries `git evidence freeze add` writes: a reproduced flake (one "
        "seed that both passed and failed), a window inside max_window_hours, a pin that "
        "exists, by a ledger writer",
    ),
    "policy-error": (REJECT, "fix the policy file named above; until then every push is refused"),
    "time-budget": (
        REJECT,
        "nothing was allowed: push fewer commits at a time, or raise "
        "[rules].time_budget_s where the host allows it",
    ),
    "git-error": (
        REJECT,
        "the gate could not read what it must judge; nothing was "
        "allowed: check the repository (git fsck) and retry",
    ),
}


@dataclass(frozen=True)
class Finding:
    rule: str
    decision: str
    ref: str
    commit: str | None
    paths: dict[str, list[str]]
    message: str
    hint: str


class CommitSummary(NamedTuple):
    """The classified content of one commit (or of the staged change), kept compact:
    a push of 20,000 commits holds 20,000 of these."""

    oid: str
    merge: bool
    by_class: tuple[tuple[str, tuple[str, ...]], ...]
    classes: frozenset[str]
    added_tests: tuple[str, ...] = ()
    changed_tests: tuple[str, ...] = ()
    # (status, old blob, new blob, path) of each change to the freeze ledger
    ledger: tuple[tuple[str, str, str, str], ...] = ()
    # the same for the retry quota (SPEC §12), append-only like the ledger
    quota: tuple[tuple[str, str, str, str], ...] = ()


# Commits share a handful of class combinations: one frozenset object each.
_CLASS_SETS: dict[tuple[str, ...], frozenset[str]] = {}


def summarize(
    commit: CommitDiff, classifier: Classifier, ledger_path: str = "", quota_path: str = ""
) -> CommitSummary:
    """``ledger_path`` and ``quota_path`` (folded): changes to them keep their blob ids
    for the append-only checks."""
    by_class: dict[str, list[str]] = {}
    added: list[str] = []
    changed: list[str] = []
    ledger: list[tuple[str, str, str, str]] = []
    quota: list[tuple[str, str, str, str]] = []
    for change in commit.changes:
        klass = classifier.classify_change(change).klass
        by_class.setdefault(klass, []).append(change.path)
        if klass == paths.TEST:
            (added if change.status == "A" else changed).append(change.path)
        elif klass == paths.LEDGER:
            folded = fold_path(change.path)
            if folded == ledger_path:
                ledger.append((change.status, *change.object_ids(), change.path))
            elif folded == quota_path:
                quota.append((change.status, *change.object_ids(), change.path))
    key = tuple(by_class)
    classes = _CLASS_SETS.get(key) or _CLASS_SETS.setdefault(key, frozenset(key))
    return CommitSummary(
        commit.oid,
        commit.merge,
        tuple((k, tuple(v)) for k, v in by_class.items()),
        classes,
        tuple(added),
        tuple(changed),
        tuple(ledger),
        tuple(quota),
    )


@dataclass
class UpdateVerdict:
    facts: UpdateFacts
    findings: list[Finding]
    judged: bool = False  # its commits were judged: nothing refused the ref itself

    @property
    def decision(self) -> str:
        return worst(f.decision for f in self.findings)


def worst(decisions: Iterable[str]) -> str:
    return max(decisions, key=SEVERITY.__getitem__, default=ALLOW)


def _finding(
    rule: str,
    ref: str,
    *,
    commit: str | None = None,
    found: dict[str, list[str]] | None = None,
    message: str,
    decision: str | None = None,
    **fields: str,
) -> Finding:
    default, hint = RULES[rule]
    chosen = decision or default
    assert chosen is not None
    return Finding(
        rule,
        chosen,
        ref,
        commit,
        found or {},
        message,
        hint.format(ref=ref, commit=(commit or "")[:12], **fields),
    )


def _writers(names: Iterable[str]) -> str:
    listed = sorted(names)
    return ", ".join(listed) if listed else "nobody yet: the policy lists no writers"


def judge_ref(facts: UpdateFacts, policy: Policy, who: Identity) -> list[Finding]:
    """Findings that follow from the ref and its history shape alone."""
    update, ref = facts.update, facts.update.ref
    if not facts.named_ref:
        return []
    if ref.startswith("refs/replace/"):
        return [_finding("replace-ref", ref, message="replace refs are refused")]
    if facts.notes:
        if who.lock_writer(policy):
            return []
        return [
            _finding(
                "notes-forge",
                ref,
                message=f"{who.describe()} is not a lock writer",
                writers=_writers(policy.lock_writers),
            )
        ]
    if not any(ref.startswith(space) for space in policy.allow_namespaces):
        return [
            _finding(
                "ref-namespace",
                ref,
                message="ref outside the allowed namespaces",
                namespaces=", ".join(policy.allow_namespaces),
            )
        ]
    if update.is_delete:
        if facts.protected:
            return [_finding("protected-delete", ref, message="deleting a protected branch")]
        return []
    if facts.commit is None:
        return [
            _finding(
                "not-a-commit",
                ref,
                commit=update.new,
                message=f"{update.new[:12]} does not resolve to a commit",
            )
        ]
    if facts.protected and facts.fast_forward is False:
        return [
            _finding(
                "non-fast-forward",
                ref,
                commit=facts.commit,
                message=f"{update.old[:12]} is not an ancestor of {facts.commit[:12]}",
            )
        ]
    return []


def judge_update(
    facts: UpdateFacts, commits: Sequence[CommitSummary], policy: Policy, who: Identity
) -> UpdateVerdict:
    ref = facts.update.ref
    findings = judge_ref(facts, policy, who)
    if findings or facts.revlist is None:
        return UpdateVerdict(facts, findings)
    verdict = UpdateVerdict(facts, findings, judged=True)
    base = (facts.base or "<base>")[:12]
    present = frozenset().union(*(commit.classes for commit in commits))
    # Collect paths only for classes a finding can list: a product-only push of
    # 20,000 commits then costs one pass over 20,000 small sets.
    wanted = set(EVIDENCE_CLASSES | NON_EVIDENCE_SIDE) if present & EVIDENCE_CLASSES else set()
    if policy.other_path != ALLOW:
        wanted.add(paths.OTHER)
    union: dict[str, dict[str, None]] = {}
    added: dict[str, None] = {}
    changed: dict[str, None] = {}
    for commit in commits:
        classes = commit.classes
        if classes & EVIDENCE_CLASSES and classes & NON_EVIDENCE_SIDE:
            findings.append(
                _finding(
                    "mixed-commit",
                    ref,
                    commit=commit.oid,
                    found=_side_by_side(dict(commit.by_class)),
                    message=("merge" if commit.merge else "commit")
                    + " changes evidence and product in one",
                    base=base,
                )
            )
        if classes & wanted:
            for klass, found in commit.by_class:
                if klass in wanted:
                    union.setdefault(klass, {}).update(dict.fromkeys(found))
        added.update(dict.fromkeys(commit.added_tests))
        changed.update(dict.fromkeys(commit.changed_tests))
    evidence = present & EVIDENCE_CLASSES
    # The split trick: no single commit mixes, the range does. (A range whose mix is
    # one mixed commit already has its finding.)
    if (
        evidence
        and present & NON_EVIDENCE_SIDE
        and not findings
        and not who.evidence_writer(policy)
    ):
        findings.append(
            _finding(
                "mixed-range",
                ref,
                found=_side_by_side(_lists(union)),
                message=f"the {len(commits)} commits of this range change evidence and "
                "product between them",
                base=base,
            )
        )
    untrusted = {k for k in evidence if not _may_write(k, union.get(k, {}), policy, who)}
    if untrusted:
        writers = policy.ledger_writers if untrusted == {paths.LEDGER} else policy.evidence_writers
        findings.append(
            _finding(
                "evidence-untrusted",
                ref,
                found={k: list(union[k]) for k in sorted(untrusted)},
                message=f"{who.describe()} may not change evidence",
                base=base,
                writers=_writers(writers),
            )
        )
    for rule, decision, listed, what in (
        ("other-path", policy.other_path, union.get(paths.OTHER, {}), "paths in no class"),
        ("added-test", policy.added_test, added, "new test files"),
        ("test-edit", policy.test_edit, changed, "edited or deleted test files"),
    ):
        if listed and decision != ALLOW:
            klass = paths.OTHER if rule == "other-path" else paths.TEST
            findings.append(
                _finding(rule, ref, found={klass: list(listed)}, message=what, decision=decision)
            )
    return verdict


def _may_write(klass: str, changed: Iterable[str], policy: Policy, who: Identity) -> bool:
    if klass != paths.LEDGER:
        return who.evidence_writer(policy)
    if who.ledger_writer(policy):
        return True
    # The retry quota sits in the ledger's class but takes grants from evidence
    # writers; its own check holds each appended line to its writer (quota.py).
    quota = fold_path(policy.quota_path)
    listed = list(changed)
    return (
        who.evidence_writer(policy) and bool(listed) and all(fold_path(p) == quota for p in listed)
    )


def _lists(union: dict[str, dict[str, None]]) -> dict[str, list[str]]:
    return {k: list(v) for k, v in union.items()}


def _side_by_side(by_class: Mapping[str, Sequence[str]]) -> dict[str, list[str]]:
    """The paths that make a mix: evidence and non-neutral non-evidence classes."""
    keep = EVIDENCE_CLASSES | NON_EVIDENCE_SIDE
    return {k: sorted(set(v)) for k, v in sorted(by_class.items()) if k in keep}


def error_finding(rule: str, message: str, hint: str) -> Finding:
    return Finding(rule, REJECT, "", None, {}, message, hint)


def judge_lock(facts: UpdateFacts, lock: LockFacts, policy: Policy, who: Identity) -> list[Finding]:
    """Findings from the lock in force at the update's base (SPEC §6, §8)."""
    ref = facts.update.ref
    base = (facts.base or "")[:12]
    if lock.invalid is not None:
        locked = lock.found.commit[:12] if lock.found else base
        return [
            _finding(
                "lock-invalid",
                ref,
                commit=lock.found.commit if lock.found else None,
                message=lock.invalid,
                locked=locked,
            )
        ]
    if lock.found is None:
        if policy.lock_required and facts.base is not None:
            return [_finding("lock-missing", ref, message=f"no lock in force at {base}", base=base)]
        if policy.lock_required:
            return [
                _finding("lock-missing", ref, message="no base: nothing is pinned", base="<base>")
            ]
        return []
    findings: list[Finding] = []
    locked = lock.found.commit[:12]
    if lock.stale:
        findings.append(
            _finding(
                "lock-stale",
                ref,
                commit=facts.base,
                found=_drift_paths(lock.stale),
                message=f"the base differs from the lock pinned on {locked} in "
                f"{len(lock.stale)} file(s)",
                base=base,
                locked=locked,
            )
        )
    if lock.breach and not who.evidence_writer(policy):
        findings.append(
            _finding(
                "fixture-breach",
                ref,
                commit=facts.commit,
                found=_drift_paths(lock.breach),
                message=f"{len(lock.breach)} file(s) under the lock roots differ from the lock "
                f"pinned on {locked}",
                base=base,
            )
        )
    return findings


def _drift_paths(drift: Sequence[Drift]) -> dict[str, list[str]]:
    by_kind: dict[str, list[str]] = {}
    for item in drift:
        by_kind.setdefault(item.kind, []).append(item.describe())
    return by_kind


def judge_notes(facts: UpdateFacts, problems: Sequence[str]) -> list[Finding]:
    """A lock writer's push of the notes ref: every note it adds must be a lock."""
    return [
        _finding("lock-invalid", facts.update.ref, message=problem, locked="<commit>")
        for problem in problems
    ]


def judge_ledger(
    facts: UpdateFacts, problems: Sequence[tuple[str | None, Problem]], ledger_path: str
) -> list[Finding]:
    """Findings for the freeze ledger's changes: ``(commit or None for the range,
    problem)`` pairs from ledger.check_change."""
    base = (facts.base or "<base>")[:12]
    findings = []
    for commit, problem in problems:
        where = f"line {problem.line}: " if problem.line else ""
        findings.append(
            _finding(
                problem.rule,
                facts.update.ref,
                commit=commit,
                found={paths.LEDGER: [ledger_path]},
                message=f"{ledger_path}: {where}{problem.message}",
                base=base,
                path=ledger_path,
            )
        )
    return findings
