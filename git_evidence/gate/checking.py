"""A range checked on the client as the server would judge it (``check``, ``verify``):
the base and policy a client compares with, and the freezes reported with it;
``check`` itself, over every range it is given."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from git_evidence.core.facts import RefUpdate, RefView
from git_evidence.core.oids import Oid, zero_oid
from git_evidence.gate import pipeline
from git_evidence.gate.report import Rendering, Report, join
from git_evidence.plumbing import batch
from git_evidence.plumbing.context import require_commit
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import DEFAULT_BASE, AskedRefs, resolve, tracking_ref
from git_evidence.policy.identity import Identity, client_identity
from git_evidence.policy.schema import Policy


def check(
    git: Git,
    ranges: Sequence[str],
    *,
    base: str | None,
    draft: str | None,
    as_name: str | None,
    max_findings: int | None,
    options: tuple[str, ...] = (),
) -> tuple[Report, Rendering]:
    """``check``: each of ``ranges`` (``A..B``, or a commit judged from ``base``, else
    from the default base) judged as the server would, as one report, and how to show
    it (``options``: the words its printed commands carry)."""
    refs = AskedRefs(git)  # the few refs it reads, asked of the object reader
    if base or not all(".." in text for text in ranges):
        policy, bottom = policy_and_base(git, refs, base, draft)
    else:  # every range names its bottom: no default base to look for
        policy, bottom = policy_only(git, refs, None, draft), None
    who = client_identity(git.config_bool("evidence.trusted"), as_name)
    parts = []
    for text in ranges:
        start, sep, end = text.partition("..")
        if sep:
            low: Oid | None = require_commit(git, start or "HEAD")
            top = require_commit(git, end or "HEAD")
        else:
            low, top = bottom, require_commit(git, text)
        parts.append(check_range(git, refs, policy, who, low, top, text))
    report = join(who, policy, parts)
    return report, pipeline.rendering(git, report, max_findings, options)


def policy_and_base(
    git: Git, refs: Mapping[str, Oid], base: str | None, draft: str | None = None
) -> tuple[Policy, Oid | None]:
    """``--base REF``: that commit and the policy it carries; else the client's policy
    and the upstream (or the remote's base branch, or the local one). ``--policy FILE``
    (``draft``) replaces the policy, never the base."""
    if base:
        commit = require_commit(git, base)
        return resolve(git, draft=draft, at=commit).policy, commit
    policy = resolve(git, draft=draft, refs=refs).policy
    return policy, default_base(git, refs, policy.base)


def policy_only(git: Git, refs: Mapping[str, Oid], base: str | None, draft: str | None) -> Policy:
    """The policy ``policy_and_base`` gives, without looking for the default base: a
    range that names its own bottom (``A..B``) needs none."""
    if base:
        return resolve(git, draft=draft, at=require_commit(git, base)).policy
    return resolve(git, draft=draft, refs=refs).policy


def check_range(
    git: Git,
    refs: Mapping[str, Oid],
    policy: Policy,
    who: Identity,
    bottom: Oid | None,
    top: Oid,
    label: str,
) -> Report:
    """``top`` judged as a push that brings what ``bottom`` lacks, as the server would,
    with the freezes in force reported."""
    view = RefView({policy.base: bottom} if bottom else {}, bottom, policy.notes_ref in refs)
    update = RefUpdate(zero_oid(top), top, label)
    frozen = freezes(git, policy, top, bottom)
    return pipeline.decide(git, [update], policy, view, who, named_refs=False, after=frozen)


def freezes(git: Git, policy: Policy, top: Oid, bottom: Oid | None) -> list[str]:
    """The notes on the freezes in force at ``top`` that a report of ``bottom..top``
    ends with; none without a ledger there."""
    if batch.check(git, [f"{top}:{policy.ledger_path}"])[0] is None:
        return []
    # the ledger's reader (json, datetime) only where there is a ledger to read
    from git_evidence.ledger.freezes import freeze_notes

    return freeze_notes(git, policy, top, bottom)


def default_base(git: Git, refs: Mapping[str, Oid], base_ref: str) -> Oid | None:
    upstream = git.resolve_commit("@{upstream}")
    if upstream:
        return upstream
    for name in (tracking_ref("origin", base_ref, refs), base_ref, DEFAULT_BASE):
        if name and name in refs:
            return git.resolve_commit(refs[name])
    return None
