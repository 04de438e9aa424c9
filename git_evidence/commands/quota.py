"""``git evidence quota status|spend|grant``: the retry quota.

``status`` prints what remains and the latest spends. ``spend --from-junit FILE`` is
CI's step after a run: it appends one spend per nondeterministic test the evidence
plugin retried. ``grant`` is an evidence writer's: it appends retries with a reason.
Each appends to the file in the working tree; the commit is pushed alone, and the
server checks every line (who wrote it, never more spent than granted).
"""

from __future__ import annotations

import argparse
import json
import os
from datetime import datetime, timezone

from git_evidence.core.errors import EXIT_ALLOW, EXIT_REFUSE, EvidenceError, UsageError
from git_evidence.core.records import iso_utc
from git_evidence.ledger import quota
from git_evidence.ledger.freezes import append_lines
from git_evidence.plugin.retries import retries_from_junit
from git_evidence.plumbing.context import open_repo
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy.identity import WRITER_KEY, line_writer
from git_evidence.policy.labels import NONDETERMINISTIC
from git_evidence.policy.schema import Policy

RECENT = 10


def run(args: argparse.Namespace) -> int:
    git = open_repo(None)
    policy = resolve(git).policy
    if args.verb == "status":
        return _status(git, policy, args.rev, args.format)
    if args.verb == "spend":
        return _spend(git, policy, args)
    return _grant(git, policy, args)


def _path(git: Git, policy: Policy) -> str:
    return os.path.join(git.work_tree("the retry quota"), policy.quota_path)


def read_quota(git: Git, policy: Policy, rev: str | None) -> tuple[bytes, str]:
    """The quota as the next commit would carry it (the working tree's file, else
    HEAD's), or at ``rev``."""
    if rev is None:
        try:
            with open(_path(git, policy), "rb") as handle:
                return handle.read(), policy.quota_path
        except FileNotFoundError:
            rev = "HEAD"
    return git.blob_at(rev, policy.quota_path) or b"", f"{rev}:{policy.quota_path}"


def _entries(data: bytes, source: str) -> list[quota.Entry]:
    entries, problems = quota.parse_quota(data)
    if problems:
        first = problems[0]
        raise EvidenceError(
            f"{source}:{first.line}: {first.message}",
            fix=f"restore the committed file (git checkout -- {source.split(':')[-1]}); "
            "it is append-only",
        )
    return entries


def _status(git: Git, policy: Policy, rev: str | None, fmt: str) -> int:
    data, source = read_quota(git, policy, rev)
    entries = _entries(data, source)
    granted = sum(e.amount for e in entries if e.kind == quota.GRANT)
    spends = [e for e in entries if e.kind == quota.SPEND]
    left = quota.remaining(entries)
    if fmt == "json":
        doc = {
            "quota": source,
            "remaining": left,
            "granted": granted,
            "spent": granted - left,
            "recent_spends": [e.as_json() for e in spends[-RECENT:]],
        }
        print(json.dumps(doc, indent=1))
        return EXIT_ALLOW
    print(f"{source}: {left} retries remaining ({granted} granted, {granted - left} spent)")
    for entry in reversed(spends[-RECENT:]):
        print(
            f"  {iso_utc(entry.at)} {entry.amount} by {entry.writer}: {entry.test_id} "
            f"({entry.candidate[:12]})"
        )
    return EXIT_ALLOW


def _writer(git: Git, args: argparse.Namespace, writers: frozenset[str], role: str) -> str:
    writer, source = line_writer(args.writer, git.config_get(WRITER_KEY), os.environ)
    if not writer:
        raise UsageError(
            f"who writes this line? neither --writer, `git config {WRITER_KEY}` nor "
            f"GIT_EVIDENCE_PUSHER names one of the {role}s",
            fix=f"pass --writer NAME, or once in this clone: git config {WRITER_KEY} NAME",
        )
    if writer not in writers and not getattr(args, "ci", False):
        raise UsageError(
            f"{writer} is not one of the {role}s "
            f"({', '.join(sorted(writers)) or 'none listed'}); the name came from {source}",
            fix="the server refuses lines by anyone else",
        )
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
    spent = [r for r in found if r.label == NONDETERMINISTIC and r.attempts > 1]
    if not spent:
        print(f"git-evidence: {args.from_junit}: no retries to record")
        return EXIT_ALLOW
    candidate = git.resolve_commit(args.candidate)
    if candidate is None:
        raise UsageError(f"{args.candidate!r} does not name a commit")
    data, source = read_quota(git, policy, None)
    left = quota.remaining(_entries(data, source))
    total = sum(r.attempts - 1 for r in spent)
    now = datetime.now(timezone.utc).replace(microsecond=0)
    lines = [
        quota.line_of(
            quota.Entry(
                quota.SPEND,
                r.attempts - 1,
                writer,
                now,
                0,
                test_id=r.test_id,
                candidate=candidate,
            )
        )
        for r in spent
    ]
    if total > left:
        print(
            f"git-evidence: the run used {total} retries but {source} has {left} left: "
            "the server refuses a quota that goes below zero. An evidence writer grants "
            "more first."
        )
        return EXIT_REFUSE
    _append(git, policy, b"".join(lines))
    print(
        f"git-evidence: recorded {total} retries spent by {len(spent)} test(s); "
        f"{left - total} remain.\n  next: commit {policy.quota_path} alone and push it "
        "as a ledger writer"
    )
    return EXIT_ALLOW


def _grant(git: Git, policy: Policy, args: argparse.Namespace) -> int:
    writer = _writer(git, args, policy.evidence_writers, "evidence writer")
    if not 1 <= args.amount <= quota.MAX_AMOUNT:
        raise UsageError(f"the amount must be from 1 to {quota.MAX_AMOUNT}")
    if not args.reason.strip():
        raise UsageError("say why (--reason): the grant is read by people later")
    data, source = read_quota(git, policy, None)
    left = quota.remaining(_entries(data, source))
    now = datetime.now(timezone.utc).replace(microsecond=0)
    entry = quota.Entry(quota.GRANT, args.amount, writer, now, 0, reason=args.reason)
    _append(git, policy, quota.line_of(entry))
    print(
        f"git-evidence: granted {args.amount} retries; {left + args.amount} remain.\n"
        f"  next: commit {policy.quota_path} alone and push it as an evidence writer"
    )
    return EXIT_ALLOW


def _append(git: Git, policy: Policy, lines: bytes) -> None:
    append_lines(git, policy.quota_path, lines, "file")
