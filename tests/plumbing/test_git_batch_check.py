"""`batch.check` on real repositories: names with spaces, missing objects, newlines."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.repos import git

from git_evidence.core.errors import EvidenceError
from git_evidence.plumbing import batch
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.git import Git


@pytest.fixture
def repo(small_repo: Path) -> Git:
    return Git(cwd=str(small_repo))


def test_a_missing_path_with_two_words_is_missing_not_an_object(repo: Git) -> None:
    # "HEAD:x y missing" has three fields, like a found "<oid> <type> <size>".
    assert batch.check(repo, ["HEAD:x y"]) == [None]
    assert batch.check(repo, ["HEAD:x  y z"]) == [None]


def test_a_path_with_a_space_is_found_with_its_type(repo: Git) -> None:
    tree, blob, missing = batch.check(repo, ["HEAD:a b", "HEAD:a b/c", "HEAD:a b/d"])
    assert tree is not None and tree[1] == "tree"
    assert blob is not None and blob[1] == "blob"
    assert missing is None


def test_answers_stay_in_order_around_missing_names(repo: Git) -> None:
    answers = batch.check(repo, ["HEAD:plain", "HEAD:no such", "HEAD", "HEAD:plain"])
    assert [a and a[1] for a in answers] == ["blob", None, "commit", "blob"]


def test_a_name_with_a_newline_is_refused_not_misread(repo: Git) -> None:
    with pytest.raises(EvidenceError, match="newline"):
        batch.check(repo, ["HEAD:plain", "HEAD:a\nHEAD"])


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


def _big_repo(tmp_path: Path) -> tuple[Git, bytes]:
    """A repository whose ``big`` is larger than the reader's buffer (random, so no
    run of it lines up with the framing by chance), beside a small ``after``."""
    big = os.urandom(2 * (1 << 20) + 12345)
    git(tmp_path, "init", "-q")
    (tmp_path / "big").write_bytes(big)
    (tmp_path / "after").write_bytes(b"after\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "one")
    return Git(cwd=str(tmp_path)), big


def test_catfile_reads_an_object_larger_than_its_buffer_and_stays_in_step(
    tmp_path: Path,
) -> None:
    repo, big = _big_repo(tmp_path)
    with CatFile(repo) as cat:
        hit = cat.get("HEAD:big")
        assert hit is not None and hit[1] == "blob" and hit[2] == big
        (after_id,) = [found[0] for found in batch.check(repo, ["HEAD:after"]) if found]
        assert cat.get("HEAD:after") == (after_id, "blob", b"after\n")
        assert cat.get("HEAD:big") == hit  # asked again: the same bytes


# -- read_blobs: the bulk mode, one reader ----------------------------------------------


def test_read_blobs_hands_a_large_blob_in_pieces_and_stays_in_step_when_left_unread(
    tmp_path: Path,
) -> None:
    repo, big = _big_repo(tmp_path)
    found = batch.check(repo, ["HEAD:big", "HEAD:after"])
    assert found[0] is not None and found[1] is not None
    big_id, after_id = found[0][0], found[1][0]

    def whole(_oid: str, size: int, content: batch.Content) -> bytes:
        if isinstance(content, memoryview):
            return bytes(content)
        return b"".join(bytes(piece) for piece in content)

    read = batch.read_blobs(repo, [big_id, after_id, big_id], whole)
    assert read == {big_id: big, after_id: b"after\n"}
    # A taker that reads only the size leaves the pieces unread: the next blob is
    # still the next blob.
    sizes = batch.read_blobs(repo, [big_id, after_id], lambda _oid, size, _content: size)
    assert sizes == {big_id: len(big), after_id: 6}
    assert batch.read_blobs(repo, [after_id, big_id], whole)[after_id] == b"after\n"


def test_a_workspace_export_writes_a_blob_larger_than_the_buffer_whole(tmp_path: Path) -> None:
    # The export reads through the same bulk reader: a blob that comes in pieces of one
    # reused buffer must reach the file as git stores it, beside the blobs after it.
    from git_evidence.judge.workspace import export_tree

    (tmp_path / "repo").mkdir()
    repo, big = _big_repo(tmp_path / "repo")
    dest = tmp_path / "ws"
    assert export_tree(repo, "HEAD", str(dest)) == 2
    assert (dest / "big").read_bytes() == big
    assert (dest / "after").read_bytes() == b"after\n"
