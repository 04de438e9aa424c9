"""``git evidence freeze add|list|status``: the freeze ledger, written by CI only.

``add`` runs a test command N times for each of K seeds (``judge/reproduce.py``). A flake
is reproduced only when the same seed both passed and failed; only then is an entry
appended, citing the lock in force. A seed that fails every time is a counterexample to
keep (a property failure the seed reveals); a command that always fails is a product
failure. Neither is frozen. The command translates its command line and prints.
"""

from __future__ import annotations

import argparse
import json
from datetime import datetime, timezone

from git_evidence.core.errors import EXIT_ALLOW, EXIT_REFUSE
from git_evidence.core.facts import LedgerProblem
from git_evidence.core.records import iso_utc
from git_evidence.judge.reproduce import COUNTEREXAMPLE, PASSED, PRODUCT_FAILURE, Asked, reproduce
from git_evidence.ledger.entries import Freeze
from git_evidence.ledger.freezes import freeze_in_force, read_ledger
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy.schema import Policy


def run(args: argparse.Namespace) -> int:
    git = Git()
    policy = resolve(git).policy
    if args.verb == "add":
        return _add(git, policy, args)
    if args.verb == "list":
        freezes, problems = read_ledger(git, policy)
        return _list(freezes, problems, datetime.now(timezone.utc), args)
    return _status(git, policy, args)


def _add(git: Git, policy: Policy, args: argparse.Namespace) -> int:
    command = args.argv[1:] if args.argv[:1] == ["--"] else args.argv
    asked = Asked(
        args.test,
        tuple(command),
        rev=args.rev,
        runs=args.runs,
        seed=args.seed,
        seeds=args.seeds,
        timeout=args.timeout,
        writer=args.writer,
        ci=args.ci,
        hours=args.hours,
        fingerprint=args.fingerprint,
        reason=args.reason,
    )
    done = reproduce(git, policy, asked)
    if done.outcome == PRODUCT_FAILURE:
        print(
            f"git-evidence: {args.test}: every run of every seed failed: a product "
            "failure, never frozen.\n  To fix: fix the product (or the test)."
        )
    elif done.outcome == COUNTEREXAMPLE:
        print(
            f"git-evidence: {args.test}: seed {done.seed} fails every time: a "
            "property failure that seed reveals, never a flake.\n  To fix: keep "
            f"seed {done.seed} as a counterexample (EVIDENCE_SEED={done.seed}) and "
            "fix the product."
        )
    elif done.outcome == PASSED or done.entry is None:
        print(f"git-evidence: {args.test}: passed every run: nothing to freeze.")
    else:
        print(
            f"git-evidence: froze {args.test} (seed {done.seed}: {done.runs - done.failures} "
            f"passed, {done.failures} failed) until {done.entry['until']}, pin "
            f"{done.entry['pin'][:19]}…\n"
            f"  next: commit {policy.ledger_path} alone and push it as a ledger writer"
        )
        return EXIT_ALLOW
    return EXIT_REFUSE


def _list(
    freezes: list[Freeze],
    problems: list[LedgerProblem],
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


def _status(git: Git, policy: Policy, args: argparse.Namespace) -> int:
    now = datetime.now(timezone.utc)
    found = freeze_in_force(git, policy, args.test_id, args.fingerprint, now)
    if args.format == "json":
        doc: dict[str, object] = {
            "test_id": args.test_id,
            "frozen": found.freeze is not None,
            "freeze": None if found.freeze is None else found.freeze.as_json(),
        }
        if found.freeze is not None:
            doc["old_kind_fingerprint"] = found.old_kind
        print(json.dumps({**doc, "notes": list(found.said)}, indent=1))
    else:
        print("\n".join(found.said))
    return EXIT_ALLOW if found.freeze is not None else EXIT_REFUSE
