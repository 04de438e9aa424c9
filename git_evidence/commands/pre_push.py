"""``git evidence pre-push``: the client hook. Judges what the push sends against what
this clone knows of the remote (its remote-tracking refs), as the server would.

Under the pre-commit framework there is no stdin: pre-commit exports the first pushed
ref as ``PRE_COMMIT_*`` variables (and no from/to refs when the push carries a root
commit). Then the local branch named, or HEAD, is judged, and the report says so.
"""

from __future__ import annotations

import argparse
import os
import sys

from git_evidence import gate
from git_evidence.context import client_policy, client_view
from git_evidence.errors import UsageError
from git_evidence.git import Git
from git_evidence.identity import client_identity
from git_evidence.ranges import RefUpdate, parse_push_lines
from git_evidence.report import Report


def run(args: argparse.Namespace) -> Report:
    git = Git()
    notes: list[str] = []
    if args.remote is None:
        remote, updates, notes = _from_pre_commit(git)
    else:
        remote = args.remote
        lines = parse_push_lines(sys.stdin.buffer.read())
        updates = [update for _, update in lines]
    refs = git.refs()
    policy = client_policy(git, remote, refs)
    who = client_identity(git.config_bool("evidence.trusted"))
    report = gate.judge(git, updates, policy, client_view(remote, refs, policy), who)
    report.notes = notes
    return report


def _from_pre_commit(git: Git) -> tuple[str | None, list[RefUpdate], list[str]]:
    env = os.environ
    remote = env.get("PRE_COMMIT_REMOTE_NAME") or None
    target = env.get("PRE_COMMIT_REMOTE_BRANCH") or ""
    to_ref = env.get("PRE_COMMIT_TO_REF") or ""
    if not remote and not to_ref and not target:
        raise UsageError("pre-push needs REMOTE and URL arguments and the pushed refs "
                         "on stdin (or the PRE_COMMIT_* variables pre-commit sets)",
                         fix="install it with `git evidence install`, or through "
                         ".pre-commit-hooks.yaml at stage pre-push")
    source = to_ref or env.get("PRE_COMMIT_LOCAL_BRANCH") or "HEAD"
    new = git.resolve_commit(source)
    if new is None:
        raise UsageError(f"cannot resolve {source!r} to a commit")
    ref = target if target.startswith("refs/") else f"refs/heads/{target or 'HEAD'}"
    how = "PRE_COMMIT_TO_REF" if to_ref else (
        "the local branch (pre-commit passed no from/to refs: root commit)")
    note = (f"judged {source} ({new[:12]}) as a push to {ref} on "
            f"{remote or 'the remote'}, from {how}; pre-commit passes only the first "
            "pushed ref, the server judges the others")
    zero = "0" * len(new)
    old = zero
    if target:
        tracked = git.resolve_commit(f"refs/remotes/{remote}/{target.removeprefix('refs/heads/')}") \
            if remote else None
        old = tracked or zero
    return remote, [RefUpdate(old, new, ref)], [note]
