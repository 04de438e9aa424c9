"""``git evidence lock [REV] [--push [REMOTE]]``: pin REV's fixture tree as a note (the
trusted side), and with ``--push`` publish it (``lock/publish.py``)."""

from __future__ import annotations

import argparse
import json
import sys

from git_evidence.core.errors import EXIT_REFUSE
from git_evidence.core.oids import Oid
from git_evidence.lock.publish import (
    Pinned,
    Published,
    empty_lock_warnings,
    pin_here,
    publish,
    root_counts,
)
from git_evidence.plumbing.context import require_commit
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.plumbing.repo_dirs import commit_noting_dirs
from git_evidence.policy.schema import Policy
from git_evidence.terminal.progress import Progress


def run(args: argparse.Namespace) -> int:
    git = Git()
    rev = commit_noting_dirs(git, args.rev) or require_commit(git, args.rev)
    policy = resolve(git, draft=args.policy).policy
    with Progress(f"locking {rev[:12]}") as progress:

        def hashed(done: int, total: int) -> None:
            progress(f"hashed {done}/{total} blobs")

        if args.push is None:
            pinned = pin_here(git, rev, policy, hashed)
        else:
            remote = args.push

            def moved(said: str) -> None:
                progress.clear()  # the line stays said; the count goes on below it
                print(f"git-evidence: {said}", file=sys.stderr)

            done = publish(git, remote, rev, policy, hashed, moved)
    if args.push is None:
        _say(pinned, rev, policy, args)
        if pinned.written and args.format == "text":
            print(f"git-evidence: publish it: git evidence lock {rev[:12]} --push <remote>")
        return 0
    if isinstance(done, Published):
        _say(done.pinned, rev, policy, args, {"remote": remote, "summary": done.summary})
        return 0
    sys.stderr.write(done.said)
    _refused(done.remote, done.ref, done.by_identity, args.format)
    return EXIT_REFUSE


def _say(
    pinned: Pinned,
    rev: Oid,
    policy: Policy,
    args: argparse.Namespace,
    published: dict[str, str] | None = None,
) -> None:
    lock, written = pinned
    warnings = empty_lock_warnings(lock)
    if args.format == "json":
        doc = {
            "rev": rev,
            "digest": lock.digest,
            "written": written,
            "notes_ref": policy.notes_ref,
            "roots": root_counts(lock),
            "files": len(lock.files),
            "published": published,
            "policy": {"source": policy.source, "digest": policy.digest},
            "warnings": warnings,
        }
        print(json.dumps(doc, indent=1))
        return
    for warning in warnings:
        print(f"git-evidence: warning: {warning}", file=sys.stderr)
    if policy.origin == "draft":
        print(f"git-evidence: lock roots and notes ref from the {policy.source}", file=sys.stderr)
    state = "pinned" if written else "already pinned, unchanged"
    print(
        f"{lock.digest}\t{state}: {rev[:12]} ({len(lock.files)} files under "
        f"{', '.join(lock.roots)}) in {policy.notes_ref}"
    )
    if args.verbose:
        for root, count in root_counts(lock).items():
            print(f"root {root}: tree {lock.trees[root] or '(missing)'}, {count} files")
    if published is not None:
        print(
            f"git-evidence: {policy.notes_ref} is published on {published['remote']} "
            f"({published['summary']})"
        )


def _refused(remote: str, ref: str, by_identity: bool, fmt: str) -> None:
    if by_identity:
        why = (
            f"{remote} refused {ref}: the identity you push as is not one of its lock "
            "writers ([identities].lock_writers in the policy of its base branch)"
        )
        fix = "ask a lock writer to pin it (git evidence lock REV --push), or CI's lock job"
    else:
        why = f"{remote} refused {ref}: see its findings above"
        fix = "fix what the findings name, then run git evidence lock REV --push again"
    if fmt == "json":
        doc = {"published": None, "refused": {"remote": remote, "message": why, "hint": fix}}
        print(json.dumps(doc, indent=1))
        return
    print(f"git-evidence: {why}\n  To fix: {fix}", file=sys.stderr)
