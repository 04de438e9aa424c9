"""Benchmark the lock on trees of many small fixture files.

Builds (once, cached under bench/.work) one repository per tree, its files under
tests/fixtures (text, sizes spread around the mean), and a checkout of them, then
reports medians of alternating runs:

* a cold `git evidence lock` (no note, no validated-note cache) ÷ `sha256sum` over
  the same files on disk: 5,000 files of ~2 KB (target ≤ 1.2) and 500 files of
  ~14 KB (target ≤ 1.5);
* re-pinning a commit whose fixtures differ from the last lock in one file ÷ the cold
  lock, on a 10,000-file tree (target ≤ 0.1);
* `git evidence verify` with unchanged fixtures ÷ `sha256sum -c` (target ≤ 0.05).

Usage: python bench/bench_smallfiles.py [--runs N] [--only NAME]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from common import (
    IDENTITY,
    NOTES,
    WORK,
    Run,
    alternate,
    commit_changing,
    compile_package,
    fastest,
    git,
    machine_note,
    measure,
    median_of,
    profile,
    spread,
)

EVIDENCE = [sys.executable, "-m", "git_evidence"]
VOCABULARY = (  # noqa: SIM905 (one line instead of sixty)
    "def class return import from self None True False if else elif for while in not "
    "and or with as yield lambda async await assert raise try except finally pass "
    "value items result data path name key index count error message config options "
    "print len range list dict set tuple str int float bytes open read write format"
).split()


@dataclass(frozen=True)
class Tree:
    name: str
    files: int
    mean_bytes: int
    lock_target: float | None  # cold lock ÷ sha256sum


TREES = (
    Tree("5000x2k", 5_000, 2_000, 1.2),
    Tree("500x14k", 500, 14_000, 1.5),
    Tree("10000x2k", 10_000, 2_000, None),
)
REPIN_TREE = "10000x2k"


def content(rng: random.Random, size: int, serial: int) -> bytes:
    """Source-like text of about ``size`` bytes (compresses as fixtures do)."""
    lines = [f"# fixture {serial}"]
    total = len(lines[0])
    while total < size:
        words = rng.choices(VOCABULARY, k=rng.randint(3, 12))
        line = "    " * rng.randint(0, 3) + " ".join(words)
        lines.append(line)
        total += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


def fixture_paths(rng: random.Random, count: int) -> list[str]:
    """``tests/fixtures/<group>/<code>_<words>.py``, ~50 files a directory."""
    groups = [
        f"{rng.choice(VOCABULARY)}_{rng.choice(VOCABULARY)}_{g}" for g in range(count // 50 + 1)
    ]
    out = []
    for n in range(count):
        group = groups[n // 50]
        sub = "nested/" if n % 7 == 0 else ""
        out.append(
            f"tests/fixtures/{group}/{sub}{chr(65 + n % 26)}{n:05d}_{rng.choice(VOCABULARY)}.py"
        )
    return out


def build(repo: Path, checkout: Path, tree: Tree) -> str:
    """The repository (its base commit holds the fixtures and a little product) and a
    checkout of the fixtures; the base commit's id."""
    marker = repo / "bench-built"
    if marker.exists() and checkout.exists():
        return marker.read_text().strip()
    t0 = time.perf_counter()
    subprocess.run(["rm", "-rf", str(repo), str(checkout)], check=True)
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    git(repo, "symbolic-ref", "HEAD", "refs/heads/main")
    rng = random.Random(tree.files * 31 + tree.mean_bytes)
    proc = subprocess.Popen(["git", "fast-import", "--quiet"], cwd=repo, stdin=subprocess.PIPE)
    out = proc.stdin
    assert out is not None
    entries = []
    paths = fixture_paths(rng, tree.files) + [f"src/app/mod{i}.py" for i in range(20)]
    for mark, path in enumerate(paths, start=1):
        size = rng.randint(tree.mean_bytes // 2, tree.mean_bytes * 3 // 2)
        data = content(rng, size, mark)
        out.write(b"blob\nmark :%d\ndata %d\n%s\n" % (mark, len(data), data))
        entries.append(b"M 100644 :%d %s\n" % (mark, path.encode()))
    body = b"fixtures"
    out.write(b"commit refs/heads/main\ncommitter Bench <bench@example.com> 1700000000 +0000\n")
    out.write(b"data %d\n%s\n" % (len(body), body))
    out.writelines(entries)
    out.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")
    git(repo, "repack", "-adq")
    base = git(repo, "rev-parse", "refs/heads/main")
    checkout.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "archive", base, "tests/fixtures"], cwd=repo, check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(checkout)], input=archive, check=True)
    marker.write_text(base + "\n")
    print(f"built {repo.name} and its checkout in {time.perf_counter() - t0:.1f} s")
    return base


def forget_lock(repo: Path) -> None:
    """No note and no validated-note cache: the lock starts from nothing."""
    subprocess.run(["git", "update-ref", "-d", NOTES], cwd=repo, check=False)
    shutil.rmtree(repo / "git-evidence" / "locks", ignore_errors=True)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def ratio_line(label: str, ours: list[Run], theirs: list[Run], them: str, target: str) -> float:
    wall = median_of(ours, "wall") / median_of(theirs, "wall")
    cpu = median_of(ours, "cpu") / median_of(theirs, "cpu")
    print(
        f"{label}: {ms(median_of(ours, 'wall'))} (runs {spread(ours)}), {them} "
        f"{ms(median_of(theirs, 'wall'))} (runs {spread(theirs)}): ratio {wall:.3f} ({target}; "
        f"fastest runs {fastest(ours) / fastest(theirs):.3f}); CPU "
        f"{ms(median_of(ours, 'cpu'))} vs {ms(median_of(theirs, 'cpu'))}, ratio {cpu:.2f}"
    )
    return wall


def bench_tree(tree: Tree, runs: int, profiled: bool) -> None:
    repo = WORK / f"small-{tree.name}.git"
    checkout = WORK / f"small-{tree.name}-checkout"
    base = build(repo, checkout, tree)
    files = sorted(str(p.relative_to(checkout)) for p in checkout.rglob("*") if p.is_file())
    total = sum(os.path.getsize(checkout / f) for f in files)
    print(f"{tree.name}: {len(files)} fixture files, {total / 1e6:.1f} MB on disk")
    listing = WORK / f"small-{tree.name}.sha256"
    listing.write_bytes(
        subprocess.run(["sha256sum", *files], cwd=checkout, capture_output=True, check=True).stdout
    )

    def cold() -> Run:
        forget_lock(repo)
        return measure([*EVIDENCE, "lock", base], repo)

    def sha256sum() -> Run:
        return measure(["sha256sum", *files], checkout)

    def verify() -> Run:
        return measure([*EVIDENCE, "verify", base, "--base", base], repo)

    def sha256sum_check() -> Run:
        return measure(["sha256sum", "-c", "--quiet", str(listing)], checkout)

    cold()  # warm the page cache and the byte code
    sha256sum()
    locks, sums = alternate(runs, cold, sha256sum)
    target = f"target <= {tree.lock_target}" if tree.lock_target else "no target"
    ratio_line("  cold lock", locks, sums, "sha256sum", target)

    cold()  # base pinned (and its note validated) from here on
    pinned = git(repo, "rev-parse", NOTES)
    verifies, checks = alternate(runs, verify, sha256sum_check)
    ratio_line("  verify, unchanged", verifies, checks, "sha256sum -c", "target <= 0.05")

    if tree.name == REPIN_TREE:
        changed = commit_changing(
            repo, base, {files[len(files) // 2]: b"changed\n"}, "change one fixture"
        )

        def repin() -> Run:
            git(repo, "update-ref", NOTES, pinned)
            return measure([*EVIDENCE, "lock", changed], repo)

        repin()
        repins = [repin() for _ in range(runs)]
        wall, cold_wall = median_of(repins, "wall"), median_of(locks, "wall")
        print(
            f"  re-pin, one file changed: {ms(wall)} (runs {spread(repins)}), cold lock "
            f"{ms(cold_wall)}: ratio {wall / cold_wall:.3f} (target <= 0.1; fastest runs "
            f"{fastest(repins) / fastest(locks):.3f}); CPU {ms(median_of(repins, 'cpu'))}"
        )
    if profiled:
        forget_lock(repo)
        profile([*EVIDENCE, "lock", base], repo, None, WORK / f"small-{tree.name}-lock.prof")
    forget_lock(repo)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--only", choices=[t.name for t in TREES], action="append")
    parser.add_argument(
        "--profile", action="store_true", help="also run one cold lock under cProfile"
    )
    args = parser.parse_args()
    compile_package()
    WORK.mkdir(exist_ok=True)
    os.environ.update(IDENTITY)
    print(f"machine: {machine_note()}")
    for tree in TREES:
        if not args.only or tree.name in args.only:
            bench_tree(tree, args.runs, args.profile)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
