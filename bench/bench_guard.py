"""Benchmark `git evidence guard`, the agent's hook that runs before every tool call.

A repository like a project's (a policy on main, a remote-tracking main, 2,000
product files, 1,000 tests, 1,000 fixtures) is built in a temporary directory and the
guard installed there (`install --agent claude`: the policy pinned). Each event below
is fed on stdin to the guard as installed (`python -m git_evidence guard
--pinned=DIGEST`) N times (default 100), alternating with `python -c pass` of the same
interpreter, so drift in the machine's load falls on both; the writes are timed again
without the pin (the guard started by hand: the policy read where the client hooks
read it, three git processes). Reported per event: the median wall time, the fastest,
the median ÷ the median of `python -c pass`, and the same ratio of CPU time (user and
system of the process and of the gits it waited for), which a busy machine moves
less. Targets: median ≤ 50 ms and ≤ 4× python -c pass for every event; exit 1 when
one is missed.

The baseline is the interpreter's own start, site included (an editable install's
import hook is part of it, as it is of every hook that interpreter runs).

Usage: python bench/bench_guard.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from common import IDENTITY, Run, compile_package, git, machine_note, measure  # noqa: E402

LIMIT_MS = 50.0
LIMIT_RATIO = 4.0
POLICY = """\
[identities]
evidence_writers = ["alice"]
ledger_writers = ["ci-bot"]
"""


def build(repo: Path) -> None:
    git(repo.parent, "init", "-q", "-b", "main", str(repo))
    (repo / ".git-evidence.toml").write_text(POLICY)
    for n in range(2000):
        path = repo / "src" / f"pkg{n % 20}" / f"mod{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {n}\n")
    for n in range(1000):
        test = repo / "tests" / f"unit{n % 10}" / f"test_{n}.py"
        test.parent.mkdir(parents=True, exist_ok=True)
        test.write_text(f"def test_{n}():\n    assert {n} == {n}\n")
        fixture = repo / "tests" / "fixtures" / f"case{n % 10}" / f"f{n}.json"
        fixture.parent.mkdir(parents=True, exist_ok=True)
        fixture.write_text(json.dumps({"n": n}) + "\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "seed", env=IDENTITY)
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    done = subprocess.run(
        [sys.executable, "-m", "git_evidence", "install", "--agent", "claude"],
        cwd=repo,
        capture_output=True,
        check=True,
    )
    assert b"pinned" in done.stdout, done


def pinned_guard(repo: Path) -> list[str]:
    """The guard's command line as the installed hook has it (its pin's digest)."""
    settings = json.loads((repo / ".claude" / "settings.json").read_text())
    command = settings["hooks"]["PreToolUse"][0]["hooks"][0]["command"]
    pinned = next(w for w in command.split() if w.startswith("--pinned="))
    return [sys.executable, "-m", "git_evidence", "guard", pinned]


def events(repo: Path) -> dict[str, tuple[bytes, int]]:
    """Each event, and the exit status it must give."""

    def event(tool: str, **tool_input: object) -> bytes:
        doc = {"hook_event_name": "PreToolUse", "cwd": str(repo), "tool_name": tool}
        return json.dumps({**doc, "tool_input": tool_input}).encode()

    return {
        "Read (writes nothing)": (event("Read", file_path=str(repo / "src/pkg1/mod1.py")), 0),
        "Bash pytest (writes nothing)": (event("Bash", command="pytest tests/ -q"), 0),
        "Write product (allowed)": (event("Write", file_path="src/pkg1/new.py", content="x"), 0),
        "Edit new test (allowed)": (event("Edit", file_path="tests/unit1/test_new.py"), 0),
        "Write fixture (denied)": (event("Write", file_path="tests/fixtures/case1/f1.json"), 2),
        "Edit existing test (denied)": (event("Edit", file_path="tests/unit1/test_1.py"), 2),
        "Bash sed -i fixture (denied)": (
            event("Bash", command="sed -i 's/1/2/' tests/fixtures/case1/f1.json"),
            2,
        ),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args()
    compile_package()
    os.environ.pop("CLAUDE_PROJECT_DIR", None)
    tmp = Path(tempfile.mkdtemp(prefix="bench-guard-"))
    failed = False
    try:
        repo = tmp / "repo"
        build(repo)
        module = [sys.executable, "-m", "git_evidence", "guard"]
        pinned = pinned_guard(repo)
        baseline = [sys.executable, "-c", "pass"]
        print(machine_note())
        print(f"{args.runs} calls each, alternating with `python -c pass`")
        cases = [(name, pinned, data, code) for name, (data, code) in events(repo).items()]
        cases += [
            (f"{name}, no pin", module, data, code)
            for name, (data, code) in events(repo).items()
            if "writes nothing" not in name
        ]
        script = Path(sys.executable).with_name("git-evidence")
        if script.exists():  # as the installed hook runs it: git, then the console script
            data, code = events(repo)["Write product (allowed)"]
            as_hook = ["git", "evidence", "guard", pinned[-1]]
            cases.append(("  the same, as `git evidence guard`", as_hook, data, code))
            os.environ["PATH"] = f"{script.parent}{os.pathsep}{os.environ['PATH']}"
        for name, guard, data, code in cases:
            measure(guard, repo, data, ok=(code,))  # warm the page cache
            ours: list[Run] = []
            theirs: list[Run] = []
            for _ in range(args.runs):
                ours.append(measure(guard, repo, data, ok=(code,)))
                theirs.append(measure(baseline, repo))
            median = statistics.median(r.wall for r in ours) * 1000
            base = statistics.median(r.wall for r in theirs) * 1000
            ratio = median / base
            fastest = min(r.wall for r in ours) * 1000
            cpu = statistics.median(r.cpu for r in ours) / statistics.median(r.cpu for r in theirs)
            ok = median <= LIMIT_MS and ratio <= LIMIT_RATIO
            failed |= not ok
            print(
                f"{name:45} median {median:5.1f} ms (fastest {fastest:5.1f}), "
                f"python -c pass {base:5.1f} ms, ratio {ratio:4.2f} (CPU {cpu:4.2f}) "
                f"({'within' if ok else 'OVER'} {LIMIT_MS:.0f} ms and {LIMIT_RATIO}x)"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
