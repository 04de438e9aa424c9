"""The findings of a ref and its commits: the ref's name and history shape
(``decide_ref``), the commits of its range (``decide_update``: mixed commits and ranges,
untrusted or proposed evidence, the holds of [rules]), and the staged change judged as
one commit (``decide_staged``). Pure: summaries, facts, the policy and who in."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from git_evidence.core import paths
from git_evidence.core.facts import CommitSummary
from git_evidence.core.path_globs import fold_path
from git_evidence.core.paths import EVIDENCE_CLASSES, PathClass
from git_evidence.rules.findings import (
    Finding,
    UpdateDecision,
    _accept,
    _finding,
    _range,
    _writers,
    hold_target,
    holds_block,
    proposal_ref,
    restore_args,
    settle_hold,
)
from git_evidence.rules.table import (
    ALLOW,
    HOLD,
    NON_EVIDENCE_SIDE,
    REJECT,
    RULES,
    STAGED,
    STAGED_HINTS,
    RuleId,
    fill,
)

if TYPE_CHECKING:  # data types only: the rules import nothing that runs git
    from git_evidence.core.facts import UpdateFacts
    from git_evidence.policy.identity import Identity
    from git_evidence.policy.schema import Decision, Policy


def decide_ref(facts: UpdateFacts, policy: Policy, who: Identity) -> list[Finding]:
    """Findings that follow from the ref and its history shape alone."""
    update, ref = facts.update, facts.update.ref
    if not facts.named_ref:
        return []
    if ref.startswith("refs/replace/"):
        return [_finding("replace-ref", ref, message="replace refs are refused")]
    if facts.notes and ref.casefold() == policy.judge.notes_ref.casefold():
        return decide_verdict_ref(facts, policy, who)
    if facts.notes:
        if who.lock_writer(policy):
            return []
        return [
            _finding(
                "notes-forge",
                ref,
                message=f"{who.describe()} is not a lock writer",
                writers=_writers(policy.lock_writers, "lock writers"),
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


def decide_verdict_ref(facts: UpdateFacts, policy: Policy, who: Identity) -> list[Finding]:
    """The verdict notes ref is pushed by verdict writers only."""
    if who.verdict_writer(policy):
        return []
    ref = facts.update.ref
    return [
        Finding(
            "notes-forge",
            REJECT,
            ref,
            None,
            {},
            f"{who.describe()} is not a verdict writer",
            f"only verdict writers ({_writers(policy.verdict_writer_names)}) update {ref}; "
            "push without it (`git push <remote> <branch>`, not `--all`/`--mirror`)",
        )
    ]


def decide_update(
    facts: UpdateFacts,
    commits: Sequence[CommitSummary],
    policy: Policy,
    who: Identity,
    *,
    bound: bool | None = None,
    proposal: bool | None = None,
) -> UpdateDecision:
    """``bound``: whether the change is on its way into a protected ref, where a hold
    blocks unless a reviewer pushes it (default: holds_block). ``proposal``: whether
    evidence the pusher may not write is a proposal there (default: proposal_ref)."""
    ref = facts.update.ref
    findings = decide_ref(facts, policy, who)
    if findings or facts.revlist is None:
        return UpdateDecision(facts, findings)
    outcome = UpdateDecision(facts, findings, judged=True)
    present: frozenset[PathClass] = frozenset().union(*(commit.classes for commit in commits))
    added: dict[str, None] = {}
    changed: dict[str, None] = {}
    kept: dict[str, None] = {}
    where = _range(facts, policy)
    for commit in commits:
        if _mixes(commit.classes):
            findings.append(
                _finding(
                    "mixed-commit",
                    ref,
                    commit=commit.oid,
                    found=_side_by_side(dict(commit.by_class)),
                    message=mix_message(commit),
                    **where,
                )
            )
        if commit.added_tests:
            added.update(dict.fromkeys(commit.added_tests))
        if commit.changed_tests:
            changed.update(dict.fromkeys(commit.changed_tests))
        if commit.kept:
            kept.update(dict.fromkeys(commit.kept))
    union = _union(commits, _listed_classes(present, bool(findings), policy, who))
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
                **where,
            )
        )
    untrusted = {k for k in evidence if not _may_write(k, union.get(k, {}), policy, who)}
    proposing = proposal_ref(facts, policy) if proposal is None else proposal
    if untrusted and proposing and not findings and not present & NON_EVIDENCE_SIDE:
        ledger_only = untrusted == {paths.LEDGER}
        role = "a ledger writer" if ledger_only else "an evidence writer"
        findings.append(
            _finding(
                "evidence-proposed",
                ref,
                found={k: list(union[k]) for k in sorted(untrusted)},
                message=f"evidence proposed by {who.describe()}: {role} must bring it to "
                f"{policy.base}",
                **where,
                role=role,
                writers=_writers(
                    policy.ledger_writers if ledger_only else policy.evidence_writers,
                    "ledger writers" if ledger_only else "evidence writers",
                ),
            )
        )
    elif untrusted:
        ledger_only = untrusted == {paths.LEDGER}
        findings.append(
            _finding(
                "evidence-untrusted",
                ref,
                found={k: list(union[k]) for k in sorted(untrusted)},
                message=f"{who.describe()} may not change evidence"
                + (
                    f" (a merge brings back an older copy of {len(kept)} evidence path(s))"
                    if kept
                    else ""
                ),
                **where,
                role="a ledger writer" if ledger_only else "an evidence writer",
                writers=_writers(
                    policy.ledger_writers if ledger_only else policy.evidence_writers,
                    "ledger writers" if ledger_only else "evidence writers",
                ),
            )
        )
    bound = holds_block(facts) if bound is None else bound
    accept = _accept(policy, hold_target(facts, policy))
    reviewed: tuple[tuple[RuleId, Decision, dict[str, None], str], ...] = (
        ("other-path", policy.other_path, union.get(paths.OTHER, {}), "paths in no class"),
        ("added-test", policy.added_test, added, "new test files"),
        ("test-edit", policy.test_edit, changed, "edited or deleted test files"),
    )
    for rule, decision, listed, what in reviewed:
        if listed and decision != ALLOW:
            klass = paths.OTHER if rule == "other-path" else paths.TEST
            held = _finding(
                rule,
                ref,
                found={klass: list(listed)},
                message=what,
                decision=decision,
                accept=accept,
            )
            findings.append(settle_hold(held, policy, who, bound=bound))
    return outcome


def _mixes(classes: frozenset[PathClass]) -> bool:
    """Evidence beside a non-neutral non-evidence class (one answer per class set:
    commits share a handful of them)."""
    hit = _MIXES.get(classes)
    if hit is None:
        hit = _MIXES[classes] = bool(classes & EVIDENCE_CLASSES and classes & NON_EVIDENCE_SIDE)
    return hit


_MIXES: dict[frozenset[PathClass], bool] = {}


def _listed_classes(
    present: frozenset[PathClass], mixed: bool, policy: Policy, who: Identity
) -> frozenset[PathClass]:
    """The classes whose paths over the range a finding may list: all of a mix when
    the split trick may fire (``mixed-range``), the evidence unless the pusher may
    write it all, and the paths in no class when they are not allowed. A push of
    20,000 product commits then collects no path at all."""
    evidence = present & EVIDENCE_CLASSES
    wanted: set[PathClass] = set()
    if evidence and not mixed and not who.evidence_writer(policy):
        wanted |= EVIDENCE_CLASSES | NON_EVIDENCE_SIDE
    if not (who.evidence_writer(policy) and who.ledger_writer(policy)):
        wanted |= evidence
    if policy.other_path != ALLOW:
        wanted.add(paths.OTHER)
    return present & wanted


def _union(
    commits: Sequence[CommitSummary], wanted: frozenset[PathClass]
) -> dict[PathClass, dict[str, None]]:
    """The paths of the ``wanted`` classes over ``commits``, each once, in order."""
    union: dict[PathClass, dict[str, None]] = {}
    if not wanted:
        return union
    for commit in commits:
        if commit.classes & wanted:
            for klass, found in commit.by_class:
                if klass in wanted:
                    union.setdefault(klass, {}).update(dict.fromkeys(found))
    return union


def decide_staged(
    facts: UpdateFacts,
    summary: CommitSummary,
    policy: Policy,
    who: Identity,
    *,
    protected: bool,
    proposal: bool = False,
) -> UpdateDecision:
    """The staged change judged as one commit of the current branch: a hold blocks only
    when that branch is ``protected`` (and this clone is not trusted), as on the server;
    evidence alone on a branch that takes ``proposal``s is one."""
    outcome = decide_update(facts, [summary], policy, who, bound=protected, proposal=proposal)
    target = facts.update.ref if protected else policy.base
    outcome.findings = [_staged(f, policy, target) for f in outcome.findings]
    return outcome


def _staged(finding: Finding, policy: Policy, target: str) -> Finding:
    hint = finding.hint
    if finding.rule in STAGED_HINTS:
        ledger_only = set(finding.paths) == {paths.LEDGER}
        evidence = [p for k, found in finding.paths.items() if k in EVIDENCE_CLASSES for p in found]
        hint = STAGED_HINTS[finding.rule].format(
            evidence=restore_args(evidence),
            role="a ledger writer" if ledger_only else "an evidence writer",
            writers=_writers(
                policy.ledger_writers if ledger_only else policy.evidence_writers,
                "ledger writers" if ledger_only else "evidence writers",
            ),
        )
    elif finding.decision == HOLD and finding.accepted_by is None and finding.rule in RULES:
        reviewers = _writers(policy.review_names, "reviewers")
        if finding.blocking:
            accept = (
                "commit them on a branch of their own (`git switch -c for-review` keeps "
                f"what is staged) for a reviewer to accept ({reviewers}); in a person's "
                "own clone, `git config evidence.trusted true`"
            )
        else:
            accept = (
                f"a reviewer ({reviewers}) accepts the held change when this branch is "
                f"merged into {target}"
            )
        hint = fill(finding.rule, RULES[finding.rule][1], accept=accept)
    return finding._replace(commit=None, hint=hint)


_MIXED_WITH: tuple[tuple[PathClass, str], ...] = (
    (paths.PRODUCT, "product"),
    (paths.TEST, "test code"),
    (paths.OTHER, "other paths"),
)
_EVIDENCE_ORDER: tuple[PathClass, ...] = (paths.FIXTURE, paths.ORACLE, paths.LEDGER, paths.POLICY)


def mix_message(commit: CommitSummary) -> str:
    """What a mixed commit mixes: "commit mixes evidence (fixture) with product and
    test code"."""
    classes = commit.classes
    others = [name for klass, name in _MIXED_WITH if klass in classes]
    beside = others[0] if len(others) == 1 else f"{', '.join(others[:-1])} and {others[-1]}"
    if commit.kept:
        kept = set(commit.kept)
        brought = [
            k for k in _EVIDENCE_ORDER if any(p in kept for p in dict(commit.by_class).get(k, ()))
        ]
        return (
            f"merge brings back an older copy of evidence ({', '.join(brought)}) and "
            f"mixes it with {beside}"
        )
    evidence = ", ".join(k for k in _EVIDENCE_ORDER if k in classes)
    subject = "the staged change" if commit.oid == STAGED else "merge" if commit.merge else "commit"
    return f"{subject} mixes evidence ({evidence}) with {beside}"


def _may_write(klass: PathClass, changed: Iterable[str], policy: Policy, who: Identity) -> bool:
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


def _lists(union: dict[PathClass, dict[str, None]]) -> dict[PathClass, list[str]]:
    return {k: list(v) for k, v in union.items()}


def _side_by_side(by_class: Mapping[PathClass, Sequence[str]]) -> dict[str, list[str]]:
    """The paths that make a mix: evidence and non-neutral non-evidence classes."""
    return {k: sorted(set(by_class[k])) for k in sorted(by_class) if k in _SIDE_BY_SIDE}


_SIDE_BY_SIDE = EVIDENCE_CLASSES | NON_EVIDENCE_SIDE
