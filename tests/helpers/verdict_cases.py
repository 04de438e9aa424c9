"""Verdicts made from fixed inputs, one per way a judgement ends: a pass with JUnit
runs and fixtures, a property failure, a flake candidate with its freeze line, an
undecided judgement, a scorecard that rejects on the quota alone, and the merge of a
sharded judgement with and without scorecards. ``judge/data/verdict_records.jsonl``
holds each one's record, key order included, as the judge wrote it when its result
was still a plain dict; ``judge/test_verdict.py`` holds the typed verdict to it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from git_evidence.core.errors import EvidenceError
from git_evidence.core.oids import Oid
from git_evidence.core.records import canonical_json
from git_evidence.judge import record as verdict_record
from git_evidence.judge import scorecard, shards
from git_evidence.judge.classes import FLAKE_CANDIDATE, Signals, classify
from git_evidence.judge.signals import FixtureRun, PropertyRuns, signals_from_runs
from git_evidence.judge.text import explain
from git_evidence.judge.verdict import Verdict
from git_evidence.ledger.entries import Freeze
from git_evidence.ledger.fingerprint import exit_fingerprint
from git_evidence.plugin import retries
from git_evidence.policy.properties import JudgeProperty
from git_evidence.sandbox.outcomes import CaseResult
from git_evidence.sandbox.runner import Run

PIN = {"digest": "sha256:" + "e" * 64, "commit": "f" * 40, "note": "1" * 40, "roots": ["tests"]}
EARLY = verdict_record.Facts(
    base=Oid("a" * 40),
    candidate="b" * 40,
    policy_source="base:.git-evidence.toml",
    policy_digest="sha256:" + "d" * 64,
    started_at="2026-01-01T00:00:00Z",
    runner_name="ci",
    runner_source="GIT_EVIDENCE_PUSHER",
    tool_version="0.1.0",
)
FACTS = EARLY._replace(
    pin=PIN,
    candidate_tree="c" * 40,
    sandbox={"kind": "bwrap", "network": False},
    pythonpath=("/ws/1/src", "/ws/1"),
    import_origins={"app": ["workspace"]},
    dropped_origins=2,
)
LABELS = b"t.py::test_net\tnondeterministic\nt.py::test_ok\tinvariant\n"
GRANT = b'{"kind":"grant","amount":2,"writer":"alice","at":"2026-01-01T00:00:00Z","reason":"net"}\n'
SEALED = scorecard.read_sealed(
    LABELS, "base:tests/evidence-labels.tsv", GRANT, "base:tests/retry-quota.jsonl", 2
)
NET = retries.Retried("t.py::test_net", "nondeterministic", 2, "passed")
SUITE = JudgeProperty("suite", ("pytest", "-q"), (0, 1), 2, 60.0, 1, ("tests/bad.json",), (), True)
SHARDED = (
    JudgeProperty("p", ("run",), (0, 1, 2), 2, 60.0),
    JudgeProperty("q", ("other",), (5, 6), 2, 60.0, 0, ("tests/bad.json",)),
)


def _run(seed: int, number: int, code: int, tests: str = "passed", used: int = 0) -> Run:
    log = retries.retry_log_line(SEALED.labels.digest, 2, used, (NET,)) if used else None
    return Run(
        seed,
        number,
        code,
        f"sha256:{seed}{number}{code}",
        0.25 * number,
        tests={"t.py::test_ok": CaseResult("passed"), "t.py::test_net": CaseResult(tests)},
        hits={"": 1, "suite": 2, "undeclared": 3},
        retry_log=log,
        tail=None if code == 0 else f"seed {seed} run {number} went wrong\n",
    )


def _results(codes: dict[tuple[int, int], int], used: int = 0) -> list[PropertyRuns]:
    result = PropertyRuns(SUITE)
    for seed in SUITE.seeds:
        result.seeds[seed] = [
            _run(seed, n, code, "failed" if code else "passed", used)
            for n, code in ((n, codes.get((seed, n), 0)) for n in (1, 2))
        ]
    for seed in SUITE.seeds:
        quiet = retries.retry_log_line(SEALED.labels.digest, 2, 0, ()) if used else None
        run = Run(seed, 1, 1, "sha256:f", 0.5, retry_log=quiet)
        result.fixtures.append(FixtureRun("must_fail", "tests/bad.json", seed, run))
    return [result]


def _found(
    results: list[PropertyRuns], signals: Signals, writer: str | None = None
) -> verdict_record.Found:
    klass = classify(signals)
    runs = sum(len(r) for res in results for r in res.seeds.values())
    why = explain(
        klass, signals, base=FACTS.base, props={SUITE.id: SUITE}, runs=runs, writer=writer
    )
    return verdict_record.Found(
        klass,
        why,
        signals,
        results,
        evidence={"paths": {"code": ["src/app.py"]}},
        drift={"before": [], "after": [{"path": "tests/x.json", "was": "a", "now": "b"}]},
        freeze_writer=writer,
    )


def _judged(
    codes: dict[tuple[int, int], int], sealed: scorecard.Sealed | None = None, used: int = 0
) -> Verdict:
    results = _results(codes, used)
    found = _found(results, signals_from_runs(results, {}, Signals()))
    return verdict_record.build(FACTS, found, 12.34567, sealed)


def _flake_candidate() -> Verdict:
    results = _results({(1, 2): 1})
    signals = signals_from_runs(results, {}, Signals())
    signals = replace(signals, flakes=tuple(replace(f, on_base=True) for f in signals.flakes))
    found = _found(results, signals, writer="alice")
    assert found.klass == FLAKE_CANDIDATE
    return verdict_record.build(FACTS, found, 3.0, None)


def _part(
    props: tuple[JudgeProperty, ...], field: dict[str, Any], card: bool, frozen: bool
) -> dict[str, Any]:
    results = []
    for prop in props:
        result = PropertyRuns(prop)
        for seed in prop.seeds:
            result.seeds[seed] = [
                Run(seed, n, 1 if (seed, n) == (1, 2) else 0, f"sha256:{seed}{n}", 0.5)
                for n in range(1, prop.repeat + 1)
            ]
        for path in prop.must_fail:
            for seed in prop.seeds:
                result.fixtures.append(
                    FixtureRun("must_fail", path, seed, Run(seed, 1, 1, "sha256:f", 0.5))
                )
        results.append(result)
    at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    until = datetime(2027, 1, 1, tzinfo=timezone.utc)
    fp = exit_fingerprint("p", 1)
    freezes = {("p", fp): Freeze("p", fp, 1, "", 2, 1, "ci", at, until, "", 4)} if frozen else {}
    signals = signals_from_runs(results, freezes, Signals())
    klass = classify(signals)
    runs = sum(len(r) for res in results for r in res.seeds.values())
    why = explain(klass, signals, base=FACTS.base, props={p.id: p for p in props}, runs=runs)
    found = verdict_record.Found(
        klass, why, signals, results, {"paths": {}}, {"before": [], "after": []}
    )
    facts = FACTS._replace(shard=field, started_at=f"2026-01-01T00:00:0{field['index']}Z")
    made = verdict_record.build(facts, found, float(field["index"]), SEALED if card else None)
    return dict(json.loads(canonical_json(made.as_json())))  # as a file holds it


def merged_parts(card: bool, frozen: bool) -> list[tuple[str, dict[str, Any]]]:
    """The three shards' partial records of a merged case, as their files hold them."""
    parts = []
    for index in (1, 2, 3):
        mine, field = shards.select(SHARDED, index, 3)
        parts.append((f"part{index}.json", _part(mine, field, card, frozen)))
    return parts


def _merged(card: bool, frozen: bool) -> Verdict:
    return shards.merge(merged_parts(card, frozen))


MERGED_CASES = {"merged": (False, False), "merged-frozen-scored": (True, True)}
CASES: dict[str, Callable[[], Verdict]] = {
    "accept": lambda: _judged({}),
    "property-fail": lambda: _judged({(1, 1): 1, (1, 2): 1}),
    "flake-candidate": _flake_candidate,
    "undecided": lambda: verdict_record.undecided(
        EARLY, EvidenceError("the pin cannot be read", fix="fetch the notes"), 0.0004, None
    ),
    "undecided-scored": lambda: verdict_record.undecided(
        FACTS, EvidenceError("no sandbox"), 1.5, SEALED
    ),
    "quota-reject": lambda: _judged({}, SEALED, used=3),
    "scored-fail": lambda: _judged({(0, 1): 1, (0, 2): 1}, SEALED, used=1),
    "merged": lambda: _merged(card=False, frozen=False),
    "merged-frozen-scored": lambda: _merged(card=True, frozen=True),
}
