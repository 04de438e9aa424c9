"""Benchmark a day's ordinary pushes: small product commits to a protected main, each
judged by pre-receive and pinned by post-receive.

A fresh bare repository (30 fixture files, a policy) with the server hooks installed
and a clone; each round commits one product change and pushes it. Reports medians of
alternating rounds of N pushes: with the hooks, and the same pushes into a copy
without them (what git alone costs), per push.

Usage: python bench/bench_pushes.py [--pushes N] [--rounds R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import IDENTITY, ROOT, compile_package, git

ENV = {**IDENTITY, "PYTHONPATH": str(ROOT), "GIT_CONFIG_NOSYSTEM": "1"}


def setup(where: Path, hooks: bool) -> Path:
    """A protected (or plain) bare repository seeded with fixtures, and its clone."""
    bare, work = where / "server.git", where / "work"
    git(where, "init", "-q", "--bare", "-b", "main", str(bare), env=ENV)
    git(where, "init", "-q", "-b", "main", str(work), env=ENV)
    (work / "tests" / "fixtures").mkdir(parents=True)
    (work / "src").mkdir()
    for i in range(30):
        (work / "tests" / "fixtures" / f"f{i}.json").write_text(f'{{"n": {i}}}\n')
    (work / "src" / "app.py").write_text("print('hello')\n")
    (work / ".git-evidence.toml").write_text('[identities]\nevidence_writers = ["alice"]\n')
    git(work, "add", "-A", env=ENV)
    git(work, "commit", "-qm", "seed", env=ENV)
    git(work, "push", "-q", str(bare), "HEAD:main", env=ENV)
    if hooks:
        subprocess.run(
            [sys.executable, "-m", "git_evidence", "install", "--server", "-q"],
            cwd=bare,
            env={**os.environ, **ENV},
            check=True,
        )
    git(work, "remote", "add", "origin", str(bare), env=ENV)
    return work


def round_of(pushes: int, hooks: bool) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-pushes-") as tmp:
        work = setup(Path(tmp), hooks)
        app = work / "src" / "app.py"
        start = time.perf_counter()
        for i in range(pushes):
            with app.open("a") as handle:
                handle.write(f"# {i}\n")
            git(work, "commit", "-qam", f"change {i}", env=ENV)
            git(work, "push", "-q", "origin", "HEAD:main", env=ENV)
        return (time.perf_counter() - start) / pushes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pushes", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    compile_package()
    ours, plain = [], []
    for _ in range(args.rounds):
        ours.append(round_of(args.pushes, hooks=True))
        plain.append(round_of(args.pushes, hooks=False))
    print(f"{args.pushes} pushes a round, {args.rounds} rounds, commit and push each")
    print(
        f"per push: with the hooks {statistics.median(ours) * 1000:.0f} ms, "
        f"git alone {statistics.median(plain) * 1000:.0f} ms"
    )


if __name__ == "__main__":
    main()
