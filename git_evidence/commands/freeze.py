"""``git evidence freeze add|list|status``: the freeze ledger, written by CI only.

``add`` runs a test command N times for each of K seeds. A flake is reproduced only when
the same seed both passed and failed; only then is an entry appended, citing the lock
in force. A seed that fails every time is a counterexample to keep (a property failure
the seed reveals); a command that always fails is a product failure. Neither is frozen.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from datetime import datetime, timedelta, timezone

from git_evidence.core.errors import EXIT_ALLOW, EXIT_REFUSE, EvidenceError, UsageError
from git_evidence.core.records import iso_utc
from git_evidence.judge import held, steps, workspace
from git_evidence.ledger import entries
from git_evidence.ledger.entries import Freeze
from git_evidence.ledger.fingerprint import exit_fingerprint, fingerprint
from git_evidence.ledger.freezes import (
    append_lines,
    first_added,
    ledger_bytes,
    old_kind_lines,
    read_ledger,
)
from git_evidence.lock import store
from git_evidence.plumbing.context import chosen_policy
from git_evidence.plumbing.git import Git
from git_evidence.policy.identity import WRITER_KEY, line_writer
from git_evidence.policy.properties import JUNIT_PLACEHOLDER, JudgeProperty
from git_evidence.policy.schema import Policy
from git_evidence.sandbox import runner
from git_evidence.sandbox.outcomes import FAILING
from git_evidence.sandbox.runner import Run
from git_evidence.terminal.progress import Progress


def run(args: argparse.Namespace) -> int:
    git = Git()
    policy = chosen_policy(git, None)
    if args.verb == "add":
        return _add(git, policy, args)
    freezes, problems = read_ledger(git, policy)
    now = datetime.now(timezone.utc)
    if args.verb == "list":
        return _list(freezes, problems, now, args)
    old = old_kind_lines(ledger_bytes(git, policy))
    return _status(git, freezes, now, args.test_id, args.fingerprint, old, args.format)


def _add(git: Git, policy: Policy, args: argparse.Namespace) -> int:
    command = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    if not command:
        raise UsageError(
            "no command to run", fix="git evidence freeze add --test ID --runs N -- CMD ARGS…"
        )
    if args.runs < 2 or args.seeds < 1:
        raise UsageError(
            "--runs must be at least 2 and --seeds at least 1",
            fix="a flake must both pass and fail on one seed",
        )
    writer, _ = line_writer(args.writer, git.config_get(WRITER_KEY), os.environ)
    if not writer:
        raise UsageError(
            "no writer to record: a freeze names the ledger writer who appends it",
            fix="pass --writer NAME, or set git config evidence.writer (or GIT_EVIDENCE_PUSHER) "
            "to the CI identity the server knows as a ledger writer",
        )
    if writer not in policy.ledger_writers and not args.ci:
        raise UsageError(
            f"{writer or 'an anonymous writer'} is not a ledger writer "
            f"({', '.join(sorted(policy.ledger_writers)) or 'none listed'})",
            fix="freezes are written by CI: run it there with --ci (and GIT_EVIDENCE_PUSHER "
            "or --writer naming the CI identity)",
        )
    hours = args.hours or policy.max_window_hours
    if hours > policy.max_window_hours:
        raise UsageError(
            f"--hours {hours} is more than max_window_hours = {policy.max_window_hours}"
        )
    head = git.resolve_commit(args.rev)
    if head is None:
        raise UsageError(f"{args.rev} is not a commit", fix="give --rev a commit to reproduce on")
    found = store.find_lock(git, policy.notes_ref, head)
    if found is None:
        raise EvidenceError(
            f"no lock in force at {args.rev}: a freeze cites the lock it was reproduced against",
            fix="fetch the locks (git fetch origin "
            f"{policy.notes_ref}:{policy.notes_ref}) or have a lock "
            "writer pin one",
        )
    pin = store.read_lock(git, found).digest

    junit = any(JUNIT_PLACEHOLDER in a for a in command)
    outcomes: dict[int, list[Run]] = {}
    top = None if git.is_bare() else git.text("rev-parse", "--show-toplevel")
    area = workspace.make_area(top)
    try:
        space = area.workspace(1)
        workspace.export_tree(git, head, space)
        env = steps.run_env(area)
        prop = JudgeProperty("freeze", tuple(command), (args.seed,), args.runs, args.timeout)
        hold = held.hold(git, policy, [prop], space, top=top, outputs=(), extra_ro=(), env=env)
        env["EVIDENCE_PACKAGES"] = ",".join(held.top_packages(space, hold.pythonpath))
        with runner.interruptible(), Progress(f"freezing {args.test}") as progress:
            for seed in range(args.seed, args.seed + args.seeds):
                chain = runner.Chain(tuple(command), seed, args.runs, args.timeout, junit)
                outcomes[seed] = runner.run_chain(
                    chain, cwd=space, env=env, scratch=area.scratch, progress=progress, held=hold
                )
                fails = sum(1 for r in outcomes[seed] if _failed(r, args.test, junit))
                progress.clear()
                print(f"seed {seed}: {args.runs - fails} passed, {fails} failed", file=sys.stderr)
    finally:
        workspace.remove(area.root)

    def failures_of(runs: list[Run]) -> int:
        return sum(1 for r in runs if _failed(r, args.test, junit))

    flaky = [s for s, runs in outcomes.items() if 0 < failures_of(runs) < len(runs)]
    always = [s for s, runs in outcomes.items() if failures_of(runs) == len(runs)]
    if not flaky:
        if always and len(always) == len(outcomes):
            print(
                f"git-evidence: {args.test}: every run of every seed failed: a product "
                "failure, never frozen.\n  To fix: fix the product (or the test)."
            )
        elif always:
            print(
                f"git-evidence: {args.test}: seed {always[0]} fails every time: a "
                "property failure that seed reveals, never a flake.\n  To fix: keep "
                f"seed {always[0]} as a counterexample (EVIDENCE_SEED={always[0]}) and "
                "fix the product."
            )
        else:
            print(f"git-evidence: {args.test}: passed every run: nothing to freeze.")
        return EXIT_REFUSE
    seed = flaky[0]
    runs = outcomes[seed]
    failures = failures_of(runs)
    first = next(r for r in runs if _failed(r, args.test, junit))
    fingerprint = args.fingerprint or run_fingerprint(first, args.test, junit)
    now = datetime.now(timezone.utc).replace(microsecond=0)
    entry = {
        "test_id": args.test,
        "fingerprint": fingerprint,
        "seed": seed,
        "pin": pin,
        "reproduced": True,
        "runs": len(runs),
        "failures": failures,
        "writer": writer,
        "frozen_at": iso_utc(now),
        "until": iso_utc(now + timedelta(hours=hours)),
    }
    if args.reason:
        entry["reason"] = args.reason
    # what each run of the reproducing seed did: exit code and a digest of its output
    # (recorded, never compared: output differs run to run)
    entry["outputs"] = [[r.code, r.output.removeprefix("sha256:")[:16]] for r in runs]
    entry["command"] = shlex.join(command)
    line = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    _append(git, policy, line.encode("utf-8") + b"\n")
    print(
        f"git-evidence: froze {args.test} (seed {seed}: {len(runs) - failures} passed, "
        f"{failures} failed) until {entry['until']}, pin {pin[:19]}…\n"
        f"  next: commit {policy.ledger_path} alone and push it as a ledger writer"
    )
    return EXIT_ALLOW


def _failed(run: Run, test_id: str, junit: bool) -> bool:
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


def _append(git: Git, policy: Policy, line: bytes) -> None:
    append_lines(git, policy.ledger_path, line, "ledger")


def _list(
    freezes: list[Freeze],
    problems: list[entries.LedgerProblem],
    now: datetime,
    args: argparse.Namespace,
) -> int:
    shown = [
        f
        for f in freezes
        if not (args.active and not f.active(now)) and not (args.expired and f.active(now))
    ]
    if args.format == "json":
        print(
            json.dumps(
                {
                    "now": iso_utc(now),
                    "freezes": [{**f.as_json(), "active": f.active(now)} for f in shown],
                    "problems": [p._asdict() for p in problems],
                },
                indent=1,
            )
        )
        return EXIT_ALLOW if not problems else EXIT_REFUSE
    for f in shown:
        state = "active " if f.active(now) else "expired"
        why = f" — {f.reason}" if f.reason else ""
        print(
            f"{state} {f.test_id} [{f.fingerprint}] seed {f.seed} until {iso_utc(f.until)} "
            f"({f.failures}/{f.runs} failed){why}"
        )
    for problem in problems:
        print(f"ledger-entry: line {problem.line}: {problem.message}")
    if not shown and not problems:
        print("no freezes")
    return EXIT_ALLOW if not problems else EXIT_REFUSE


def _status(
    git: Git,
    freezes: list[Freeze],
    now: datetime,
    test_id: str,
    fingerprint: str | None,
    old_kind: set[int],
    fmt: str = "text",
) -> int:
    born = first_added(git, test_id)
    said: list[str] = []
    doc: dict[str, object] = {"test_id": test_id, "frozen": False, "freeze": None}
    for f in freezes:
        if f.test_id != test_id or (fingerprint and f.fingerprint != fingerprint):
            continue
        if not f.active(now):
            continue
        if born is not None and f.frozen_at < born:
            said.append(
                f"{test_id}: the freeze of line {f.line} predates the test "
                f"({iso_utc(born)}): an added test never inherits an older freeze"
            )
            continue
        said.append(f"{test_id}: frozen until {iso_utc(f.until)} (line {f.line}, seed {f.seed})")
        if f.line in old_kind:
            said.append(
                f"  its fingerprint {f.fingerprint} is of the old kind (a digest of one "
                "run's output): `git evidence judge` never matches it; when it expires, "
                "reproduce the flake with `git evidence freeze add` again"
            )
        doc.update(frozen=True, freeze=f.as_json())
        doc["old_kind_fingerprint"] = f.line in old_kind
        break
    else:
        said.append(f"{test_id}: no freeze in force")
    if fmt == "json":
        print(json.dumps({**doc, "notes": said}, indent=1))
    else:
        print("\n".join(said))
    return EXIT_ALLOW if doc["frozen"] else EXIT_REFUSE
