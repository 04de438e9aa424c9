"""A 20,000-commit push over real smart HTTP (nginx + fcgiwrap + git-http-backend),
with the git evidence hooks (pre-receive and post-receive) installed ÷ without, and
the pre-receive hook's own time against GitHub Enterprise Server's 5 s budget.
Alternating runs, medians.

Needs nginx-light and fcgiwrap (Debian). Usage: python bench/bench_http.py [--runs N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from bench_fence import build  # noqa: E402
from common import WORK, compile_package  # noqa: E402
from helpers.servers import HTTP_USERS, serve_http  # noqa: E402

TIMED_HOOK = """#!/bin/sh
start=$(date +%s.%N)
{python} -m git_evidence pre-receive
code=$?
echo "$start $(date +%s.%N)" >> {log}
exit $code
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    nginx, fcgiwrap = (
        shutil.which("nginx") or "/usr/sbin/nginx",
        shutil.which("fcgiwrap") or "/usr/sbin/fcgiwrap",
    )
    compile_package()
    source = WORK / "fence-20000-20000.git"
    _, tip = build(source, 20_000, 20_000)
    subprocess.run(["git", "update-ref", "-d", "refs/notes/evidence"], cwd=source, check=False)
    root = Path(tempfile.mkdtemp(prefix="bench-http-"))
    try:
        repos = root / "repos"
        repos.mkdir()
        template = root / "template.git"
        subprocess.run(
            [
                "git",
                "clone",
                "-q",
                "--bare",
                "--single-branch",
                "-b",
                "main",
                str(source),
                str(template),
            ],
            check=True,
        )
        client = root / "client.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(source), str(client)], check=True)
        log = root / "hook-times.log"
        with serve_http(root, repos, nginx, fcgiwrap) as port:

            def push(hooked: bool) -> float:
                target = repos / "target.git"
                shutil.rmtree(target, ignore_errors=True)
                shutil.copytree(template, target, symlinks=True)
                if hooked:
                    hook = target / "hooks" / "pre-receive"
                    hook.write_text(TIMED_HOOK.format(python=sys.executable, log=log))
                    hook.chmod(0o755)
                    post = target / "hooks" / "post-receive"  # pins the lock: part of it
                    post.write_text(
                        f"#!/bin/sh\nexec {sys.executable} -m git_evidence post-receive\n"
                    )
                    post.chmod(0o755)
                url = f"http://alice:{HTTP_USERS['alice']}@127.0.0.1:{port}/target.git"
                start = time.perf_counter()
                done = subprocess.run(
                    ["git", "push", "-q", url, f"{tip}:refs/heads/main"],
                    cwd=client,
                    capture_output=True,
                    check=False,
                )
                elapsed = time.perf_counter() - start
                if done.returncode != 0:
                    raise SystemExit(done.stderr.decode())
                return elapsed

            with_hooks, without = [], []
            for _ in range(args.runs):
                with_hooks.append(push(True))
                without.append(push(False))
        hook_times = [
            float(b) - float(a) for a, b in (line.split() for line in log.read_text().splitlines())
        ]
        on, off = statistics.median(with_hooks), statistics.median(without)
        hook = statistics.median(hook_times)
        print(
            f"20000-commit push over smart HTTP: with the hooks {on:.2f} s, without "
            f"{off:.2f} s, ratio {on / off:.2f}; the pre-receive hook itself {hook:.2f} s "
            f"({hook / 5 * 100:.0f}% of a 5 s budget)"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
