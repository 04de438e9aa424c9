"""``git evidence quota status|spend|grant``: the retry quota (``ledger/quota_book.py``).

``status`` prints what remains and the latest spends. ``spend --from-junit FILE`` is
CI's step after a run: it appends one spend per nondeterministic test the evidence
plugin retried. ``grant`` is an evidence writer's: it appends retries with a reason.
Each appends to the file in the working tree; the commit is pushed alone, and the
server checks every line (who wrote it, never more spent than granted).
"""

from __future__ import annotations

import argparse
import json

from git_evidence.core.errors import EXIT_ALLOW, EXIT_REFUSE, UsageError
from git_evidence.core.records import iso_utc
from git_evidence.ledger import quota_book
from git_evidence.plugin.retries import retries_from_junit
from git_evidence.plumbing.context import open_repo
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy.labels import NONDETERMINISTIC
from git_evidence.policy.schema import Policy


def run(args: argparse.Namespace) -> int:
    git = open_repo(None)
    policy = resolve(git).policy
    if args.verb == "status":
        return _status(git, policy, args.rev, args.format)
    if args.verb == "spend":
        return _spend(git, policy, args)
    return _grant(git, policy, args)


def _status(git: Git, policy: Policy, rev: str | None, fmt: str) -> int:
    now = quota_book.status(git, policy, rev)
    if fmt == "json":
        doc = {
            "quota": now.source,
            "remaining": now.remaining,
            "granted": now.granted,
            "spent": now.spent,
            "recent_spends": [e.as_json() for e in now.recent],
        }
        print(json.dumps(doc, indent=1))
        return EXIT_ALLOW
    print(
        f"{now.source}: {now.remaining} retries remaining ({now.granted} granted, "
        f"{now.spent} spent)"
    )
    for entry in reversed(now.recent):
        print(
            f"  {iso_utc(entry.at)} {entry.amount} by {entry.writer}: {entry.test_id} "
            f"({entry.candidate[:12]})"
        )
    return EXIT_ALLOW


def _writer(git: Git, args: argparse.Namespace, writers: frozenset[str], role: str) -> str:
    ci = bool(getattr(args, "ci", False))
    writer, source = quota_book.writer(git, args.writer, writers, role, ci=ci)
    print(f"git-evidence: writing as {writer} (from {source})")
    return writer


def _spend(git: Git, policy: Policy, args: argparse.Namespace) -> int:
    writer = _writer(git, args, policy.ledger_writers, "ledger writer")
    try:
        with open(args.from_junit, "rb") as handle:
            found = retries_from_junit(handle.read())
    except OSError as exc:
        raise UsageError(f"cannot read {args.from_junit}: {exc.strerror}") from None
    except ValueError as exc:
        raise UsageError(f"{args.from_junit}: {exc}") from None
    retried = [
        (r.test_id, r.attempts - 1) for r in found if r.label == NONDETERMINISTIC and r.attempts > 1
    ]
    if not retried:
        print(f"git-evidence: {args.from_junit}: no retries to record")
        return EXIT_ALLOW
    candidate = git.resolve_commit(args.candidate)
    if candidate is None:
        raise UsageError(f"{args.candidate!r} does not name a commit")
    done = quota_book.spend(git, policy, writer, retried, candidate)
    if not done.fits:
        print(
            f"git-evidence: the run used {done.total} retries but {done.source} has "
            f"{done.remaining} left: the server refuses a quota that goes below zero. An "
            "evidence writer grants more first."
        )
        return EXIT_REFUSE
    print(
        f"git-evidence: recorded {done.total} retries spent by {done.tests} test(s); "
        f"{done.remaining - done.total} remain.\n  next: commit {policy.quota_path} alone "
        "and push it as a ledger writer"
    )
    return EXIT_ALLOW


def _grant(git: Git, policy: Policy, args: argparse.Namespace) -> int:
    writer = _writer(git, args, policy.evidence_writers, "evidence writer")
    left = quota_book.grant(git, policy, writer, args.amount, args.reason)
    print(
        f"git-evidence: granted {args.amount} retries; {left} remain.\n"
        f"  next: commit {policy.quota_path} alone and push it as an evidence writer"
    )
    return EXIT_ALLOW
