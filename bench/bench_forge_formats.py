"""Benchmark the forge formats of a large refused request, in this process.

A mixed commit of N product files and one fixture, plus an added-test hold of N/10
files (the document `ci --format json` writes), rendered as SARIF (one result per
path), GitLab Code Quality, GitHub workflow commands (at most ten of each kind, and
the notice counting the rest) and the job summary. Reports each rendering's median
time over the runs and its size; the summary's size is held under GitHub's 1 MiB.

Usage: python bench/bench_forge_formats.py [--runs N] [--paths N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from git_evidence.forge import formats, job_summary, sarif


def document(paths: int) -> dict[str, Any]:
    product = [f"src/gen/module_{n:05d}.py" for n in range(paths)]
    tests = [f"tests/test_gen_{n:05d}.py" for n in range(paths // 10)]
    finding = {
        "rule": "mixed-commit",
        "decision": "reject",
        "commit": "a" * 40,
        "paths": {"fixture": ["tests/fixtures/case.json"], "product": product},
        "message": "mixes evidence (fixture) with product",
        "hint": "split commit aaaaaaaaaaaa: `git evidence split aaaaaaaaaaaa`",
        "blocking": True,
        "accepted_by": None,
    }
    hold = {
        "rule": "added-test",
        "decision": "hold",
        "commit": None,
        "paths": {"test": tests},
        "message": "new test files",
        "hint": "a reviewer accepts it by pushing it to a protected branch",
        "blocking": True,
        "accepted_by": None,
    }
    return {
        "decision": "reject",
        "pusher": "copilot-swe-agent",
        "policy": {"source": "base:.git-evidence.toml", "digest": "sha256:" + "b" * 64},
        "updates": [
            {
                "ref": "refs/heads/main",
                "base": "c" * 40,
                "commits": 1,
                "decision": "reject",
                "findings": [finding, hold],
            }
        ],
    }


def timed(runs: int, render: Callable[[], str]) -> tuple[float, int]:
    times, size = [], 0
    for _ in range(runs):
        start = time.perf_counter()
        size = len(render().encode())
        times.append(time.perf_counter() - start)
    return statistics.median(times), size


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--paths", type=int, default=1500)
    args = parser.parse_args()
    doc = document(args.paths)
    items = formats.check_items(doc)

    def as_sarif() -> str:
        log = sarif.sarif(
            items, version="0", category=sarif.FENCE, succeeded=True, exit_code=1, properties={}
        )
        return json.dumps(log)

    renders = {
        "sarif": as_sarif,
        "codequality": lambda: json.dumps(formats.codequality(items)),
        "workflow commands": lambda: "\n".join(formats.workflow_commands(items)),
        "job summary": lambda: job_summary.check_summary(doc),
    }
    print(f"{args.paths + 1 + args.paths // 10} paths, median of {args.runs} runs")
    for name, render in renders.items():
        seconds, size = timed(args.runs, render)
        print(f"  {name:18} {seconds * 1000:8.1f} ms  {size / 1024:9.1f} KiB")
    lines = formats.workflow_commands(items)
    print(f"  annotations: {len(lines) - 1} and the notice: {lines[-1][:90]}...")


if __name__ == "__main__":
    main()
