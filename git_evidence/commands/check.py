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
from git_evidence.identity import client_identity
from git_evidence.ranges import RefUpdate, RefView
from git_evidence.report import Report


def run(args: argparse.Namespace) -> Report:
    git = Git()
    refs = git.refs()
    base: str | None
    if args.base:
        base = require_commit(git, args.base)
        policy = policy_at(git, base)
    else:
        policy = client_policy(git, None, refs)
        base = default_base(git, refs, policy.base)
    who = client_identity(git.config_bool("evidence.trusted"), args.as_name)
    report = Report(who, policy)
    for text in args.ranges or ["HEAD"]:
        start, sep, end = text.partition("..")
        bottom: str | None
        if sep:
            bottom, top = require_commit(git, start or "HEAD"), require_commit(git, end or "HEAD")
        else:
            bottom, top = base, require_commit(git, text)
        view = RefView({policy.base: bottom} if bottom else {}, bottom, policy.notes_ref in refs)
        zero = "0" * len(top)
        part = gate.judge(git, [RefUpdate(zero, top, text)], policy, view, who, named_refs=False)
        for verdict in part.verdicts:
            if sep:
                verdict.facts.base = bottom
        report.verdicts += part.verdicts
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
