"""Benchmark the lock on the fence benchmark's repository (10,000 fixture files).

Reports medians of alternating runs:

* a cold `git evidence lock` ÷ `sha256sum` over the same files (target ≤ 1.2);
* re-pinning a commit whose fixtures differ from the last lock in one file ÷ the cold
  lock (target ≤ 0.05);
* `git evidence verify` with unchanged fixtures ÷ `sha256sum -c` of the same tree
  (target ≤ 0.05);
* a 1-commit push with the lock check on ÷ the same push with it off (target ≤ 1.1).

Usage: python bench/bench_lock.py [--runs N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_fence import build
from common import WORK, compile_package, git

NOTES = "refs/notes/evidence"


def run(cmd: list[str], cwd: Path, stdin: bytes | None = None) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(
            f"{cmd} exited {proc.returncode}: {proc.stderr.decode()[-2000:]}"
            f"{proc.stdout.decode()[-2000:]}"
        )
    return elapsed


def alternate(
    runs: int, ours: Callable[[], float], theirs: Callable[[], float]
) -> tuple[float, float]:
    a, b = [], []
    for _ in range(runs):
        a.append(ours())
        b.append(theirs())
    return statistics.median(a), statistics.median(b)


def commit_changing(repo: Path, parent: str, path: str, data: bytes) -> str:
    """A commit on top of ``parent`` with one file changed (plumbing, no checkout)."""
    blob = git(repo, "hash-object", "-w", "--stdin", input=data)
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}
        git(repo, "read-tree", parent, env=env)
        git(repo, "update-index", "--cacheinfo", f"100644,{blob},{path}", env=env)
        tree = git(repo, "write-tree", env=env)
    return git(
        repo,
        "commit-tree",
        tree,
        "-p",
        parent,
        "-m",
        f"change {path}",
        env={
            "GIT_AUTHOR_NAME": "b",
            "GIT_AUTHOR_EMAIL": "b@x",
            "GIT_COMMITTER_NAME": "b",
            "GIT_COMMITTER_EMAIL": "b@x",
        },
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    compile_package()
    repo = WORK / "fence-20000-20000.git"
    WORK.mkdir(exist_ok=True)
    base, _ = build(repo, 20_000, 20_000)
    evidence = [sys.executable, "-m", "git_evidence"]
    env_id = {"GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@x"}
    os.environ.update(env_id)

    checkout = WORK / "fixtures-checkout"
    if not checkout.exists():
        checkout.mkdir()
        archive = subprocess.run(
            ["git", "archive", base, "tests/fixtures"], cwd=repo, check=True, capture_output=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(checkout)], input=archive, check=True)
    files = sorted(str(p.relative_to(checkout)) for p in checkout.rglob("*") if p.is_file())
    sums = subprocess.run(
        ["sha256sum", *files], cwd=checkout, check=True, capture_output=True
    ).stdout
    (WORK / "fixtures.sha256").write_bytes(sums)
    print(
        f"{len(files)} fixture files, "
        f"{sum(os.path.getsize(checkout / f) for f in files) / 1e6:.0f} MB"
    )

    def cold() -> float:
        subprocess.run(["git", "update-ref", "-d", NOTES], cwd=repo, check=False)
        return run([*evidence, "lock", base], repo)

    cold_s, sum_s = alternate(args.runs, cold, lambda: run(["sha256sum", *files], checkout))
    print(
        f"cold lock: {cold_s * 1000:.0f} ms, sha256sum {sum_s * 1000:.0f} ms, "
        f"ratio {cold_s / sum_s:.2f} (<= 1.2)"
    )

    cold()  # base pinned from here on
    pinned_notes = git(repo, "rev-parse", NOTES)
    changed = commit_changing(repo, base, "tests/fixtures/d042/f017.json", b"changed\n")

    def repin() -> float:
        git(repo, "update-ref", NOTES, pinned_notes)
        return run([*evidence, "lock", changed], repo)

    repin_s = statistics.median(repin() for _ in range(args.runs))
    print(
        f"re-pin, one file changed: {repin_s * 1000:.0f} ms, cold {cold_s * 1000:.0f} ms, "
        f"ratio {repin_s / cold_s:.3f} (<= 0.05)"
    )

    git(repo, "update-ref", NOTES, pinned_notes)
    verify_s, check_s = alternate(
        args.runs,
        lambda: run([*evidence, "verify", base, "--base", base], repo),
        lambda: run(["sha256sum", "-c", "--quiet", str(WORK / "fixtures.sha256")], checkout),
    )
    print(
        f"verify, fixtures unchanged: {verify_s * 1000:.0f} ms, sha256sum -c "
        f"{check_s * 1000:.0f} ms, ratio {verify_s / check_s:.3f} (<= 0.05)"
    )

    product = commit_changing(repo, base, "src/pkg000/mod000.py", b"VALUE = 42\n")
    stdin = f"{base} {product} refs/heads/main\n".encode()

    def push(lock_on: bool) -> Callable[[], float]:
        def timed() -> float:
            if lock_on:
                git(repo, "update-ref", NOTES, pinned_notes)
            else:
                subprocess.run(["git", "update-ref", "-d", NOTES], cwd=repo, check=False)
            return run([*evidence, "pre-receive"], repo, stdin)

        return timed

    on_s, off_s = alternate(max(args.runs, 15), push(True), push(False))
    print(
        f"1-commit push: lock check on {on_s * 1000:.1f} ms, off {off_s * 1000:.1f} ms, "
        f"ratio {on_s / off_s:.3f} (<= 1.1)"
    )
    # leave the repository as the fence benchmark expects it: no lock
    subprocess.run(["git", "update-ref", "-d", NOTES], cwd=repo, check=False)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
