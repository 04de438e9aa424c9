"""What a pytest session under the plugin says of its retries, for those who read it
after the run: the line each session appends to ``EVIDENCE_RETRIES_FILE`` (the judge's
scorecard reads it back), and the JUnit ``<property>`` children of the tests it retried
(CI's ``quota spend --from-junit`` reads them). Pure and without pytest: the writer and
its readers share one format here, and importing it loads neither the rule table nor
the judge."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, NamedTuple

from git_evidence.core.records import no_duplicate_keys


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
