"""Benchmark the pytest plugin on a generated suite of trivial tests.

A git repository holds N tests (default 5,000, in files of 100) and a labels file on
main naming every one (mostly invariant, some nondeterministic and characterization,
all passing). The plugin is installed as pip would install it (a ``pytest11`` entry
point on the path), so "plain" is pytest with the plugin loaded but not asked for, and
"evidence" is ``pytest --evidence`` (labels read from the base revision through git).
"not installed" is pytest without the entry point at all. Each configuration runs
alternately; medians of wall time and of CPU time (user + system of pytest and its
xdist workers, steadier on a shared machine) are reported, with and without ``-n 2``.

Hypothesis' pytest plugin is disabled in every run (it imports Hypothesis at the end
of a session, a constant second that would only dilute the ratios).

On a shared or small machine wall and CPU time swing with the load. ``--instructions``
runs each configuration once under ``valgrind --tool=callgrind --trace-children=yes``
and compares the instructions executed by pytest, its xdist workers and git: a count
the load does not change (and some 40 times slower to take).

Usage: python bench/bench_plugin.py [--tests N] [--runs N] [--no-xdist] [--instructions]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from common import compile_package, git  # noqa: E402

PER_FILE = 100
LIMITS = {"": 1.05, "-n 2": 1.10}  # evidence ÷ plain


def build(repo: Path, tests: int) -> None:
    git(repo.parent, "init", "-q", "-b", "main", str(repo))
    (repo / "tests").mkdir()
    rows = []
    for start in range(0, tests, PER_FILE):
        name = f"tests/test_gen_{start // PER_FILE:03d}.py"
        body = "".join(
            f"def test_{n:05d}():\n    pass\n\n\n"
            for n in range(start, min(tests, start + PER_FILE))
        )
        (repo / name).write_text(body)
        for n in range(start, min(tests, start + PER_FILE)):
            kind = (
                "nondeterministic"
                if n % 50 == 0
                else "characterization"
                if n % 20 == 0
                else "invariant"
            )
            rows.append(f"{name}::test_{n:05d}\t{kind}\n")
    (repo / "tests/evidence-labels.tsv").write_text("".join(rows))
    (repo / "pytest.ini").write_text("[pytest]\n")  # rootdir = the repository
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "suite and labels")


def entry_point(site: Path) -> None:
    info = site / "git_evidence_bench-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: git-evidence-bench\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text("[pytest11]\ngit_evidence = git_evidence.plugin.entry\n")


def cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def timed(repo: Path, args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one pytest run (CPU includes the xdist workers, which
    pytest reaps)."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += ["-p", "no:hypothesispytest", *args]
    start, start_cpu = time.perf_counter(), cpu()
    proc = subprocess.run(command, cwd=repo, env=env, capture_output=True, check=False)
    elapsed, used = time.perf_counter() - start, cpu() - start_cpu
    if proc.returncode != 0:
        raise SystemExit(
            f"{' '.join(args)}: exit {proc.returncode}\n{proc.stdout.decode()[-2000:]}"
        )
    return elapsed, used


def instructions(repo: Path, args: list[str], env: dict[str, str], out: Path) -> int:
    """Instructions executed by one pytest run and every process it starts."""
    out.mkdir()
    command = ["valgrind", "--tool=callgrind", "--trace-children=yes"]
    command += [f"--callgrind-out-file={out}/%p.out", sys.executable, "-m", "pytest", "-q"]
    command += ["-p", "no:cacheprovider", "-p", "no:hypothesispytest", *args]
    subprocess.run(command, cwd=repo, env=env, capture_output=True, check=True)
    total = 0
    for path in out.glob("*.out"):
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("summary:"):
                total += int(line.split()[1])
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=5000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--no-xdist", action="store_true", help="skip the -n 2 figures")
    parser.add_argument(
        "--instructions", action="store_true", help="count instructions under valgrind instead"
    )
    args = parser.parse_args()
    compile_package()
    tmp = Path(tempfile.mkdtemp(prefix="bench-plugin-"))
    failed = False
    try:
        os.environ.update(
            {
                "GIT_AUTHOR_NAME": "b",
                "GIT_AUTHOR_EMAIL": "b@x",
                "GIT_COMMITTER_NAME": "b",
                "GIT_COMMITTER_EMAIL": "b@x",
            }
        )
        repo = tmp / "repo"
        build(repo, args.tests)
        site = tmp / "site"
        entry_point(site)
        project = str(HERE.parent)
        base_env = {
            k: v for k, v in os.environ.items() if not k.startswith(("EVIDENCE_", "PYTEST_"))
        }
        installed = {**base_env, "PYTHONPATH": f"{site}{os.pathsep}{project}"}
        bare = {**base_env, "PYTHONPATH": project}
        modes = [""] if args.no_xdist else ["", "-n 2"]
        for mode in modes:
            extra = mode.split()
            configs = {
                "not installed": (extra, bare),
                "plain": (extra, installed),
                "evidence": ([*extra, "--evidence"], installed),
            }
            if args.instructions:
                counts = {
                    name: instructions(repo, flags, env, tmp / f"cg-{mode}-{name}".replace(" ", ""))
                    for name, (flags, env) in configs.items()
                }
                ratio = counts["evidence"] / counts["plain"]
                failed |= ratio > LIMITS[mode]
                print(
                    f"{args.tests} tests, pytest {mode + ' ' if mode else ''}instructions: "
                    + ", ".join(f"{name} {n / 1e9:.2f} G" for name, n in counts.items())
                    + f"; --evidence ÷ plain = {ratio:.3f} "
                    f"({'within' if ratio <= LIMITS[mode] else 'OVER'} {LIMITS[mode]:.2f})"
                )
                continue
            wall: dict[str, list[float]] = {name: [] for name in configs}
            used: dict[str, list[float]] = {name: [] for name in configs}
            for flags, env in configs.values():  # warm caches (pyc, page cache)
                timed(repo, flags, env)
            for _ in range(args.runs):
                for name, (flags, env) in configs.items():
                    elapsed, seconds = timed(repo, flags, env)
                    wall[name].append(elapsed)
                    used[name].append(seconds)
            limit = LIMITS[mode]
            label = f"pytest {mode} ".replace("  ", " ")
            for what, times in (("wall", wall), ("CPU", used)):
                med = {name: statistics.median(values) for name, values in times.items()}
                ratio = med["evidence"] / med["plain"]
                failed |= what == "CPU" and ratio > limit
                print(
                    f"{args.tests} tests, {label}{what} (median of {args.runs}): not "
                    f"installed {med['not installed']:.2f} s, plain {med['plain']:.2f} s, "
                    f"--evidence {med['evidence']:.2f} s; --evidence ÷ plain = {ratio:.3f} "
                    f"({'within' if ratio <= limit else 'OVER'} {limit:.2f})"
                )
    finally:
        if os.environ.get("BENCH_KEEP"):
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
