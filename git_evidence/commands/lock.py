"""``git evidence lock [REV]``: pin REV's fixture tree as a note (the trusted side)."""

from __future__ import annotations

import argparse

from git_evidence import pinning
from git_evidence.context import chosen_policy, require_commit
from git_evidence.git import Git
from git_evidence.lock import Lock
from git_evidence.policy import Policy


def run(args: argparse.Namespace) -> int:
    git = Git()
    rev = require_commit(git, args.rev)
    policy = chosen_policy(git, None)
    pinned, written = _pin(git, rev, policy)
    _say(pinned, written, rev, policy)
    if written:
        print(f"git-evidence: publish it: git push <remote> {policy.notes_ref}")
    return 0


def _pin(git: Git, rev: str, policy: Policy) -> tuple[Lock, bool]:
    code, ident = git.run("var", "GIT_COMMITTER_IDENT", ok_codes=(0, 128))
    # "Name <email> 1700000000 +0000": who pins, without the time (pinned_at has it)
    pinned_by = ident.decode("utf-8", "replace").rsplit(" ", 2)[0] if code == 0 else "unknown"
    return pinning.pin(
        git,
        rev,
        policy.lock_roots,
        policy.lock_exclude,
        policy.notes_ref,
        pinned_by,
        pinning.terminal_progress(f"locking {rev[:12]}"),
    )


def _say(pinned: Lock, written: bool, rev: str, policy: Policy) -> None:
    state = "pinned" if written else "already pinned, unchanged"
    print(
        f"{pinned.digest}\t{state}: {rev[:12]} ({len(pinned.files)} files under "
        f"{', '.join(pinned.roots)}) in {policy.notes_ref}"
    )
