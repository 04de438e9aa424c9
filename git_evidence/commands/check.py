"""``git evidence check [RANGE…] [--base REF]``: judge ranges as the server would."""

from __future__ import annotations

import argparse

from git_evidence import gate
from git_evidence.commands.freeze import freeze_notes
from git_evidence.context import (
    DEFAULT_BASE,
    client_policy,
    policy_at,
    require_commit,
    tracking_ref,
)
from git_evidence.git import Git
from git_evidence.identity import Identity, client_identity
from git_evidence.policy import Policy
from git_evidence.ranges import RefUpdate, RefView
from git_evidence.report import Report


def run(args: argparse.Namespace) -> Report:
    git = Git()
    refs = git.refs()
    policy, base = policy_and_base(git, refs, args.base)
    who = client_identity(git.config_bool("evidence.trusted"), args.as_name)
    report = Report(who, policy)
    for text in args.ranges or ["HEAD"]:
        start, sep, end = text.partition("..")
        bottom: str | None
        if sep:
            bottom, top = require_commit(git, start or "HEAD"), require_commit(git, end or "HEAD")
        else:
            bottom, top = base, require_commit(git, text)
        part = judge_range(git, refs, policy, who, bottom, top, text)
        report.verdicts += part.verdicts
        report.notes += part.notes
    gate.show_findings(git, report, args.max_findings)
    return report


def policy_and_base(git: Git, refs: dict[str, str], base: str | None) -> tuple[Policy, str | None]:
    """``--base REF``: that commit and the policy it carries; else the client's policy
    and the upstream (or the remote's base branch, or the local one)."""
    if base:
        commit = require_commit(git, base)
        return policy_at(git, commit), commit
    policy = client_policy(git, None, refs)
    return policy, default_base(git, refs, policy.base)


def judge_range(
    git: Git,
    refs: dict[str, str],
    policy: Policy,
    who: Identity,
    bottom: str | None,
    top: str,
    label: str,
) -> Report:
    """``top`` judged as a push that brings what ``bottom`` lacks, as the server would,
    with the freezes in force reported."""
    view = RefView({policy.base: bottom} if bottom else {}, bottom, policy.notes_ref in refs)
    update = RefUpdate("0" * len(top), top, label)
    report = gate.judge(git, [update], policy, view, who, named_refs=False)
    report.notes += freeze_notes(git, policy, top, bottom)
    return report


def default_base(git: Git, refs: dict[str, str], base_ref: str) -> str | None:
    upstream = git.resolve_commit("@{upstream}")
    if upstream:
        return upstream
    for name in (tracking_ref("origin", base_ref, refs), base_ref, DEFAULT_BASE):
        if name and name in refs:
            return git.resolve_commit(refs[name])
    return None
