"""Reproducing a flake for the freeze ledger (``git evidence freeze add``), as a library
call: ``reproduce(git, policy, asked)`` runs a test command N times for each of K seeds
in a workspace exported from a commit and held as the judge holds its runs, and only
when one seed both passed and failed appends the ledger entry that freezes it, citing
the lock in force. A seed that fails every time is a counterexample to keep, a command
that always fails a product failure: neither is frozen, and the outcome says which.
The command only turns its command line into ``Asked`` and prints the outcome."""

from __future__ import annotations

import json
import os
import shlex
import sys
from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

from git_evidence.core.errors import EvidenceError, UsageError
from git_evidence.core.records import iso_utc
from git_evidence.judge import held, steps, workspace
from git_evidence.ledger.fingerprint import exit_fingerprint, fingerprint
from git_evidence.ledger.freezes import append_lines
from git_evidence.lock import store
from git_evidence.plumbing.git import Git
from git_evidence.policy.identity import WRITER_KEY, line_writer
from git_evidence.policy.properties import JUNIT_PLACEHOLDER, JudgeProperty
from git_evidence.policy.schema import Policy
from git_evidence.sandbox import preflight as checks
from git_evidence.sandbox import runner
from git_evidence.sandbox.outcomes import FAILING
from git_evidence.sandbox.runner import Run
from git_evidence.terminal.progress import Progress

FROZEN, PRODUCT_FAILURE, COUNTEREXAMPLE, PASSED = (
    "frozen",
    "product_failure",
    "counterexample",
    "passed",
)


class Asked(NamedTuple):
    """What ``freeze add`` is asked: the test, the command that runs it, where and how
    often, and what the entry will say."""

    test: str
    command: tuple[str, ...]
    rev: str = "HEAD"
    runs: int = 2  # per seed
    seed: int = 0  # the first seed
    seeds: int = 1
    timeout: float = 600.0
    writer: str | None = None
    ci: bool = False  # the writer is not known locally (CI)
    hours: int | None = None  # the window (default: max_window_hours)
    fingerprint: str | None = None
    reason: str | None = None


class Reproduced(NamedTuple):
    """What the runs showed: ``outcome`` (FROZEN, PRODUCT_FAILURE, COUNTEREXAMPLE or
    PASSED), the seed it is about, and for FROZEN the entry appended."""

    outcome: str
    seed: int | None = None
    runs: int = 0  # of that seed
    failures: int = 0
    entry: dict[str, Any] | None = None


def reproduce(git: Git, policy: Policy, asked: Asked) -> Reproduced:
    if not asked.command:
        raise UsageError(
            "no command to run", fix="git evidence freeze add --test ID --runs N -- CMD ARGS…"
        )
    if asked.runs < 2 or asked.seeds < 1:
        raise UsageError(
            "--runs must be at least 2 and --seeds at least 1",
            fix="a flake must both pass and fail on one seed",
        )
    writer, _ = line_writer(asked.writer, git.config_get(WRITER_KEY), os.environ)
    if not writer:
        raise UsageError(
            "no writer to record: a freeze names the ledger writer who appends it",
            fix="pass --writer NAME, or set git config evidence.writer (or GIT_EVIDENCE_PUSHER) "
            "to the CI identity the server knows as a ledger writer",
        )
    if writer not in policy.ledger_writers and not asked.ci:
        raise UsageError(
            f"{writer or 'an anonymous writer'} is not a ledger writer "
            f"({', '.join(sorted(policy.ledger_writers)) or 'none listed'})",
            fix="freezes are written by CI: run it there with --ci (and GIT_EVIDENCE_PUSHER "
            "or --writer naming the CI identity)",
        )
    hours = asked.hours or policy.max_window_hours
    if hours > policy.max_window_hours:
        raise UsageError(
            f"--hours {hours} is more than max_window_hours = {policy.max_window_hours}"
        )
    head = git.resolve_commit(asked.rev)
    if head is None:
        raise UsageError(f"{asked.rev} is not a commit", fix="give --rev a commit to reproduce on")
    found = store.find_lock(git, policy.notes_ref, head)
    if found is None:
        raise EvidenceError(
            f"no lock in force at {asked.rev}: a freeze cites the lock it was reproduced against",
            fix="fetch the locks (git fetch origin "
            f"{policy.notes_ref}:{policy.notes_ref}) or have a lock "
            "writer pin one",
        )
    pin = store.read_lock(git, found).digest
    junit = any(JUNIT_PLACEHOLDER in a for a in asked.command)
    outcomes = _held_runs(git, policy, head, asked, junit)

    def failures_of(runs: list[Run]) -> int:
        return sum(1 for r in runs if failed(r, asked.test, junit))

    flaky = [s for s, runs in outcomes.items() if 0 < failures_of(runs) < len(runs)]
    always = [s for s, runs in outcomes.items() if failures_of(runs) == len(runs)]
    if not flaky:
        if always and len(always) == len(outcomes):
            return Reproduced(PRODUCT_FAILURE)
        if always:
            return Reproduced(COUNTEREXAMPLE, always[0])
        return Reproduced(PASSED)
    seed = flaky[0]
    runs = outcomes[seed]
    failures = failures_of(runs)
    first = next(r for r in runs if failed(r, asked.test, junit))
    now = datetime.now(timezone.utc).replace(microsecond=0)
    entry: dict[str, Any] = {
        "test_id": asked.test,
        "fingerprint": asked.fingerprint or run_fingerprint(first, asked.test, junit),
        "seed": seed,
        "pin": pin,
        "reproduced": True,
        "runs": len(runs),
        "failures": failures,
        "writer": writer,
        "frozen_at": iso_utc(now),
        "until": iso_utc(now + timedelta(hours=hours)),
    }
    if asked.reason:
        entry["reason"] = asked.reason
    # what each run of the reproducing seed did: exit code and a digest of its output
    # (recorded, never compared: output differs run to run)
    entry["outputs"] = [[r.code, r.output.removeprefix("sha256:")[:16]] for r in runs]
    entry["command"] = shlex.join(asked.command)
    line = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    append_lines(git, policy.ledger_path, line.encode("utf-8") + b"\n", "ledger")
    return Reproduced(FROZEN, seed, len(runs), failures, entry)


def _held_runs(
    git: Git, policy: Policy, head: str, asked: Asked, junit: bool
) -> dict[int, list[Run]]:
    """Each seed's runs, in a workspace exported from ``head`` and held as the judge's
    runs are; one line on stderr per seed."""
    command = tuple(asked.command)
    outcomes: dict[int, list[Run]] = {}
    top = git.toplevel()
    area = workspace.make_area(top)
    try:
        space = area.workspace(1)
        workspace.export_tree(git, head, space)
        env = steps.run_env(area, policy.judge.env)
        prop = JudgeProperty("freeze", command, (asked.seed,), asked.runs, asked.timeout)
        hold = held.hold(git, policy, [prop], space, top=top, outputs=(), extra_ro=(), env=env)
        env["EVIDENCE_PACKAGES"] = ",".join(held.top_packages(space, hold.pythonpath))
        shadow = held.preflight([prop], space, area, env, hold)
        if shadow:
            raise EvidenceError(
                f"the workspace provides the runner: {shadow[0]}",
                fix="a module the runner or the plugin loads must come from outside the "
                "candidate's tree: remove it from the tree (a person reviews such a change)",
            )
        with runner.interruptible(), Progress(f"freezing {asked.test}") as progress:
            for seed in range(asked.seed, asked.seed + asked.seeds):
                chain = runner.Chain(command, seed, asked.runs, asked.timeout, junit)
                outcomes[seed] = runner.run_chain(
                    chain, cwd=space, env=env, scratch=area.scratch, progress=progress, held=hold
                )
                checks.never_started([(prop.id, r) for r in outcomes[seed]])
                fails = sum(1 for r in outcomes[seed] if failed(r, asked.test, junit))
                progress.clear()
                print(f"seed {seed}: {asked.runs - fails} passed, {fails} failed", file=sys.stderr)
    finally:
        workspace.remove(area.root)
    return outcomes


def failed(run: Run, test_id: str, junit: bool) -> bool:
    """Did ``test_id`` fail in this run? With JUnit: its own outcome (absent from the
    XML counts as failed when the run failed); without: the exit code."""
    if not junit or run.tests is None:
        return run.code != 0
    case = run.tests.get(test_id)
    return run.code != 0 if case is None else case.outcome in FAILING


def run_fingerprint(run: Run, test_id: str, junit: bool) -> str:
    """The shared fingerprint of a failing run, as ``judge`` computes it."""
    case = (run.tests or {}).get(test_id) if junit else None
    if case is not None and case.outcome in FAILING:
        return fingerprint(test_id, case.outcome, case.type, case.message)
    return exit_fingerprint(test_id, run.code)
