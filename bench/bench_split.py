"""Benchmark `git evidence split` against `git rebase` on one synthetic repository.

Builds (once, cached under bench/.work) a repository of ~12,000 files, 2,000 of them
fixtures, then 1,000 commits of 3 product files each, every tenth also changing a
fixture (100 mixed commits, the last one among them), and reports medians:

* `git evidence split --range BASE..main` (100 splits, 900 commits replayed)  ÷
  `git rebase --exec true BASE` over the same range (target ≤ 1.0);
* `git evidence split` of the tip alone (target ≤ 0.3 s).

After each run the branch is put back where it was; the working tree never changes
(the split keeps the tip's tree).

Usage: python bench/bench_split.py [--runs N] [--commits N] [--every N]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import WORK, compile_package, git

ENV = {
    "GIT_AUTHOR_NAME": "Bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "Bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def build(repo: Path, commits: int, every: int) -> tuple[str, str]:
    marker = repo / ".git" / "bench-built"
    if marker.exists():
        base, tip = marker.read_text().split()
        return base, tip
    subprocess.run(["rm", "-rf", str(repo)], check=True)
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    rng = random.Random(11)
    proc = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=repo, stdin=subprocess.PIPE)
    out = proc.stdin
    assert out is not None
    mark = 0

    def blob(data: bytes) -> int:
        nonlocal mark
        mark += 1
        out.write(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(data), data))
        return mark

    product = [f"src/pkg{i // 200:03d}/mod{i % 200:03d}.py" for i in range(10_000)]
    fixtures = [f"tests/fixtures/d{i // 100:03d}/f{i % 100:03d}.json" for i in range(2_000)]
    when = 1_700_000_000

    def commit(message: str, entries: list[tuple[str, int]], parent: int | None) -> int:
        nonlocal mark, when
        mark += 1
        when += 1
        body = message.encode()
        out.write(b"commit refs/heads/main\nmark :%d\n" % mark)
        out.write(b"author Bench <bench@example.com> %d +0000\n" % when)
        out.write(b"committer Bench <bench@example.com> %d +0000\n" % when)
        out.write(b"data %d\n%s\n" % (len(body), body))
        if parent is not None:
            out.write(b"from :%d\n" % parent)
        for path, ref_mark in entries:
            out.write(b"M 100644 :%d %s\n" % (ref_mark, path.encode()))
        return mark

    seed = [(p, blob(f"# {p}\n".encode())) for p in product + fixtures]
    parent = commit("seed", seed, None)
    for n in range(commits):
        entries = [(p, blob(f"# {p}\nVALUE = {n}\n".encode())) for p in rng.sample(product, 3)]
        if n % every == every - 1:
            entries.append((rng.choice(fixtures), blob(f'{{"n": {n}}}\n'.encode())))
        parent = commit(f"change {n}", entries, parent)
    out.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")
    git(repo, "checkout", "-q", "-f", "main")
    base = git(repo, "rev-parse", f"main~{commits}")
    tip = git(repo, "rev-parse", "main")
    marker.write_text(f"{base} {tip}\n")
    return base, tip


def timed(cmd: list[str], repo: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=repo, capture_output=True, env=_env())
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{cmd} exited {done.returncode}: {done.stderr.decode()[-2000:]}")
    return elapsed


def _env() -> dict[str, str]:
    # this source tree, whatever the interpreter has installed
    source = str(Path(__file__).resolve().parents[1])
    return {**os.environ, **ENV, "PYTHONPATH": source}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--commits", type=int, default=1_000)
    parser.add_argument("--every", type=int, default=10, help="one mixed commit in N")
    args = parser.parse_args()
    compile_package()
    WORK.mkdir(exist_ok=True)
    repo = WORK / f"split-{args.commits}-{args.every}"
    t0 = time.perf_counter()
    base, tip = build(repo, args.commits, args.every)
    print(f"repository {repo} ready in {time.perf_counter() - t0:.1f} s")
    ours_cmd = [sys.executable, "-m", "git_evidence", "split", "--range", f"{base}..main"]
    rebase_cmd = ["git", "rebase", "-q", "--exec", "true", base]
    one_cmd = [sys.executable, "-m", "git_evidence", "split"]

    def reset() -> None:
        git(repo, "update-ref", "refs/heads/main", tip)

    ours, theirs, one = [], [], []
    for _ in range(args.runs):  # alternating, medians
        ours.append(timed(ours_cmd, repo))
        split_tip = git(repo, "rev-parse", "main")
        reset()
        theirs.append(timed(rebase_cmd, repo))
        if git(repo, "rev-parse", "HEAD") != tip:
            raise SystemExit("the rebase did not end where it started")
        reset()
    for _ in range(max(args.runs, 11)):
        one.append(timed(one_cmd, repo))
        reset()
    mixed = args.commits // args.every
    tree_kept = git(repo, "rev-parse", f"{split_tip}^{{tree}}") == git(
        repo, "rev-parse", f"{tip}^{{tree}}"
    )
    ours_s, theirs_s, one_s = (statistics.median(t) for t in (ours, theirs, one))
    print(
        f"split --range over {args.commits} commits ({mixed} mixed): ours {ours_s:.2f} s, "
        f"`git rebase --exec true` {theirs_s:.2f} s, ratio {ours_s / theirs_s:.3f} (<= 1.0); "
        f"final tree kept: {tree_kept}"
    )
    print(f"one split of the tip: {one_s * 1000:.0f} ms (<= 300 ms)")
    return 0 if ours_s <= theirs_s and one_s <= 0.3 and tree_kept else 1


if __name__ == "__main__":
    raise SystemExit(main())
