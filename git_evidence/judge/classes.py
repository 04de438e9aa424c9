"""The judge's class table: one class from the signals, first match wins, and each
class's exit and in-toto result. Pure, and a leaf of the judge: the signals are data,
the table reads nothing else (not the runs, not the scorecard), so its totality and
precedence are tested over every combination of signals.

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
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

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
    junit: str | None = None  # why the runs' JUnit XML was not read (the run then fails)

    def text(self, most: int = 3) -> str:
        """``a::t, b::u and 2 more``, or ``exit 1`` (``exit 1, timeout``), and why the
        JUnit XML was not read when it was not."""
        if self.tests:
            shown = ", ".join(self.tests[:most])
            more = len(self.tests) - most
            return f"{shown} and {more} more" if more > 0 else shown
        codes = "exit " + ", ".join(str(c) for c in self.codes)
        return codes if self.junit is None else f"{codes}; {self.junit}"

    def as_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "property": self.property,
            "seed": self.seed,
            "tests": list(self.tests),
            "codes": list(self.codes),
        }
        if self.junit is not None:
            doc["junit"] = self.junit
        return doc


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
