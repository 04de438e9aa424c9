"""Benchmark `git evidence judge`.

Reports medians of alternating runs:

* `judge --repeat 5` of a small real pytest suite ÷ (5 × that suite alone + one
  `git archive | tar -x`) (target ≤ 1.10): what judging costs beyond running the tests;
* hashing the workspace's lock roots from disk ÷ `sha256sum` over the same files
  (target ≤ 1.2);
* `judge --jobs 2` ÷ `judge --jobs 1` for a CPU-bound suite of 8 runs (target ≤ 0.65 on
  two or more cores);
* the sandbox's own cost: one bubblewrap start around `true` ÷ `true` alone (what each
  run pays), and the judgement with `[judge] sandbox = "none"` beside the default;
* the preflight (one sandbox start, one interpreter start, the runner's modules found)
  beside a sandboxed `python -c pass` (target ≤ 60 ms).

Usage: python bench/bench_judge.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from common import WORK, compile_package, git

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from git_evidence.lock.disk import worktree_manifest  # noqa: E402

ENV = {
    **os.environ,
    "PYTHONPATH": str(ROOT),
    "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}
SUITE = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/properties"]
BUSY = [
    sys.executable,
    "-c",
    "import os\nn = 0\nfor i in range(2_000_000):\n    n += i * int(os.environ['EVIDENCE_SEED'])",
]

TEST_FILE = """\
import os
import random
import sys

sys.path.insert(0, "src")
import app


def test_sorted_{n}():
    rng = random.Random(int(os.environ.get("EVIDENCE_SEED", "0")) + {n})
    data = [rng.randint(0, 1000) for _ in range(200)]
    assert app.sort(data) == sorted(data)
"""


def timed(cmd: list[str], cwd: Path, ok: tuple[int, ...] = (0,)) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in ok:
        raise SystemExit(f"{cmd} exited {proc.returncode}:\n{proc.stdout.decode()[-3000:]}")
    return elapsed


def alternate(
    runs: int, ours: Callable[[], float], theirs: Callable[[], float]
) -> tuple[float, float]:
    a, b = [], []
    for _ in range(runs):
        a.append(ours())
        b.append(theirs())
    return statistics.median(a), statistics.median(b)


def build_repo(path: Path, fixtures: int, fixture_bytes: int, sandbox: str = "bwrap") -> None:
    """A repository with a 20-test pytest suite, ``fixtures`` files under
    tests/fixtures, pinned, and a product-only candidate on `feat`."""
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main", env=ENV)
    policy = (
        f'[judge]\nsandbox = "{sandbox}"\nenv = ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"]\n'
        '[[judge.property]]\nid = "suite"\n'
        f"command = {json.dumps(SUITE)}\nseed_list = [0]\nrepeat = 5\n"
        '[[judge.property]]\nid = "busy"\n'
        f"command = {json.dumps(BUSY)}\nseeds = 4\nrepeat = 2\n"
    )
    (path / ".git-evidence.toml").write_text(policy)
    (path / "src").mkdir()
    (path / "src/app.py").write_text("def sort(xs):\n    return sorted(xs)\n")
    props = path / "tests/properties"
    props.mkdir(parents=True)
    for n in range(20):
        (props / f"test_sort_{n}.py").write_text(TEST_FILE.format(n=n))
    rng = random.Random(1)
    fixture_dir = path / "tests/fixtures"
    for n in range(fixtures):
        sub = fixture_dir / f"d{n % 50:02d}"
        sub.mkdir(parents=True, exist_ok=True)
        size = rng.randint(fixture_bytes // 4, fixture_bytes * 7 // 4)
        (sub / f"f{n:05d}.bin").write_bytes(rng.randbytes(size))
    git(path, "add", "-A", env=ENV)
    git(path, "commit", "-qm", "seed", env=ENV)
    timed([sys.executable, "-m", "git_evidence", "lock"], path)
    git(path, "checkout", "-qb", "feat", env=ENV)
    (path / "src/app.py").write_text("def sort(xs):\n    return sorted(list(xs))\n")
    git(path, "commit", "-qam", "product", env=ENV)


def measure_suite(repo: Path, runs: int) -> tuple[float, float]:
    judge = [sys.executable, "-m", "git_evidence", "judge", "--property", "suite", "--repeat", "5"]

    def ours() -> float:
        return timed(judge, repo)

    def theirs() -> float:
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as tmp:
            archive = subprocess.Popen(
                ["git", "archive", "HEAD"], cwd=repo, stdout=subprocess.PIPE, env=ENV
            )
            subprocess.run(["tar", "-x", "-C", tmp], stdin=archive.stdout, check=True)
            archive.wait()
            for _ in range(5):
                subprocess.run(SUITE, cwd=tmp, env=ENV, capture_output=True, check=True)
        return time.perf_counter() - start

    return alternate(runs, ours, theirs)


def measure_hashing(repo: Path, runs: int) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.Popen(["git", "archive", "HEAD"], cwd=repo, stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", tmp], stdin=archive.stdout, check=True)
        archive.wait()
        roots = ("tests/fixtures",)
        files = sorted(
            str(p.relative_to(tmp)) for p in Path(tmp, "tests/fixtures").rglob("*") if p.is_file()
        )
        listing = "\0".join(files).encode() + b"\0"

        def ours() -> float:
            start = time.perf_counter()
            worktree_manifest(tmp, roots, (), {}, submodules=False)
            return time.perf_counter() - start

        def theirs() -> float:
            start = time.perf_counter()
            subprocess.run(
                ["xargs", "-0", "sha256sum"],
                cwd=tmp,
                input=listing,
                stdout=subprocess.DEVNULL,
                check=True,
            )
            return time.perf_counter() - start

        ours()  # warm the page cache for both
        a, b = alternate(runs, ours, theirs)
        return a, b, len(files)


def measure_bwrap(runs: int) -> tuple[float, float]:
    """One sandbox start and exit around `true`, with the options a run gets."""
    from git_evidence.sandbox import bwrap

    box = bwrap.prepare(
        "bwrap", network=False, hidden=(), commands=[["true"]], readonly=(), env=os.environ
    )
    with tempfile.TemporaryDirectory() as tmp:

        def ours() -> float:
            fd = bwrap.open_args(bwrap.wrap(box, tmp, tmp))
            try:
                start = time.perf_counter()
                subprocess.run(
                    [box.bwrap, "--args", str(fd), "--", "true"], pass_fds=(fd,), check=True
                )
                return time.perf_counter() - start
            finally:
                os.close(fd)

        def theirs() -> float:
            start = time.perf_counter()
            subprocess.run(["true"], check=True)
            return time.perf_counter() - start

        return alternate(runs * 10, ours, theirs)


def measure_preflight(runs: int) -> tuple[float, float]:
    """The preflight of the suite's command (one sandbox start and one interpreter
    start, the runner's modules looked up) ÷ a sandbox start around `python -c pass`."""
    from git_evidence.sandbox import bwrap, preflight, runner

    env = {"PATH": os.environ.get("PATH", os.defpath)}
    box = bwrap.prepare("bwrap", network=False, hidden=(), commands=[SUITE], readonly=(), env=env)
    held = runner.Held(box, ("src",))
    with tempfile.TemporaryDirectory() as tmp:
        space = os.path.join(tmp, "ws")
        os.makedirs(os.path.join(space, "src"))

        def ours() -> float:
            start = time.perf_counter()
            preflight.preflight([("suite", SUITE)], space, tmp, env, held)
            return time.perf_counter() - start

        def theirs() -> float:
            fd = bwrap.open_args(bwrap.wrap(box, space, tmp))
            try:
                start = time.perf_counter()
                command = [box.bwrap, "--args", str(fd), "--", sys.executable, "-c", "pass"]
                subprocess.run(command, pass_fds=(fd,), check=True, env=env)
                return time.perf_counter() - start
            finally:
                os.close(fd)

        return alternate(runs * 4, ours, theirs)


def measure_jobs(repo: Path, runs: int) -> tuple[float, float]:
    base = [sys.executable, "-m", "git_evidence", "judge", "--property", "busy"]
    return alternate(
        runs,
        lambda: timed([*base, "--jobs", "2"], repo),
        lambda: timed([*base, "--jobs", "1"], repo),
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--fixtures", type=int, default=4000)
    parser.add_argument("--fixture-bytes", type=int, default=16384)
    args = parser.parse_args()
    compile_package()
    repo = WORK / "judge-repo"
    build_repo(repo, args.fixtures, args.fixture_bytes)
    print(f"cores: {os.cpu_count()}, load: {os.getloadavg()[0]:.1f}")

    small = WORK / "judge-small"
    build_repo(small, 10, 1024)
    judged, alone = measure_suite(small, args.runs)
    print(
        f"judge --repeat 5 ÷ (5 × suite + git archive | tar -x): {judged / alone:.2f} "
        f"({judged * 1000:.0f} ms vs {alone * 1000:.0f} ms)  target ≤ 1.10"
    )
    ours, theirs, count = measure_hashing(repo, args.runs)
    print(
        f"hashing the lock roots ({count} files) ÷ sha256sum: {ours / theirs:.2f} "
        f"({ours * 1000:.0f} ms vs {theirs * 1000:.0f} ms)  target ≤ 1.2"
    )
    two, one = measure_jobs(small, args.runs)
    print(
        f"--jobs 2 ÷ --jobs 1 (CPU-bound, 8 runs): {two / one:.2f} "
        f"({two * 1000:.0f} ms vs {one * 1000:.0f} ms)  target ≤ 0.65"
    )
    boxed, bare = measure_bwrap(args.runs)
    print(
        f"one bubblewrap start around `true`: {boxed * 1000:.1f} ms "
        f"(`true` alone {bare * 1000:.1f} ms)"
    )
    checked, started = measure_preflight(args.runs)
    print(
        f"the preflight (sandbox + interpreter start, runner modules found): "
        f"{checked * 1000:.1f} ms (a sandboxed `python -c pass`: {started * 1000:.1f} ms)"
        "  target ≤ 60 ms"
    )
    open_small = WORK / "judge-small-unsandboxed"
    build_repo(open_small, 10, 1024, sandbox="none")
    unboxed, alone = measure_suite(open_small, args.runs)
    print(
        f'judge --repeat 5, sandbox "none" ÷ (5 × suite + git archive | tar -x): '
        f"{unboxed / alone:.2f} ({unboxed * 1000:.0f} ms; sandboxed {judged * 1000:.0f} ms)"
    )


if __name__ == "__main__":
    main()
