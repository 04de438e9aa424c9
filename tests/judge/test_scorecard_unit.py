"""The scorecard's pure parts: the retries file the plugin writes and the
judge reads, the three votes, and what a verdict record with a scorecard must say."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from git_evidence.core.errors import EvidenceError
from git_evidence.core.records import canonical_json
from git_evidence.judge import record as verdict_record
from git_evidence.judge import scorecard
from git_evidence.plugin import retries
from git_evidence.policy.labels import LabelsError
from git_evidence.sandbox.runner import Run

LABELS = b"t.py::test_net\tnondeterministic\nt.py::test_ok\tinvariant\n"
GRANT = b'{"kind":"grant","amount":2,"writer":"alice","at":"2026-01-01T00:00:00Z","reason":"net"}\n'


def sealed(quota_data: bytes | None = GRANT) -> scorecard.Sealed:
    return scorecard.read_sealed(
        LABELS, "base:tests/evidence-labels.tsv", quota_data, "base:tests/retry-quota.jsonl", 2
    )


def session(used: int, *tests: retries.Retried, labels: str | None = None) -> bytes:
    digest = labels or sealed().labels.digest
    return retries.retry_log_line(digest, 2, used, tests)


def run_with(log: bytes | None, number: int = 1) -> Run:
    return Run(0, number, 0, "sha256:0", 0.1, retry_log=log)


def judged(*reported: scorecard.Reported, **changes: Any) -> scorecard.Judged:
    fields: dict[str, Any] = {
        "klass": "accept",
        "properties": 1,
        "runs": len(reported),
        "failures": (),
        "frozen": (),
        "breach": (),
        "checked": ("before", "after"),
        "pin": "sha256:" + "a" * 64,
        "reported": reported,
    }
    return scorecard.Judged(**{**fields, **changes})


NET = retries.Retried("t.py::test_net", "nondeterministic", 2, "passed")


# -- the retries file -------------------------------------------------------------------

retried = st.builds(
    retries.Retried,
    st.text(min_size=1),
    st.sampled_from(["nondeterministic"]),
    st.integers(1, 11),
    st.sampled_from(retries.RETRY_OUTCOMES),
)


@given(
    st.lists(
        st.tuples(st.text(), st.integers(0, 10**6), st.integers(0, 10**6), st.lists(retried)),
        max_size=4,
    )
)
def test_any_sessions_round_trip_through_the_retries_file(
    sessions: list[tuple[str, int, int, list[retries.Retried]]],
) -> None:
    data = b"".join(retries.retry_log_line(d, r, u, t) for d, r, u, t in sessions)
    assert retries.parse_retry_log(data) == [
        retries.Session(d, r, u, tuple(t)) for d, r, u, t in sessions
    ]


@pytest.mark.parametrize(
    "data",
    [
        b"not json\n",
        b"[]\n",
        b'{"labels":"x","remaining":1,"retries_used":-1,"tests":[]}\n',
        b'{"labels":"x","remaining":1,"retries_used":true,"tests":[]}\n',
        b'{"labels":"x","remaining":1,"retries_used":0,"tests":[],"more":1}\n',
        b'{"labels":"x","remaining":1,"retries_used":0,"tests":[{"test_id":"a"}]}\n',
        b'{"labels":"x","remaining":1,"retries_used":0,"tests":[{"test_id":"a","label":"n",'
        b'"attempts":2,"outcome":"maybe"}]}\n',
        b'{"labels":"x","labels":"y","remaining":1,"retries_used":0,"tests":[]}\n',
    ],
)
def test_a_retries_file_that_is_not_sessions_names_its_line(data: bytes) -> None:
    good = retries.retry_log_line("sha256:x", 1, 0, ())
    with pytest.raises(ValueError, match=r"^line 2: "):
        retries.parse_retry_log(good + data)


# -- the votes --------------------------------------------------------------------------


def test_the_runs_of_a_judgement_draw_on_the_quota_together() -> None:
    runs = [
        scorecard.reported(f"suite seed 0 run {n}", True, run_with(session(1, NET), n))
        for n in (1, 2, 3)
    ]
    card = scorecard.build(sealed(), judged(*runs))  # 3 used, 2 remained
    assert card["votes"]["quota"]["vote"] == "fail" and card["result"] == "reject"
    assert card["votes"]["quota"]["retries_used"] == 3
    card = scorecard.build(sealed(), judged(*runs[:2]))
    assert card["votes"]["quota"]["vote"] == "pass" and card["result"] == "merge"


def test_a_retry_refused_for_want_of_quota_fails_the_quota_vote() -> None:
    refused = retries.Retried("t.py::test_net", "nondeterministic", 1, "quota")
    run = scorecard.reported("suite seed 0 run 1", True, run_with(session(0, refused)))
    card = scorecard.build(sealed(), judged(run))
    assert card["votes"]["quota"]["vote"] == "fail"
    assert (
        "suite seed 0 run 1: t.py::test_net: 1 attempt(s), retry refused"
        in (card["votes"]["quota"]["evidence"])
    )


def test_a_must_fail_runs_retries_do_not_draw_on_the_quota() -> None:
    failing = retries.Retried("t.py::test_net", "nondeterministic", 3, "failed")
    run = scorecard.reported(
        "suite must-fail bad.json seed 0", False, run_with(session(2, failing))
    )
    card = scorecard.build(sealed(quota_data=None), judged(run))
    assert card["votes"]["quota"]["vote"] == "abstain" and card["result"] == "merge"


def test_an_unreadable_retries_file_fails_the_quota_vote() -> None:
    run = scorecard.reported("suite seed 0 run 1", True, run_with(b"garbage\n"))
    card = scorecard.build(sealed(), judged(run))
    assert card["votes"]["quota"]["vote"] == "fail"
    assert card["votes"]["quota"]["evidence"][0].startswith(
        "suite seed 0 run 1: its retries file does not read: line 1:"
    )


def test_a_session_under_other_labels_fails_the_properties_vote() -> None:
    foreign = session(0, labels="sha256:" + "f" * 64)
    run = scorecard.reported("suite seed 0 run 1", True, run_with(foreign))
    card = scorecard.build(sealed(), judged(run))
    assert card["votes"]["properties"]["vote"] == "fail" and card["result"] == "reject"
    assert card["votes"]["properties"]["evidence"] == [
        f"suite seed 0 run 1: ran under labels sha256:{'f' * 64}, not {sealed().labels.digest}"
    ]


def test_nothing_ran_fails_properties_and_no_workspace_fails_fixtures() -> None:
    card = scorecard.build(
        sealed(), judged(klass="patch_invalid", properties=0, runs=0, checked=())
    )
    assert {k: v["vote"] for k, v in card["votes"].items()} == {
        "properties": "fail",
        "fixtures": "fail",
        "quota": "abstain",
    }


def test_a_quota_at_the_base_that_does_not_parse_names_its_line() -> None:
    with pytest.raises(EvidenceError, match=r"^base:tests/retry-quota.jsonl:2: "):
        sealed(GRANT + b"{}\n")
    with pytest.raises(LabelsError, match=r"^x:1: unknown kind"):
        scorecard.read_sealed(b"a\tflaky\n", "x", None, "q", 2)


# -- in a verdict record ----------------------------------------------------------------


def record(card: dict[str, Any], exit_code: int, result: str) -> bytes:
    doc = {
        "schema": verdict_record.SCHEMA,
        "kind": verdict_record.KIND,
        "class": "accept",
        "exit": exit_code,
        "result": result,
        "reason": "every run passed",
        "base": "b" * 40,
        "candidate": "c" * 40,
        "freeze_allowed": False,
        "started_at": "2026-01-01T00:00:00Z",
        "scorecard": card,
    }
    return canonical_json(doc)


def rejecting() -> dict[str, Any]:
    run = scorecard.reported("suite seed 0 run 1", True, run_with(session(3, NET)))
    card = scorecard.build(sealed(), judged(run))
    assert card["result"] == "reject"
    return card


def test_a_verdict_whose_scorecard_rejects_must_exit_1() -> None:
    assert verdict_record.parse(record(rejecting(), 1, "FAILED"))["exit"] == 1
    with pytest.raises(verdict_record.VerdictInvalid, match="scorecard that says reject"):
        verdict_record.parse(record(rejecting(), 0, "PASSED"))


def test_a_scorecard_whose_result_does_not_follow_from_its_votes_is_refused() -> None:
    card = {**rejecting(), "result": "merge"}
    with pytest.raises(verdict_record.VerdictInvalid, match="does not follow from its votes"):
        verdict_record.parse(record(card, 0, "PASSED"))
    card = rejecting()
    card["votes"]["properties"]["vote"] = "abstain"  # properties never abstain
    with pytest.raises(verdict_record.VerdictInvalid, match="properties vote is not one of"):
        verdict_record.parse(record(card, 1, "FAILED"))
