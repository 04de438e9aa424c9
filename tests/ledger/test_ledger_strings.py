"""Ledger strings: a lone surrogate or U+0000 anywhere in an entry is
a `ledger-entry` error, a window must be positive, and no reader crashes on a line that
is already in a ledger."""

from __future__ import annotations

import json
import os
from datetime import datetime, timedelta, timezone

import pytest
from helpers.ledgers import CI, append, entry, stamp
from helpers.locks import pin_main
from helpers.pushes import refused, remote
from helpers.repos import Work, evidence

from git_evidence.ledger.entries import EntryError, check_change, parse_entry

PIN = "sha256:" + "a" * 64
NOW = datetime.now(timezone.utc)


def raw_line(doc: dict[str, object], **escaped: str) -> bytes:
    """One ledger line; ``escaped`` puts JSON escape text (``\\ud800``) verbatim in
    place of a value or a key, as a hand-written line would."""
    text = json.dumps(doc, separators=(",", ":"))
    for marker, escape in escaped.items():
        text = text.replace(marker, escape)
    return text.encode()


# The markers are replaced by escape text after json.dumps: json.dumps would escape
# the backslash of a real "\ud800" string and defeat the point.
HOSTILE: dict[str, tuple[dict[str, object], dict[str, str]]] = {
    "surrogate-in-test-id": ({"test_id": "x@@"}, {"@@": "\\ud800"}),
    "low-surrogate-in-fingerprint": ({"fingerprint": "@@f00d"}, {"@@": "\\udfff"}),
    "surrogate-in-a-key": ({"reason@@": "why"}, {"@@": "\\udc80"}),
    "nul-in-writer": ({"writer": "ci@@bot"}, {"@@": "\\u0000"}),
    "nul-in-a-key": ({"command@@": "x"}, {"@@": "\\u0000"}),
    "surrogate-deep-in-outputs": ({"outputs": [[1, "ok"], [0, "@@"]]}, {"@@": "\\ud83d"}),
    "surrogate-in-a-string-seed": ({"seed": "7@@"}, {"@@": "\\ud800"}),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_lone_surrogate_or_nul_anywhere_is_refused(case: str) -> None:
    over, escapes = HOSTILE[case]
    raw = raw_line(entry(PIN, **over), **escapes)
    assert b"\\u" in raw
    with pytest.raises(EntryError, match=r"lone surrogate|U\+0000") as caught:
        parse_entry(raw, 1, 72)
    str(caught.value).encode("ascii")  # the message itself prints anywhere


def test_escaped_surrogate_pair_is_a_valid_character() -> None:
    raw = raw_line(entry(PIN, reason="flaky @@"), **{"@@": "\\ud83d\\ude00"})
    assert parse_entry(raw, 1, 72).reason == "flaky \U0001f600"


def test_surrogate_line_is_a_ledger_entry_problem_at_push() -> None:
    raw = raw_line(entry(PIN, test_id="x@@"), **{"@@": "\\ud800"}) + b"\n"
    problems = check_change(
        b"", raw, max_window_hours=72, now=NOW, writers={CI}, pin_exists=lambda _: True
    )
    assert [(p.rule, p.line) for p in problems] == [("ledger-entry", 1)]
    assert "lone surrogate" in problems[0].message


def test_window_that_ends_when_it_starts_is_refused() -> None:
    at = stamp(NOW)
    with pytest.raises(EntryError, match="until is not after frozen_at"):
        parse_entry(raw_line(entry(PIN, frozen_at=at, until=at)), 1, 72)


def test_window_that_ends_when_it_starts_in_another_spelling_is_refused() -> None:
    at = NOW.replace(microsecond=0)
    doc = entry(PIN, frozen_at=stamp(at), until=at.isoformat())
    with pytest.raises(EntryError, match="until is not after frozen_at"):
        parse_entry(raw_line(doc), 1, 72)


# -- end to end: the push refuses, and no reader crashes on what is already there -----


@pytest.fixture
def ci(work: Work) -> tuple[Work, str]:
    return work, pin_main(work)


def test_ledger_line_with_an_escaped_lone_surrogate_is_refused_at_push(
    ci: tuple[Work, str],
) -> None:
    work, pin = ci
    append(work, raw_line(entry(pin, test_id="x@@"), **{"@@": "\\ud800"}) + b"\n")
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")
    assert "lone surrogate" in remote(result)


def test_ledger_line_with_nul_is_refused_at_push(ci: tuple[Work, str]) -> None:
    work, pin = ci
    append(work, raw_line(entry(pin, test_id="x@@"), **{"@@": "\\u0000"}) + b"\n")
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")
    assert "U+0000" in remote(result)


def test_ledger_entry_with_an_empty_window_is_refused_at_push(ci: tuple[Work, str]) -> None:
    work, pin = ci
    at = stamp(NOW - timedelta(minutes=1))
    append(work, json.dumps(entry(pin, frozen_at=at, until=at)) + "\n")
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")
    assert "until is not after frozen_at" in remote(result)


@pytest.fixture
def hostile_ledger(ci: tuple[Work, str]) -> Work:
    """A clone whose committed ledger already holds a good line and a line with an
    escaped lone surrogate (from before this rule, or pushed around the gate)."""
    work, pin = ci
    good = json.dumps(entry(pin, test_id="tests/test_app.py::test_é"), ensure_ascii=False)
    bad = raw_line(entry(pin, test_id="x@@"), **{"@@": "\\ud800"}).decode()
    append(work, good + "\n" + bad + "\n")
    return work


def _no_crash(result: object) -> None:
    out = getattr(result, "stdout", "") + getattr(result, "stderr", "")
    assert "Traceback" not in out
    assert "internal error" not in out
    assert getattr(result, "returncode", None) in (0, 1)


def test_freeze_list_reports_a_hostile_line_instead_of_crashing(hostile_ledger: Work) -> None:
    result = evidence(hostile_ledger.path, "freeze", "list")
    _no_crash(result)
    assert result.returncode == 1
    assert "ledger-entry: line 2: the string 'x\\ud800' holds a lone surrogate" in result.stdout
    assert "tests/test_app.py::test_é" in result.stdout
    as_json = evidence(hostile_ledger.path, "freeze", "list", "--format", "json")
    _no_crash(as_json)
    assert len(json.loads(as_json.stdout)["freezes"]) == 1


def test_freeze_status_reads_past_a_hostile_line(hostile_ledger: Work) -> None:
    result = evidence(hostile_ledger.path, "freeze", "status", "tests/test_app.py::test_é")
    _no_crash(result)
    assert "frozen until" in result.stdout


@pytest.mark.parametrize("command", [("check",), ("verify",)])
def test_check_and_verify_skip_a_hostile_line_with_a_warning(
    hostile_ledger: Work, command: tuple[str, ...]
) -> None:
    result = evidence(hostile_ledger.path, *command)
    _no_crash(result)
    # Notes wrap to fit under `remote:`; the words are what counts.
    said = " ".join((result.stdout + result.stderr).split())
    assert "skipped 1 line(s) that are no valid freeze" in said


def test_readers_on_an_ascii_terminal_escape_what_they_cannot_print(
    hostile_ledger: Work,
) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    result = evidence(hostile_ledger.path, "freeze", "list", env=env)
    _no_crash(result)
    assert "test_\\xe9" in result.stdout
