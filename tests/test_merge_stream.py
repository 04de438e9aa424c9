"""The push's one ``diff-tree`` diffs each merge against each of its parents in turn
(``Git.diff_tree_chunks`` with ``parents``); ``parse_raw`` builds the merge's combined
rows from those diffs (``ranges.combined_rows``). What it builds must be what
``diff-tree -c`` prints, on real histories with the merges that make combined diffs
subtle: octopus merges, a parent named twice, symlinks, type and mode changes, a file
replacing a directory, deletions on every side, gitlinks, paths that are not UTF-8."""

from __future__ import annotations

import os
import random
import subprocess
from pathlib import Path

from conftest import git

from git_evidence.git import CatFile, Git
from git_evidence.ranges import CommitDiff, LinkResolver, combined_rows, parse_raw

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


def _parsed(g: Git, tokens: list[bytes], parents: dict[str, list[str]] | None) -> list[CommitDiff]:
    with CatFile(g) as cat:
        return list(parse_raw(iter(tokens), LinkResolver(g, cat), plain_rows=True, parents=parents))


def _raw(root: Path, *args: str, input: bytes | None = None) -> bytes:
    """git's output as bytes (paths that are not UTF-8 included)."""
    done = subprocess.run(["git", *args], cwd=root, input=input, capture_output=True, check=True)
    return done.stdout


DIFF_C = ("diff-tree", "--stdin", "-r", "-z", "--raw", "--no-renames", "-c", "--root", "--always")


def test_a_merge_streamed_parent_by_parent_parses_as_its_combined_diff(tmp_path: Path) -> None:
    """Every commit of random histories, streamed as a push streams them, parses to
    exactly what the combined stream (``-c``, a merge on one line) parses to; and each
    merge's ``parent_diffs`` are git's own diffs against each parent."""
    merges_seen = octopus = 0
    for seed in range(6):
        root = tmp_path / f"h{seed}"
        root.mkdir()
        _history(root, seed, 70)
        g = Git(cwd=str(root))
        combined = _raw(root, *DIFF_C, input=_raw(root, "rev-list", "--all")).split(b"\0")[:-1]
        listing: dict[str, list[str]] = {}
        listed: list[str] = []
        chunks = g.diff_tree_chunks([["--all"]], [listed], listing)
        streamed = _parsed(g, [t for chunk in chunks for t in chunk], listing)
        expected = _parsed(g, combined, None)
        # (rows: a list or a tuple, as built; the merge's diffs apart)
        assert [c._replace(rows=tuple(c.rows), parent_diffs=()) for c in streamed] == [
            c._replace(rows=tuple(c.rows)) for c in expected
        ]
        assert listed == _raw(root, "rev-list", "--all").decode().split()
        with_parents = _raw(root, "rev-list", "--parents", "--all").decode().splitlines()
        assert listing == {oid: ps for oid, *ps in map(str.split, with_parents)}
        for commit in streamed:
            parents = listing[commit.oid]
            if len(parents) < 2:
                assert commit.parent_diffs == ()
                continue
            merges_seen += 1
            octopus += len(parents) > 2
            assert [p for p, _ in commit.parent_diffs] == parents
            for parent, paths in commit.parent_diffs:
                names = _raw(
                    root,
                    "diff-tree",
                    "-r",
                    "-z",
                    "--name-only",
                    "--no-renames",
                    parent,
                    commit.oid,
                )
                assert [p.encode("utf-8", "surrogateescape") for p in paths] == names.split(b"\0")[
                    :-1
                ]
    assert merges_seen > 60 and octopus > 10  # the histories hold what the test is about


def test_a_parent_named_twice_gives_the_combined_rows_git_prints(tmp_path: Path) -> None:
    """``commit-tree`` drops a repeated parent; a commit written by hand keeps it, and
    git diffs the merge against that parent twice."""
    _history(tmp_path, 11, 12)
    tip = _raw(tmp_path, "rev-parse", "refs/heads/b0").decode().strip()
    tree = _raw(tmp_path, "rev-parse", "refs/heads/b1^{tree}").decode().strip()
    body = (
        f"tree {tree}\nparent {tip}\nparent {tip}\n".encode()
        + COMMITTER.replace(b"committer", b"author")
        + COMMITTER
        + b"\ntwice\n"
    )
    twice = _raw(
        tmp_path, "hash-object", "-t", "commit", "-w", "--stdin", "--literally", input=body
    )
    twice_oid = twice.decode().strip()
    expected = _raw(tmp_path, *DIFF_C, input=twice).split(b"\0")[1:-1]
    assert expected  # the two trees differ: there are rows to combine
    blocks = _raw(tmp_path, *DIFF_C, input=f"{twice_oid} {tip}\n".encode() * 2).split(b"\0")[:-1]
    half = len(blocks) // 2
    assert blocks[0] == blocks[half] == twice_oid.encode()
    assert combined_rows([blocks[1:half], blocks[half + 1 :]]) == expected


def test_combined_rows_of_no_parent_diff_are_none() -> None:
    assert combined_rows([]) == []
    assert combined_rows([[], []]) == []


def test_a_path_unchanged_from_one_parent_is_not_in_the_combined_rows() -> None:
    """A merge that took one parent's copy differs from that parent in nothing there."""
    a_row = b":100644 100644 " + b"1" * 40 + b" " + b"2" * 40 + b" M"
    b_row = b":100644 100644 " + b"3" * 40 + b" " + b"2" * 40 + b" M"
    rows = combined_rows([[a_row, b"x", a_row, b"only-first"], [b_row, b"x"]])
    both = b"::100644 100644 100644 " + b"1" * 40 + b" " + b"3" * 40 + b" " + b"2" * 40 + b" MM"
    assert rows == [both, b"x"]


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
    tokens = [t for chunk in repo.diff_tree_chunks([["main"]], [listed], {}) for t in chunk]
    headers = [t.decode() for t in tokens if t.decode() in commits]
    assert headers == commits == listed
    paths = [t for t in tokens if not t.startswith(b":") and t.decode() not in commits]
    assert paths == [f"f{i}".encode() for i in range(299, -1, -1)]
    chunks = repo.diff_tree_chunks([["main"]], [[]], {})
    next(chunks)
    chunks.close()
    children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()
    commands = [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in children]
    assert not [c for c in commands if b"diff-tree" in c]
