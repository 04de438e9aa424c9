"""The retry quota as ``git evidence quota`` keeps it: read as the next commit would
carry it (the working tree's file, else HEAD's) or at a revision, with what remains;
spends appended for the retries a run used, never below zero; grants appended with a
reason. Who writes a line is chosen here and must be one of the role's writers
(CI's own line excepted): the server refuses any other."""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import NamedTuple

from git_evidence.core.errors import EvidenceError, UsageError
from git_evidence.core.oids import Oid
from git_evidence.ledger import quota
from git_evidence.ledger.freezes import append_lines, next_commit_bytes
from git_evidence.plumbing.git import Git
from git_evidence.policy.identity import WRITER_KEY, line_writer
from git_evidence.policy.schema import Policy

RECENT = 10  # spends a status lists


class Status(NamedTuple):
    source: str  # where the quota was read: its path, or REV:path
    granted: int
    remaining: int
    recent: tuple[quota.Entry, ...]  # the latest spends, oldest first

    @property
    def spent(self) -> int:
        return self.granted - self.remaining


class Spent(NamedTuple):
    source: str
    total: int  # retries spent
    tests: int  # by how many tests
    remaining: int  # left before the spends (written only when total fits)

    @property
    def fits(self) -> bool:
        return self.total <= self.remaining


def writer(
    git: Git, given: str | None, writers: frozenset[str], role: str, *, ci: bool = False
) -> tuple[str, str]:
    """``(writer, where the name came from)``: ``--writer``, ``evidence.writer`` or the
    pusher variables; one of ``writers`` unless ``ci`` (the server judges CI's lines)."""
    name, source = line_writer(given, git.config_get(WRITER_KEY), os.environ)
    if not name:
        raise UsageError(
            f"who writes this line? neither --writer, `git config {WRITER_KEY}` nor "
            f"GIT_EVIDENCE_PUSHER names one of the {role}s",
            fix=f"pass --writer NAME, or once in this clone: git config {WRITER_KEY} NAME",
        )
    if name not in writers and not ci:
        raise UsageError(
            f"{name} is not one of the {role}s "
            f"({', '.join(sorted(writers)) or 'none listed'}); the name came from {source}",
            fix="the server refuses lines by anyone else",
        )
    return name, source


def status(git: Git, policy: Policy, rev: str | None) -> Status:
    """What remains of the quota, and the latest spends."""
    data, source = read_quota(git, policy, rev)
    entries = _entries(data, source)
    granted = sum(e.amount for e in entries if e.kind == quota.GRANT)
    spends = [e for e in entries if e.kind == quota.SPEND]
    return Status(source, granted, quota.remaining(entries), tuple(spends[-RECENT:]))


def spend(
    git: Git, policy: Policy, writer: str, retried: Sequence[tuple[str, int]], candidate: Oid
) -> Spent:
    """Append one spend per ``(test id, retries beyond its first run)`` in
    ``retried``, on ``candidate``'s behalf, unless they are more than what remains:
    then nothing is written (``Spent.fits`` is False)."""
    source, left, now = _before_append(git, policy)
    lines = [
        quota.line_of(
            quota.Entry(quota.SPEND, n, writer, now, 0, test_id=test, candidate=candidate)
        )
        for test, n in retried
    ]
    done = Spent(source, sum(n for _, n in retried), len(retried), left)
    if done.fits:
        append_lines(git, policy.quota_path, b"".join(lines), "file")
    return done


def grant(git: Git, policy: Policy, writer: str, amount: int, reason: str) -> int:
    """Append a grant of ``amount`` retries with ``reason``; what remains after it."""
    if not 1 <= amount <= quota.MAX_AMOUNT:
        raise UsageError(f"the amount must be from 1 to {quota.MAX_AMOUNT}")
    if not reason.strip():
        raise UsageError("say why (--reason): the grant is read by people later")
    _, left, now = _before_append(git, policy)
    entry = quota.Entry(quota.GRANT, amount, writer, now, 0, reason=reason)
    append_lines(git, policy.quota_path, quota.line_of(entry), "file")
    return left + amount


def read_quota(git: Git, policy: Policy, rev: str | None) -> tuple[bytes, str]:
    """The quota as the next commit would carry it (the working tree's file, else
    HEAD's), or at ``rev``."""
    data, source = next_commit_bytes(git, policy.quota_path, rev)
    return data or b"", source


def _before_append(git: Git, policy: Policy) -> tuple[str, int, datetime]:
    """Where the quota is read, what remains of it, and the time a line appended now
    carries (whole seconds)."""
    data, source = read_quota(git, policy, None)
    left = quota.remaining(_entries(data, source))
    return source, left, datetime.now(timezone.utc).replace(microsecond=0)


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
