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
from git_evidence.gate.report import Rendering, given_options, show_path, to_json, to_text, wrap
from git_evidence.gate.verifying import verify
from git_evidence.lock import record
from git_evidence.plumbing.git import Git
from git_evidence.policy.schema import Policy

LINE = 80  # verify prints for a terminal, not under `remote:`


def run(args: argparse.Namespace) -> int:
    done = verify(Git(), args.rev, base=args.base, draft=args.policy, worktree=args.worktree)
    rev, policy, checked = done.rev, done.policy, done.checked
    found, summary, problem, drift = done.compared
    rendering = Rendering(options=given_options(args))
    if args.format == "json":
        print(
            json.dumps(
                {
                    "rev": rev,
                    "worktree": args.worktree,
                    "matches": done.ok,
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
        return EXIT_ALLOW if done.ok else EXIT_REFUSE
    _print_text(rev, args.worktree, found, summary, problem, drift, policy)
    print(to_text(checked, rendering), end="")
    what = "the working tree" if args.worktree else rev[:12]
    reasons = [
        "no lock to compare with" if summary is None else "",
        f"{what} differs from the lock in {len(drift)} file(s)" if drift else "",
        "the base no longer matches its lock (lock-stale)" if done.stale else "",
        "the range is not allowed" if checked.exit_code != EXIT_ALLOW else "",
    ]
    # The last line says what the exit status says, in 80 columns: reasons that do not
    # fit on it go on lines of their own before it.
    if done.ok:
        print(f"{PREFIX}: verified: {what} matches its lock; the range is allowed")
    else:
        given = [r for r in reasons if r]
        last = f"{PREFIX}: not verified: {'; '.join(given)}"
        if len(last) > LINE:
            for reason in given:
                print("\n".join(wrap(reason, LINE, first="  ", rest="    ")))
            last = f"{PREFIX}: not verified: for the {len(given)} reasons above"
        print(last)
    return EXIT_ALLOW if done.ok else EXIT_REFUSE


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
