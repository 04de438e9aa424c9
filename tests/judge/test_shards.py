"""``judge --shard I/N`` and ``judge --merge PART…``: the split is deterministic, the
merge refuses parts that are not one judgement's (by name), and the merged record's
class and runs are those of the unsharded judgement of the same runs: as a property
over random property × seed × outcome sets (the records made by the judge's own
record builder), and end to end with real judgements."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from helpers.examples import examples
from helpers.repos import Work, clone_of, evidence, make_remote
from hypothesis import given, settings
from hypothesis import strategies as st

from git_evidence.core.errors import UsageError
from git_evidence.core.oids import Oid
from git_evidence.core.records import canonical_json
from git_evidence.judge import record as verdict_record
from git_evidence.judge import shards
from git_evidence.judge.classes import PROPERTY_FAIL, Signals, classify
from git_evidence.judge.signals import FixtureRun, PropertyRuns, signals_from_runs
from git_evidence.judge.text import explain
from git_evidence.ledger.entries import Freeze
from git_evidence.ledger.fingerprint import exit_fingerprint
from git_evidence.policy.properties import JudgeProperty
from git_evidence.sandbox.runner import Run

FACTS = verdict_record.Facts(
    base=Oid("a" * 40),
    candidate=Oid("b" * 40),
    policy_source="base:.git-evidence.toml",
    policy_digest="sha256:" + "d" * 64,
    started_at="2026-01-01T00:00:00Z",
    runner_name=None,
    runner_source="no pusher variable set",
    tool_version="0",
    pin={"digest": None, "commit": None, "note": None, "unpinned": True, "roots": []},
    candidate_tree="c" * 40,
)
BAD = "tests/fixtures/bad.json"


class Outcomes:
    """What each run of a judgement gives, drawn once: every shard reads the same."""

    def __init__(
        self,
        codes: dict[Any, int],
        hits: dict[Any, int],
        frozen: set[str],
        unread: frozenset[tuple[str, int]] = frozenset(),  # seeds whose JUnit is unread
    ) -> None:
        self.codes, self.hits, self.frozen, self.unread = codes, hits, frozen, unread

    def record(self, props: tuple[JudgeProperty, ...], shard: dict[str, Any] | None) -> Any:
        results = []
        for prop in props:
            result = PropertyRuns(prop)
            for seed in prop.seeds:
                result.seeds[seed] = [
                    Run(
                        seed,
                        n,
                        self.codes[(prop.id, seed, n)],
                        f"sha256:{seed}{n}",
                        0.5,
                        hits={"": self.hits[(prop.id, seed, n)]},
                        junit_error=f"the JUnit XML of {seed} is unreadable"
                        if (prop.id, seed) in self.unread
                        else None,
                    )
                    for n in range(1, prop.repeat + 1)
                ]
            for path in prop.must_fail:
                for seed in prop.seeds:
                    run = Run(seed, 1, self.codes[(prop.id, seed, path)], "sha256:f", 0.5)
                    result.fixtures.append(FixtureRun("must_fail", path, seed, run))
            results.append(result)
        until = datetime(2027, 1, 1, tzinfo=timezone.utc)
        freezes = {
            (p.id, fp): Freeze(
                p.id, fp, 0, "", 2, 1, "ci", datetime(2026, 1, 1, tzinfo=timezone.utc), until, "", 1
            )
            for p in props
            for fp in {exit_fingerprint(p.id, c) for c in (1, 2)}
            if f"{p.id}:{fp}" in self.frozen
        }
        signals = signals_from_runs(results, freezes, Signals())
        klass = classify(signals)
        runs = sum(len(r) for res in results for r in res.seeds.values())
        why = explain(klass, signals, base=FACTS.base, props={p.id: p for p in props}, runs=runs)
        facts = FACTS._replace(shard=shard)
        found = verdict_record.Found(
            klass,
            why,
            signals,
            results,
            evidence={"paths": {}},
            drift={"before": [], "after": []},
        )
        made = verdict_record.build(facts, found, 0.0, None)
        return json.loads(canonical_json(made.as_json()))  # as a file holds it


@st.composite
def judgements(draw: st.DrawFn) -> tuple[tuple[JudgeProperty, ...], Outcomes, int]:
    props = []
    codes: dict[Any, int] = {}
    hits: dict[Any, int] = {}
    for i in range(draw(st.integers(1, 3))):
        seeds = draw(st.lists(st.integers(0, 30), min_size=1, max_size=4, unique=True))
        repeat = draw(st.integers(2, 3))
        must_fail = draw(st.sampled_from([(), (BAD,)]))
        min_hits = draw(st.sampled_from([0, 0, 2]))
        prop = JudgeProperty(
            f"p{i}", ("run", str(i)), tuple(seeds), repeat, 60.0, min_hits, must_fail
        )
        props.append(prop)
        for seed in seeds:
            for n in range(1, repeat + 1):
                codes[(prop.id, seed, n)] = draw(st.sampled_from([0, 0, 0, 1, 2]))
                hits[(prop.id, seed, n)] = draw(st.integers(0, 3))
            for path in must_fail:
                codes[(prop.id, seed, path)] = draw(st.sampled_from([1, 1, 0]))
    possible = sorted(f"{p.id}:{exit_fingerprint(p.id, c)}" for p in props for c in (1, 2))
    frozen = set(draw(st.lists(st.sampled_from(possible), unique=True)))
    pairs = sorted((p.id, seed) for p in props for seed in p.seeds)
    unread = frozenset(draw(st.lists(st.sampled_from(pairs), max_size=2)))
    return tuple(props), Outcomes(codes, hits, frozen, unread), draw(st.integers(1, 6))


@settings(max_examples=examples(300), deadline=None)
@given(judgements())
def test_the_merged_record_has_the_unsharded_class_and_runs(
    case: tuple[tuple[JudgeProperty, ...], Outcomes, int],
) -> None:
    props, outcomes, count = case
    whole = outcomes.record(props, None)
    parts = []
    for index in range(1, count + 1):
        mine, field = shards.select(props, index, count)
        parts.append((f"part{index}.json", outcomes.record(mine, field)))
    merged = shards.merge(parts[::-1]).as_json()  # in any order
    assert merged["class"] == whole["class"]
    assert merged["exit"] == whole["exit"] and merged["result"] == whole["result"]
    assert merged["properties"] == whole["properties"]
    for key in ("counterexamples", "failing", "flaky", "passed_tests", "failed_tests"):
        assert merged[key] == whole[key], key
    assert merged["warned_tests"] == whole["warned_tests"]
    assert bool(merged["misses"]) == bool(whole["misses"])
    assert merged["freeze_line"] == whole["freeze_line"]
    verdict_record.parse(canonical_json(merged))  # a verdict record the server accepts


def test_the_split_deals_the_pairs_round_robin_and_each_once() -> None:
    props = (
        JudgeProperty("slow", ("a",), (0, 1, 2, 3), 2, 60.0),
        JudgeProperty("fast", ("b",), (7, 8), 2, 60.0),
    )
    dealt = [shards.select(props, i, 4) for i in range(1, 5)]
    assert [field["pairs"] for _, field in dealt] == [
        [["slow", 0], ["fast", 7]],
        [["slow", 1], ["fast", 8]],
        [["slow", 2]],
        [["slow", 3]],
    ]
    assert [p.seeds for p in dealt[0][0]] == [(0,), (7,)]
    assert dealt[3][0] == (props[0]._replace(seeds=(3,)),)
    assert len({field["properties"] for _, field in dealt}) == 1


def parts_of(count: int, outcomes: Outcomes, props: tuple[JudgeProperty, ...]) -> list[Any]:
    return [
        (f"part{i}.json", outcomes.record(*shards.select(props, i, count)))
        for i in range(1, count + 1)
    ]


PROPS = (JudgeProperty("p", ("run",), (0, 1, 2), 2, 60.0),)
CLEAN = Outcomes(
    {("p", s, n): 0 for s in range(3) for n in (1, 2)},
    {("p", s, n): 0 for s in range(3) for n in (1, 2)},
    set(),
)


def test_a_missing_shard_is_refused_by_number() -> None:
    parts = parts_of(3, CLEAN, PROPS)
    with pytest.raises(UsageError, match=r"shard 2/3 missing: 2 of 3 parts given"):
        shards.merge([parts[0], parts[2]])


def test_a_duplicated_shard_is_refused_naming_both_files() -> None:
    parts = parts_of(2, CLEAN, PROPS)
    again = ("copy-of-part1.json", parts[0][1])
    with pytest.raises(
        UsageError, match=r"part1.json and copy-of-part1.json: both are shard 1 of 2"
    ):
        shards.merge([parts[0], again, parts[1]])


def test_a_part_of_another_candidate_is_refused_naming_the_file_and_field() -> None:
    parts = parts_of(2, CLEAN, PROPS)
    foreign = dict(parts[1][1], candidate="e" * 40)
    with pytest.raises(UsageError, match=r"other.json: a part of another judgement: its candidate"):
        shards.merge([parts[0], ("other.json", foreign)])


def test_a_part_run_with_other_properties_is_refused() -> None:
    parts = parts_of(2, CLEAN, PROPS)
    repeated = (PROPS[0]._replace(repeat=3),)
    _, field = shards.select(repeated, 2, 2)
    other = dict(parts[1][1], shard=field)
    with pytest.raises(
        UsageError, match=r"b.json: a part of another judgement: its shard properties"
    ):
        shards.merge([parts[0], ("b.json", other)])


def test_a_part_that_states_no_policy_is_refused_naming_the_file() -> None:
    """Both parts forged alike, so that they agree with each other."""
    first, second = (
        {k: v for k, v in doc.items() if k != "policy"} for _, doc in parts_of(2, CLEAN, PROPS)
    )
    with pytest.raises(
        UsageError, match=r"forged.json: not a partial record: it states no 'policy'"
    ):
        shards.merge([("forged.json", first), ("part2.json", second)])


def test_a_part_whose_dropped_is_not_counts_is_refused_naming_the_file() -> None:
    parts = parts_of(2, CLEAN, PROPS)
    forged = dict(parts[1][1], dropped=["hit_ids"])
    with pytest.raises(UsageError, match=r"b.json: not a partial record: its 'dropped'"):
        shards.merge([parts[0], ("b.json", forged)])


def test_the_merge_adds_up_what_every_part_dropped() -> None:
    (a, first), (b, second) = parts_of(2, CLEAN, PROPS)
    first = dict(first, dropped={"hit_ids": 2, "import_origins": 0})
    second = dict(second, dropped={"hit_ids": 3, "import_origins": 4})
    merged = shards.merge([(a, first), (b, second)]).as_json()
    assert merged["dropped"] == {"hit_ids": 5, "import_origins": 4}


def test_a_plain_verdict_is_no_part() -> None:
    whole = CLEAN.record(PROPS, None)
    with pytest.raises(UsageError, match=r"verdict.json: not a partial record"):
        shards.merge([("verdict.json", whole)])


# -- end to end ----------------------------------------------------------------------

POLICY = """\
[identities]
evidence_writers = ["alice"]

[judge]
repeat = 2
seeds = 3

[[judge.property]]
id = "thirds"
command = ["sh", "-c", "test $((EVIDENCE_SEED % 3)) -ne 1"]

[[judge.property]]
id = "second-run"
command = ["sh", "-c", "test $EVIDENCE_SEED -ne 4 || test $EVIDENCE_RUN -eq 1"]
seeds = 5

[[judge.property]]
id = "passes"
command = ["true"]
"""


@pytest.fixture
def judged(tmp_path: Path) -> Work:
    return clone_of(tmp_path, make_remote(tmp_path, {".git-evidence.toml": POLICY}))


def runs_of(record: dict[str, Any]) -> list[Any]:
    return [(p["id"], [(r["seed"], r["codes"]) for r in p["runs"]]) for p in record["properties"]]


def test_real_shards_merge_into_the_unsharded_class_and_runs(judged: Work, tmp_path: Path) -> None:
    whole = evidence(judged.path, "judge", "--base", "HEAD", "--format", "json")
    assert whole.returncode == 1, whole.stderr
    expected = json.loads(whole.stdout)
    names = []
    for index in (1, 2, 3):
        name = str(tmp_path / f"part{index}.json")
        part = evidence(
            judged.path, "judge", "--base", "HEAD", "--shard", f"{index}/3", "--out", name
        )
        assert part.returncode in (0, 1), part.stderr
        names.append(name)
    merged = evidence(judged.path, "judge", "--merge", *names, "--format", "json", "--note")
    assert merged.returncode == expected["exit"], merged.stderr
    record = json.loads(merged.stdout)
    assert record["class"] == expected["class"] == PROPERTY_FAIL
    assert runs_of(record) == runs_of(expected)
    assert record["counterexamples"] == expected["counterexamples"]
    # what failed, and how to reproduce it, as the unsharded judgement says it
    assert record["failing"] == expected["failing"]
    said = "property thirds: seed 1 failed on every run: exit 1"
    assert record["reason"] == expected["reason"] == said
    assert record["next"] == expected["next"] and "PYTHONPATH=src " in record["next"]
    assert [f["seed"] for f in record["flaky"]] == [4]
    assert record["shards"]["count"] == 3 and "shard" not in record
    shown = evidence(judged.path, "show-verdict", "HEAD", "--format", "json")
    assert shown.returncode == 0, shown.stderr  # the merged record is a valid verdict note


def test_a_shard_is_never_noted(judged: Work) -> None:
    result = evidence(judged.path, "judge", "--base", "HEAD", "--shard", "1/2", "--note")
    assert result.returncode == 2
    assert "never noted" in result.stderr


def test_shard_takes_i_of_n_only(judged: Work) -> None:
    result = evidence(judged.path, "judge", "--base", "HEAD", "--shard", "3/2")
    assert result.returncode == 2
    assert "I/N with 1 <= I <= N" in result.stderr
