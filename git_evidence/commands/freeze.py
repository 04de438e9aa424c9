"""``git evidence freeze add|list|status``: the freeze ledger, written by CI only.

``add`` runs a test command N times for each of K seeds. A flake is reproduced only when
the same seed both passed and failed; only then is an entry appended, citing the lock
in force. A seed that fails every time is a counterexample to keep (a property failure
the seed reveals); a command that always fails is a product failure. Neither is frozen.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import subprocess
import sys
from datetime import datetime, timedelta, timezone

from git_evidence import ledger, lock
from git_evidence.context import chosen_policy
from git_evidence.errors import EXIT_ALLOW, EXIT_REFUSE, EvidenceError, UsageError
from git_evidence.git import Git
from git_evidence.identity import server_pusher
from git_evidence.ledger import Freeze, iso
from git_evidence.policy import Policy


def run(args: argparse.Namespace) -> int:
    git = Git()
    policy = chosen_policy(git, None)
    if args.verb == "add":
        return _add(git, policy, args)
    freezes, problems = read_ledger(git, policy)
    now = datetime.now(timezone.utc)
    if args.verb == "list":
        return _list(freezes, problems, now, args)
    return _status(git, freezes, now, args.test_id, args.fingerprint)


def read_ledger(
    git: Git, policy: Policy, rev: str | None = None
) -> tuple[list[Freeze], list[ledger.Problem]]:
    """The ledger as tests read it (the working tree's file), or at ``rev``."""
    data: bytes | None = None
    if rev is None:
        top = git.text("rev-parse", "--show-toplevel")
        path = os.path.join(top, policy.ledger_path)
        if os.path.exists(path):
            with open(path, "rb") as handle:
                data = handle.read()
        else:
            rev = "HEAD"
    if rev is not None:
        data = git.blob_at(rev, policy.ledger_path)
    return ledger.parse_ledger(data or b"", policy.max_window_hours)


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
    writer = args.writer or server_pusher(os.environ).name
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
    head = git.resolve_commit("HEAD")
    found = lock.find_lock(git, policy.notes_ref, head) if head else None
    if found is None:
        raise EvidenceError(
            "no lock in force at HEAD: a freeze cites the lock it was reproduced against",
            fix="fetch the locks (git fetch origin "
            f"{policy.notes_ref}:{policy.notes_ref}) or have a lock "
            "writer pin one",
        )
    pin = lock.read_lock(git, found).digest

    outcomes: dict[int, list[tuple[int, str]]] = {}
    for seed in range(args.seed, args.seed + args.seeds):
        env = {**os.environ, "EVIDENCE_SEED": str(seed), "PYTHONHASHSEED": str(seed)}
        outcomes[seed] = [_run_once(command, env, args.timeout) for _ in range(args.runs)]
        codes = [code for code, _ in outcomes[seed]]
        fails = sum(1 for code in codes if code != 0)
        print(f"seed {seed}: {args.runs - fails} passed, {fails} failed", file=sys.stderr)

    flaky = [s for s, runs in outcomes.items() if 0 < sum(1 for c, _ in runs if c != 0) < len(runs)]
    always = [s for s, runs in outcomes.items() if all(c != 0 for c, _ in runs)]
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
    failures = sum(1 for code, _ in runs if code != 0)
    fingerprint = args.fingerprint or next(digest for code, digest in runs if code != 0)
    now = datetime.now(timezone.utc).replace(microsecond=0)
    entry = {
        "test_id": args.test,
        "fingerprint": fingerprint,
        "seed": seed,
        "pin": pin,
        "reproduced": True,
        "runs": len(runs),
        "failures": failures,
        "writer": writer or "ci",
        "frozen_at": iso(now),
        "until": iso(now + timedelta(hours=hours)),
    }
    if args.reason:
        entry["reason"] = args.reason
    # what each run of the reproducing seed did: exit code and a digest of its output
    entry["outputs"] = [[code, digest] for code, digest in runs]
    entry["command"] = shlex.join(command)
    line = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    _append(git, policy, line.encode("utf-8") + b"\n")
    print(
        f"git-evidence: froze {args.test} (seed {seed}: {len(runs) - failures} passed, "
        f"{failures} failed) until {entry['until']}, pin {pin[:19]}…\n"
        f"  next: commit {policy.ledger_path} alone and push it as a ledger writer"
    )
    return EXIT_ALLOW


def _run_once(command: list[str], env: dict[str, str], timeout: float) -> tuple[int, str]:
    try:
        proc = subprocess.run(command, env=env, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return 124, "timeout"
    except OSError as exc:
        raise UsageError(f"cannot run {command[0]!r}: {exc.strerror}") from None
    digest = hashlib.sha256(proc.stdout + b"\0" + proc.stderr).hexdigest()[:16]
    return proc.returncode, digest


def _append(git: Git, policy: Policy, line: bytes) -> None:
    top = git.text("rev-parse", "--show-toplevel")
    path = os.path.join(top, policy.ledger_path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path) and os.path.getsize(path):
        with open(path, "rb") as handle:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                raise EvidenceError(
                    f"{policy.ledger_path}: its last line has no newline",
                    fix="restore the committed ledger (git checkout -- "
                    f"{policy.ledger_path}); it is append-only",
                )
    with open(path, "ab") as handle:
        handle.write(line)


def _list(
    freezes: list[Freeze], problems: list[ledger.Problem], now: datetime, args: argparse.Namespace
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
                    "now": iso(now),
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
            f"{state} {f.test_id} [{f.fingerprint}] seed {f.seed} until {iso(f.until)} "
            f"({f.failures}/{f.runs} failed){why}"
        )
    for problem in problems:
        print(f"ledger-entry: line {problem.line}: {problem.message}")
    if not shown and not problems:
        print("no freezes")
    return EXIT_ALLOW if not problems else EXIT_REFUSE


def _status(
    git: Git, freezes: list[Freeze], now: datetime, test_id: str, fingerprint: str | None
) -> int:
    born = first_added(git, test_id)
    for f in freezes:
        if f.test_id != test_id or (fingerprint and f.fingerprint != fingerprint):
            continue
        if not f.active(now):
            continue
        if born is not None and f.frozen_at < born:
            print(
                f"{test_id}: the freeze of line {f.line} predates the test "
                f"({iso(born)}): an added test never inherits an older freeze"
            )
            continue
        print(f"{test_id}: frozen until {iso(f.until)} (line {f.line}, seed {f.seed})")
        return EXIT_ALLOW
    print(f"{test_id}: no freeze in force")
    return EXIT_REFUSE


def first_added(git: Git, test_id: str) -> datetime | None:
    """When the test's file first entered history (None: not a path git knows, so
    unconstrained; a test not yet committed is born now)."""
    path = test_id.split("::", 1)[0]
    if not path or path.startswith("-"):
        return None
    code, out = git.run("log", "--diff-filter=A", "--format=%ct", "--", path, ok_codes=(0, 128))
    stamps = out.split()
    if code != 0:
        return None
    if not stamps:
        top = git.text("rev-parse", "--show-toplevel")
        return datetime.now(timezone.utc) if os.path.exists(os.path.join(top, path)) else None
    return datetime.fromtimestamp(int(stamps[-1]), timezone.utc)


def freeze_notes(git: Git, policy: Policy, tip: str, base: str | None) -> list[str]:
    """For reports: the freezes in force at ``tip`` and those expired since ``base``."""
    freezes, problems = read_ledger(git, policy, tip)
    skipped = (
        [
            f"{policy.ledger_path}: skipped {len(problems)} line(s) that are no valid freeze "
            f"(first: line {problems[0].line}: {problems[0].message}); "
            "`git evidence freeze list` names them"
        ]
        if problems
        else []
    )
    if not freezes:
        return skipped
    now = datetime.now(timezone.utc)
    since = None
    if base:
        stamp = git.text("log", "-1", "--format=%ct", base)
        since = datetime.fromtimestamp(int(stamp), timezone.utc) if stamp else None
    active = [f for f in freezes if f.active(now)]
    expired = [
        f
        for f in freezes
        if not f.active(now) and f.until <= now and (since is None or f.until > since)
    ]
    notes = [
        f"freezes in force: {len(active)}"
        + (
            " (" + ", ".join(f"{f.test_id} until {iso(f.until)}" for f in active[:5]) + ")"
            if active
            else ""
        )
    ]
    if expired:
        notes.append(
            f"freezes expired since the base: {len(expired)} ("
            + ", ".join(f.test_id for f in expired[:5])
            + ")"
        )
    return notes + skipped
