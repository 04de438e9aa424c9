"""From runs to signals: what each property's runs (and its fixtures' runs) say, the
disagreements of one seed and their fingerprints, the freezes in force that cover
them, the counterexamples and what they failed on. Pure: the runs are read already;
apart from the class table, which reads only the signals this makes."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from git_evidence.core.records import iso_utc
from git_evidence.judge.classes import Failing, Flake, Signals
from git_evidence.ledger.fingerprint import exit_fingerprint, fingerprint

if TYPE_CHECKING:  # data types only
    from git_evidence.ledger.entries import Freeze
    from git_evidence.policy.properties import JudgeProperty
    from git_evidence.sandbox.runner import Run


@dataclass
class FixtureRun:
    kind: str  # must_fail | must_pass
    path: str
    seed: int
    run: Run | None  # None: the fixture is not in the workspace, nothing ran

    @property
    def ok(self) -> bool:
        if self.run is None:
            return False
        if self.kind == "must_fail":
            return self.run.failed and self.run.code != "timeout"
        return not self.run.failed


@dataclass
class PropertyRuns:
    prop: JudgeProperty
    seeds: dict[int, list[Run]] = field(default_factory=dict)
    fixtures: list[FixtureRun] = field(default_factory=list)


def active_freezes(freezes: Iterable[Freeze], now: datetime) -> dict[tuple[str, str], Freeze]:
    """(test id, fingerprint) → the freeze in force for it."""
    return {(f.test_id, f.fingerprint): f for f in freezes if f.active(now)}


def seed_flakes(prop_id: str, junit: bool, runs: Sequence[Run]) -> list[tuple[str, str]]:
    """``(test id, fingerprint)`` of each disagreement among the runs of one seed."""
    if len({r.outcome_digest for r in runs}) <= 1 and len({r.failed for r in runs}) <= 1:
        return []
    found: list[tuple[str, str]] = []
    if junit and all(r.tests is not None for r in runs):
        ids = sorted(set().union(*(r.tests or {} for r in runs)))
        for test_id in ids:
            cases = [(r.tests or {}).get(test_id) for r in runs]
            outcomes = {c.outcome if c else "missing" for c in cases}
            if len(outcomes) > 1:
                bad = next((c for c in cases if c is None or c.outcome != "passed"), None)
                found.append(
                    (
                        test_id,
                        fingerprint(test_id, "missing")
                        if bad is None
                        else fingerprint(test_id, bad.outcome, bad.type, bad.message),
                    )
                )
    if not found:  # exit codes disagree, or JUnit cannot tell: the property as a whole
        for run in runs:
            pair = (prop_id, exit_fingerprint(prop_id, run.code))
            if run.failed and pair not in found:
                found.append(pair)
    return found


def any_disagreement(results: Sequence[PropertyRuns]) -> bool:
    return any(
        len({r.outcome_digest for r in runs}) > 1 or len({r.failed for r in runs}) > 1
        for result in results
        for runs in result.seeds.values()
    )


def _run_explained(prop_id: str, run: Run, frozen: set[tuple[str, str]]) -> bool:
    """A failing run is explained when each of its failures is a frozen flake."""
    if run.junit_error is not None:
        return False
    failing = [
        (test_id, fingerprint(test_id, case.outcome, case.type, case.message))
        for test_id, case in (run.tests or {}).items()
        if case.outcome in ("failed", "error")
    ]
    if failing:
        return all(pair in frozen for pair in failing)
    return (prop_id, exit_fingerprint(prop_id, run.code)) in frozen


def signals_from_runs(
    results: Sequence[PropertyRuns],
    freezes: Mapping[tuple[str, str], Freeze],
    evidence: Signals | None = None,
) -> Signals:
    """The run half of the signals, on top of the evidence-first half."""
    misses: list[str] = []
    counterexamples: list[tuple[str, int]] = []
    flakes: list[Flake] = []
    unexplained: list[str] = []
    failing: list[Failing] = []
    for result in results:
        prop = result.prop
        for fixture in result.fixtures:
            if not fixture.ok:
                misses.append(_fixture_miss(prop.id, fixture))
        if prop.min_hits:
            low = [
                (seed, run)
                for seed, runs in result.seeds.items()
                for run in runs
                if run.total_hits < prop.min_hits
            ]
            if low:
                seed, run = low[0]
                misses.append(
                    f"{prop.id}: {len(low)} run(s) reported fewer than min_hits = "
                    f"{prop.min_hits} hits (seed {seed} run {run.run}: {run.total_hits})"
                )
        for seed, runs in result.seeds.items():
            if runs and all(r.failed for r in runs):
                counterexamples.append((prop.id, seed))
                failing.append(failed_on_every_run(prop.id, seed, runs))
                continue
            pairs = seed_flakes(prop.id, prop.junit, runs)
            if not pairs:
                continue
            frozen = {pair for pair in pairs if pair in freezes}
            for test_id, print_ in pairs:
                freeze = freezes.get((test_id, print_))
                flakes.append(
                    Flake(prop.id, test_id, seed, print_, _citation(freeze) if freeze else None)
                )
            for run in runs:
                if run.failed and not _run_explained(prop.id, run, frozen):
                    unexplained.append(
                        f"{prop.id}: run {run.run} of {len(runs)} of seed {seed} failed, "
                        "and no freeze in force explains it"
                    )
    base = evidence or Signals()
    return Signals(
        base.patch_invalid,
        base.oracle_rewrite,
        base.fixture_breach,
        base.held,
        tuple(misses),
        tuple(counterexamples),
        tuple(flakes),
        tuple(unexplained),
        tuple(failing),
    )


def failed_on_every_run(prop_id: str, seed: int, runs: Sequence[Run]) -> Failing:
    """The tests that failed (or erred) in every run of the seed, when every run has
    JUnit; the runs' exit codes otherwise."""
    tests: tuple[str, ...] = ()
    if runs and all(r.tests is not None for r in runs):
        each = [
            {t for t, case in (r.tests or {}).items() if case.outcome in ("failed", "error")}
            for r in runs
        ]
        tests = tuple(sorted(set.intersection(*each)))
    junit = next((r.junit_error for r in runs if r.junit_error is not None), None)
    return Failing(prop_id, seed, tests, tuple(dict.fromkeys(r.code for r in runs)), junit)


def _fixture_miss(prop_id: str, fixture: FixtureRun) -> str:
    where = (
        f"{prop_id}: {fixture.kind.replace('_', '-')} fixture {fixture.path} (seed {fixture.seed})"
    )
    if fixture.run is None:
        return f"{where} is not in the workspace"
    if fixture.run.code == "timeout":
        return f"{where} timed out"
    return f"{where} {'passed' if fixture.kind == 'must_fail' else 'failed'}"


def _citation(freeze: Freeze) -> dict[str, Any]:
    return {
        "line": freeze.line,
        "test_id": freeze.test_id,
        "fingerprint": freeze.fingerprint,
        "seed": freeze.seed,
        "until": iso_utc(freeze.until),
        "pin": freeze.pin,
    }
