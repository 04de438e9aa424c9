"""The judge's verdict: one class from the signals, first match wins,
and the record that says why. Pure: no git, no processes.

The classes, in precedence order, and what each one needs:

    patch_invalid    the patch does not apply to the base            nothing ran
    oracle_rewrite   the candidate changes what judges it            nothing ran
    fixture_breach   lock-root bytes differ from the pin             before or after the runs
    held             paths the policy holds for a person             nothing ran
    property_miss    a must-fail passed, a must-pass failed, too few hits
    property_fail    a seed failed on every run: a counterexample
    flake_frozen     every disagreement is frozen, nothing else failed   (exit 0)
    flake_candidate  one seed gave different outcomes
    accept           every run of every seed passed and agreed        (exit 0)

Over 300 lines on purpose: the class table, the signals and the record are one concept."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from git_evidence.core.errors import EvidenceError
from git_evidence.core.records import RecordError, iso_utc, parse_canonical
from git_evidence.judge import scorecard
from git_evidence.ledger.fingerprint import exit_fingerprint, fingerprint
from git_evidence.policy.properties import JUNIT_PLACEHOLDER

if TYPE_CHECKING:  # data types only
    from git_evidence.ledger.entries import Freeze
    from git_evidence.policy.properties import JudgeProperty
    from git_evidence.sandbox.runner import Run

SCHEMA = 1
KIND = "git-evidence/verdict"

PATCH_INVALID = "patch_invalid"
ORACLE_REWRITE = "oracle_rewrite"
FIXTURE_BREACH = "fixture_breach"
HELD = "held"
PROPERTY_MISS = "property_miss"
PROPERTY_FAIL = "property_fail"
FLAKE_FROZEN = "flake_frozen"
FLAKE_CANDIDATE = "flake_candidate"
ACCEPT = "accept"
UNDECIDED = "undecided"  # exit 2: the command could not start, git failed

CLASSES = (
    PATCH_INVALID,
    ORACLE_REWRITE,
    FIXTURE_BREACH,
    HELD,
    PROPERTY_MISS,
    PROPERTY_FAIL,
    FLAKE_FROZEN,
    FLAKE_CANDIDATE,
    ACCEPT,
)
EXIT = {**{c: 0 if c in (ACCEPT, FLAKE_FROZEN) else 1 for c in CLASSES}, UNDECIDED: 2}
# in-toto test-result predicate: result of each class
RESULT = {
    **dict.fromkeys(CLASSES, "FAILED"),
    ACCEPT: "PASSED",
    FLAKE_FROZEN: "WARNED",
    UNDECIDED: "FAILED",
}


def exit_and_result(klass: str, card: Mapping[str, Any] | None) -> tuple[int, str]:
    """A record's ``exit`` and in-toto ``result``: the class's, except that a scorecard
    that says ``reject`` never lets a passing class exit 0."""
    if card is not None and card.get("result") == scorecard.REJECT and EXIT[klass] == 0:
        return 1, "FAILED"
    return EXIT[klass], RESULT[klass]


@dataclass(frozen=True)
class Flake:
    """A test that gave different outcomes on one seed."""

    property: str
    test_id: str
    seed: int
    fingerprint: str
    freeze: Mapping[str, Any] | None = None  # the freeze in force that covers it
    # the seed run again on the base: True it flakes there too (CI may freeze it),
    # False the candidate brought it, None not run again (a freeze covers it)
    on_base: bool | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "property": self.property,
            "test_id": self.test_id,
            "seed": self.seed,
            "fingerprint": self.fingerprint,
            "freeze": dict(self.freeze) if self.freeze is not None else None,
            "on_base": self.on_base,
        }


class Failing(NamedTuple):
    """What failed on every run of a counterexample's seed: with JUnit, the tests that
    failed in each run; else (or when no test failed in all of them) the exit codes."""

    property: str
    seed: int
    tests: tuple[str, ...]
    codes: tuple[int | str, ...]  # the runs' distinct exit codes, in order

    def text(self, most: int = 3) -> str:
        """``a::t, b::u and 2 more``, or ``exit 1`` (``exit 1, timeout``)."""
        if self.tests:
            shown = ", ".join(self.tests[:most])
            more = len(self.tests) - most
            return f"{shown} and {more} more" if more > 0 else shown
        return "exit " + ", ".join(str(c) for c in self.codes)

    def as_json(self) -> dict[str, Any]:
        return {
            "property": self.property,
            "seed": self.seed,
            "tests": list(self.tests),
            "codes": list(self.codes),
        }


PIN_MOVED = "the pin in force at the base changed during the run"


@dataclass(frozen=True)
class Signals:
    """Everything the class depends on. Each field lists what fired (empty: nothing);
    ``failing`` only says what the counterexamples' runs failed on (no class reads it)."""

    patch_invalid: bool = False
    oracle_rewrite: tuple[str, ...] = ()
    fixture_breach: tuple[str, ...] = ()
    held: tuple[str, ...] = ()
    misses: tuple[str, ...] = ()
    counterexamples: tuple[tuple[str, int], ...] = ()  # (property, seed)
    flakes: tuple[Flake, ...] = ()
    unexplained: tuple[str, ...] = ()  # failures no frozen flake accounts for
    failing: tuple[Failing, ...] = ()  # one per counterexample

    def what_failed(self, prop_id: str, seed: int) -> str:
        found = next((f for f in self.failing if (f.property, f.seed) == (prop_id, seed)), None)
        return f": {found.text()}" if found is not None else ""


def classify(signals: Signals) -> str:
    """One class, first match wins."""
    if signals.patch_invalid:
        return PATCH_INVALID
    if signals.oracle_rewrite:
        return ORACLE_REWRITE
    if signals.fixture_breach:
        return FIXTURE_BREACH
    if signals.held:
        return HELD
    if signals.misses:
        return PROPERTY_MISS
    if signals.counterexamples:
        return PROPERTY_FAIL
    if signals.flakes:
        if all(f.freeze is not None for f in signals.flakes) and not signals.unexplained:
            return FLAKE_FROZEN
        return FLAKE_CANDIDATE
    if signals.unexplained:  # a failure no seed explains: never accepted
        return PROPERTY_FAIL
    return ACCEPT


def runs_before_runs(signals: Signals) -> bool:
    """Whether the evidence-first checks let the properties run at all."""
    return not (
        signals.patch_invalid or signals.oracle_rewrite or signals.fixture_breach or signals.held
    )


# -- from runs to signals ----------------------------------------------------------------


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
    return Failing(prop_id, seed, tests, tuple(dict.fromkeys(r.code for r in runs)))


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


def freeze_line(prop: JudgeProperty, flake: Flake, writer: str | None = None) -> str:
    """The ``git evidence freeze add`` line CI may run: same test, seed and command,
    and the ledger writer the entry will name (without one, freeze add takes
    ``evidence.writer`` or ``GIT_EVIDENCE_PUSHER`` where it runs)."""
    who = ["--writer", writer] if writer else ["--ci"]
    return shlex.join(
        [
            "git",
            "evidence",
            "freeze",
            "add",
            *who,
            "--test",
            flake.test_id,
            "--runs",
            str(max(prop.repeat, 2)),
            "--seed",
            str(flake.seed),
            "--seeds",
            "1",
            "--",
            *prop.command,
        ]
    )


REPRODUCE_JUNIT = "junit.xml"  # where a printed reproduce command writes its JUnit XML


def reproduce_line(prop: JudgeProperty, seed: int, pythonpath: Sequence[str] = ()) -> str:
    """The property's command on one seed as a shell runs it from the root of an export
    of the candidate: the variables each run got (the import roots first on
    PYTHONPATH, hits to nowhere) and, for ``{junitxml}``, a file of the export."""
    env = [f"PYTHONPATH={':'.join(pythonpath)}"] if pythonpath else []
    env += [
        f"EVIDENCE_SEED={seed}",
        "EVIDENCE_RUN=1",
        f"PYTHONHASHSEED={seed % 2**32}",
        "EVIDENCE_HITS_FILE=/dev/null",
    ]
    command = [a.replace(JUNIT_PLACEHOLDER, REPRODUCE_JUNIT) for a in prop.command]
    return " ".join([*env, shlex.join(command)])


# -- the record ----------------------------------------------------------------------------


def property_json(result: PropertyRuns) -> dict[str, Any]:
    prop = result.prop
    return {
        **prop.as_dict(),
        "runs": [
            {
                "seed": seed,
                "codes": [r.code for r in runs],
                "outcomes": [r.outcome_digest for r in runs],
                "outputs": [r.output for r in runs],
                "durations_s": [r.duration_s for r in runs],
                "hits": [dict(r.hits) for r in runs],
                "failed": [r.failed for r in runs],
            }
            for seed, runs in result.seeds.items()
        ],
        "fixtures": [
            {
                "kind": f.kind,
                "path": f.path,
                "seed": f.seed,
                "code": None if f.run is None else f.run.code,
                "ok": f.ok,
            }
            for f in result.fixtures
        ],
    }


def test_lists(results: Sequence[PropertyRuns], signals: Signals) -> dict[str, list[str]]:
    """passed / failed / warned tests, as an in-toto test-result predicate lists them:
    JUnit ids where there are any, else the property ids."""
    warned = sorted({f.test_id for f in signals.flakes if f.freeze is not None})
    failed: set[str] = {f.test_id for f in signals.flakes if f.freeze is None}
    passed: set[str] = set()
    for result in results:
        for runs in result.seeds.values():
            for run in runs:
                if run.tests:
                    for test_id, case in run.tests.items():
                        if case.outcome in ("failed", "error"):
                            failed.add(test_id)
                        elif case.outcome == "passed":
                            passed.add(test_id)
                elif run.failed:
                    failed.add(result.prop.id)
                else:
                    passed.add(result.prop.id)
        if not all(f.ok for f in result.fixtures):
            failed.add(result.prop.id)
    failed -= set(warned)
    return {
        "passed_tests": sorted(passed - failed - set(warned)),
        "failed_tests": sorted(failed),
        "warned_tests": warned,
    }


class VerdictInvalid(EvidenceError):
    """A verdict note that is not exactly one canonical verdict record."""

    rule = "verdict-invalid"


REQUIRED = {
    "schema": int,
    "kind": str,
    "class": str,
    "exit": int,
    "reason": str,
    "base": str,
    "candidate": str,
    "freeze_allowed": bool,
    "started_at": str,
    "result": str,
}


def parse_verdict(data: bytes, annotated: str | None = None) -> dict[str, Any]:
    """Exactly one canonical verdict record (about ``annotated``, for a note), or
    VerdictInvalid saying why."""
    what = f"the verdict note on {annotated[:12]}" if annotated else "the verdict"

    def bad(why: str) -> VerdictInvalid:
        return VerdictInvalid(
            f"{what} {why}",
            fix="verdict notes are written by `git evidence judge --note`, by a verdict "
            "writer: judge the candidate again and push that note",
        )

    try:
        doc = parse_canonical(data)
    except RecordError as exc:
        raise bad(str(exc)) from None
    for key, kind in REQUIRED.items():
        if not isinstance(doc.get(key), kind) or (kind is int and isinstance(doc[key], bool)):
            raise bad(f"has no valid {key!r}")
    if doc["schema"] != SCHEMA or doc["kind"] != KIND:
        raise bad(f"is not a verdict record of schema {SCHEMA}")
    klass = doc["class"]
    if klass not in EXIT:
        raise bad(f"names an unknown class {klass!r}")
    card = doc.get("scorecard")
    if "scorecard" in doc:
        wrong = scorecard.problem(card)
        if wrong is not None:
            raise bad(wrong)
    if (doc["exit"], doc["result"]) != exit_and_result(klass, card):
        with_card = f" and a scorecard that says {card['result']}" if card else ""
        raise bad(f"gives exit {doc['exit']} / result {doc['result']} for class {klass}{with_card}")
    if doc["freeze_allowed"] is not False:
        raise bad("allows a freeze: no verdict ever does")
    if annotated is not None and doc["candidate"] != annotated:
        raise bad(f"judges {doc['candidate'][:19]}, not the commit it is attached to")
    return doc


# -- why, and what to do -------------------------------------------------------------------


@dataclass(frozen=True)
class Explanation:
    reason: str  # one line: why this class
    details: tuple[str, ...]  # the evidence behind it, one line each
    next: str  # what to do


def explain(
    klass: str,
    signals: Signals,
    *,
    base: str,
    props: Mapping[str, JudgeProperty],
    patch_error: str = "",
    during_run: bool = False,
    runs: int = 0,
    writer: str | None = None,
    pythonpath: Sequence[str] = (),
) -> Explanation:
    short = base[:12]
    if klass == PATCH_INVALID:
        first = (
            patch_error.strip().splitlines()[0] if patch_error.strip() else "git apply refused it"
        )
        return Explanation(
            f"the patch does not apply to the base {short}: {first}",
            tuple(patch_error.strip().splitlines()[1:6]),
            f"nothing ran. Regenerate the patch against {short} and judge it again.",
        )
    if klass == ORACLE_REWRITE:
        return Explanation(
            "the candidate changes what judges it (oracles, policy, ledger or test code)",
            signals.oracle_rewrite,
            "nothing ran. Read the change and stop: evidence and test edits travel alone, "
            "pushed by a trusted writer, never inside a product fix.",
        )
    if klass == FIXTURE_BREACH:
        when = "changed during the run" if during_run else "before any run"
        files = sum(1 for line in signals.fixture_breach if line != PIN_MOVED)
        counted = [f"{files} file(s)"] if files else []
        if PIN_MOVED in signals.fixture_breach:
            counted.append("and the pin in force moved" if files else "the pin in force moved")
        return Explanation(
            f"the bytes under the lock roots differ from the pin ({when}): {' '.join(counted)}",
            signals.fixture_breach,
            (
                "read the drift and stop: the product writes into its own fixtures while "
                "its tests run; tests read fixtures, never write them."
            )
            if during_run
            else (
                "read the drift and stop: restore the pinned bytes. A fixture change travels "
                "alone, pushed by an evidence writer, and a lock writer pins it."
            ),
        )
    if klass == HELD:
        return Explanation(
            "the candidate changes paths the policy holds for a person (they can change "
            "which tests run or how)",
            signals.held,
            "nothing ran. A person reviews these paths first: push them apart, for a "
            "reviewer, and judge the product change without them.",
        )
    if klass == PROPERTY_MISS:
        return Explanation(
            "a property no longer catches what it must",
            signals.misses,
            "restore the property's strength: a must-fail fixture must fail, a must-pass "
            "fixture must pass, and each run must exercise min_hits examples.",
        )
    if klass == PROPERTY_FAIL:
        if not signals.counterexamples:
            return Explanation(
                "runs failed that no seed and no freeze accounts for",
                signals.unexplained,
                "read the failing runs and fix the product.",
            )
        prop_id, seed = signals.counterexamples[0]
        command = (
            reproduce_line(props[prop_id], seed, pythonpath)
            if prop_id in props
            else f"EVIDENCE_SEED={seed} PYTHONHASHSEED={seed % 2**32} and the command"
        )
        return Explanation(
            f"property {prop_id}: seed {seed} failed on every run"
            + signals.what_failed(prop_id, seed),
            tuple(
                f"{p}: seed {s} failed on every run" + signals.what_failed(p, s)
                for p, s in signals.counterexamples
            ),
            f"keep seed {seed} as a counterexample and fix the product; a seed that always "
            "fails is never frozen. To reproduce it, run at the root of an export of the "
            f"candidate: {command}",
        )
    if klass == FLAKE_FROZEN:
        until = min(str(f.freeze["until"]) for f in signals.flakes if f.freeze is not None)
        return Explanation(
            "every disagreement is a flake with a freeze in force of the same fingerprint",
            tuple(_flake_line(f) for f in signals.flakes),
            f"not blocking while the freezes last (the first ends {until}); the flake "
            "still needs a fix.",
        )
    if klass == FLAKE_CANDIDATE:
        fresh = [f for f in signals.flakes if f.freeze is None] or list(signals.flakes)
        lead = fresh[0]
        said = (
            f"property {lead.property}: seed {lead.seed} gave different outcomes on the same seed"
        )
        brought = [f for f in fresh if f.on_base is False]
        if brought:
            return Explanation(
                said,
                tuple(_flake_line(f) for f in signals.flakes) + signals.unexplained,
                f"do not merge: the candidate introduced the nondeterminism (seed "
                f"{brought[0].seed} of {brought[0].property} agrees with itself on the "
                "base), so nothing may be frozen for it. Make the candidate deterministic.",
            )
        line = freeze_line(props[lead.property], lead, writer) if lead.property in props else ""
        return Explanation(
            said,
            tuple(_flake_line(f) for f in signals.flakes) + signals.unexplained,
            "do not merge on this result. The base flakes on that seed too: hand the "
            f"freeze line to CI (the judge never writes a freeze; CI reproduces it first): {line}",
        )
    if klass == ACCEPT:
        return Explanation(
            f"every run of every seed passed and agreed ({runs} runs)",
            (),
            "nothing to do.",
        )
    raise ValueError(klass)


def _flake_line(flake: Flake) -> str:
    cited = (
        f"frozen by ledger line {flake.freeze['line']} until {flake.freeze['until']}"
        if flake.freeze is not None
        else "no freeze in force"
    )
    if flake.on_base is not None:
        cited += ", flakes on the base too" if flake.on_base else ", stable on the base"
    return f"{flake.property}: {flake.test_id} seed {flake.seed} [{flake.fingerprint}]: {cited}"


def to_text(record: Mapping[str, Any]) -> str:
    """Class first, then why, then what to do; the record's facts last."""
    lines = [f"{record['class']}", f"  why: {record['reason']}"]
    lines += [f"    {line}" for line in record.get("details", [])]
    lines.append(f"  do: {record.get('next', '')}")
    pin = record.get("pin") or {}
    pin_text = pin.get("digest") or "unpinned base"
    if pin.get("stale_lock"):
        pin_text = (
            f"the base's own files (the lock in force, {str(pin.get('commit'))[:12]}, is stale)"
        )
    lines.append(
        f"  base {str(record['base'])[:12]}, candidate {str(record['candidate'])[:19]}, "
        f"pin {pin_text}"
    )
    source = str((record.get("policy") or {}).get("source", ""))
    if source.startswith("draft policy "):
        lines.append(f"  policy: {source}")
    if (record.get("sandbox") or {}).get("kind") == "none":
        lines.append(
            "  unsandboxed: the candidate ran with the judge's own rights "
            '([judge] sandbox = "none")'
        )
    if record.get("scorecard"):
        lines += scorecard.text(record["scorecard"])
    if record.get("freeze_line"):
        lines.append(f"  freeze line: {record['freeze_line']}")
    lines.append("  freeze_allowed: false (the judge never writes a freeze)")
    return "\n".join(lines) + "\n"
