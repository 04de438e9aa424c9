"""The retry quota: JSON Lines, append-only like the freeze ledger.

A ``grant`` line (written by an evidence writer) adds retries; a ``spend`` line (written
by CI, a ledger writer) records the retries one test used. Remaining = grants − spends,
never negative. A nondeterministic test may retry only while the retries a session uses
stay within what remains. Pure: bytes, a clock and who may write in; entries, problems
and problems out. Its push findings are the rules' (``rules/files.py``); what a session
reports of its retries is ``plugin/retries.py``'s, the scorecard's quota vote and merge
rule ``judge/scorecard.py``'s.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from datetime import datetime
from typing import Any, NamedTuple

from git_evidence.core.facts import LedgerProblem
from git_evidence.core.records import iso_utc
from git_evidence.ledger.entries import (
    BOM,
    CLOCK_SKEW,
    EntryError,
    appended_to,
    json_object,
    parse_time,
)

DEFAULT_PATH = "tests/retry-quota.jsonl"
GRANT, SPEND = "grant", "spend"
FIELDS = {
    GRANT: ("kind", "amount", "writer", "at", "reason"),
    SPEND: ("kind", "amount", "test_id", "candidate", "writer", "at"),
}
MAX_AMOUNT = 10_000  # one line never grants or spends more than this


class Entry(NamedTuple):
    kind: str  # grant | spend
    amount: int
    writer: str
    at: datetime
    line: int
    test_id: str = ""  # spends
    candidate: str = ""  # spends
    reason: str = ""  # grants

    def as_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"kind": self.kind, "amount": self.amount}
        if self.kind == SPEND:
            doc.update(test_id=self.test_id, candidate=self.candidate)
        doc.update(writer=self.writer, at=iso_utc(self.at))
        if self.kind == GRANT:
            doc["reason"] = self.reason
        return doc


def line_of(entry: Entry) -> bytes:
    """The canonical line for an entry (what `git evidence quota` appends)."""
    doc = entry.as_json()
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8") + b"\n"


def parse_entry(raw: bytes, line: int) -> Entry:
    """One quota line, strictly: any problem is an EntryError saying which field."""
    doc = json_object(raw, "the quota file is")
    kind = doc.get("kind")
    if kind not in FIELDS:
        raise EntryError(f"kind must be {GRANT!r} or {SPEND!r}, got {kind!r}")
    missing = [k for k in FIELDS[kind] if k not in doc]
    if missing:
        raise EntryError(f"a {kind} needs {', '.join(missing)}")
    unknown = sorted(set(doc) - set(FIELDS[kind]))
    if unknown:
        raise EntryError(f"unknown field {', '.join(unknown)} in a {kind}")
    amount = doc["amount"]
    if isinstance(amount, bool) or not isinstance(amount, int) or not 1 <= amount <= MAX_AMOUNT:
        raise EntryError(f"amount must be a whole number from 1 to {MAX_AMOUNT}, got {amount!r}")
    for key in FIELDS[kind][2:]:
        value = doc[key]
        if not isinstance(value, str):
            raise EntryError(f"{key} must be a string")
        _clean_string(key, value)
        if key != "reason" and not value.strip():
            raise EntryError(f"{key} is empty")
    return Entry(
        kind,
        amount,
        doc["writer"],
        parse_time(doc["at"], "at"),
        line,
        test_id=doc.get("test_id", ""),
        candidate=doc.get("candidate", ""),
        reason=doc.get("reason", ""),
    )


def _clean_string(key: str, value: str) -> None:
    """JSON escapes can smuggle what UTF-8 cannot carry: a lone surrogate, or U+0000."""
    for char in value:
        if char == "\0" or "\ud800" <= char <= "\udfff":
            raise EntryError(f"{key} contains U+{ord(char):04X}, which no entry may hold")


def parse_quota(data: bytes) -> tuple[list[Entry], list[LedgerProblem]]:
    """Every entry of a quota file, and the lines that do not parse."""
    entries: list[Entry] = []
    problems: list[LedgerProblem] = []
    if data.startswith(BOM):
        return [], [
            LedgerProblem("ledger-entry", 1, "byte order mark: the file is UTF-8 without BOM")
        ]
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for number, raw in enumerate(lines, start=1):
        try:
            entries.append(parse_entry(raw, number))
        except EntryError as exc:
            problems.append(LedgerProblem("ledger-entry", number, str(exc)))
    return entries, problems


def remaining(entries: Iterable[Entry]) -> int:
    return sum(e.amount if e.kind == GRANT else -e.amount for e in entries)


def retry_allowed(remaining_retries: int, used_including_this: int) -> bool:
    """With grants equal to spends there is no retry."""
    return remaining_retries - used_including_this >= 0


class Writers(NamedTuple):
    """Who may append what: grants need an evidence writer (named in the line and
    pushing it), spends a ledger writer."""

    evidence_writers: Collection[str]
    ledger_writers: Collection[str]
    pusher_grants: bool  # the pusher is an evidence writer
    pusher_spends: bool  # the pusher is a ledger writer


def check_change(
    old: bytes | None, new: bytes | None, *, now: datetime, writers: Writers
) -> list[LedgerProblem]:
    """One change of the quota file: the old bytes stay an exact prefix of the new ones
    (as for the freeze ledger), every appended line is an entry its pusher may write,
    and the remaining count never goes below zero."""
    prefix = appended_to(old, new, "the retry quota")
    if isinstance(prefix, LedgerProblem):
        return [prefix]
    appended, first = prefix
    if not appended:
        return []
    old = old or b""
    if not appended.endswith(b"\n"):
        return [
            LedgerProblem(
                "ledger-entry", first + appended.count(b"\n"), "the last line has no newline"
            )
        ]
    kept, broken = parse_quota(old)
    if broken:
        line = broken[0].line
        return [
            LedgerProblem(
                "ledger-entry", line, f"the existing quota does not parse: {broken[0].message}"
            )
        ]
    balance = remaining(kept)
    if not old and appended.startswith(BOM):
        return [LedgerProblem("ledger-entry", 1, "byte order mark: the file is UTF-8 without BOM")]
    problems = []
    for offset, raw in enumerate(appended[:-1].split(b"\n")):
        number = first + offset
        try:
            entry = parse_entry(raw, number)
        except EntryError as exc:
            problems.append(LedgerProblem("ledger-entry", number, str(exc)))
            continue
        balance += entry.amount if entry.kind == GRANT else -entry.amount
        problems += [
            LedgerProblem("ledger-entry", number, why)
            for why in _entry_in_context(entry, balance, now, writers)
        ]
    return problems


def _entry_in_context(entry: Entry, balance: int, now: datetime, writers: Writers) -> list[str]:
    why = []
    if entry.kind == GRANT:
        if entry.writer not in writers.evidence_writers:
            why.append(f"grant writer {entry.writer!r} is not an evidence writer")
        if not writers.pusher_grants:
            why.append("retries are granted by an evidence writer's push only")
    else:
        if entry.writer not in writers.ledger_writers:
            why.append(f"spend writer {entry.writer!r} is not a ledger writer")
        if not writers.pusher_spends:
            why.append("spends are appended by a ledger writer (CI) only")
    if balance < 0:
        why.append(f"remaining retries would be {balance}: spends never exceed grants")
    if entry.at > now + CLOCK_SKEW:
        why.append(f"at {iso_utc(entry.at)} is in the future by the server's clock")
    return why
