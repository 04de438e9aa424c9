"""Benchmark what every everyday commit, push, check and verify costs on a small
repository shaped like a real one (a code formatter's: 2,300 commits, ~309 golden files
under tests/data, ~1.5 MB).

The repository is generated deterministically and built once (cached under
bench/.work). Each row runs side by side with its plain-git baseline, alternating runs,
medians, and prints the ratio and its target:

* commit + push of a one-file product change with all four hooks (pre-commit and
  pre-push in the clone, pre-receive and post-receive on the bare server) ÷ the same
  with no hooks (target <= 4.0); beside it, the floor: four hooks that only start the
  interpreter and load the standard modules every hook loads;
* `check` of the last 300 commits ÷ `git log --raw` of them (<= 3.0);
* a cold `lock` of the golden files ÷ `sha256sum` of them (<= 3.0);
* `verify --worktree` with nothing changed ÷ `sha256sum -c` (<= 3.0);
* `verify` of an unchanged lock with 20,000 more fixture files ÷ without them, with
  the validated-note cache and without it (the first verify of a clone that fetched
  only the note) (<= 1.2 each).

Usage: python bench/bench_everyday.py [--runs N] [--only ROW]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from common import (
    IDENTITY,
    NOTES,
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

EVIDENCE = ["python", "-m", "git_evidence"]  # its interpreter is set in main()
COMMITS = 2_300
GOLDENS = 309
RANGE = 300
MORE_FIXTURES = 20_000
POLICY = b"""[paths]
product = ["src/**", "docs/**", "*.md", "*.toml"]
fixture = ["tests/data/**"]

[lock]
roots = ["tests/data"]

[identities]
evidence_writers = ["bench"]
lock_writers = ["bench"]
"""
WORDS = (  # noqa: SIM905 (one line instead of forty)
    "def class return import from self None True False if else elif for while in not "
    "and or with as yield lambda async await assert raise try except finally pass "
    "value items result data line mode node leaf string token prefix indent depth"
).split()
ROWS = ("push", "check", "lock", "worktree", "flat")


def text(rng: random.Random, size: int, head: str) -> bytes:
    """Python-like text of about ``size`` bytes."""
    lines = [head]
    total = len(head)
    while total < size:
        line = "    " * rng.randint(0, 3) + " ".join(rng.choices(WORDS, k=rng.randint(2, 11)))
        lines.append(line)
        total += len(line) + 1
    return ("\n".join(lines) + "\n").encode()


def edit(rng: random.Random, data: bytes, serial: int) -> bytes:
    """``data`` with a few lines replaced, inserted or removed: the edits of a real
    history, which git stores as short deltas from the newest version."""
    lines = data.split(b"\n")
    for _ in range(rng.randint(1, 6)):
        at = rng.randrange(len(lines))
        line = " ".join(rng.choices(WORDS, k=rng.randint(2, 11))).encode()
        kind = rng.random()
        if kind < 0.5:
            lines[at] = line
        elif kind < 0.85 or len(lines) < 3:
            lines.insert(at, line + b"  # %d" % serial)
        else:
            del lines[at]
    return b"\n".join(lines)


def golden_paths(rng: random.Random) -> list[str]:
    """Golden paths and sizes as a formatter's test data lays them out."""
    groups = ("cases", "miscellaneous", "preview", "py_310", "py_312", "jupyter", "line_ranges")
    out = []
    for n in range(GOLDENS):
        group = groups[min(n // 60, len(groups) - 1)] if n < 300 else "."
        name = f"{rng.choice(WORDS)}_{rng.choice(WORDS)}_{n:03d}.py"
        out.append(f"tests/data/{group}/{name}".replace("/./", "/"))
    return out


class Writer:
    """A fast-import stream: blobs by mark, commits on main."""

    def __init__(self, repo: Path) -> None:
        self.proc = subprocess.Popen(
            ["git", "fast-import", "--quiet"], cwd=repo, stdin=subprocess.PIPE
        )
        assert self.proc.stdin is not None
        self.out = self.proc.stdin
        self.mark = 0
        self.when = 1_600_000_000

    def commit(self, changes: dict[str, bytes], message: str) -> None:
        entries = []
        for path, data in changes.items():
            self.mark += 1
            self.out.write(b"blob\nmark :%d\ndata %d\n%s\n" % (self.mark, len(data), data))
            entries.append(b"M 100644 :%d %s\n" % (self.mark, path.encode()))
        self.when += 3_600
        self.out.write(b"commit refs/heads/main\n")
        self.out.write(b"committer bench <bench@example.com> %d +0000\n" % self.when)
        self.out.write(b"data %d\n%s\n" % (len(message), message.encode()))
        self.out.writelines(entries)

    def close(self) -> None:
        self.out.close()
        if self.proc.wait() != 0:
            raise SystemExit("git fast-import failed")


def build(repo: Path, more: int = 0) -> list[str]:
    """The bare repository (cached): its golden paths."""
    rng = random.Random(2_300)
    goldens = golden_paths(rng)
    marker = repo / "bench-built"
    if marker.exists():
        return goldens
    t0 = time.perf_counter()
    shutil.rmtree(repo, ignore_errors=True)
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(repo)], check=True)
    product = [f"src/black/{w}_{i}.py" for i, w in enumerate(rng.choices(WORDS, k=40))]
    product += [f"docs/{w}_{i}.md" for i, w in enumerate(rng.choices(WORDS, k=15))]
    first = {p: text(rng, rng.randint(2_000, 60_000), f"# {p}") for p in product}
    sizes = [rng.lognormvariate(8.2, 0.8) for _ in goldens]
    scale = 1_500_000 / sum(sizes)
    first.update(
        {g: text(rng, int(s * scale), f"# {g}") for g, s in zip(goldens, sizes, strict=True)}
    )
    first[".git-evidence.toml"] = POLICY
    first["README.md"] = b"# a formatter\n"
    writer = Writer(repo)
    writer.commit(first, "initial import")
    current = dict(first)
    for n in range(1, COMMITS):
        if n % 13 == 0:  # a golden change, alone (an evidence writer's commit)
            paths = rng.sample(goldens, rng.randint(1, 4))
        else:
            paths = rng.sample(product, min(len(product), int(rng.paretovariate(1.6))))
        changes = {p: edit(rng, current[p], n) for p in paths}
        current.update(changes)
        writer.commit(changes, f"change {n}")
    if more:
        extra = random.Random(more)
        writer.commit(
            {
                f"tests/data/generated/g{i // 100:03d}/case_{i:05d}.py": text(
                    extra, extra.randint(200, 1_200), f"# generated {i}"
                )
                for i in range(more)
            },
            f"{more} generated fixtures",
        )
    writer.close()
    git(repo, "repack", "-adq")
    marker.write_text("built\n")
    print(f"built {repo.name} in {time.perf_counter() - t0:.1f} s")
    return goldens


def clone(source: Path, where: Path) -> Path:
    shutil.rmtree(where, ignore_errors=True)
    subprocess.run(["git", "clone", "-q", str(source), str(where)], check=True)
    return where


def pinned(repo: Path) -> None:
    """Pin main's lock in ``repo`` (a bare copy or clone), cold."""
    subprocess.run([*EVIDENCE, "lock", "main", "-q"], cwd=repo, check=True)


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def row(label: str, ours: list[Run], theirs: list[Run], them: str, target: float | None) -> float:
    a, b = median_of(ours, "wall"), median_of(theirs, "wall")
    ratio = a / b
    if target is None:
        goal = "what the target is read against"
    else:
        goal = f"target <= {target}, {'met' if ratio <= target else 'NOT met'}"
    print(
        f"{label}: {ms(a)} (runs {spread(ours)}) vs {them} {ms(b)} (runs {spread(theirs)}): "
        f"ratio {ratio:.2f} ({goal}); CPU {ms(median_of(ours, 'cpu'))} "
        f"vs {ms(median_of(theirs, 'cpu'))}",
        flush=True,
    )
    return ratio


def bench_push(base: Path, runs: int) -> None:
    """Commit + push of a one-file product change, all four hooks vs none."""
    sides: dict[bool, Path] = {}
    for hooks in (True, False):
        where = WORK / f"everyday-push-{'hooks' if hooks else 'plain'}"
        shutil.rmtree(where, ignore_errors=True)
        where.mkdir(parents=True)
        server = where / "server.git"
        subprocess.run(["git", "clone", "-q", "--bare", str(base), str(server)], check=True)
        if hooks:
            pinned(server)
            subprocess.run([*EVIDENCE, "install", "--server", "-q"], cwd=server, check=True)
        work = clone(server, where / "work")
        if hooks:
            subprocess.run([*EVIDENCE, "install", "-q"], cwd=work, check=True)
            git(work, "fetch", "-q", "origin")
        sides[hooks] = work
    serial = [0]

    def once(hooks: bool) -> Callable[[], Run]:
        def go() -> Run:
            work = sides[hooks]
            serial[0] += 1
            target = work / "src" / "black" / sorted(os.listdir(work / "src" / "black"))[0]
            with target.open("a") as handle:
                handle.write(f"# change {serial[0]}\n")
            script = "git commit -qam 'a product change' && git push -q origin HEAD:main"
            return measure(["sh", "-c", script], work)

        return go

    for hooks in (True, False):  # the first push of each side warms what it reads
        once(hooks)()
    ours, theirs = alternate(runs, once(True), once(False))
    row("commit + push, four hooks", ours, theirs, "no hooks", 4.0)
    floor(sides[False], runs, once(False))


# What a hook written in Python pays before its first line of work: the interpreter
# (isolated, as the installed hooks run it) and the standard modules every hook loads
# (re, typing and subprocess; tomllib is skipped when the policy is kept by blob id).
FLOOR_HOOK = "#!/bin/sh\ncat >/dev/null\nexec {python} -I -c 'import re, typing, subprocess'\n"


def floor(plain: Path, runs: int, push: Callable[[], Run]) -> None:
    """The same push with four hooks that only start, against none: the least four
    Python hooks cost, against which the row above is to be read."""
    server = plain.parent / "server.git"
    places = [plain / ".git" / "hooks" / h for h in ("pre-commit", "pre-push")]
    places += [server / "hooks" / h for h in ("pre-receive", "post-receive")]
    for path in places:
        aside = path.with_name(path.name + ".floor")
        aside.write_text(FLOOR_HOOK.format(python=EVIDENCE[0]))
        aside.chmod(0o755)

    def swap(on: bool) -> None:
        for path in places:
            aside = path.with_name(path.name + ".floor")
            os.rename(aside, path) if on else os.rename(path, aside)

    def with_floor() -> Run:
        swap(True)
        try:
            return push()
        finally:
            swap(False)

    starts, plain_runs = alternate(runs, with_floor, push)
    for path in places:
        path.with_name(path.name + ".floor").unlink()
    row("  floor: four hooks that only start", starts, plain_runs, "no hooks", None)


def bench_check(base: Path, runs: int) -> None:
    """``check`` of the last RANGE commits: in a clone holding the lock of the range's
    base (what a clone that fetched the server's notes has), and in one without."""
    span = f"HEAD~{RANGE}..HEAD"
    clones = {}
    for locked in (True, False):
        work = WORK / f"everyday-check-{'locked' if locked else 'bare'}"
        if not (work / ".git").exists():
            clone(base, work)
            git(work, "config", "evidence.trusted", "true")
            if locked:
                subprocess.run([*EVIDENCE, "lock", f"HEAD~{RANGE}", "-q"], cwd=work, check=True)
        clones[locked] = work

    def check(locked: bool) -> Callable[[], Run]:
        return lambda: measure([*EVIDENCE, "check", span], clones[locked])

    def log() -> Run:
        return measure(["git", "log", "--raw", "--no-renames", "--format=%H", span], clones[True])

    for locked in (True, False):
        check(locked)()
        log()
        ours, theirs = alternate(runs, check(locked), log)
        what = "lock of the base fetched" if locked else "no lock fetched"
        row(f"check of {RANGE} commits, {what}", ours, theirs, "git log --raw", 3.0)


def bench_lock(base: Path, goldens: list[str], runs: int) -> None:
    work = WORK / "everyday-lock"
    if not (work / ".git").exists():
        clone(base, work)
    files = sorted(str(p.relative_to(work)) for p in (work / "tests" / "data").rglob("*.py"))
    size = sum((work / f).stat().st_size for f in files)
    print(f"  {len(files)} golden files, {size / 1e6:.2f} MB ({len(goldens)} generated)")
    git_dir = work / ".git"

    def cold() -> Run:
        subprocess.run(["git", "update-ref", "-d", NOTES], cwd=work, check=False)
        for cache in git_dir.glob("git-evidence/locks*"):
            shutil.rmtree(cache)
        return measure([*EVIDENCE, "lock", "HEAD", "-q"], work)

    def sha256sum() -> Run:
        return measure(["sha256sum", *files], work)

    cold()
    sha256sum()
    ours, theirs = alternate(runs, cold, sha256sum)
    row("cold lock of tests/data", ours, theirs, "sha256sum", 3.0)
    cold()
    listing = WORK / "everyday-lock.sha256"
    listing.write_bytes(
        subprocess.run(["sha256sum", *files], cwd=work, capture_output=True, check=True).stdout
    )

    def worktree() -> Run:
        return measure([*EVIDENCE, "verify", "--worktree", "--base", "HEAD"], work)

    def check() -> Run:
        return measure(["sha256sum", "-c", "--quiet", str(listing)], work)

    worktree()
    check()
    ours, theirs = alternate(runs, worktree, check)
    row("verify --worktree, unchanged", ours, theirs, "sha256sum -c", 3.0)


def bench_flat(base: Path, big: Path, runs: int) -> None:
    """verify with 20,000 more fixture files ÷ without, cached and first in a clone."""
    clones: dict[str, Path] = {}
    for name, source in (("small", base), ("big", big)):
        work = WORK / f"everyday-flat-{name}"
        if not (work / ".git").exists():
            clone(source, work)
            pinned(work)
        clones[name] = work

    def verify(name: str, cached: bool) -> Callable[[], Run]:
        def go() -> Run:
            work = clones[name]
            if not cached:
                for cache in (work / ".git").glob("git-evidence/locks*"):
                    shutil.rmtree(cache)
            return measure([*EVIDENCE, "verify", "--base", "HEAD"], work)

        return go

    for cached in (True, False):
        verify("big", cached)()
        verify("small", cached)()
        ours, theirs = alternate(runs, verify("big", cached), verify("small", cached))
        what = "cached" if cached else "first in a clone (no cache)"
        row(
            f"verify, +{MORE_FIXTURES:,} fixtures ÷ without, {what}",
            ours,
            theirs,
            "without",
            1.2,
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--only", choices=ROWS, action="append")
    args = parser.parse_args()
    EVIDENCE[0] = installed_python()
    print(f"interpreter: {EVIDENCE[0]} (a fresh virtualenv holding this tree)")
    WORK.mkdir(exist_ok=True)
    os.environ.update(IDENTITY)
    os.environ["GIT_EVIDENCE_PUSHER"] = "bench"
    print(f"machine: {machine_note()}")
    base = WORK / "everyday.git"
    goldens = build(base)
    only = set(args.only or ROWS)
    if "push" in only:
        bench_push(base, args.runs)
    if "check" in only:
        bench_check(base, args.runs)
    if "lock" in only or "worktree" in only:
        bench_lock(base, goldens, args.runs)
    if "flat" in only:
        big = WORK / "everyday-big.git"
        build(big, MORE_FIXTURES)
        bench_flat(base, big, args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
