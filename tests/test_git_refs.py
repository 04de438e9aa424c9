"""`Git.refs_and_symrefs`: the one ref listing (refs as git lists them, and symbolic refs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import git

from git_evidence.errors import GitError
from git_evidence.git import Git


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
    assert repo.diff_trees_later("HEAD~1", "HEAD").tokens() == repo.diff_trees("HEAD~1", "HEAD")
    assert len(repo.diff_trees("HEAD~1", "HEAD")) == 2  # one row: its meta, its path
    late = repo.diff_trees_later("HEAD", "no-such-revision")
    with pytest.raises(GitError) as failed:
        late.tokens()
    assert "no-such-revision" in str(failed.value)
