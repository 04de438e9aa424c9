"""Benchmark `git evidence init` against the git it stands for.

A repository of about 4,000 files (product, tests, test data, goldens beside inputs,
snapshots) with 300 first-parent commits, each touching a few files (a tenth mixing
product and test data). Reports medians (and the fastest) of alternating runs of
`git evidence init --dry-run` ÷ (`git ls-files` + `git log --raw -300`), wall and CPU
(target ≤ 2): the draft reads the tree once and the history once.

Usage: python bench/bench_init.py [--runs N] [--files N] [--commits N]
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from common import WORK, Run, alternate, compile_package, fastest, git, machine_note, measure


def _data(text: str) -> bytes:
    raw = text.encode()
    return b"data %d\n%s\n" % (len(raw), raw)


def build(root: Path, files: int, commits: int) -> Path:
    """The repository, written with one `fast-import`."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    repo = root / "repo"
    git(root, "init", "-q", "-b", "main", str(repo))
    quarter = files // 4
    paths = [f"src/pkg{n % 40:02d}/mod{n:04d}.py" for n in range(quarter)]
    paths += [f"tests/unit/u{n % 30:02d}/test_{n:04d}.py" for n in range(quarter // 2)]
    paths += [f"tests/functional/f{n % 20:02d}/case{n:04d}.py" for n in range(quarter // 2)]
    paths += [f"tests/functional/f{n % 20:02d}/case{n:04d}.txt" for n in range(quarter // 2)]
    paths += [f"tests/data/d{n % 25:02d}/input{n:04d}.json" for n in range(quarter // 2)]
    paths += [f"src/pkg{n % 40:02d}/snapshots/s{n:04d}.snap" for n in range(files - len(paths))]
    stream = [b"commit refs/heads/main\n", b"committer B <b@example.com> 1700000000 +0000\n"]
    stream.append(_data("start"))
    for path in paths:
        stream += [b"M 100644 inline " + path.encode() + b"\n", _data(path)]
    for n in range(commits):
        stream += [
            b"commit refs/heads/main\n",
            b"committer B <b@example.com> %d +0000\n" % (1_700_000_000 + 60 * (n + 1)),
            _data(f"change {n}"),
        ]
        touched = [paths[(n * 7 + k * 131) % quarter] for k in range(3)]
        if n % 10 == 0:
            touched.append(paths[quarter * 2 + n % (quarter // 2)])  # a golden with it
        for path in touched:
            stream += [b"M 100644 inline " + path.encode() + b"\n", _data(f"{path} {n}")]
    git(repo, "fast-import", "--quiet", input=b"".join(stream))
    git(repo, "reset", "-q", "--hard", "main")
    return repo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--files", type=int, default=4000)
    parser.add_argument("--commits", type=int, default=300)
    args = parser.parse_args()
    compile_package()
    repo = build(WORK / "init", args.files, args.commits)
    ours_cmd = [sys.executable, "-m", "git_evidence", "init", "--dry-run"]
    ours_cmd += ["--commits", str(args.commits)]

    def ours() -> Run:
        return measure(ours_cmd, repo)

    def theirs() -> Run:
        a = measure(["git", "ls-files"], repo)
        b = measure(["git", "log", "--raw", f"-{args.commits}"], repo)
        return a._replace(wall=a.wall + b.wall, cpu=a.cpu + b.cpu)

    ours(), theirs()  # warm caches
    a, b = alternate(args.runs, ours, theirs)
    print(machine_note())
    print(f"tree: {args.files} files, {args.commits} commits")
    for field in ("wall", "cpu"):
        mine = sorted(float(getattr(r, field)) for r in a)[len(a) // 2]
        git_s = sorted(float(getattr(r, field)) for r in b)[len(b) // 2]
        print(
            f"{field}: init {mine * 1000:.0f} ms, git {git_s * 1000:.0f} ms, "
            f"ratio {mine / git_s:.2f} (fastest {fastest(a, field) / fastest(b, field):.2f}; "
            "target <= 2)"
        )


if __name__ == "__main__":
    main()
