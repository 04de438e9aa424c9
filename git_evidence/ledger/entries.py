"""The freeze ledger: JSON Lines, append-only, the only record allowed to
excuse a flaky test. Pure: bytes in, freezes and problems out; the caller supplies the
clock and the pin lookup."""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from git_evidence.core.facts import LedgerProblem
from git_evidence.core.records import DuplicateKey, iso_utc, no_duplicate_keys

BOM = b"\xef\xbb\xbf"
REQUIRED: dict[str, tuple[type, ...]] = {
    "test_id": (str,),
    "fingerprint": (str,),
    "seed": (int, str),
    "pin": (str,),
    "reproduced": (bool,),
    "runs": (int,),
    "failures": (int,),
    "writer": (str,),
    "frozen_at": (str,),
    "until": (str,),
}
OPTIONAL: dict[str, tuple[type, ...]] = {"reason": (str,), "command": (str,), "outputs": (list,)}
CLOCK_SKEW = timedelta(minutes=10)


class Freeze(NamedTuple):
    test_id: str
    fingerprint: str
    seed: int | str
    pin: str
    runs: int
    failures: int
    writer: str
    frozen_at: datetime
    until: datetime
    reason: str
    line: int

    def active(self, now: datetime) -> bool:
        return self.frozen_at <= now < self.until

    def as_json(self) -> dict[str, Any]:
        return {
            "test_id": self.test_id,
            "fingerprint": self.fingerprint,
            "seed": self.seed,
            "pin": self.pin,
            "runs": self.runs,
            "failures": self.failures,
            "writer": self.writer,
            "frozen_at": iso_utc(self.frozen_at),
            "until": iso_utc(self.until),
            "reason": self.reason,
            "line": self.line,
        }


class EntryError(ValueError):
    pass


def parse_time(value: str, field: str) -> datetime:
    text = value[:-1] + "+00:00" if value.endswith("Z") else value
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise EntryError(f"{field} {value!r} is not an ISO 8601 time") from None
    if moment.tzinfo is None or moment.utcoffset() != timedelta(0):
        raise EntryError(f"{field} {value!r} is not in UTC (end it with Z)")
    return moment


def unsafe_string(doc: Any) -> str | None:
    """What is wrong with the first string (a key or a value, at any depth) that holds
    a lone surrogate (JSON lets ``"\\ud800"`` through; no UTF-8 text can carry it, so
    printing or encoding it fails) or U+0000; None when every string is clean."""
    stack = [doc]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            texts = list(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
            continue
        elif isinstance(item, str):
            texts = [item]
        else:
            continue
        for text in texts:
            if "\0" in text:
                return f"the string {ascii(text)[:80]} holds U+0000"
            if not _encodable(text):
                return f"the string {ascii(text)[:80]} holds a lone surrogate"
    return None


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def json_object(raw: bytes, what: str) -> dict[str, Any]:
    """One line of an append-only JSON Lines file (the freeze ledger, the retry quota)
    as its object, strictly: ``\\n`` endings, UTF-8 without BOM, one object with no key
    given twice; anything else is an EntryError saying what (``what`` names the file in
    the BOM message: "the ledger is")."""
    if b"\r" in raw:
        raise EntryError("carriage return: lines end with \\n only")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EntryError(f"not UTF-8 (byte {exc.start})") from None
    if text.startswith("\ufeff"):
        raise EntryError(f"byte order mark: {what} UTF-8 without BOM")
    try:
        doc = json.loads(text, object_pairs_hook=no_duplicate_keys)
    except DuplicateKey as exc:
        raise EntryError(str(exc)) from None
    except ValueError as exc:
        raise EntryError(f"not one JSON object: {exc}") from None
    if not isinstance(doc, dict):
        raise EntryError("not a JSON object")
    return doc


def parse_entry(raw: bytes, line: int, max_window_hours: int) -> Freeze:
    """One ledger line, strictly: any problem is an EntryError saying which field."""
    doc = json_object(raw, "the ledger is")
    bad = unsafe_string(doc)
    if bad is not None:
        raise EntryError(bad)
    missing = sorted(set(REQUIRED) - set(doc))
    if missing:
        raise EntryError(f"missing {', '.join(missing)}")
    unknown = sorted(set(doc) - set(REQUIRED) - set(OPTIONAL))
    if unknown:
        raise EntryError(f"unknown field {', '.join(unknown)}")
    for key, types in {**REQUIRED, **OPTIONAL}.items():
        if key in doc and (
            not isinstance(doc[key], types) or (bool not in types and isinstance(doc[key], bool))
        ):
            raise EntryError(f"{key} must be {' or '.join(t.__name__ for t in types)}")
    for key in ("test_id", "fingerprint", "writer", "pin"):
        if not doc[key].strip():
            raise EntryError(f"{key} is empty")
    if doc["reproduced"] is not True:
        raise EntryError("reproduced must be true: only a flake CI reproduced is frozen")
    runs, failures = doc["runs"], doc["failures"]
    if runs < 2 or not 1 <= failures <= runs - 1:
        raise EntryError(
            f"failures must be between 1 and runs - 1 (runs {runs}, failures "
            f"{failures}): a flake both passed and failed"
        )
    frozen_at = parse_time(doc["frozen_at"], "frozen_at")
    until = parse_time(doc["until"], "until")
    if until <= frozen_at:
        raise EntryError("until is not after frozen_at")
    if until - frozen_at > timedelta(hours=max_window_hours):
        raise EntryError(
            f"the window is {(until - frozen_at) / timedelta(hours=1):.1f} h, "
            f"more than max_window_hours = {max_window_hours}"
        )
    if not doc["pin"].startswith("sha256:") or len(doc["pin"]) != 71:
        raise EntryError(f"pin {doc['pin']!r} is not a pin digest (sha256:<64 hex>)")
    return Freeze(
        doc["test_id"],
        doc["fingerprint"],
        doc["seed"],
        doc["pin"],
        runs,
        failures,
        doc["writer"],
        frozen_at,
        until,
        doc.get("reason", ""),
        line,
    )


def parse_ledger(data: bytes, max_window_hours: int) -> tuple[list[Freeze], list[LedgerProblem]]:
    """Every entry of a ledger, and the lines that do not parse."""
    freezes: list[Freeze] = []
    problems: list[LedgerProblem] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw and number > data.count(b"\n"):
            break
        try:
            freezes.append(parse_entry(raw, number, max_window_hours))
        except EntryError as exc:
            problems.append(LedgerProblem("ledger-entry", number, str(exc)))
    return freezes, problems


def check_change(
    old: bytes | None,
    new: bytes | None,
    *,
    max_window_hours: int,
    now: datetime,
    writers: Collection[str],
    pin_exists: Callable[[str], bool],
) -> list[LedgerProblem]:
    """One change of the ledger: old bytes must stay an exact prefix of the new ones,
    and every appended line must be a valid, current freeze by a ledger writer.

    Only the appended bytes are parsed: a 100,000-line ledger costs one prefix
    comparison and the new lines."""
    prefix = appended_to(old, new, "the ledger")
    if isinstance(prefix, LedgerProblem):
        return [prefix]
    appended, first = prefix
    if not appended:
        return []
    if not old and appended.startswith(BOM):
        return [
            LedgerProblem("ledger-entry", 1, "byte order mark: the ledger is UTF-8 without BOM")
        ]
    if not appended.endswith(b"\n"):
        return [
            LedgerProblem(
                "ledger-entry", first + appended.count(b"\n"), "the last line has no newline"
            )
        ]
    problems = []
    for offset, raw in enumerate(appended[:-1].split(b"\n")):
        number = first + offset
        try:
            entry = parse_entry(raw, number, max_window_hours)
        except EntryError as exc:
            problems.append(LedgerProblem("ledger-entry", number, str(exc)))
            continue
        problems += [
            LedgerProblem("ledger-entry", number, why)
            for why in _entry_in_context(entry, now, writers, pin_exists)
        ]
    return problems


class Appended(NamedTuple):
    data: bytes  # the bytes after the old ones (empty: nothing was appended)
    first: int  # the number of the first appended line


def appended_to(old: bytes | None, new: bytes | None, what: str) -> Appended | LedgerProblem:
    """The prefix rule of an append-only file (the freeze ledger, the retry quota):
    the old bytes stay an exact prefix of the new ones, and the old last line ended
    with a newline (else appending changed it). The appended bytes, or the
    ``ledger-rewrite`` problem."""
    if new is None:
        return LedgerProblem("ledger-rewrite", None, f"{what} was deleted or renamed")
    old = old or b""
    if not new.startswith(old):
        return LedgerProblem(
            "ledger-rewrite",
            _first_difference(old, new),
            "existing lines were edited, removed, reordered or re-encoded",
        )
    if old and not old.endswith(b"\n"):
        return LedgerProblem(
            "ledger-rewrite",
            old.count(b"\n") + 1,
            "the last line had no newline, so appending changed it",
        )
    return Appended(new[len(old) :], old.count(b"\n") + 1)


def _entry_in_context(
    entry: Freeze, now: datetime, writers: Collection[str], pin_exists: Callable[[str], bool]
) -> list[str]:
    why = []
    if entry.writer not in writers:
        why.append(f"writer {entry.writer!r} is not a ledger writer")
    if entry.until <= now:
        why.append(
            f"the window ended {iso_utc(entry.until)} by the server's clock: an expired "
            "freeze is never added (reproduce the flake again)"
        )
    if entry.frozen_at > now + CLOCK_SKEW:
        why.append(f"frozen_at {iso_utc(entry.frozen_at)} is in the future by the server's clock")
    if not pin_exists(entry.pin):
        why.append(f"pin {entry.pin[:19]}… is not the digest of any lock")
    return why


def _first_difference(old: bytes, new: bytes) -> int:
    for number, (a, b) in enumerate(zip(old.split(b"\n"), new.split(b"\n"), strict=False), start=1):
        if a != b:
            return number
    return min(old.count(b"\n"), new.count(b"\n")) + 1
