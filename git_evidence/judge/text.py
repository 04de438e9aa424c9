"""The judge's words: why a class was given and what to do (``Explanation``), the
lines a person or CI runs next (the freeze line, the command that reproduces a
counterexample), and a verdict record as text. Pure; apart from the record, which
holds these words but never composes them."""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from git_evidence.judge import scorecard
from git_evidence.judge.classes import (
    ACCEPT,
    FIXTURE_BREACH,
    FLAKE_CANDIDATE,
    FLAKE_FROZEN,
    HELD,
    ORACLE_REWRITE,
    PATCH_INVALID,
    PIN_MOVED,
    PROPERTY_FAIL,
    PROPERTY_MISS,
    Flake,
    Signals,
)
from git_evidence.policy.parsing import recorded_origin
from git_evidence.policy.properties import JUNIT_PLACEHOLDER

if TYPE_CHECKING:  # data types only
    from git_evidence.judge.signals import PropertyRuns
    from git_evidence.policy.properties import JudgeProperty


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


RUNNER_HELD = "runner "  # held lines about the runner: "runner module from …"
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
    if klass == HELD and any(line.startswith(RUNNER_HELD) for line in signals.held):
        return Explanation(
            "the workspace provides the test runner or what it loads: the candidate's "
            "copy would judge the candidate",
            signals.held,
            "nothing ran. A person reviews these files first: the runner, its plugins "
            "and their startup files come from the environment, never from the tree.",
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


SHOWN_LINES = 20  # of a failing run's output, under -v


def failing_output(label: str, seed: int, run: int, code: object, tail: str) -> list[str]:
    """A failing run's last lines as ``-v`` prints them: a heading, then the run's own
    text, each line behind ``| `` so that it never reads as the judge's."""
    lines = tail.splitlines()[-SHOWN_LINES:]
    head = f"{label} seed {seed} run {run} failed (exit {code}); its last output:"
    return [head, *(f"  | {line}" for line in lines)]


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
    if recorded_origin(source) == "draft":
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


def failing_lines(results: Sequence[PropertyRuns]) -> list[str]:
    """``-v``: the last lines of every failing run's output."""
    lines: list[str] = []
    for result in results:
        runs = [(result.prop.id, r) for seed_runs in result.seeds.values() for r in seed_runs]
        runs += [
            (f"{result.prop.id} {f.kind.replace('_', '-')} {f.path}", f.run)
            for f in result.fixtures
            if f.run is not None and not f.ok  # a must-fail fixture that failed is right
        ]
        for label, run in runs:
            if run.failed and run.tail is not None:
                lines += failing_output(label, run.seed, run.run, run.code, run.tail)
    return lines
