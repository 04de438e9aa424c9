"""Benchmark `git evidence ci` and the sharded judge.

Reports medians (and the fastest) of alternating runs:

* `git evidence ci` of a GitHub pull request of 50 commits (the event payload, the job's
  clone, the github format with its job summary) ÷ `git evidence check` of the same
  range as the same pusher (target ≤ 1.2): the forge's part is not where time goes.
  Also, for information, the first `ci` of a clone that has no lock notes yet (it
  fetches them from the remote).
* a judgement over 4 shards (`judge --shard I/4 --jobs 1`, each shard alone) ÷ the
  unsharded judgement (`--jobs 1`), for each shard (target ≤ 0.3), and the merge.

Usage: python bench/bench_ci.py [--runs N] [--commits N] [--run-seconds S]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from common import IDENTITY, WORK, alternate, compile_package, fastest, git, machine_note, measure

AGENT = "copilot-swe-agent"
POLICY = """\
[identities]
evidence_writers = ["alice"]
lock_writers = ["ci-bot"]
"""


def build_request(root: Path, commits: int) -> tuple[Path, Path, str, str]:
    """A remote with a seeded main (pinned), a branch of ``commits`` product commits
    pushed as a pull request's head, and the CI job's clone with the head and the
    notes fetched. Returns (remote, job, base, head)."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    remote, seed, job = root / "remote.git", root / "seed", root / "job"
    git(root, "init", "-q", "--bare", "-b", "main", str(remote))
    git(root, "init", "-q", "-b", "main", str(seed))
    (seed / ".git-evidence.toml").write_text(POLICY)
    for n in range(200):
        path = seed / "src" / f"m{n % 20:02d}" / f"f{n:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {n}\n")
    fixtures = seed / "tests" / "fixtures"
    fixtures.mkdir(parents=True)
    for n in range(100):
        (fixtures / f"case{n:03d}.json").write_text(json.dumps({"n": n}) + "\n")
    git(seed, "add", "-A", env=IDENTITY)
    git(seed, "commit", "-qm", "seed", env=IDENTITY)
    base = git(seed, "rev-parse", "HEAD")
    ci = {**IDENTITY, "GIT_EVIDENCE_PUSHER": "ci-bot"}
    measure([sys.executable, "-m", "git_evidence", "lock"], seed, env=ci)
    git(seed, "push", "-q", str(remote), "main", "refs/notes/evidence")
    git(seed, "checkout", "-qb", "agent")
    for n in range(commits):
        for k in range(3):
            i = (n * 3 + k) % 200
            (seed / "src" / f"m{i % 20:02d}" / f"f{i:03d}.py").write_text(f"VALUE = {n}{k}\n")
        git(seed, "commit", "-qam", f"agent change {n}", env=IDENTITY)
    head = git(seed, "rev-parse", "HEAD")
    git(seed, "push", "-q", str(remote), f"{head}:refs/pull/1/head")
    git(root, "clone", "-q", f"file://{remote}", str(job))
    git(
        job, "fetch", "-q", "origin", "refs/pull/1/head", "+refs/notes/evidence:refs/notes/evidence"
    )
    return remote, job, base, head


def event_env(root: Path, base: str, head: str) -> dict[str, str]:
    event = root / "event.json"
    event.write_text(
        json.dumps(
            {
                "action": "synchronize",
                "number": 1,
                "pull_request": {
                    "number": 1,
                    "base": {"ref": "main", "sha": base},
                    "head": {"ref": "agent", "sha": head},
                    "user": {"login": AGENT},
                },
                "sender": {"login": AGENT},
            }
        )
    )
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request_target",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_STEP_SUMMARY": str(root / "summary.md"),
    }


def measure_ci(root: Path, runs: int, commits: int) -> None:
    remote, job, base, head = build_request(root / "request", commits)
    env = event_env(root, base, head)
    ci = [sys.executable, "-m", "git_evidence", "ci"]
    check = [sys.executable, "-m", "git_evidence", "check", f"{base}..{head}", "--as", AGENT]
    ours, theirs = alternate(
        runs, lambda: measure(ci, job, env=env), lambda: measure(check, job, env=env)
    )
    a, b = statistics.median(r.wall for r in ours), statistics.median(r.wall for r in theirs)
    print(
        f"ci ({commits}-commit pull request, github format) ÷ check of the same range: "
        f"{a / b:.2f} median ({a * 1000:.0f} ms vs {b * 1000:.0f} ms), "
        f"{fastest(ours) / fastest(theirs):.2f} fastest  target ≤ 1.2"
    )
    fresh = root / "fresh"
    first = []
    for _ in range(max(1, runs // 2)):
        if fresh.exists():
            shutil.rmtree(fresh)
        git(root, "clone", "-q", f"file://{remote}", str(fresh))
        first.append(measure(ci, fresh, env=env).wall)
    print(
        f"  first ci of a fresh clone (fetches the head and the lock notes): "
        f"{statistics.median(first) * 1000:.0f} ms"
    )


def build_judged(root: Path, run_seconds: float) -> Path:
    """A repository whose policy has 4 properties × 8 seeds × 2 runs, each run sleeping
    ``run_seconds`` (the judge's own work is the rest)."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", "main")
    props = "".join(
        f'[[judge.property]]\nid = "p{n}"\ncommand = ["sleep", "{run_seconds}"]\n\n'
        for n in range(4)
    )
    (root / ".git-evidence.toml").write_text(
        POLICY + f"\n[judge]\nrepeat = 2\nseeds = 8\n\n{props}"
    )
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    git(root, "add", "-A", env=IDENTITY)
    git(root, "commit", "-qm", "seed", env=IDENTITY)
    return root


def measure_shards(root: Path, runs: int, run_seconds: float) -> None:
    repo = build_judged(root / "judged", run_seconds)
    judge = [sys.executable, "-m", "git_evidence", "judge", "--base", "HEAD", "--jobs", "1"]
    whole = [measure(judge, repo).wall for _ in range(runs)]
    unsharded = statistics.median(whole)
    print(
        f"judge --jobs 1, 64 runs of {run_seconds * 1000:.0f} ms: "
        f"{unsharded * 1000:.0f} ms median ({min(whole) * 1000:.0f} fastest)"
    )
    with tempfile.TemporaryDirectory() as tmp:
        parts = []
        worst = 0.0
        for index in range(1, 5):
            part = str(Path(tmp) / f"part{index}.json")
            walls = [
                measure([*judge, "--shard", f"{index}/4", "--out", part], repo).wall
                for _ in range(runs)
            ]
            wall = statistics.median(walls)
            worst = max(worst, wall / unsharded)
            parts.append(part)
            print(
                f"  shard {index}/4: {wall * 1000:.0f} ms = {wall / unsharded:.2f} × unsharded  "
                "target ≤ 0.3"
            )
        merge = [sys.executable, "-m", "git_evidence", "judge", "--merge", *parts]
        merged = statistics.median(measure(merge, repo).wall for _ in range(runs))
        print(f"  merge of the 4 parts: {merged * 1000:.0f} ms; worst shard {worst:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--commits", type=int, default=50)
    parser.add_argument("--run-seconds", type=float, default=0.25)
    args = parser.parse_args()
    compile_package()
    print(machine_note())
    root = WORK / "ci"
    measure_ci(root, args.runs, args.commits)
    measure_shards(root, max(3, args.runs // 2), args.run_seconds)


if __name__ == "__main__":
    main()
