"""The rules of a range's commits, one function a rule: ``mixed_commits`` (a commit
that mixes evidence with product, test code or other paths), ``mixed_range`` (the
split trick: no commit mixes, the range does), ``evidence_writes`` (evidence the
pusher may not write: proposed on a branch that takes proposals, untrusted
elsewhere) and ``held_paths`` (the holds of [rules]: paths in no class, new tests,
edited tests). What they read of the range is gathered in one pass (``Span``);
``decide_range`` runs them in the order their findings are reported. Each rule reads
the span, the policy and who pushes, never another rule's findings. Pure."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from git_evidence.core import paths
from git_evidence.core.path_globs import fold_path
from git_evidence.core.paths import EVIDENCE_CLASSES, PathClass
from git_evidence.core.slots import Slotted
from git_evidence.rules.findings import (
    Finding,
    _accept,
    _finding,
    _range,
    _writers,
    hold_target,
    holds_block,
    proposal_ref,
    settle_hold,
)
from git_evidence.rules.table import ALLOW, NON_EVIDENCE_SIDE, STAGED, RuleId

if TYPE_CHECKING:  # data types only: the rules import nothing that runs git
    from git_evidence.core.facts import CommitSummary, UpdateFacts
    from git_evidence.policy.identity import Identity
    from git_evidence.policy.schema import Decision, Policy
    from git_evidence.rules.findings import RangeFields


class Span(Slotted):
    """What the rules read of a range's commits, gathered in one pass over them. A
    plain slotted class, not a ``NamedTuple``: every hook builds it, and a
    ``NamedTuple`` class costs its start ~0.2 ms to create."""

    __slots__ = ("added", "changed", "commits", "kept", "mixed", "present", "ref", "union", "where")

    def __init__(
        self, facts: UpdateFacts, commits: Sequence[CommitSummary], policy: Policy, who: Identity
    ) -> None:
        self.ref = facts.update.ref
        self.commits = len(commits)
        # every class a commit of the range changes
        self.present: frozenset[PathClass] = frozenset().union(*(c.classes for c in commits))
        mixed = []  # the commits that mix evidence with the rest
        self.added: dict[str, None] = {}  # test files added
        self.changed: dict[str, None] = {}  # test files edited or deleted
        self.kept: dict[str, None] = {}  # evidence paths a merge brings back older
        for commit in commits:
            if _mixes(commit.classes):
                mixed.append(commit)
            if commit.added_tests:
                self.added.update(dict.fromkeys(commit.added_tests))
            if commit.changed_tests:
                self.changed.update(dict.fromkeys(commit.changed_tests))
            if commit.kept:
                self.kept.update(dict.fromkeys(commit.kept))
        self.mixed = tuple(mixed)
        # the paths of the classes a finding may list, each once
        listed = _listed_classes(self.present, bool(mixed), policy, who)
        self.union = _union(commits, listed)
        self.where: RangeFields = _range(facts, policy)  # where the range starts


def decide_range(
    facts: UpdateFacts,
    commits: Sequence[CommitSummary],
    policy: Policy,
    who: Identity,
    *,
    bound: bool | None = None,
    proposal: bool | None = None,
) -> list[Finding]:
    """Every rule of the range, in the order its findings are reported. ``bound`` and
    ``proposal``: as ``commits.decide_update``."""
    found = Span(facts, commits, policy, who)
    proposing = proposal_ref(facts, policy) if proposal is None else proposal
    blocks = holds_block(facts) if bound is None else bound
    target = hold_target(facts, policy)
    return [
        *mixed_commits(found),
        *mixed_range(found, policy, who),
        *evidence_writes(found, policy, who, proposing=proposing),
        *held_paths(found, policy, who, bound=blocks, target=target),
    ]


def mixed_commits(found: Span) -> list[Finding]:
    """``mixed-commit``: each commit that changes evidence beside product, test code or
    paths in no class."""
    return [
        _finding(
            "mixed-commit",
            found.ref,
            commit=commit.oid,
            found=_side_by_side(dict(commit.by_class)),
            message=mix_message(commit),
            **found.where,
        )
        for commit in found.mixed
    ]


def mixed_range(found: Span, policy: Policy, who: Identity) -> list[Finding]:
    """``mixed-range``, the split trick: no single commit mixes, the range does (a
    range with a mixed commit has that commit's finding). Evidence writers may."""
    present = found.present
    if found.mixed or not present & EVIDENCE_CLASSES or not present & NON_EVIDENCE_SIDE:
        return []
    if who.evidence_writer(policy):
        return []
    return [
        _finding(
            "mixed-range",
            found.ref,
            found=_side_by_side(_lists(found.union)),
            message=f"the {found.commits} commits of this range change evidence and "
            "product between them",
            **found.where,
        )
    ]


def evidence_writes(
    found: Span, policy: Policy, who: Identity, *, proposing: bool
) -> list[Finding]:
    """Evidence the pusher may not write: ``evidence-proposed`` when the ref takes
    proposals and the range changes evidence alone, else ``evidence-untrusted``."""
    evidence = found.present & EVIDENCE_CLASSES
    untrusted = {k for k in evidence if not _may_write(k, found.union.get(k, {}), policy, who)}
    if not untrusted:
        return []
    role, writers = writer_role(untrusted == {paths.LEDGER}, policy)
    listed: dict[str, list[str]] = {k: list(found.union[k]) for k in sorted(untrusted)}
    if proposing and not found.present & NON_EVIDENCE_SIDE:
        message = f"evidence proposed by {who.describe()}: {role} must bring it to {policy.base}"
        rule: RuleId = "evidence-proposed"
    else:
        kept = len(found.kept)
        message = f"{who.describe()} may not change evidence" + (
            f" (a merge brings back an older copy of {kept} evidence path(s))" if kept else ""
        )
        rule = "evidence-untrusted"
    return [
        _finding(
            rule,
            found.ref,
            found=listed,
            message=message,
            **found.where,
            role=role,
            writers=writers,
        )
    ]


def held_paths(
    found: Span, policy: Policy, who: Identity, *, bound: bool, target: str
) -> list[Finding]:
    """The holds of [rules] (``other-path``, ``added-test``, ``test-edit``), each
    settled: a reviewer's push accepts it, and it blocks only when ``bound``."""
    reviewed: tuple[tuple[RuleId, Decision, PathClass, dict[str, None], str], ...] = (
        ("other-path", policy.other_path, paths.OTHER, found.union.get(paths.OTHER, {}), _OTHER),
        ("added-test", policy.added_test, paths.TEST, found.added, "new test files"),
        ("test-edit", policy.test_edit, paths.TEST, found.changed, "edited or deleted test files"),
    )
    held = []
    for rule, decision, klass, listed, what in reviewed:
        if listed and decision != ALLOW:
            accept = _accept(policy, target)
            finding = _finding(
                rule,
                found.ref,
                found={klass: list(listed)},
                message=what,
                decision=decision,
                accept=accept,
            )
            held.append(settle_hold(finding, policy, who, bound=bound))
    return held


_OTHER = "paths in no class"


def writer_role(ledger_only: bool, policy: Policy) -> tuple[str, str]:
    """Who may write what a finding lists, and the names: ledger writers for the
    ledger alone, evidence writers else."""
    if ledger_only:
        return "a ledger writer", _writers(policy.ledger_writers, "ledger writers")
    return "an evidence writer", _writers(policy.evidence_writers, "evidence writers")


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
