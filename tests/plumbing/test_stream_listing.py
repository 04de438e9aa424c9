"""The push's one ``diff-tree`` is fed from ``rev-list --parents`` (``stream.diff_tree_chunks``
with ``parents``): the listing must give every commit's parents as git records them, the
commits must come in the listing's order with merges as git's combined rows, and a reader
that stops early must leave nothing running. Real histories with the merges that make
this subtle: octopus merges, symlinks, type and mode changes, a file replacing a
directory, deletions, gitlinks, paths that are not UTF-8."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

from helpers.repos import git

from git_evidence.core.facts import CommitDiff
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.raw_diff import LinkResolver, parse_raw
from git_evidence.plumbing.stream import diff_tree_chunks

# A file, the same name as a directory, files in that directory, links, a name that is
# not UTF-8: the paths random commits write, delete and retype.
POOL = [b"a", b"b.py", b"d", b"d/x", b"d/y", b"d/e/z", b"n\xffx", b"link", b"sub"]
COMMITTER = b"committer T <t@example.com> 1700000000 +0000\n"


def _ops(rng: random.Random, serial: int) -> bytes:
    out = b""
    for _ in range(rng.randint(1, 4)):
        path = rng.choice(POOL)
        kind = rng.random()
        if kind < 0.2:
            out += b"D %s\n" % path
        elif kind < 0.35:
            target = rng.choice([b"a", b"d/x", b"../out", b"d"])
            out += b"M 120000 inline %s\ndata %d\n%s\n" % (path, len(target), target)
        elif kind < 0.42:
            out += b"M 160000 %s %s\n" % (b"%040x" % (serial + 1), path)
        else:
            mode = rng.choice([b"100644", b"100644", b"100755"])
            body = b"%d %d\n" % (serial, rng.randint(0, 2))  # sometimes an equal value
            out += b"M %s inline %s\ndata %d\n%s\n" % (mode, path, len(body), body)
    return out


def _history(root: Path, seed: int, commits: int) -> None:
    """A seeded random history through one fast-import: most commits on one parent,
    a quarter merges of two parents, a few octopus merges; the tip of each branch is
    a ref, so ``--all`` lists every commit."""
    rng = random.Random(seed)
    stream = b""
    for n in range(1, commits + 1):
        ref = b"refs/heads/b%d" % rng.randint(0, 3)
        stream += b"commit %s\nmark :%d\n%sdata 2\nc\n" % (ref, n, COMMITTER)
        if n > 1:
            parents = rng.sample(range(max(1, n - 6), n), k=min(n - 1, rng.choice([1, 1, 2, 2, 3])))
            stream += b"from :%d\n" % parents[0]
            stream += b"".join(b"merge :%d\n" % p for p in parents[1:])
        stream += _ops(rng, n) + b"\n"
    git(root, "init", "-q")
    git(root, "fast-import", "--quiet", input=stream)


def _parsed(g: Git, tokens: list[bytes]) -> list[CommitDiff]:
    with CatFile(g) as cat:
        return list(parse_raw(iter(tokens), LinkResolver(g, cat), plain_rows=True))


def _raw(root: Path, *args: str, input: bytes | None = None) -> bytes:
    """git's output as bytes (paths that are not UTF-8 included)."""
    done = subprocess.run(["git", *args], cwd=root, input=input, capture_output=True, check=True)
    return done.stdout


DIFF_C = ("diff-tree", "--stdin", "-r", "-z", "--raw", "--no-renames", "-c", "--root", "--always")


def test_the_listing_gives_every_commits_parents_and_the_stream_gits_combined_rows(
    tmp_path: Path,
) -> None:
    """Random histories: the parents the stream's listing records are `rev-list
    --parents`'s; the commits it parses are what git's `-c` output for the listed
    commits parses to, in the listing's order."""
    merges = octopus = 0
    for seed in range(4):
        root = tmp_path / f"h{seed}"
        root.mkdir()
        _history(root, seed, 70)
        g = Git(cwd=str(root))
        listing: dict[str, list[str]] = {}
        listed: list[str] = []
        chunks = diff_tree_chunks(g, [["--all"]], [listed], listing)
        streamed = _parsed(g, [t for chunk in chunks for t in chunk])
        with_parents = _raw(root, "rev-list", "--parents", "--all").decode().splitlines()
        assert listing == {oid: ps for oid, *ps in map(str.split, with_parents)}
        assert listed == [line.split()[0] for line in with_parents]
        combined = _raw(root, *DIFF_C, input=_raw(root, "rev-list", "--all")).split(b"\0")[:-1]
        assert streamed == _parsed(g, combined)
        assert [c.oid for c in streamed] == listed
        merges += sum(len(ps) > 1 for ps in listing.values())
        octopus += sum(len(ps) > 2 for ps in listing.values())
    assert merges > 40 and octopus > 5  # the histories hold what the test is about


def test_the_stream_feeds_every_commit_in_order_and_stops_cleanly(tmp_path: Path) -> None:
    """300 commits, more lines than a pipe holds (the feeder must not block): every
    header comes in rev-list's order; a reader that stops early leaves no process
    behind and no thread blocked."""
    git(tmp_path, "init", "-q")
    stream = b"".join(
        b"commit refs/heads/main\n"
        + COMMITTER
        + b"data %d\nc%d\nM 100644 inline f%d\ndata %d\n%d\n\n"
        % (len(b"c%d" % i), i, i, len(b"%d\n" % i), i)
        for i in range(300)
    )
    git(tmp_path, "fast-import", "--quiet", input=stream)
    commits = git(tmp_path, "rev-list", "main").stdout.split()
    repo = Git(cwd=str(tmp_path))
    listed: list[str] = []
    tokens = [t for chunk in diff_tree_chunks(repo, [["main"]], [listed], {}) for t in chunk]
    headers = [t.decode() for t in tokens if t.decode() in commits]
    assert headers == commits == listed
    paths = [t for t in tokens if not t.startswith(b":") and t.decode() not in commits]
    assert paths == [f"f{i}".encode() for i in range(299, -1, -1)]
    chunks = diff_tree_chunks(repo, [["main"]], [[]], {})
    next(chunks)
    chunks.close()
    children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()
    commands = [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in children]
    assert not [c for c in commands if b"diff-tree" in c]
