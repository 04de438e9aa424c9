"""The freeze ledger as its readers see it: the file in the working tree or at a
revision, parsed; when a test was born; the freezes a report mentions. Writing
entries is ``freeze add``'s alone (judge/reproduce.py)."""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from typing import NamedTuple

from git_evidence.core.errors import EvidenceError
from git_evidence.core.facts import LedgerProblem
from git_evidence.core.records import iso_utc
from git_evidence.ledger import entries
from git_evidence.ledger.entries import Freeze
from git_evidence.plumbing.git import Git
from git_evidence.policy.schema import Policy


def read_ledger(
    git: Git, policy: Policy, rev: str | None = None
) -> tuple[list[Freeze], list[LedgerProblem]]:
    """The ledger as tests read it (the working tree's file), or at ``rev``."""
    return entries.parse_ledger(ledger_bytes(git, policy, rev), policy.max_window_hours)


class FreezeStatus(NamedTuple):
    """What ``freeze status`` says of one test: the freeze in force (None: none), the
    lines that say why, and whether its fingerprint is of the old kind."""

    freeze: Freeze | None
    said: tuple[str, ...]
    old_kind: bool = False


def freeze_in_force(
    git: Git, policy: Policy, test_id: str, fingerprint: str | None, now: datetime
) -> FreezeStatus:
    """The freeze in force for ``test_id`` (of ``fingerprint`` when given) in the
    working tree's ledger: active, and no older than the test (an added test never
    inherits an older freeze)."""
    freezes, _ = read_ledger(git, policy)
    old_kind = old_kind_lines(ledger_bytes(git, policy))
    born = first_added(git, test_id)
    said: list[str] = []
    for f in freezes:
        if f.test_id != test_id or (fingerprint and f.fingerprint != fingerprint):
            continue
        if not f.active(now):
            continue
        if born is not None and f.frozen_at < born:
            said.append(
                f"{test_id}: the freeze of line {f.line} predates the test "
                f"({iso_utc(born)}): an added test never inherits an older freeze"
            )
            continue
        said.append(f"{test_id}: frozen until {iso_utc(f.until)} (line {f.line}, seed {f.seed})")
        if f.line in old_kind:
            said.append(
                f"  its fingerprint {f.fingerprint} is of the old kind (a digest of one "
                "run's output): `git evidence judge` never matches it; when it expires, "
                "reproduce the flake with `git evidence freeze add` again"
            )
        return FreezeStatus(f, tuple(said), f.line in old_kind)
    return FreezeStatus(None, (*said, f"{test_id}: no freeze in force"))


def old_kind_lines(data: bytes) -> set[int]:
    """Lines whose fingerprint is of the old kind: ``freeze add`` once took a digest of
    one failing run's output, which differs every run, so no judgement can match it.
    Such a fingerprint is one of the entry's own output digests; the shared
    fingerprint never is."""
    lines = set()
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if b'"outputs"' not in raw:
            continue
        try:
            doc = json.loads(raw)
        except ValueError:
            continue
        outputs = doc.get("outputs") if isinstance(doc, dict) else None
        if isinstance(outputs, list) and doc.get("fingerprint") in {
            str(o[1]) for o in outputs if isinstance(o, list) and len(o) == 2
        }:
            lines.add(number)
    return lines


def ledger_bytes(git: Git, policy: Policy, rev: str | None = None) -> bytes:
    return next_commit_bytes(git, policy.ledger_path, rev)[0] or b""


def next_commit_bytes(git: Git, rel: str, rev: str | None = None) -> tuple[bytes | None, str]:
    """An append-only file (the freeze ledger, the retry quota) as the next commit would
    carry it: the working tree's, else HEAD's (a bare repository's is HEAD's); or at
    ``rev``. With where it was read: ``rel``, or ``REV:rel``."""
    if rev is None:
        top = git.toplevel()
        if top is not None:
            try:
                with open(os.path.join(top, rel), "rb") as handle:
                    return handle.read(), rel
            except FileNotFoundError:
                pass
        rev = "HEAD"
    return git.blob_at(rev, rel), f"{rev}:{rel}"


def first_added(git: Git, test_id: str) -> datetime | None:
    """When the test's file first entered history (None: not a path git knows, so
    unconstrained; a test not yet committed is born now)."""
    path = test_id.split("::", 1)[0]
    if not path or path.startswith("-"):
        return None
    stamps = git.added_times(path)
    if stamps is None:
        return None
    if not stamps:
        top = git.toplevel()
        there = top is not None and os.path.exists(os.path.join(top, path))
        return datetime.now(timezone.utc) if there else None
    return datetime.fromtimestamp(stamps[-1], timezone.utc)


def freeze_notes(git: Git, policy: Policy, tip: str, base: str | None) -> list[str]:
    """For reports: the freezes in force at ``tip`` and those expired since ``base``."""
    freezes, problems = read_ledger(git, policy, tip)
    skipped = (
        [
            f"{policy.ledger_path}: skipped {len(problems)} line(s) that are no valid freeze "
            f"(first: line {problems[0].line}: {problems[0].message}); "
            "`git evidence freeze list` names them"
        ]
        if problems
        else []
    )
    if not freezes:
        return skipped
    now = datetime.now(timezone.utc)
    since = None
    if base:
        stamp = git.commit_time(base)
        since = datetime.fromtimestamp(stamp, timezone.utc) if stamp is not None else None
    active = [f for f in freezes if f.active(now)]
    expired = [
        f
        for f in freezes
        if not f.active(now) and f.until <= now and (since is None or f.until > since)
    ]
    notes = [
        f"freezes in force: {len(active)}"
        + (
            " (" + ", ".join(f"{f.test_id} until {iso_utc(f.until)}" for f in active[:5]) + ")"
            if active
            else ""
        )
    ]
    if expired:
        notes.append(
            f"freezes expired since the base: {len(expired)} ("
            + ", ".join(f.test_id for f in expired[:5])
            + ")"
        )
    return notes + skipped


def append_lines(git: Git, rel: str, data: bytes, what: str) -> None:
    """Append ``data`` to the append-only file ``rel`` (the freeze ledger, the retry
    quota) in the working tree, refusing when its last line has no newline: the new
    line would join it, a rewrite the server refuses."""
    path = os.path.join(git.work_tree(f"writing {rel}"), rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path) and os.path.getsize(path):
        with open(path, "rb") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                raise EvidenceError(
                    f"{rel}: its last line has no newline",
                    fix=f"restore the committed {what} (git checkout -- {rel}); it is append-only",
                )
    with open(path, "ab") as handle:
        handle.write(data)
