"""``git evidence lock [REV]``: pin REV's fixture tree as a note (the trusted side)."""

from __future__ import annotations

import argparse

from git_evidence import lock
from git_evidence.context import chosen_policy, require_commit
from git_evidence.git import Git


def run(args: argparse.Namespace) -> int:
    git = Git()
    rev = require_commit(git, args.rev)
    policy = chosen_policy(git, None)
    code, ident = git.run("var", "GIT_COMMITTER_IDENT", ok_codes=(0, 128))
    # "Name <email> 1700000000 +0000": who pins, without the time (pinned_at has it)
    pinned_by = ident.decode("utf-8", "replace").rsplit(" ", 2)[0] if code == 0 else "unknown"
    pinned, written = lock.pin(
        git,
        rev,
        policy.lock_roots,
        policy.lock_exclude,
        policy.notes_ref,
        pinned_by,
        lock.terminal_progress(f"locking {rev[:12]}"),
    )
    state = "pinned" if written else "already pinned, unchanged"
    print(
        f"{pinned.digest}\t{state}: {rev[:12]} ({len(pinned.files)} files under "
        f"{', '.join(pinned.roots)}) in {policy.notes_ref}"
    )
    if written:
        print(f"git-evidence: publish it: git push <remote> {policy.notes_ref}")
    return 0
