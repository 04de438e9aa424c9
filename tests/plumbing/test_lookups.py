"""`lookups.live`: inside the block, short lists of lookups go to one persistent
`cat-file --batch-check` and get the answers a process of their own gives; the block's
readers hang on the `Git` it was given (`Git.live`), never on another."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from helpers.repos import git

from git_evidence.core.errors import EvidenceError
from git_evidence.plumbing import batch, lookups
from git_evidence.plumbing.git import Git

SPECS = ["HEAD:plain", "HEAD:no such", "HEAD", "HEAD:a b", "HEAD:a b/c", "HEAD:x y", "HEAD^{tree}"]


class CountingGit(Git):
    """A real Git that counts the long-running git processes it starts."""

    started: list[tuple[str, ...]]

    def popen(self, *args: str, buffered: bool = False) -> subprocess.Popen[bytes]:
        self.started.append(args)
        return super().popen(*args, buffered=buffered)


@pytest.fixture
def repo(small_repo: Path) -> CountingGit:
    counting = CountingGit(cwd=str(small_repo))
    counting.started = []
    return counting


def test_live_answers_are_the_answers_of_a_process_of_their_own(repo: CountingGit) -> None:
    alone = batch.check(repo, SPECS)
    with lookups.live(repo):
        inside = [batch.check(repo, SPECS), batch.check(repo, SPECS[::-1])]
    assert inside == [alone, alone[::-1]]
    assert alone[1] is None and alone[5] is None and alone[0] is not None


def test_one_process_answers_every_short_list_of_a_block(repo: CountingGit) -> None:
    with lookups.live(repo):
        for spec in SPECS:
            batch.check(repo, [spec])
        with lookups.live(repo):  # a nested block shares it
            batch.check(repo, SPECS)
    assert repo.started == [("cat-file", "--batch-check")]
    batch.check(repo, SPECS)  # after the block: a process of its own again
    assert len(repo.started) == 2
    assert repo.live is None


def test_a_long_list_inside_a_block_gets_a_process_of_its_own(repo: CountingGit) -> None:
    many = [f"HEAD:missing-{n}" for n in range(batch.LIVE_MAX + 1)]
    with lookups.live(repo):
        batch.check(repo, ["HEAD"])
        assert batch.check(repo, many) == [None] * len(many)
    assert len(repo.started) == 2


def test_a_name_with_a_newline_is_refused_inside_a_block_too(repo: CountingGit) -> None:
    with lookups.live(repo):
        with pytest.raises(EvidenceError, match="newline"):
            batch.check(repo, ["HEAD:plain", "HEAD:a\nHEAD"])
        # the process never saw the half-written list: later answers stay in step
        assert batch.check(repo, ["HEAD:plain", "HEAD:no such"])[1] is None


def test_a_git_that_dies_mid_block_is_an_error_not_an_answer(repo: CountingGit) -> None:
    with lookups.live(repo):
        batch.check(repo, ["HEAD"])
        assert repo.live is not None
        proc = repo.live.check.__self__._proc  # type: ignore[attr-defined]
        proc.kill()
        proc.wait()
        with pytest.raises(EvidenceError, match="answered 0 of 2 lookups"):
            batch.check(repo, ["HEAD", "HEAD:plain"])


REVS = ["HEAD", "HEAD~1", "HEAD~9", "@{upstream}", "-x", "HEAD:plain", "nosuch", "HEAD^{tree}"]
REVS += [" HEAD", "HEAD ", "", "HEAD@{0}", "refs/heads/no", "a\nb", "HEAD^{commit}", "HEAD@{9}"]
REVS += ["HEAD~99999999999999999999", "HEAD^{/two}", "HEAD^{}", "HEAD^3", "*", ":/two"]


def test_revisions_resolve_inside_a_block_as_rev_parse_resolves_them(repo: CountingGit) -> None:
    git(Path(repo.cwd or "."), "commit", "-q", "--allow-empty", "-m", "two")
    alone = [repo.resolve_commit(rev) for rev in REVS]
    with lookups.live(repo):
        inside = [repo.resolve_commit(rev) for rev in REVS]
    assert inside == alone
    assert alone[0] is not None and alone[1] is not None and alone[2] is None
    assert repo.started == [("cat-file", "--batch-check")]


def test_a_list_cut_short_leaves_no_answer_for_the_next(
    repo: CountingGit, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An answer read only in part (an interrupt, the time budget) must not be taken
    for the next list's: the process is given up and another starts."""
    real = batch.parse_header
    calls = [0]

    def once_broken(line: bytes) -> object:
        calls[0] += 1
        if calls[0] == 2:
            raise KeyboardInterrupt
        return real(line)

    with lookups.live(repo):
        monkeypatch.setattr(batch, "parse_header", once_broken)
        with pytest.raises(KeyboardInterrupt):
            batch.check(repo, ["HEAD", "HEAD:plain", "HEAD:a b"])
        monkeypatch.setattr(batch, "parse_header", real)
        assert batch.check(repo, ["HEAD:no such", "HEAD"]) == batch.check(
            Git(cwd=repo.cwd), ["HEAD:no such", "HEAD"]
        )
    assert repo.started == [("cat-file", "--batch-check")] * 2


def test_an_object_read_cut_short_leaves_no_bytes_for_the_next(
    repo: CountingGit, monkeypatch: pytest.MonkeyPatch
) -> None:
    from git_evidence.plumbing.batch import CatFile

    real = batch._Reader.content
    calls = [0]

    def once_broken(self: object, size: int) -> object:
        calls[0] += 1
        if calls[0] == 1:
            raise KeyboardInterrupt
        return real(self, size)  # type: ignore[arg-type]

    with lookups.live(repo):
        monkeypatch.setattr(batch._Reader, "content", once_broken)
        with pytest.raises(KeyboardInterrupt):
            CatFile(repo).get("HEAD:plain")
        hit = CatFile(repo).get("HEAD:a b/c")
    assert hit is not None and hit[2] == b"x\n"
    assert repo.started == [("cat-file", "--batch")] * 2


def test_a_blob_read_inside_a_block_is_the_bytes_cat_file_blob_gives(repo: CountingGit) -> None:
    from git_evidence.core.errors import GitError

    blob, tree = (hit[0] for hit in batch.check(repo, ["HEAD:plain", "HEAD^{tree}"]) if hit)
    alone = repo.blob_bytes(blob)
    with pytest.raises(GitError):
        repo.blob_bytes(tree)
    with lookups.live(repo):
        assert repo.blob_bytes(blob) == alone == b"y\n"
        with pytest.raises(GitError):  # not a blob: git's own error, as outside
            repo.blob_bytes(tree)
    assert ("cat-file", "--batch") in repo.started


def test_a_block_serves_the_git_it_was_given_not_another_of_the_same_repository(
    repo: CountingGit,
) -> None:
    other = CountingGit(cwd=repo.cwd)
    other.started = []
    with lookups.live(repo):
        assert repo.live is not None and other.live is None
        batch.check(repo, ["HEAD"])
        batch.check(other, ["HEAD"])
        with batch.CatFile(other) as cat:
            cat.read("HEAD")
    assert repo.started == [("cat-file", "--batch-check")]
    assert other.started == [("cat-file", "--batch-check"), ("cat-file", "--batch")]


def test_a_block_ends_with_every_pipe_of_its_processes_closed(repo: CountingGit) -> None:
    with lookups.live(repo):
        batch.check(repo, ["HEAD"])
        repo.blob_bytes("HEAD:plain")
        assert repo.live is not None
        procs = [repo.live.check.__self__._proc, repo.live.reader._proc]  # type: ignore[attr-defined]
    for proc in procs:
        assert proc.returncode == 0
        assert all(pipe.closed for pipe in (proc.stdin, proc.stdout, proc.stderr))
