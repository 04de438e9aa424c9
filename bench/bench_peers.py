"""Benchmark the everyday operations against what a team would run instead: the
simplest fence written in the same language, side by side in one run.

On the everyday benchmark's repository (a code formatter's shape: 2,300 commits,
goldens under tests/data, the lock pinned on main), four rows, each alternating the
tool and its peer, medians, with the ratio and its target:

* a one-commit product push into a protected server, pre-receive + post-receive ÷
  one Python pre-receive that runs `git diff --name-only old...new` and checks
  prefixes (<= 1.5). The hooks run as git runs them after it has received the
  objects: the hook's file, in the bare repository, the ref lines on stdin, the ref
  moved between the two;
* a commit through the pre-commit framework running `git-evidence pre-commit` ÷
  the framework running `true` (<= 1.3), a local hook of the framework, offline;
* a commit with git evidence's own pre-commit hook ÷ a Python pre-commit hook that
  runs `git diff --cached --name-only` and checks prefixes (<= 1.5);
* `git-evidence check HEAD~1..HEAD` of a one-file product commit ÷ a Python script
  that runs `git diff-tree -r --name-only` of it and checks prefixes (<= 2.0).

Each peer is the few lines below (PEER_*), run by the same interpreter as the tool (a
fresh virtualenv holding this tree). The machine's load average is printed with each
row: on a shared machine, repeat a row whose spread is wide.

Usage: python bench/bench_peers.py [--runs N] [--only ROW]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from bench_everyday import build, clone, ms
from common import (
    IDENTITY,
    WORK,
    Run,
    alternate,
    git,
    installed_python,
    machine_note,
    measure,
    median_of,
    spread,
)

ROWS = ("push", "framework", "commit", "check")

PEER_RECEIVE = """#!PYTHON
import subprocess, sys
for line in sys.stdin:
    old, new, ref = line.split()
    names = subprocess.run(["git", "diff", "--name-only", f"{old}...{new}"],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    if any(name.startswith(("tests/data/", ".git-evidence.toml")) for name in names):
        sys.exit(f"{ref}: the push changes protected files")
"""
PEER_COMMIT = """#!PYTHON
import subprocess, sys
names = subprocess.run(["git", "diff", "--cached", "--name-only"],
                       capture_output=True, text=True, check=True).stdout.splitlines()
if any(name.startswith(("tests/data/", ".git-evidence.toml")) for name in names):
    sys.exit("the commit changes protected files")
"""
PEER_CHECK = """import subprocess, sys
names = subprocess.run(["git", "diff-tree", "-r", "--name-only", "--no-commit-id", sys.argv[1]],
                       capture_output=True, text=True, check=True).stdout.splitlines()
if any(name.startswith(("tests/data/", ".git-evidence.toml")) for name in names):
    sys.exit("the commit changes protected files")
"""
FRAMEWORK_CONFIG = """repos:
  - repo: local
    hooks:
      - id: fence
        name: fence
        entry: "{entry}"
        language: system
        pass_filenames: false
        always_run: true
"""
# What `pip install` writes as the console script (no -I: as a user runs it).
CONSOLE_SCRIPT = """#!{python}
import sys
from git_evidence.cli.main import main
if __name__ == "__main__":
    sys.exit(main())
"""


def script(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


def row(label: str, ours: list[Run], theirs: list[Run], them: str, target: float) -> None:
    a, b = median_of(ours, "wall"), median_of(theirs, "wall")
    ratio = a / b
    print(
        f"{label}: {ms(a)} (runs {spread(ours)}, CPU {ms(median_of(ours, 'cpu'))}) vs "
        f"{them} {ms(b)} (runs {spread(theirs)}, CPU {ms(median_of(theirs, 'cpu'))}): "
        f"ratio {ratio:.2f}, target <= {target}, {'met' if ratio <= target else 'NOT met'}",
        flush=True,
    )
    print(f"  after the row: {machine_note()}", flush=True)


def product_file(work: Path) -> Path:
    return work / "src" / "black" / sorted(os.listdir(work / "src" / "black"))[0]


def bench_push(base: Path, python: str, runs: int) -> None:
    """A one-commit product push: into a server with git evidence's pre-receive and
    post-receive ÷ into one with the peer's pre-receive (the clones have no hooks)."""
    clones: dict[bool, Path] = {}
    for ours in (True, False):
        server = WORK / f"peers-push-{'ours' if ours else 'peer'}.git"
        shutil.rmtree(server, ignore_errors=True)
        subprocess.run(["git", "clone", "-q", "--bare", str(base), str(server)], check=True)
        if ours:
            subprocess.run([python, "-m", "git_evidence", "lock", "main", "-q"], cwd=server)
            subprocess.run([python, "-m", "git_evidence", "install", "--server", "-q"], cwd=server)
        else:
            script(server / "hooks" / "pre-receive", PEER_RECEIVE.replace("PYTHON", python))
        clones[ours] = clone(server, WORK / f"peers-push-{'ours' if ours else 'peer'}")
    said: list[bytes] = []

    def once(ours: bool) -> Callable[[], Run]:
        commit = commit_side(clones[ours], measured=False)

        def go() -> Run:
            commit()
            run = measure(["git", "push", "-q", "origin", "HEAD:main"], clones[ours])
            said.append(run.stderr)
            return run

        return go

    once(True)()
    once(False)()
    mine, peer = alternate(runs, once(True), once(False))
    row("push: pre-receive + post-receive", mine, peer, "the peer's pre-receive", 1.5)
    quiet = sum(1 for s in said if not s)
    print(f"  pushes that printed nothing: {quiet} of {len(said)}; the last said: {said[-2]!r}")


def commit_side(
    work: Path, env: dict[str, str] | None = None, *, measured: bool = True
) -> Callable[[], Run]:
    """One commit of a one-file product change in ``work`` (staged outside the timing;
    not ``measured``: committed with no hook, for a push to measure)."""
    serial = [0]

    def go() -> Run:
        serial[0] += 1
        target = product_file(work)
        with target.open("a") as handle:
            handle.write(f"# change {serial[0]}\n")
        git(work, "add", str(target.relative_to(work)))
        if not measured:
            git(work, "commit", "-q", "--no-verify", "-m", "a product change")
            return Run(0, 0, 0, 0, 0, 0, b"")
        return measure(["git", "commit", "-q", "-m", "a product change"], work, env=env)

    return go


def client(base: Path, name: str) -> Path:
    """A clone of a bare copy of ``base`` whose main is pinned, the notes fetched."""
    server = WORK / "peers-server.git"
    if not SERVER:  # once a run: pinned by the tree being measured
        shutil.rmtree(server, ignore_errors=True)
        subprocess.run(["git", "clone", "-q", "--bare", str(base), str(server)], check=True)
        subprocess.run([PYTHON[0], "-m", "git_evidence", "lock", "main", "-q"], cwd=server)
        SERVER.append(server)
    work = clone(server, WORK / f"peers-{name}")
    git(work, "fetch", "-q", "origin", "+refs/notes/*:refs/notes/*")
    return work


def bench_framework(base: Path, python: str, runs: int) -> None:
    """A commit through the pre-commit framework: `git-evidence pre-commit` ÷ `true`."""
    bindir = WORK / "peers-bin"
    script(bindir / "git-evidence", CONSOLE_SCRIPT.format(python=python))
    env = {
        "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
        "PRE_COMMIT_HOME": str(WORK / "peers-pre-commit-home"),
    }
    framework = shutil.which("pre-commit")
    if framework is None:
        raise SystemExit("the pre-commit framework is not installed (pip install '.[test]')")
    sides = {}
    for ours, entry in ((True, "git-evidence pre-commit"), (False, "true")):
        work = client(base, f"framework-{'ours' if ours else 'true'}")
        (work / ".pre-commit-config.yaml").write_text(FRAMEWORK_CONFIG.format(entry=entry))
        git(work, "add", ".pre-commit-config.yaml")
        git(work, "commit", "-q", "--no-verify", "-m", "the framework's configuration")
        subprocess.run(
            [framework, "install", "-t", "pre-commit"],
            cwd=work,
            check=True,
            stdout=subprocess.DEVNULL,
            env={**os.environ, **env},
        )
        sides[ours] = commit_side(work, env)
    sides[True]()
    sides[False]()
    mine, peer = alternate(runs, sides[True], sides[False])
    row("commit through the pre-commit framework", mine, peer, "the framework running true", 1.3)


def bench_commit(base: Path, python: str, runs: int) -> None:
    """A commit with git evidence's own pre-commit hook ÷ the peer's hook."""
    ours = client(base, "commit-ours")
    subprocess.run([python, "-m", "git_evidence", "install", "-q"], cwd=ours, check=True)
    theirs = client(base, "commit-peer")
    script(theirs / ".git" / "hooks" / "pre-commit", PEER_COMMIT.replace("PYTHON", python))
    commit_side(ours)()
    commit_side(theirs)()
    a, b = alternate(runs, commit_side(ours), commit_side(theirs))
    row("commit with the pre-commit hook", a, b, "the peer's pre-commit hook", 1.5)


def bench_check(base: Path, python: str, runs: int) -> None:
    """`check HEAD~1..HEAD` of a one-file product commit ÷ the peer's script."""
    work = client(base, "check")
    commit_side(work)()  # no hook: the commit to check
    bindir = WORK / "peers-bin"
    tool = script(bindir / "git-evidence", CONSOLE_SCRIPT.format(python=python))
    peer = script(WORK / "peers-check.py", PEER_CHECK)

    def ours() -> Run:
        return measure([str(tool), "check", "HEAD~1..HEAD"], work)

    def theirs() -> Run:
        return measure([python, str(peer), "HEAD"], work)

    ours()
    theirs()
    a, b = alternate(runs, ours, theirs)
    row("check HEAD~1..HEAD", a, b, "the peer's diff-tree script", 2.0)


PYTHON = ["python"]  # set in main()
SERVER: list[Path] = []


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--only", choices=ROWS, action="append")
    args = parser.parse_args()
    python = PYTHON[0] = installed_python()
    print(f"interpreter: {python} (a fresh virtualenv holding this tree)")
    WORK.mkdir(exist_ok=True)
    os.environ.update(IDENTITY)
    os.environ["GIT_EVIDENCE_PUSHER"] = "bench"
    print(f"machine: {machine_note()}", flush=True)
    base = WORK / "everyday.git"
    build(base)
    only = set(args.only or ROWS)
    if "push" in only:
        bench_push(base, python, args.runs)
    if "framework" in only:
        bench_framework(base, python, args.runs)
    if "commit" in only:
        bench_commit(base, python, args.runs)
    if "check" in only:
        bench_check(base, python, args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
