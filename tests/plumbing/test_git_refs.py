"""`Git.refs_and_symrefs` (the one ref listing: refs as git lists them, and symbolic refs), the
streamed `stream.diff_pairs`, and a diff started ahead (`stream.diff_trees_later`)."""

from __future__ import annotations

import os
from collections.abc import Generator
from pathlib import Path

import pytest
from helpers.repos import git

from git_evidence.core.errors import GitError
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.stream import diff_pairs, diff_trees_later


def test_one_listing_gives_the_refs_and_the_symbolic_refs(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "one")
    git(tmp_path, "tag", "v1")
    git(tmp_path, "branch", "feature/x")
    git(tmp_path, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    git(tmp_path, "symbolic-ref", "refs/heads/chain", "refs/heads/alias")
    git(tmp_path, "symbolic-ref", "refs/heads/dangling", "refs/heads/not-yet")
    repo = Git(cwd=str(tmp_path))
    refs, symrefs = repo.refs_and_symrefs()
    assert refs == repo.refs()
    assert symrefs == repo.symrefs()
    # The chain resolves to the end; the dangling one is in neither listing.
    assert symrefs == {"refs/heads/alias": "refs/heads/main", "refs/heads/chain": "refs/heads/main"}
    assert "refs/heads/dangling" not in refs
    assert refs["refs/tags/v1"] == refs["refs/heads/main"]
    listed = git(tmp_path, "for-each-ref", "--format=%(refname) %(objectname)").stdout
    assert refs == dict(line.split(" ") for line in listed.splitlines())


def test_a_diff_started_ahead_gives_the_same_tokens_or_raises_gits_failure(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "one")
    (tmp_path / "f").write_text("x\n")
    git(tmp_path, "add", "f")
    git(tmp_path, "commit", "-q", "-m", "two")
    repo = Git(cwd=str(tmp_path))
    assert diff_trees_later(repo, "HEAD~1", "HEAD").tokens() == repo.diff_trees("HEAD~1", "HEAD")
    assert len(repo.diff_trees("HEAD~1", "HEAD")) == 2  # one row: its meta, its path
    late = diff_trees_later(repo, "HEAD", "no-such-revision")
    with pytest.raises(GitError) as failed:
        late.tokens()
    assert "no-such-revision" in str(failed.value)


def test_diff_pairs_streams_every_pair_in_order_and_stops_cleanly(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    # 300 commits, each adding a file (more lines than a pipe holds: the feeder must not
    # block), written by one fast-import rather than 900 git processes
    stream = b"".join(
        b"commit refs/heads/main\ncommitter T <t@example.com> 1700000000 +0000\n"
        + b"data %d\nc%d\nM 100644 inline f%d\ndata %d\n%d\n\n"
        % (len(b"c%d" % i), i, i, len(b"%d\n" % i), i)
        for i in range(300)
    )
    git(tmp_path, "fast-import", "--quiet", input=stream)
    commits = git(tmp_path, "rev-list", "--reverse", "main").stdout.split()
    assert len(commits) == 300
    repo = Git(cwd=str(tmp_path))
    pairs = [f"{c} {p}" for c, p in zip(commits[1:], commits, strict=False)] * 3
    tokens = list(diff_pairs(repo, pairs, []))
    headers, paths = [], []
    meta = False
    for token in tokens:  # a header, or a row: its meta token, then its path
        if meta:
            paths.append(token)
            meta = False
        elif token.startswith(b":"):
            meta = True
        else:
            headers.append(token.decode())
    assert headers == [pair.split()[0] for pair in pairs]
    assert paths == [f"f{i}".encode() for i in range(1, 300)] * 3
    # A reader that stops early leaves no process behind and no thread blocked.
    reader = diff_pairs(repo, pairs, [])
    assert isinstance(reader, Generator)
    next(reader)
    reader.close()
    children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()
    commands = [Path(f"/proc/{pid}/cmdline").read_bytes() for pid in children]
    assert not [c for c in commands if b"diff-tree" in c]
