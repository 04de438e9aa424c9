"""The judge's result is a typed, immutable ``Verdict`` whose ``as_json()`` is the
record exactly as the judge wrote it when its result was a plain dict: the same keys,
in the same order, with the same values (``verdict_records.jsonl``, written then from
``verdict_cases.py``'s fixed inputs); a real judgement's record keeps its key order
and is the file ``--out`` writes, byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.judge_repos import FAST, Repo
from helpers.verdict_cases import CASES, MERGED_CASES, merged_parts

from git_evidence.core.records import canonical_json
from git_evidence.judge import record as verdict_record
from git_evidence.judge.judgement import judge
from git_evidence.judge.request import Request
from git_evidence.judge.verdict import Verdict
from git_evidence.plumbing.git import Git

GOLDEN = Path(__file__).parent / "data" / "verdict_records.jsonl"
WRITTEN = {json.loads(line)[0]: line for line in GOLDEN.read_text(encoding="utf-8").splitlines()}
MERGED = ("merged", "merged-frozen-scored")
# The keys of a real judgement's record, in order, as the judge wrote them before its
# result was typed (a pinned base, a property run: every part the record can have but
# the shard's and the scorecard's).
REAL_KEYS = [
    *("schema", "kind", "class", "exit", "result", "reason", "details", "next"),
    *("base", "candidate", "policy", "started_at", "runner", "tool", "pin"),
    *("candidate_tree", "sandbox", "pythonpath", "import_origins"),
    *("evidence", "drift", "properties", "counterexamples", "failing", "misses", "flaky"),
    *("freeze_allowed", "freeze_line", "configuration"),
    *("passed_tests", "failed_tests", "warned_tests", "duration_s", "dropped"),
]


def test_the_cases_are_the_records_that_were_written() -> None:
    assert sorted(WRITTEN) == sorted(CASES)


@pytest.mark.parametrize("name", [n for n in CASES if n not in MERGED])
def test_a_verdicts_record_is_byte_identical_to_the_dict_it_replaced(name: str) -> None:
    verdict = CASES[name]()
    assert isinstance(verdict, Verdict)
    assert json.dumps([name, verdict.as_json()]) == WRITTEN[name]  # key order included


@pytest.mark.parametrize("name", MERGED)
def test_a_merged_verdict_publishes_the_same_bytes_in_the_records_order(name: str) -> None:
    """The merge's dict followed its first part's file (sorted keys); its published
    bytes are canonical, so they are unchanged (but for ``dropped``, the parts' counts
    added up, where the first part's alone stood), and its keys now read in the order
    of every other record, the parts last."""
    verdict = CASES[name]()
    assert isinstance(verdict, Verdict)
    doc = verdict.as_json()
    parts = [part for _, part in merged_parts(*MERGED_CASES[name])]
    assert doc["dropped"] == {
        key: sum(part["dropped"][key] for part in parts) for key in parts[0]["dropped"]
    }
    before = json.loads(WRITTEN[name])[1]
    assert before["dropped"] == parts[0]["dropped"]  # what the earlier merge kept
    assert canonical_json({**doc, "dropped": before["dropped"]}) == canonical_json(before)
    assert (
        list(doc)
        == [k for k in REAL_KEYS if k in doc]
        + ["scorecard", "shards"][0 if "scorecard" in doc else 1 :]
    )


def test_the_typed_fields_are_the_records() -> None:
    for name, make in CASES.items():
        verdict, doc = make(), make().as_json()
        typed = (verdict.klass, verdict.exit, verdict.result, verdict.reason, verdict.next)
        assert typed == (doc["class"], doc["exit"], doc["result"], doc["reason"], doc["next"])
        assert list(verdict.details) == doc["details"], name
        assert verdict.facts.base == doc["base"] and verdict.duration_s == doc["duration_s"]
        assert (verdict.scorecard is None) == ("scorecard" not in doc), name
        verdict_record.parse(canonical_json(doc))  # a record the server accepts


def test_a_verdict_cannot_be_changed_through_its_record_or_its_fields() -> None:
    verdict = CASES["accept"]()
    doc = verdict.as_json()
    doc["exit"], doc["details"] = 9, ["edited"]
    doc["properties"][0]["id"] = "edited"
    assert verdict.as_json()["exit"] == 0 and verdict.as_json()["details"] == []
    assert verdict.as_json()["properties"][0]["id"] == "suite"
    with pytest.raises(AttributeError):
        verdict.exit = 0  # type: ignore[misc]


def test_a_scorecard_that_rejects_a_passing_class_is_in_the_typed_exit() -> None:
    verdict = CASES["quota-reject"]()
    assert (verdict.klass, verdict.exit, verdict.result) == ("accept", 1, "FAILED")
    assert verdict.next.startswith("do not merge: the scorecard rejects it (quota fails).")


def test_a_real_judgement_keeps_the_records_key_order_and_publishes_it(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo.path)
    for name, value in FAST.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "verdict.json"
    verdict = judge(Git(), Request(properties=("suite",), out=str(out)))
    doc = verdict.as_json()
    assert list(doc) == REAL_KEYS
    assert out.read_bytes() == canonical_json(doc)
    assert (verdict.klass, verdict.exit) == ("accept", 0)
    parts = []
    for index in (1, 2):
        part = tmp_path / f"part{index}.json"
        judge(Git(), Request(properties=("suite",), shard=(index, 2), out=str(part)))
        parts.append(str(part))
    merged_out = tmp_path / "merged.json"
    merged = judge(Git(), Request(merge=tuple(parts), out=str(merged_out)))
    assert merged_out.read_bytes() == canonical_json(merged.as_json())
    assert list(merged.as_json()) == [*REAL_KEYS, "shards"]
    assert merged.shards is not None and merged.shards["count"] == 2
