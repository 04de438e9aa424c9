"""The retry quota: JSON Lines, append-only like the freeze ledger.

A ``grant`` line (written by an evidence writer) adds retries; a ``spend`` line (written
by CI, a ledger writer) records the retries one test used. Remaining = grants − spends,
never negative. A nondeterministic test may retry only while the retries a session uses
stay within what remains. Pure: bytes, a clock and who may write in; entries, problems,
findings and votes out.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from git_evidence.core.oids import Oid
from git_evidence.core.records import iso_utc, no_duplicate_keys
from git_evidence.ledger.entries import (
    BOM,
    CLOCK_SKEW,
    EntryError,
    LedgerProblem,
    appended_to,
    json_object,
    parse_time,
)
from git_evidence.rules.table import Finding, RuleId, decide_ledger

if TYPE_CHECKING:
    from git_evidence.gate.ranges import UpdateFacts

DEFAULT_PATH = "tests/retry-quota.jsonl"
GRANT, SPEND = "grant", "spend"
FIELDS = {
    GRANT: ("kind", "amount", "writer", "at", "reason"),
    SPEND: ("kind", "amount", "test_id", "candidate", "writer", "at"),
}
MAX_AMOUNT = 10_000  # one line never grants or spends more than this

Vote = Literal["pass", "fail", "abstain"]


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


# -- findings at push ----------------------------------------------------------------

# The quota's own hints for the ledger's two rules: (with a base, without one).
HINTS: dict[RuleId, tuple[str, str]] = {
    "ledger-rewrite": (
        "the retry quota is append-only: restore its old bytes (`git checkout {base} -- "
        "{path}`) and append new lines only",
        "the retry quota is append-only: keep every line it had and append new lines only",
    ),
    "ledger-entry": (
        "append only lines `git evidence quota` writes: grants pushed by an evidence "
        "writer, spends pushed by CI (a ledger writer), never more spent than granted",
    )
    * 2,
}


def decide_quota(
    facts: UpdateFacts, problems: Sequence[tuple[Oid | None, LedgerProblem]], path: str
) -> list[Finding]:
    """Findings for the quota's changes: the ledger's, with the quota's hints."""
    return decide_ledger(facts, problems, path, hints=HINTS)


# -- runs: what a JUnit report says was retried, and the scorecard --------------------


class Retried(NamedTuple):
    test_id: str
    label: str
    attempts: int
    outcome: str  # passed | failed | quota (a retry the quota refused)


def retries_from_junit(data: bytes) -> list[Retried]:
    """The tests the evidence plugin retried or wanted to, from its JUnit XML: the
    ``<property>`` children ``test_id``, ``label``, ``attempts`` and ``evidence``."""
    from xml.etree import ElementTree  # only CI's spend step reads JUnit

    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise ValueError(f"not JUnit XML: {exc}") from None
    found = []
    for case in root.iter("testcase"):
        props = {p.get("name"): p.get("value") or "" for p in case.iter("property")}
        try:
            attempts = int(props.get("attempts") or 1)
        except ValueError:
            raise ValueError(f"attempts {props['attempts']!r} is not a number") from None
        note = props.get("evidence", "")
        if attempts <= 1 and note != "quota":
            continue
        test_id = props.get("test_id") or f"{case.get('classname', '')}::{case.get('name', '')}"
        failed = case.find("failure") is not None or case.find("error") is not None
        outcome = "quota" if note == "quota" else "failed" if failed else "passed"
        found.append(Retried(test_id, props.get("label", ""), attempts, outcome))
    return found


def quota_vote(retries_used: int, remaining_retries: int, refused: int) -> Vote:
    """``abstain`` when no nondeterministic test retried (or wanted to); ``fail`` when
    the retries went past what remained or a retry was refused for want of quota."""
    if retries_used == 0 and refused == 0:
        return "abstain"
    if refused or retries_used > remaining_retries:
        return "fail"
    return "pass"


def scorecard(properties_pass: bool, fixtures_pass: bool, quota: Vote) -> dict[str, Any]:
    """The judge's three votes: merge only when properties and fixtures pass
    and the quota passes or abstains. Properties and fixtures never abstain."""
    if quota not in ("pass", "fail", "abstain"):
        raise ValueError(f"quota vote must be pass, fail or abstain, got {quota!r}")
    votes = {
        "properties": "pass" if properties_pass else "fail",
        "fixtures": "pass" if fixtures_pass else "fail",
        "quota": quota,
    }
    return {"votes": votes, "merge": properties_pass and fixtures_pass and quota != "fail"}


# -- a run's retries, as the plugin reports them to the judge --------------------------

RETRY_OUTCOMES = ("passed", "failed", "quota")


class Session(NamedTuple):
    """One pytest session under the plugin, as it reported itself in
    ``EVIDENCE_RETRIES_FILE``: the labels it enforced, the quota it started with, the
    retries it used and the nondeterministic tests that retried (or wanted to)."""

    labels: str  # the labels' digest
    remaining: int
    retries_used: int
    tests: tuple[Retried, ...]


def retry_log_line(
    labels_digest: str, remaining_retries: int, retries_used: int, tests: Iterable[Retried]
) -> bytes:
    """One session's line (the plugin appends it; ``parse_retry_log`` reads it back)."""
    doc = {
        "labels": labels_digest,
        "remaining": remaining_retries,
        "retries_used": retries_used,
        "tests": [t._asdict() for t in tests],
    }
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=True).encode() + b"\n"


def parse_retry_log(data: bytes) -> list[Session]:
    """Every session of a run's retries file, strictly: ValueError naming the line
    (the judge's quota vote fails on a file it cannot read)."""
    sessions = []
    for number, raw in enumerate(data.splitlines(), start=1):
        try:
            sessions.append(_session(json.loads(raw, object_pairs_hook=no_duplicate_keys)))
        except (ValueError, TypeError, KeyError) as exc:
            raise ValueError(f"line {number}: {exc}") from None
    return sessions


def _session(doc: Any) -> Session:
    if not isinstance(doc, dict) or set(doc) != {"labels", "remaining", "retries_used", "tests"}:
        raise ValueError("not a session: expected labels, remaining, retries_used, tests")
    counts = (doc["remaining"], doc["retries_used"])
    if not isinstance(doc["labels"], str) or not all(_count(n) for n in counts):
        raise ValueError("labels is a digest, remaining and retries_used whole numbers")
    if not isinstance(doc["tests"], list):
        raise ValueError("tests is a list")
    tests = []
    for test in doc["tests"]:
        if not isinstance(test, dict) or set(test) != set(Retried._fields):
            raise ValueError(f"a test has the fields {', '.join(Retried._fields)}")
        found = Retried(**test)
        if (
            not isinstance(found.test_id, str)
            or not isinstance(found.label, str)
            or not _count(found.attempts)
            or found.outcome not in RETRY_OUTCOMES
        ):
            raise ValueError(f"test {found.test_id!r} is not a retried test")
        tests.append(found)
    return Session(doc["labels"], doc["remaining"], doc["retries_used"], tuple(tests))


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 10**9
