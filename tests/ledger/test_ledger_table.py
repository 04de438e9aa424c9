"""The freeze ledger's append-only check, table by table (ledger/entries.py): an old and a
new ledger in, the problems out; the server clock against a freeze's window; one entry
parsed strictly. No git runs here, fast enough to run on each mutation
(bench/mutation.py)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from helpers.rule_facts import CI

from git_evidence.core import records
from git_evidence.ledger import entries

# -- the ledger's append check ------------------------------------------------------------------

NOW = datetime(2026, 6, 1, 12, 0, 0, tzinfo=timezone.utc)
PIN = "sha256:" + "f" * 64


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def entry(**over: object) -> dict[str, object]:
    doc: dict[str, object] = {
        "test_id": "tests/test_app.py::test_app",
        "fingerprint": "f00d",
        "seed": 7,
        "pin": PIN,
        "reproduced": True,
        "runs": 10,
        "failures": 3,
        "writer": CI,
        "frozen_at": stamp(NOW - timedelta(hours=1)),
        "until": stamp(NOW + timedelta(hours=24)),
    }
    doc.update(over)
    return {k: v for k, v in doc.items() if v is not ...}


def raw(doc: dict[str, object]) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


def check(
    old: bytes | None, new: bytes | None, pins: Sequence[str] = (PIN,)
) -> list[tuple[str, int | None, str]]:
    return [
        tuple(p)  # type: ignore[misc]
        for p in entries.check_change(
            old, new, max_window_hours=72, now=NOW, writers={CI}, pin_exists=pins.__contains__
        )
    ]


GOOD = raw(entry()) + b"\n"
APPEND_TABLE: list[tuple[str, bytes | None, bytes | None, list[tuple[str, int | None, str]]]] = [
    ("nothing appended", GOOD, GOOD, []),
    ("a first entry", b"", GOOD, []),
    ("a first entry in a new file", None, GOOD, []),
    ("an entry after one", GOOD, GOOD + raw(entry(fingerprint="b")) + b"\n", []),
    ("deleted", GOOD, None, [("ledger-rewrite", None, "the ledger was deleted or renamed")]),
    (
        "edited",
        GOOD,
        GOOD.replace(b'"failures":3', b'"failures":2'),
        [("ledger-rewrite", 1, "existing lines were edited, removed, reordered or re-encoded")],
    ),
    (
        "second line edited",
        GOOD + GOOD,
        GOOD + GOOD.replace(b"f00d", b"f00e"),
        [("ledger-rewrite", 2, "existing lines were edited, removed, reordered or re-encoded")],
    ),
    (
        "truncated",
        GOOD + GOOD,
        GOOD,
        [("ledger-rewrite", 2, "existing lines were edited, removed, reordered or re-encoded")],
    ),
    (
        "emptied",
        GOOD,
        b"",
        [("ledger-rewrite", 1, "existing lines were edited, removed, reordered or re-encoded")],
    ),
    (
        "no final newline before",
        GOOD[:-1],
        GOOD + GOOD,
        [("ledger-rewrite", 1, "the last line had no newline, so appending changed it")],
    ),
    (
        "no final newline appended",
        b"",
        GOOD[:-1],
        [("ledger-entry", 1, "the last line has no newline")],
    ),
    (
        "no final newline on the third line",
        GOOD,
        GOOD + GOOD + GOOD[:-1],
        [("ledger-entry", 3, "the last line has no newline")],
    ),
    (
        "a byte order mark",
        b"",
        b"\xef\xbb\xbf" + GOOD,
        [("ledger-entry", 1, "byte order mark: the ledger is UTF-8 without BOM")],
    ),
    (
        "every bad line is named",
        b"",
        b"[]\n" + GOOD + b"[]\n",
        [("ledger-entry", 1, "not a JSON object"), ("ledger-entry", 3, "not a JSON object")],
    ),
    (
        "a byte order mark on an appended line",
        GOOD,
        GOOD + b"\xef\xbb\xbf" + GOOD,
        [("ledger-entry", 2, "byte order mark: the ledger is UTF-8 without BOM")],
    ),
    (
        "a blank line",
        GOOD,
        GOOD + b"\n",
        [("ledger-entry", 2, "not one JSON object: Expecting value: line 1 column 1 (char 0)")],
    ),
    (
        "a bad second appended line",
        GOOD,
        GOOD + GOOD + b"[]\n",
        [("ledger-entry", 3, "not a JSON object")],
    ),
    (
        "a writer who is not a ledger writer",
        b"",
        raw(entry(writer="agent-bot")) + b"\n",
        [("ledger-entry", 1, "writer 'agent-bot' is not a ledger writer")],
    ),
    ("an unknown pin", b"", GOOD, "pin"),  # type: ignore[list-item]
]


@pytest.mark.parametrize(
    ("old", "new", "expected"), [pytest.param(o, n, x, id=name) for name, o, n, x in APPEND_TABLE]
)
def test_append_table(old: bytes | None, new: bytes | None, expected: Any) -> None:
    if expected == "pin":
        assert check(old, new, pins=()) == [
            ("ledger-entry", 1, f"pin {PIN[:19]}… is not the digest of any lock")
        ]
        return
    assert check(old, new) == expected


CLOCK_TABLE = [
    # (case, frozen_at, until, problem or None)
    ("current", NOW - timedelta(hours=1), NOW + timedelta(hours=1), None),
    ("ends now", NOW - timedelta(hours=1), NOW, "the window ended"),
    ("ended", NOW - timedelta(hours=2), NOW - timedelta(hours=1), "the window ended"),
    ("ends a second from now", NOW - timedelta(hours=1), NOW + timedelta(seconds=1), None),
    # A CI clock up to 10 minutes ahead of the server's is tolerated.
    ("frozen at the skew's edge", NOW + timedelta(minutes=10), NOW + timedelta(hours=2), None),
    (
        "frozen past the skew",
        NOW + timedelta(minutes=10, seconds=1),
        NOW + timedelta(hours=2),
        "in the future",
    ),
]


@pytest.mark.parametrize(
    ("frozen_at", "until", "problem"), [pytest.param(f, u, p, id=c) for c, f, u, p in CLOCK_TABLE]
)
def test_the_server_clock_table(frozen_at: datetime, until: datetime, problem: str | None) -> None:
    got = check(b"", raw(entry(frozen_at=stamp(frozen_at), until=stamp(until))) + b"\n")
    if problem is None:
        assert got == []
    else:
        ((rule, line, message),) = got
        assert (rule, line) == ("ledger-entry", 1)
        assert problem in message


ENTRY_TABLE: list[tuple[str, bytes, str | None]] = [
    ("valid", raw(entry()), None),
    ("carriage return", raw(entry()) + b"\r", "carriage return: lines end with \\n only"),
    ("not UTF-8", b'{"test_id": "\xff"}', "not UTF-8 (byte 13)"),
    (
        "byte order mark",
        b"\xef\xbb\xbf" + raw(entry()),
        "byte order mark: the ledger is UTF-8 without BOM",
    ),
    ("not JSON", b"{", "not one JSON object: "),
    ("a list", b"[1]", "not a JSON object"),
    ("duplicate key", raw(entry())[:-1] + b',"seed":8}', "duplicate key 'seed'"),
    ("missing fields", raw(entry(seed=..., pin=...)), "missing pin, seed"),
    ("unknown field", raw(entry(extra=1)), "unknown field extra"),
    ("a bool for a number", raw(entry(runs=True)), "runs must be int"),
    ("a number for a bool", raw(entry(reproduced=1)), "reproduced must be bool"),
    ("a string seed", raw(entry(seed="s1")), None),
    ("a float seed", raw(entry(seed=1.5)), "seed must be int or str"),
    ("optional fields", raw(entry(reason="r", command="c", outputs=[])), None),
    ("a wrong optional field", raw(entry(reason=1)), "reason must be str"),
    ("an empty test id", raw(entry(test_id=" ")), "test_id is empty"),
    ("an empty writer", raw(entry(writer="")), "writer is empty"),
    ("an empty pin", raw(entry(pin="")), "pin is empty"),
    ("an empty fingerprint", raw(entry(fingerprint="")), "fingerprint is empty"),
    ("not reproduced", raw(entry(reproduced=False)), "reproduced must be true"),
    (
        "one run",
        raw(entry(runs=1, failures=1)),
        "failures must be between 1 and runs - 1 (runs 1, failures 1)",
    ),
    ("two runs, one failure", raw(entry(runs=2, failures=1)), None),
    ("no failure", raw(entry(failures=0)), "failures must be between 1 and runs - 1"),
    ("every run failed", raw(entry(failures=10)), "failures must be between 1 and runs - 1"),
    ("all but one failed", raw(entry(failures=9)), None),
    ("not a time", raw(entry(until="tomorrow")), "until 'tomorrow' is not an ISO 8601 time"),
    ("no zone", raw(entry(until="2026-06-02T00:00:00")), "is not in UTC (end it with Z)"),
    ("another zone", raw(entry(until="2026-06-02T00:00:00+01:00")), "is not in UTC"),
    ("an explicit UTC offset", raw(entry(until="2026-06-02T00:00:00+00:00")), None),
    (
        "until equals frozen_at",
        raw(entry(until=stamp(NOW - timedelta(hours=1)))),
        "until is not after frozen_at",
    ),
    (
        "until before frozen_at",
        raw(entry(until=stamp(NOW - timedelta(hours=2)))),
        "until is not after frozen_at",
    ),
    ("a window of exactly the maximum", raw(entry(until=stamp(NOW + timedelta(hours=71)))), None),
    (
        "a window a second too long",
        raw(entry(until=stamp(NOW + timedelta(hours=71, seconds=1)))),
        "the window is 72.0 h, more than max_window_hours = 72",
    ),
    ("a pin without its prefix", raw(entry(pin="f" * 71)), "is not a pin digest"),
    ("a short pin", raw(entry(pin=PIN[:-1])), "is not a pin digest"),
    ("a long pin", raw(entry(pin=PIN + "f")), "is not a pin digest"),
    (
        "a lone surrogate",
        raw(entry(reason="\ud800")).replace(b"\\ud800", b"\\ud800"),
        "holds a lone surrogate",
    ),
    ("a NUL in a key", raw({**entry(), "a\u0000": 1}), "holds U+0000"),
    ("a NUL deep in a list", raw(entry(outputs=[[0, "x\u0000"]])), "holds U+0000"),
    ("a NUL in the first field", raw(entry(test_id="a\u0000")), "holds U+0000"),
]


@pytest.mark.parametrize(
    ("line", "problem"), [pytest.param(r, p, id=name) for name, r, p in ENTRY_TABLE]
)
def test_entry_table(line: bytes, problem: str | None) -> None:
    if problem is None:
        freeze = entries.parse_entry(line, 4, 72)
        assert freeze.line == 4
        return
    with pytest.raises(entries.EntryError) as caught:
        entries.parse_entry(line, 4, 72)
    assert problem in str(caught.value)


def test_a_parsed_entry_keeps_every_field() -> None:
    freeze = entries.parse_entry(raw(entry(reason="timing")), 2, 72)
    assert freeze == entries.Freeze(
        "tests/test_app.py::test_app",
        "f00d",
        7,
        PIN,
        10,
        3,
        CI,
        NOW - timedelta(hours=1),
        NOW + timedelta(hours=24),
        "timing",
        2,
    )
    assert freeze.as_json()["until"] == stamp(NOW + timedelta(hours=24))
    assert freeze.active(NOW)
    assert freeze.active(NOW - timedelta(hours=1))  # from frozen_at, inclusive
    assert not freeze.active(NOW + timedelta(hours=24))  # to until, exclusive
    assert not freeze.active(NOW - timedelta(hours=2))
    assert entries.parse_entry(raw(entry()), 1, 72).reason == ""


def test_parse_ledger_reads_every_line_and_names_the_bad_ones() -> None:
    data = GOOD + b"junk\n" + GOOD
    freezes, problems = entries.parse_ledger(data, 72)
    assert [f.line for f in freezes] == [1, 3]
    assert [(p.rule, p.line) for p in problems] == [("ledger-entry", 2)]
    assert entries.parse_ledger(b"", 72) == ([], [])
    _, unterminated = entries.parse_ledger(GOOD + b"junk", 72)
    assert [p.line for p in unterminated] == [2]
    _, blank = entries.parse_ledger(GOOD + b"\n", 72)
    assert [p.line for p in blank] == [2]


def test_iso_and_the_first_difference() -> None:
    assert records.iso_utc(datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))) == (
        "2026-01-02T01:04:05Z"
    )
    assert entries._first_difference(b"a\nb\n", b"a\nc\n") == 2
    assert entries._first_difference(b"a\nb\n", b"a\n") == 2
    assert entries._first_difference(b"a\n", b"b\n") == 1
    assert entries._first_difference(b"a\nb\n", b"a\nb") == 2  # the last newline dropped
    assert entries._first_difference(b"a\n", b"a") == 1
