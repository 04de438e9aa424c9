"""``git evidence verify [REV] [--worktree]``: the reviewer's command.

Compares REV's manifest (or the files on disk, untracked and ignored ones included)
with the lock in force, then runs ``check`` on the range from the protected base.
Exit 0 only when everything matches and the range is allowed."""

from __future__ import annotations

import argparse
import json
from typing import Any

from git_evidence import lock, manifest
from git_evidence.checking import check_range, policy_and_base
from git_evidence.context import require_commit
from git_evidence.disk import worktree_manifest
from git_evidence.errors import EXIT_ALLOW, EXIT_REFUSE, PREFIX
from git_evidence.git import Git
from git_evidence.identity import client_identity
from git_evidence.lock import LockInvalid
from git_evidence.manifest import Drift, Entry
from git_evidence.report import show_path, to_json, to_text


def run(args: argparse.Namespace) -> int:
    git = Git()
    refs = git.refs()
    rev = require_commit(git, args.rev)
    policy, base = policy_and_base(git, refs, args.base)

    found = lock.find_lock(git, policy.notes_ref, rev)
    summary: lock.CachedLock | None = None
    problem = None
    drift: list[Drift] = []
    if found is None:
        problem = (
            f"no lock in force at {rev[:12]}: fetch the locks (git fetch origin "
            f"{policy.notes_ref}:{policy.notes_ref}) or have a lock writer pin one"
        )
    else:
        cache = lock.LockCache(git)
        summary = cache.get(found.blob)
        # A note validated before, whose root trees equal REV's: nothing to read.
        fast = (
            summary is not None
            and not args.worktree
            and summary.commit == found.commit
            and manifest.root_trees(git, rev, list(summary.trees)) == summary.trees
        )
        if not fast:
            try:
                pinned = lock.read_lock(git, found, cache)
            except LockInvalid as exc:
                problem, summary = exc.message, None
            else:
                summary = pinned.summary()
                if args.worktree:
                    top = git.text("rev-parse", "--show-toplevel")
                    actual = worktree_manifest(
                        top, pinned.roots, policy.lock_exclude, pinned.files, checkout=Git(cwd=top)
                    )
                else:
                    _, actual = manifest.build_manifest(
                        git, rev, pinned.roots, policy.lock_exclude, pinned
                    )
                drift = manifest.compare(pinned.files, actual)

    who = client_identity(git.config_bool("evidence.trusted"))
    label = f"{base[:12]}..{rev[:12]}" if base else rev[:12]
    checked = check_range(git, refs, policy, who, base, rev, label)
    # A stale lock holds no push unless the policy says so, but verify is the place
    # that says whether bytes match their pin: it fails on it.
    stale = any(f.rule == "lock-stale" for v in checked.decisions for f in v.findings)
    ok = summary is not None and not drift and not stale and checked.exit_code == EXIT_ALLOW
    if args.format == "json":
        print(
            json.dumps(
                {
                    "rev": rev,
                    "worktree": args.worktree,
                    "matches": ok,
                    "lock": None
                    if summary is None or found is None
                    else {
                        "commit": found.commit,
                        "note": found.blob,
                        "notes_ref": policy.notes_ref,
                        "digest": summary.digest,
                        "pinned_by": summary.pinned_by,
                        "pinned_at": summary.pinned_at,
                        "files": summary.files,
                    },
                    "lock_error": problem,
                    "drift": [_drift_json(d) for d in drift],
                    "check": json.loads(to_json(checked)),
                },
                indent=1,
            )
        )
    else:
        _print_text(rev, args.worktree, found, summary, problem, drift)
        print(to_text(checked), end="")
        what = "the working tree" if args.worktree else rev[:12]
        reasons = [
            "no lock to compare with" if summary is None else "",
            f"{what} differs from the lock in {len(drift)} file(s)" if drift else "",
            "the base no longer matches its lock (lock-stale)" if stale else "",
            "the range is not allowed" if checked.exit_code != EXIT_ALLOW else "",
        ]
        # The last line says what the exit status says.
        if ok:
            print(f"{PREFIX}: verified: {what} matches its lock and the range is allowed")
        else:
            print(f"{PREFIX}: not verified: {'; '.join(r for r in reasons if r)}")
    return EXIT_ALLOW if ok else EXIT_REFUSE


def _print_text(
    rev: str,
    worktree: bool,
    found: lock.LockRef | None,
    pinned: lock.CachedLock | None,
    problem: str | None,
    drift: list[Drift],
) -> None:
    if pinned is None or found is None:
        print(f"lock: {problem}")
        return
    print(
        f"lock: {pinned.digest} pinned on {found.commit[:12]} by {pinned.pinned_by} "
        f"at {pinned.pinned_at}"
    )
    what = "the working tree" if worktree else rev[:12]
    if not drift:
        print(f"lock: {what} matches it ({pinned.files} files)")
        return
    print(f"lock: {what} differs from it in {len(drift)} file(s):")
    for item in drift:
        print(f"  {item.kind}: {show_path(item.describe())}")
    print(
        "  To fix: restore the locked bytes, or have an evidence writer commit the "
        "change and a lock writer pin it (git evidence lock)"
    )


def _drift_json(item: Drift) -> dict[str, Any]:
    def side(entry: Entry | None) -> dict[str, Any] | None:
        if entry is None:
            return None
        return {"mode": entry.mode, "digest": entry.digest, "size": entry.size, "lfs": entry.lfs}

    return {"path": item.path, "kind": item.kind, "old": side(item.old), "new": side(item.new)}
