"""`Git.batch_check` on real repositories: names with spaces, missing objects, newlines."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.repos import git

from git_evidence.core.errors import EvidenceError
from git_evidence.plumbing.git import CatFile, Git


@pytest.fixture
def repo(tmp_path: Path) -> Git:
    git(tmp_path, "init", "-q")
    (tmp_path / "a b").mkdir()
    (tmp_path / "a b" / "c").write_text("x\n")
    (tmp_path / "plain").write_text("y\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "one")
    return Git(cwd=str(tmp_path))


def test_a_missing_path_with_two_words_is_missing_not_an_object(repo: Git) -> None:
    # "HEAD:x y missing" has three fields, like a found "<oid> <type> <size>".
    assert repo.batch_check(["HEAD:x y"]) == [None]
    assert repo.batch_check(["HEAD:x  y z"]) == [None]


def test_a_path_with_a_space_is_found_with_its_type(repo: Git) -> None:
    tree, blob, missing = repo.batch_check(["HEAD:a b", "HEAD:a b/c", "HEAD:a b/d"])
    assert tree is not None and tree[1] == "tree"
    assert blob is not None and blob[1] == "blob"
    assert missing is None


def test_answers_stay_in_order_around_missing_names(repo: Git) -> None:
    answers = repo.batch_check(["HEAD:plain", "HEAD:no such", "HEAD", "HEAD:plain"])
    assert [a and a[1] for a in answers] == ["blob", None, "commit", "blob"]


def test_a_name_with_a_newline_is_refused_not_misread(repo: Git) -> None:
    with pytest.raises(EvidenceError, match="newline"):
        repo.batch_check(["HEAD:plain", "HEAD:a\nHEAD"])


# -- blob_at: one `cat-file --batch` ------------------------------------------------


def test_blob_at_gives_the_exact_bytes_of_a_blob(tmp_path: Path) -> None:
    data = b"\x00bin\nary\r\n\xff" + b"z" * 70_000 + b"\n\n"
    git(tmp_path, "init", "-q")
    (tmp_path / "a b").mkdir()
    (tmp_path / "a b" / "data").write_bytes(data)
    (tmp_path / "empty").write_bytes(b"")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "one")
    repo = Git(cwd=str(tmp_path))
    assert repo.blob_at("HEAD", "a b/data") == data
    assert repo.blob_at("HEAD", "empty") == b""


def test_blob_at_a_tree_or_a_missing_path_is_none(repo: Git) -> None:
    assert repo.blob_at("HEAD", "a b") is None  # a tree: its bytes are not a file's
    assert repo.blob_at("HEAD", "x y z") is None  # missing, three words
    assert repo.blob_at("no-such-rev", "plain") is None


def test_blob_at_refuses_a_path_with_a_newline(repo: Git) -> None:
    # "HEAD:x\nHEAD:plain" would be two lookups, the second answering for the first.
    with pytest.raises(EvidenceError, match="newline"):
        repo.blob_at("HEAD", "x\nHEAD:plain")


# -- CatFile: the same answers, one process for many lookups --------------------------


def test_catfile_a_missing_path_with_two_words_is_missing_not_an_object(repo: Git) -> None:
    # "HEAD:x y missing" has three fields, like a found "<oid> <type> <size>".
    with CatFile(repo) as cat:
        assert cat.get("HEAD:x y") is None
        hit = cat.get("HEAD:a b/c")  # the process still answers after a miss
        assert hit is not None and hit[1:] == ("blob", b"x\n")


def test_catfile_refuses_a_spec_with_a_newline(repo: Git) -> None:
    with CatFile(repo) as cat, pytest.raises(EvidenceError, match="newline"):
        cat.get("HEAD:x\nHEAD:plain")
