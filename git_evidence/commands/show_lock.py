"""``git evidence show-lock [REV]``: the lock in force at REV and where it lives."""

from __future__ import annotations

import argparse
import json

from git_evidence.core.errors import EXIT_REFUSE
from git_evidence.gate.report import show_path
from git_evidence.lock import store
from git_evidence.plumbing import repo_dirs
from git_evidence.plumbing.context import require_commit
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve


def run(args: argparse.Namespace) -> int:
    git = Git()
    rev = repo_dirs.commit_noting_dirs(git, args.rev) or require_commit(git, args.rev)
    policy = resolve(git).policy
    found = store.find_lock(git, policy.notes_ref, rev)
    if found is None:
        message = (
            f"no lock in force at {rev[:12]} ({policy.notes_ref} has no note on it or its "
            "first-parent ancestors)"
        )
        fix = (
            f"fetch the locks (git fetch origin {policy.notes_ref}:{policy.notes_ref}) or "
            f"have a lock writer pin: git evidence lock {rev[:12]}"
        )
        if args.format == "json":
            doc = {"rev": rev, "notes_ref": policy.notes_ref, "note": None, "lock": None}
            print(json.dumps({**doc, "message": message, "hint": fix}, indent=1))
        else:
            print(f"git-evidence: {message}.\n  To fix: {fix}")
        return EXIT_REFUSE
    pinned = store.read_lock(git, found)
    if args.format == "json":
        print(
            json.dumps(
                {
                    "rev": rev,
                    "notes_ref": policy.notes_ref,
                    "note": found.blob,
                    "digest": pinned.digest,
                    "lock": pinned.as_json(),
                },
                indent=1,
            )
        )
        return 0
    print(
        f"lock in force at {rev[:12]}: note {found.blob[:12]} on {found.commit[:12]} "
        f"in {policy.notes_ref}"
    )
    print(f"digest: {pinned.digest}\npinned by {pinned.pinned_by} at {pinned.pinned_at}")
    for root in pinned.roots:
        count = sum(1 for p in pinned.files if p == root or p.startswith(root + "/"))
        print(f"root {root}: tree {pinned.trees[root] or '(missing)'}, {count} files")
    if args.verbose:  # every pinned file: mode, size, SHA-256 (or the gitlink's commit)
        for path in sorted(pinned.files):
            entry = pinned.files[path]
            what = entry.blob if entry.sha256 is None else f"{entry.size} {entry.sha256}"
            print(f"  {entry.mode} {what}\t{show_path(path)}")
    return 0
