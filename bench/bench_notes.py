"""Benchmark finding the lock in force on a server whose pins accumulated.

A server pins every push to a protected branch, so its notes ref only grows. Builds a
first-parent line of N commits with a note on each (``git fast-import``), then a new
commit on top (the state pre-receive and post-receive meet), and reports medians of
alternating runs:

* ``lock.find_lock`` on the new commit, in process;
* ``git notes list`` of the same ref (what finding the lock used to start with).

Usage: python bench/bench_notes.py [--notes N] [--runs R]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time

from common import IDENTITY, NOTES, ROOT, WORK, git

sys.path.insert(0, str(ROOT))

from git_evidence.lock.store import find_lock
from git_evidence.plumbing.git import Git


def build(notes: int) -> Git:
    repo = WORK / f"notes-{notes}"
    if repo.exists():
        shutil.rmtree(repo)
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "--bare")
    lines = ["blob", "mark :1", "data 3", "{}"]  # the data counts its newline
    for i in range(notes + 1):  # the last commit is the new one: no note
        lines += ["commit refs/heads/main", f"mark :{i + 2}", f"committer b <b> {i} +0000"]
        lines += ["data 1", "c"] + ([f"from :{i + 1}"] if i else []) + [""]
    lines += [f"commit {NOTES}", "committer b <b> 0 +0000", "data 1", "n"]
    lines += [f"N :1 :{i + 2}" for i in range(notes)] + [""]
    subprocess.run(
        ["git", "fast-import", "--quiet"],
        cwd=repo,
        input="\n".join(lines).encode(),
        check=True,
        env={**IDENTITY, "PATH": "/usr/bin:/bin"},
    )
    return Git(cwd=str(repo))


def timed(action: object) -> float:
    start = time.perf_counter()
    action()  # type: ignore[operator]
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--notes", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    repo = build(args.notes)
    tip = repo.text("rev-parse", "main")
    found = find_lock(repo, NOTES, tip)
    assert found is not None and found.commit == repo.text("rev-parse", "main^")
    ours, listing = [], []
    for _ in range(args.runs):
        ours.append(timed(lambda: find_lock(repo, NOTES, tip)))
        listing.append(timed(lambda: repo.out("notes", f"--ref={NOTES}", "list")))
    print(f"{args.notes} notes, the nearest one commit back")
    print(
        f"find_lock: {statistics.median(ours) * 1000:.1f} ms, "
        f"git notes list: {statistics.median(listing) * 1000:.1f} ms"
    )


if __name__ == "__main__":
    main()
