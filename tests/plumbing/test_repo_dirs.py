"""`repo_dirs.head_state` and `common_dir` in real repositories: the HEAD files of a
main work tree (with the object reader for the commit), or one `rev-parse`, give what
`symbolic-ref`, `rev-parse --verify` and `--git-path MERGE_HEAD` give one by one, in
every state HEAD can be in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.repos import Work, git

from git_evidence.core.errors import GitError
from git_evidence.plumbing import repo_dirs
from git_evidence.plumbing.git import Git


@pytest.fixture(autouse=True)
def _fresh() -> None:
    repo_dirs.COMMON_DIRS.clear()


@pytest.fixture
def work(tmp_path: Path) -> Work:
    repo = Work(tmp_path / "r")
    git(tmp_path, "init", "-q", "-b", "main", str(repo.path))
    repo.commit("one", {"a": "1\n"})
    return repo


def _one_by_one(path: Path) -> tuple[str | None, str, list[str]]:
    head = git(path, "rev-parse", "--verify", "-q", "HEAD^{commit}", check=False).stdout.strip()
    branch = git(path, "symbolic-ref", "-q", "HEAD", check=False).stdout.strip()
    merge = Path(path, git(path, "rev-parse", "--git-path", "MERGE_HEAD").stdout.strip())
    heads = merge.read_text().split() if merge.exists() else []
    return head or None, branch, heads


def _state(path: Path) -> tuple[str | None, str, list[str]]:
    state = repo_dirs.head_state(Git(cwd=str(path)))
    return state.commit, state.branch, list(state.merge_heads)


def test_on_a_branch(work: Work) -> None:
    assert _state(work.path) == _one_by_one(work.path)
    assert _state(work.path)[1] == "refs/heads/main"


def test_detached_head_names_no_branch(work: Work) -> None:
    work.git("checkout", "-q", "--detach")
    assert _state(work.path) == _one_by_one(work.path)
    assert _state(work.path)[1] == ""


def test_an_unborn_branch_has_no_commit(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "trunk", str(tmp_path / "u"))
    assert _state(tmp_path / "u") == (None, "refs/heads/trunk", [])


def test_a_merge_in_progress_names_the_merged_head(work: Work) -> None:
    work.git("checkout", "-q", "-b", "side")
    side = work.commit("side", {"b": "2\n"})
    work.git("checkout", "-q", "main")
    work.commit("main", {"c": "3\n"})
    work.git("merge", "-q", "--no-commit", "side")
    assert _state(work.path) == _one_by_one(work.path)
    assert _state(work.path)[2] == [side]


def test_a_file_named_head_in_the_tree_still_gives_the_answers(work: Work) -> None:
    work.commit("a file called HEAD", {"HEAD": "not a ref\n"})
    assert _state(work.path) == _one_by_one(work.path)


def test_a_linked_worktree_keeps_its_own_head_and_the_main_common_dir(work: Work) -> None:
    other = work.path.parent / "other"
    work.git("worktree", "add", "-q", "-b", "topic", str(other))
    assert _state(other) == _one_by_one(other)
    assert _state(other)[1] == "refs/heads/topic"
    assert repo_dirs.common_dir(Git(cwd=str(other))) == str(work.path / ".git")


def test_the_common_dir_from_a_subdirectory_is_absolute(work: Work) -> None:
    sub = work.path / "deep" / "er"
    sub.mkdir(parents=True)
    assert repo_dirs.common_dir(Git(cwd=str(sub))) == str(work.path / ".git")
    repo_dirs.COMMON_DIRS.clear()
    repo_dirs.head_state(Git(cwd=str(sub)))  # remembers it on the way
    assert list(repo_dirs.COMMON_DIRS.values()) == [str(work.path / ".git")]


class CountingGit(Git):
    """A real Git that counts the git commands it runs to completion."""

    ran: list[tuple[str, ...]]

    def run(self, *args: str, **kw: object) -> tuple[int, bytes]:
        self.ran.append(args)
        return super().run(*args, **kw)  # type: ignore[arg-type]


def test_a_main_work_tree_runs_no_git_command_on_a_branch_and_detached(work: Work) -> None:
    for detach in (False, True):
        if detach:
            work.git("checkout", "-q", "--detach")
        repo_dirs.COMMON_DIRS.clear()
        counting = CountingGit(cwd=str(work.path))
        counting.ran = []
        repo_dirs.head_state(counting)
        repo_dirs.common_dir(counting)
        assert counting.ran == []  # the files, and the object reader for the commit


def test_one_rev_parse_answers_everything_in_a_linked_worktree(work: Work) -> None:
    other = work.path.parent / "other"
    work.git("worktree", "add", "-q", "-b", "topic", str(other))
    for detach in (False, True):
        if detach:
            git(other, "checkout", "-q", "--detach")
        repo_dirs.COMMON_DIRS.clear()
        counting = CountingGit(cwd=str(other))
        counting.ran = []
        repo_dirs.head_state(counting)
        repo_dirs.common_dir(counting)
        assert [args[0] for args in counting.ran] == ["rev-parse"]


def test_a_git_dir_in_the_gits_own_environment_names_its_repository(
    work: Work, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Git made with its own ``GIT_DIR`` (and no cwd) is asked about that repository,
    not the one the process happens to stand in."""
    other = tmp_path / "other.git"
    git(tmp_path, "init", "-q", "--bare", str(other))
    monkeypatch.chdir(work.path)
    monkeypatch.delenv("GIT_DIR", raising=False)
    here = repo_dirs.common_dir(Git())
    assert Path(here) == work.path / ".git"
    theirs = Git(env={**os.environ, "GIT_DIR": str(other)})
    assert Path(repo_dirs.common_dir(theirs)) == other
    assert repo_dirs.head_target(theirs) == git(other, "symbolic-ref", "HEAD").stdout.strip()


@pytest.mark.usefixtures("gone_cwd")
def test_a_deleted_current_directory_keeps_nothing_and_git_says_why() -> None:
    with pytest.raises(GitError, match="rev-parse"):
        repo_dirs.common_dir(Git())
    assert not repo_dirs.COMMON_DIRS
