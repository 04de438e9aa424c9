"""Benchmark the fence against plain git on one synthetic repository.

Builds (once, cached under bench/.work) a repository of ~30,000 files, 10,000 of
them fixtures, then 20,000 product-only commits of 3 paths each, and reports medians
of alternating runs:

* pre-receive judging the 20,000-commit push  ÷  `git log --raw -z --no-renames` on
  the same range (target ≤ 1.3), with the peak memory of each process tree;
* pre-receive judging a 1-commit push  ÷  `python -c "import git"` (target ≤ 1.5).

Usage: python bench/bench_fence.py [--runs N] [--commits N] [--fixture-bytes N]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

from common import WORK, compile_package


def build(repo: Path, commits: int, fixture_bytes: int) -> tuple[str, str]:
    marker = repo / "bench-built"
    if marker.exists():
        built, tip = marker.read_text().split()
        return built, tip
    subprocess.run(["rm", "-rf", str(repo)], check=True)
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    rng = random.Random(7)
    proc = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=repo, stdin=subprocess.PIPE)
    out = proc.stdin
    assert out is not None
    mark = 0

    def blob(data: bytes) -> int:
        nonlocal mark
        mark += 1
        out.write(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(data), data))
        return mark

    product = [f"src/pkg{i // 200:03d}/mod{i % 200:03d}.py" for i in range(20_000)]
    fixtures = [f"tests/fixtures/d{i // 100:03d}/f{i % 100:03d}.json" for i in range(10_000)]
    files: list[tuple[str, int]] = []
    for path in product:
        files.append((path, blob(f"# {path}\nVALUE = 0\n".encode())))
    for path in fixtures:
        files.append((path, blob(rng.randbytes(fixture_bytes))))
    when = 1_700_000_000

    def commit(ref: str, message: str, entries: list[tuple[str, int]], parent: int | None) -> int:
        nonlocal mark, when
        mark += 1
        when += 1
        body = message.encode()
        out.write(b"commit %s\nmark :%d\n" % (ref.encode(), mark))
        out.write(b"committer Bench <bench@example.com> %d +0000\n" % when)
        out.write(b"data %d\n%s\n" % (len(body), body))
        if parent is not None:
            out.write(b"from :%d\n" % parent)
        for path, ref_mark in entries:
            out.write(b"M 100644 :%d %s\n" % (ref_mark, path.encode()))
        return mark

    base = commit("refs/heads/main", "seed", files, None)
    parent = base
    for n in range(commits):
        entries = [(p, blob(f"# {p}\nVALUE = {n}\n".encode())) for p in rng.sample(product, 3)]
        parent = commit("refs/heads/bench", f"product change {n}", entries, parent)
    out.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")
    base_id = subprocess.check_output(["git", "rev-parse", "main"], cwd=repo, text=True).strip()
    tip_id = subprocess.check_output(["git", "rev-parse", "bench"], cwd=repo, text=True).strip()
    marker.write_text(f"{base_id} {tip_id}\n")
    return base_id, tip_id


def tree_memory_kib(pid: int) -> tuple[int, int]:
    """(PSS, RSS) of a process and all its descendants, in KiB. PSS counts a page
    shared by several processes of the tree (the mapped pack) once in all; RSS counts
    it in every process that maps it."""
    pss = rss = 0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/smaps_rollup") as handle:
                for line in handle:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1])
                    elif line.startswith("Rss:"):
                        rss += int(line.split()[1])
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    stack.extend(int(c) for c in handle.read().split())
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return pss, rss


def timed(
    cmd: list[str], cwd: Path, stdin: bytes | None = None, sample: bool = False
) -> tuple[float, int, int]:
    """Wall time, and with ``sample`` the peak process-tree PSS and RSS (KiB, every
    2 ms; timing runs do not sample, so the sampler does not slow them)."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    peak_pss = peak_rss = 0
    done = threading.Event()

    def watch() -> None:
        nonlocal peak_pss, peak_rss
        while not done.is_set():
            pss, rss = tree_memory_kib(proc.pid)
            peak_pss, peak_rss = max(peak_pss, pss), max(peak_rss, rss)
            time.sleep(0.002)

    sampler = threading.Thread(target=watch)
    if sample:
        sampler.start()
    _, err = proc.communicate(stdin)
    elapsed = time.perf_counter() - start
    done.set()
    if sample:
        sampler.join()
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} exited {proc.returncode}: {err.decode()[-2000:]}")
    return elapsed, peak_pss, peak_rss


def compare(
    name: str,
    ours: tuple[list[str], Path, bytes | None],
    theirs: tuple[list[str], Path, None],
    runs: int,
) -> dict[str, float]:
    a_times, b_times = [], []
    for _ in range(runs):  # alternating, medians
        a_times.append(timed(*ours)[0])
        b_times.append(timed(*theirs)[0])
    a_mem = [timed(*ours, sample=True)[1:] for _ in range(3)]
    b_mem = [timed(*theirs, sample=True)[1:] for _ in range(3)]
    result = {
        "ours_s": statistics.median(a_times),
        "theirs_s": statistics.median(b_times),
        "ours_pss_mib": max(m[0] for m in a_mem) / 1024,
        "theirs_pss_mib": max(m[0] for m in b_mem) / 1024,
        "ours_rss_mib": max(m[1] for m in a_mem) / 1024,
        "theirs_rss_mib": max(m[1] for m in b_mem) / 1024,
    }
    result["ratio"] = result["ours_s"] / result["theirs_s"]
    print(
        f"{name}: ours {result['ours_s'] * 1000:.0f} ms, plain {result['theirs_s'] * 1000:.0f} ms,"
        f" ratio {result['ratio']:.2f}; peak memory of the process tree: PSS ours "
        f"{result['ours_pss_mib']:.0f} MiB vs plain {result['theirs_pss_mib']:.0f} MiB, "
        f"RSS sum ours {result['ours_rss_mib']:.0f} MiB vs plain {result['theirs_rss_mib']:.0f} MiB"
    )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--commits", type=int, default=20_000)
    parser.add_argument("--fixture-bytes", type=int, default=20_000)
    args = parser.parse_args()
    compile_package()
    repo = WORK / f"fence-{args.commits}-{args.fixture_bytes}.git"
    WORK.mkdir(exist_ok=True)
    t0 = time.perf_counter()
    base, tip = build(repo, args.commits, args.fixture_bytes)
    # the fence alone: no lock notes (bench_lock.py measures the lock)
    subprocess.run(["git", "update-ref", "-d", "refs/notes/evidence"], cwd=repo, check=False)
    print(f"repository {repo} ready in {time.perf_counter() - t0:.1f} s")
    hook = [sys.executable, "-m", "git_evidence", "pre-receive"]
    env_note = "pre-receive run in the bare repository, stdin `<old> <new> refs/heads/main`"
    print(env_note)
    big = compare(
        f"{args.commits}-commit push",
        (hook, repo, f"{base} {tip} refs/heads/main\n".encode()),
        (
            ["git", "log", "--raw", "-z", "--no-renames", "--format=%H", f"{base}..{tip}"],
            repo,
            None,
        ),
        args.runs,
    )
    parent = subprocess.check_output(["git", "rev-parse", f"{tip}~1"], cwd=repo, text=True).strip()
    small = compare(
        "1-commit push",
        (hook, repo, f"{parent} {tip} refs/heads/main\n".encode()),
        ([sys.executable, "-c", "import git"], repo, None),
        max(args.runs, 11),
    )
    print(
        f"targets: big ratio {big['ratio']:.2f} (<= 1.3), memory PSS +"
        f"{big['ours_pss_mib'] - big['theirs_pss_mib']:.0f} MiB, RSS sum +"
        f"{big['ours_rss_mib'] - big['theirs_rss_mib']:.0f} MiB (<= +60); "
        f"1-commit ratio {small['ratio']:.2f} (<= 1.5)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
