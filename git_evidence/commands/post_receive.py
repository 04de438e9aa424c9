"""``git evidence post-receive``: pin the lock on every new tip of a protected branch.

Refs cannot be written from pre-receive (git forbids it in quarantine), so the lock
for what a push brought to a protected branch is written here."""

from __future__ import annotations

import argparse
import os
import sys

from git_evidence import lock
from git_evidence.context import judged_refs, server_aliases, server_policy, server_view
from git_evidence.errors import EXIT_ERROR, EvidenceError
from git_evidence.git import Git
from git_evidence.identity import server_pusher
from git_evidence.ranges import parse_receive_lines


def run(args: argparse.Namespace) -> int:
    updates = parse_receive_lines(sys.stdin.buffer.read())
    git = Git()
    refs = git.refs()
    policy = server_policy(git, refs)
    who = server_pusher(os.environ)
    # A push through a symbolic ref moved the ref it names: pin that one.
    guarded = {*server_view(refs, policy).protected, policy.notes_ref}
    updates, _ = judged_refs(updates, server_aliases(git, refs, updates), guarded)
    status = 0
    for update in updates:
        if update.ref not in policy.protected or update.is_delete:
            continue
        try:
            pinned, written = lock.pin(
                git,
                update.new,
                policy.lock_roots,
                policy.lock_exclude,
                policy.notes_ref,
                f"post-receive (push by {who.describe()})",
            )
        except EvidenceError as exc:
            print(
                f"git-evidence: could not pin {update.ref} at {update.new[:12]}: "
                f"{exc.message}\n  To fix: a lock writer pins it by hand: "
                f"git evidence lock {update.new[:12]}",
                file=sys.stderr,
            )
            status = EXIT_ERROR
            continue
        state = "pinned" if written else "lock unchanged"
        print(
            f"git-evidence: {state} {update.ref} at {update.new[:12]}: {pinned.digest}",
            file=sys.stderr,
        )
    return status
