"""``git evidence verify [REV] [--worktree]``: the reviewer's command.

Compares REV's manifest (or the files on disk, untracked and ignored ones included)
with the lock in force, then runs ``check`` on the range from the protected base.
Exit 0 only when everything matches and the range is allowed."""

from __future__ import annotations

import argparse
import json
import re
from typing import Any

from git_evidence.core.errors import EXIT_ALLOW, EXIT_REFUSE, PREFIX
from git_evidence.core.facts import Drift, Entry, LockRef
from git_evidence.core.oids import Oid
from git_evidence.gate.report import (
    Rendering,
    Report,
    given_options,
    show_path,
    to_json,
    to_text,
    wrap,
)
from git_evidence.ledger.freezes import freeze_notes
from git_evidence.lock import record
from git_evidence.lock.compare import compare
from git_evidence.plumbing import lookups, repo_dirs
from git_evidence.plumbing.context import require_commit
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy.identity import client_identity
from git_evidence.policy.schema import Policy

LINE = 80  # verify prints for a terminal, not under `remote:`


def run(args: argparse.Namespace) -> int:
    git = Git()
    # Reads only: its lookups and objects share one cat-file each (plumbing/lookups.py).
    with lookups.live(git):
        return _verify(git, args)


def _verify(git: Git, args: argparse.Namespace) -> int:
    rev = repo_dirs.resolve_commit(git, args.rev) or require_commit(git, args.rev)
    refs: dict[str, Oid] | None = None
    base: Oid | None
    if args.base:  # the policy is read there: no refs to list unless a range is judged
        base = require_commit(git, args.base)
        policy = resolve(git, draft=args.policy, at=base).policy
    else:
        from git_evidence.gate.checking import policy_and_base

        refs = git.refs()
        policy, base = policy_and_base(git, refs, None, args.policy)

    found, summary, problem, drift = compare(git, rev, policy, worktree=args.worktree)

    who = client_identity(git.config_bool("evidence.trusted"))
    label = f"{base[:12]}..{rev[:12]}" if base else rev[:12]
    if rev == base:
        # An empty range: nothing to judge. What the gate would say about the base (a
        # lock that is stale, invalid or missing there) is what was compared above.
        said = f"{label}: nothing to judge ({rev[:12]} is the base)"
        checked = Report(who, policy, notes=(said, *freeze_notes(git, policy, rev, base)))
    else:
        # The judging machinery is imported only when there is a range to judge.
        from git_evidence.gate.checking import check_range

        checked = check_range(
            git, refs if refs is not None else git.refs(), policy, who, base, rev, label
        )
    rendering = Rendering(options=given_options(args))
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
                    "check": json.loads(to_json(checked, rendering)),
                },
                indent=1,
            )
        )
    else:
        _print_text(rev, args.worktree, found, summary, problem, drift, policy)
        print(to_text(checked, rendering), end="")
        what = "the working tree" if args.worktree else rev[:12]
        reasons = [
            "no lock to compare with" if summary is None else "",
            f"{what} differs from the lock in {len(drift)} file(s)" if drift else "",
            "the base no longer matches its lock (lock-stale)" if stale else "",
            "the range is not allowed" if checked.exit_code != EXIT_ALLOW else "",
        ]
        # The last line says what the exit status says, in 80 columns: reasons that
        # do not fit on it go on lines of their own before it.
        if ok:
            print(f"{PREFIX}: verified: {what} matches its lock; the range is allowed")
        else:
            given = [r for r in reasons if r]
            last = f"{PREFIX}: not verified: {'; '.join(given)}"
            if len(last) > LINE:
                for reason in given:
                    print("\n".join(wrap(reason, LINE, first="  ", rest="    ")))
                last = f"{PREFIX}: not verified: for the {len(given)} reasons above"
            print(last)
    return EXIT_ALLOW if ok else EXIT_REFUSE


def _print_text(
    rev: str,
    worktree: bool,
    found: LockRef | None,
    pinned: record.CachedLock | None,
    problem: str | None,
    drift: list[Drift],
    policy: Policy,
) -> None:
    def say(text: str, first: str = "lock: ", keep: str = "") -> None:
        print("\n".join(wrap(text, LINE, first=first, rest="      ", keep=keep)))

    if pinned is None or found is None:
        # a command to copy stays on one line
        command = re.search(r"\((git [^)]*)\)", problem or "")
        say(problem or "", keep=command.group(1) if command else "")
        return
    say(
        f"{pinned.digest} pinned on {found.commit[:12]} by {pinned.pinned_by} at {pinned.pinned_at}"
    )
    what = "the working tree" if worktree else rev[:12]
    if not pinned.files:
        say(
            f"warning: the lock pins no file (its roots: {', '.join(policy.lock_roots)}): "
            "nothing the tests read is locked; set [lock].roots in the policy"
        )
    if not drift:
        say(f"{what} matches it ({pinned.files} files)")
        return
    say(f"{what} differs from it in {len(drift)} file(s):")
    for item in drift:
        say(f"{show_path(item.path)} {item.change()}", first=f"  {item.kind}: ")
    say(
        "restore the locked bytes, or have an evidence writer commit the change and a lock "
        "writer pin it (git evidence lock)",
        first="  To fix: ",
    )


def _drift_json(item: Drift) -> dict[str, Any]:
    def side(entry: Entry | None) -> dict[str, Any] | None:
        if entry is None:
            return None
        return {"mode": entry.mode, "digest": entry.digest, "size": entry.size, "lfs": entry.lfs}

    return {"path": item.path, "kind": item.kind, "old": side(item.old), "new": side(item.new)}
