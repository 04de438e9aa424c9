"""The freeze ledger in a judgement: each commit's change to it, then the range's as a
whole, read from git and handed to ``ledger.check_change``. The walk over
the range (``append_only_problems``) is the retry quota's too."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from datetime import datetime, timezone

from git_evidence.core.facts import LedgerProblem, UpdateFacts
from git_evidence.core.oids import Oid, blob_id, is_zero
from git_evidence.ledger import entries
from git_evidence.plumbing import batch
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.git import Git
from git_evidence.policy.schema import Policy

# (commit, (status, old blob, new blob, path)) for each change a range makes to it
Touch = tuple[Oid, tuple[str, str, str, str]]


def ledger_problems(
    git: Git,
    cat: CatFile,
    facts: UpdateFacts,
    touched: Sequence[Touch],
    policy: Policy,
    pin_exists: Callable[[str], bool],
) -> list[tuple[Oid | None, LedgerProblem]]:
    """``(commit, problem)`` for each commit's change; ``(None, problem)`` for the range
    (a rewrite no single commit shows: a merge that takes another history's ledger)."""
    now = datetime.now(timezone.utc)  # the server's clock, never a commit's date
    read: dict[str, bytes] = {}  # a ledger is read once per blob, however often named

    def blob(oid: str | None) -> bytes | None:
        if oid is None or is_zero(oid):
            return None
        if oid not in read:
            read[oid] = cat.read(oid)
        return read[oid]

    @functools.cache
    def check(old_oid: str | None, new_oid: str | None) -> list[LedgerProblem]:
        # When the new ledger starts with the old one (its first bytes hash to the old
        # blob's id), the old blob is never read: a one-line append to a long ledger
        # inflates one blob, not two.
        new = blob(new_oid)
        old: bytes | None
        if old_oid is None or is_zero(old_oid) or new is None or old_oid in read:
            old = blob(old_oid)
        else:
            size = git.object_size(old_oid)
            prefix = size <= len(new) and blob_id(memoryview(new)[:size], old_oid) == old_oid
            old = new[:size] if prefix else blob(old_oid)
        return entries.check_change(
            old,
            new,
            max_window_hours=policy.max_window_hours,
            now=now,
            writers=policy.ledger_writers,
            pin_exists=pin_exists,
        )

    return append_only_problems(git, facts, touched, policy.ledger_path, "the ledger", check)


def append_only_problems(
    git: Git,
    facts: UpdateFacts,
    touched: Sequence[Touch],
    path: str,
    what: str,
    check: Callable[[str | None, str | None], list[LedgerProblem]],
) -> list[tuple[Oid | None, LedgerProblem]]:
    """An append-only file (the freeze ledger, the retry quota) in a range: ``check``
    (old blob, new blob; None when absent) for each commit's change, then, when no
    commit's own change failed, for the range as a whole, where only a rewrite counts
    (a merge that takes another history's copy shows in no single commit)."""
    problems: list[tuple[Oid | None, LedgerProblem]] = []
    for commit, (status, old, new, changed) in touched:
        if changed != path:  # a case or Unicode variant of the file's name
            spelling = f"{changed!r} is another spelling of {what}"
            problems.append((commit, LedgerProblem("ledger-rewrite", None, spelling)))
            continue
        problems += [(commit, p) for p in check(old, None if status == "D" else new)]
    if problems or facts.commit is None:
        return problems
    revs = [facts.base, facts.commit] if facts.base else [facts.commit]
    ends = [
        hit[0] if hit and hit[1] == "blob" else None
        for hit in batch.check(git, [f"{rev}:{path}" for rev in revs])
    ]
    start, tip = (ends[0], ends[1]) if facts.base else (None, ends[0])
    if start is not None or tip is not None:
        problems += [(None, p) for p in check(start, tip) if p.rule == "ledger-rewrite"]
    return problems
