"""A finding and how one is built: ``Finding`` (a rule, its decision, the paths and the
hint), ``UpdateDecision`` (an update's findings), the one builder of a rule's finding
(``_finding``, which fills the table's hint) and of an error's (``error_finding``), and
what every decider shares: where a range starts, who accepts a hold and whether it
blocks (``settle_hold``). Apart from the table so the table stays data, and from the
deciders so each of them builds findings one way."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from git_evidence.core.oids import Oid
from git_evidence.core.slots import Frozen
from git_evidence.rules.table import (
    ALLOW,
    HELD,
    HOLD,
    LIFTED_BY_TRUST,
    MAX_RESTORE,
    REJECT,
    RULES,
    SEVERITY,
    TRUSTED_CLONE_FIX,
    RuleId,
    fill,
)

if TYPE_CHECKING:  # data types only: the rules import nothing that runs git
    from typing import TypedDict

    from git_evidence.core.errors import ErrorRule
    from git_evidence.core.facts import UpdateFacts
    from git_evidence.policy.identity import Identity
    from git_evidence.policy.schema import Decision, Policy

    class RangeFields(TypedDict):  # what ``_range`` gives a hint (no runtime class)
        base: str
        base_ref: str
        creates: str | None


class Finding(NamedTuple):
    rule: RuleId | ErrorRule  # a rule of the table, or of an error that stopped it
    decision: Decision
    ref: str
    commit: Oid | None
    paths: dict[str, list[str]]
    message: str
    hint: str
    # Whether it counts toward the update's decision. A hold does not when a reviewer's
    # push accepts it (``accepted_by`` names them) or when it is on its way to review
    # (an update of a ref that is not protected); it keeps its decision `hold`.
    blocking: bool = True
    accepted_by: str | None = None
    # What a path's entry says besides the path (a lock drift's `(OLD -> NEW)`): kept
    # apart so that every path in ``paths`` is a path of a tree, as the forges need.
    details: Mapping[str, str] | None = None


class UpdateDecision(Frozen):
    """One update's findings, decided once (``rules/decide.py``): a decider that adds a
    finding builds a new decision (``with_findings``), never amends one."""

    facts: UpdateFacts
    findings: tuple[Finding, ...]
    judged: bool = False  # its commits were judged: nothing refused the ref itself

    def with_findings(self, findings: Iterable[Finding]) -> UpdateDecision:
        """This decision with other findings: a new one, this one left as it is."""
        return UpdateDecision(self.facts, tuple(findings), self.judged)

    @property
    def decision(self) -> Decision:
        return worst(f.decision for f in self.findings if f.blocking)


def worst(decisions: Iterable[Decision]) -> Decision:
    return max(decisions, key=SEVERITY.__getitem__, default=ALLOW)


def _finding(
    rule: RuleId,
    ref: str,
    *,
    commit: Oid | None = None,
    found: dict[str, list[str]] | None = None,
    message: str,
    decision: Decision | None = None,
    hint: str | None = None,
    details: Mapping[str, str] | None = None,
    **fields: str | None,
) -> Finding:
    default, template = RULES[rule]
    chosen = decision or default
    assert chosen is not None
    return Finding(
        rule,
        chosen,
        ref,
        commit,
        found or {},
        message,
        fill(rule, hint or template, ref=ref, commit=(commit or "")[:12], **fields),
        blocking=chosen != ALLOW,
        details=details or None,
    )


def creates_base(facts: UpdateFacts) -> bool:
    """Whether the update creates [rules].base itself, which does not exist yet (a first
    push): not a range ``check`` names, not a case variant of an existing base."""
    return facts.creates_base and facts.named_ref


def _range(facts: UpdateFacts, policy: Policy) -> RangeFields:
    """The fields of a hint that say where the update's range starts: its base (short;
    ``fill`` takes the NO_BASE wording without one), the base ref, and ``creates`` when
    the update creates the base itself."""
    return {
        "base": (facts.base or "")[:12],
        "base_ref": policy.base,
        "creates": "base" if creates_base(facts) else None,
    }


def _writers(names: Iterable[str], plural: str = "writers") -> str:
    listed = sorted(names)
    if listed:
        return ", ".join(listed)
    return f"the policy lists no {plural}: add one in [identities] with a reviewed policy change"


def _accept(policy: Policy, target: str) -> str:
    """How a person accepts a hold on its way to ``target``."""
    names = sorted(policy.review_names)
    if not names:
        return (
            "a reviewer accepts the held change by pushing it to "
            f"{target} ({_writers(names, 'reviewers')})"
        )
    return (
        f"a reviewer ({', '.join(names)}) accepts the held change by pushing it, or a "
        f"merge of it, to {target}"
    )


def hold_target(facts: UpdateFacts, policy: Policy) -> str:
    """The protected ref a held change must reach to be accepted there."""
    return facts.update.ref if facts.protected and facts.named_ref else policy.base


def proposal_ref(facts: UpdateFacts, policy: Policy) -> bool:
    """Whether an evidence-only change the pusher may not write is a proposal on this
    update's ref: a branch outside [rules].protected, pushed by name,
    unless [rules].proposals is false. Tags, other namespaces, protected refs and a
    range judged by hand (bound for the base) get none."""
    ref = facts.update.ref
    return (
        policy.proposals
        and facts.named_ref
        and not facts.protected
        and ref.startswith("refs/heads/")
    )


def holds_block(facts: UpdateFacts) -> bool:
    """A hold blocks an update of a protected ref, and a range judged by hand (`check`,
    `verify`), which asks whether the range may reach the base; on any other ref it
    is reported for review and does not block."""
    return facts.protected or not facts.named_ref


def settle_hold(finding: Finding, policy: Policy, who: Identity, *, bound: bool) -> Finding:
    """A hold as it stands for this pusher: ``bound`` (for a
    protected ref) and pushed by a reviewer, it is accepted; bound for nothing
    protected, it is reported on its way to review; else it blocks."""
    if finding.decision != HOLD:
        return finding
    if not bound:
        return finding._replace(message=f"{finding.message}: {HELD}", blocking=False)
    if who.reviewer(policy):
        return finding._replace(blocking=False, accepted_by=who.accepter)
    return finding


def liftable_by_trust(finding: Finding) -> Finding:
    """A client hook's blocking finding that trust would lift, its hint naming the
    setting that lifts it."""
    if not finding.blocking or finding.rule not in LIFTED_BY_TRUST:
        return finding
    return finding._replace(hint=f"{finding.hint}; {TRUSTED_CLONE_FIX}")


def restore_args(found: Sequence[str]) -> str:
    """Paths for a `git restore` command line, quoted for a shell; their directories
    when there are many."""
    listed = sorted(set(found))
    if len(listed) > MAX_RESTORE:
        listed = sorted({p.rpartition("/")[0] or p for p in listed})
    if len(listed) > MAX_RESTORE:
        return "PATH... (each evidence path listed above)"
    import shlex  # a refusal's hint only: an allowed change never loads it

    return " ".join(shlex.quote(p) for p in listed)


def error_finding(rule: ErrorRule, message: str, hint: str) -> Finding:
    return Finding(rule, REJECT, "", None, {}, message, hint)


def _literal(text: str) -> str:
    """``text`` inside a hint, which is a template: its braces doubled."""
    return text.replace("{", "{{").replace("}", "}}")
