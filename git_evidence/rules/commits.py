"""The findings of a ref and its commits: the ref's name and history shape
(``decide_ref``), then the commits of its range (``decide_update``: the rules of
range_rules.py, one function a rule), and the staged change judged as one commit
(``decide_staged``). Pure: summaries, facts, the policy and who in."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from git_evidence.core import paths
from git_evidence.core.facts import CommitSummary
from git_evidence.core.paths import EVIDENCE_CLASSES
from git_evidence.rules.findings import Finding, UpdateDecision, _finding, _writers, restore_args
from git_evidence.rules.range_rules import decide_range, writer_role
from git_evidence.rules.table import HOLD, REJECT, RULES, STAGED_HINTS, fill

if TYPE_CHECKING:  # data types only: the rules import nothing that runs git
    from git_evidence.core.facts import UpdateFacts
    from git_evidence.policy.identity import Identity
    from git_evidence.policy.schema import Policy


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
    """The ref's findings (``decide_ref``); when it stands, its commits' (the rules of
    range_rules.py). ``bound``: whether the change is on its way into a protected
    ref, where a hold blocks unless a reviewer pushes it (default: holds_block).
    ``proposal``: whether evidence the pusher may not write is a proposal there
    (default: proposal_ref)."""
    findings = decide_ref(facts, policy, who)
    if findings or facts.revlist is None:
        return UpdateDecision(facts, tuple(findings))
    found = decide_range(facts, commits, policy, who, bound=bound, proposal=proposal)
    return UpdateDecision(facts, tuple(found), judged=True)


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
    return outcome.with_findings(_staged(f, policy, target) for f in outcome.findings)


def _staged(finding: Finding, policy: Policy, target: str) -> Finding:
    hint = finding.hint
    if finding.rule in STAGED_HINTS:
        role, writers = writer_role(set(finding.paths) == {paths.LEDGER}, policy)
        evidence = [p for k, found in finding.paths.items() if k in EVIDENCE_CLASSES for p in found]
        hint = STAGED_HINTS[finding.rule].format(
            evidence=restore_args(evidence), role=role, writers=writers
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
