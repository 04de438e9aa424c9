"""The answers a `Git` keeps, counted with real git behind a logging `git` on PATH:
the work tree's top and the git directories are asked once for each `Git` (by the
directory git runs in), a failure is asked again, and the lock commands' commit lookup
names the common directory so that the lock cache asks nothing more."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers.repos import git

from git_evidence.core.errors import GitError
from git_evidence.plumbing import repo_dirs
from git_evidence.plumbing.git import Git


class Counted:
    """A ``git`` on PATH that logs each start and runs the real git."""

    def __init__(self, where: Path) -> None:
        real = shutil.which("git")
        assert real
        self.bin = where / "count-bin"
        self.bin.mkdir()
        self.log = where / "git-starts.log"
        (self.bin / "git").write_text(f'#!/bin/sh\necho "$*" >> "{self.log}"\nexec "{real}" "$@"\n')
        (self.bin / "git").chmod(0o755)
        self.env = {**os.environ, "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}"}

    def git(self, cwd: Path | None) -> Git:
        return Git(cwd=None if cwd is None else str(cwd), env=self.env)

    def starts(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []


@pytest.fixture
def counted(tmp_path: Path) -> Counted:
    return Counted(tmp_path)


def test_a_second_toplevel_starts_no_git(small_repo: Path, counted: Counted) -> None:
    repo = counted.git(small_repo / "a b")
    assert repo.toplevel() == str(small_repo)
    assert counted.starts() == ["rev-parse --show-toplevel"]  # the shim saw the first
    assert repo.toplevel() == str(small_repo)
    assert repo.work_tree("this") == str(small_repo)
    assert counted.starts() == ["rev-parse --show-toplevel"]


def test_a_bare_repositorys_missing_top_is_kept_too(tmp_path: Path, counted: Counted) -> None:
    bare = tmp_path / "server.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    repo = counted.git(bare)
    assert repo.toplevel() is None
    assert repo.toplevel() is None
    assert len(counted.starts()) == 1


def test_another_git_asks_again(small_repo: Path, counted: Counted) -> None:
    assert counted.git(small_repo).toplevel() == counted.git(small_repo).toplevel()
    assert len(counted.starts()) == 2


def test_a_git_without_cwd_asks_again_where_the_process_moved(
    small_repo: Path, tmp_path: Path, counted: Counted, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", str(other))
    repo = counted.git(None)
    monkeypatch.chdir(small_repo)
    assert repo.toplevel() == str(small_repo)
    monkeypatch.chdir(other)
    assert repo.toplevel() == str(other)
    monkeypatch.chdir(small_repo)
    assert repo.toplevel() == str(small_repo)
    assert len(counted.starts()) == 2


def test_a_failure_is_not_kept(small_repo: Path, counted: Counted) -> None:
    config = small_repo / ".git" / "config"
    good = config.read_text()
    config.write_text("[[[ not a config\n")
    repo = counted.git(small_repo)
    with pytest.raises(GitError):
        repo.toplevel()
    config.write_text(good)
    assert repo.toplevel() == str(small_repo)
    assert len(counted.starts()) == 2


def test_a_second_git_dirs_starts_no_git(small_repo: Path, counted: Counted) -> None:
    repo = counted.git(small_repo)
    first = repo.git_dirs()
    first.append("changed by the caller")  # a copy: the kept answer stays as git gave it
    assert repo.git_dirs() == [str(small_repo / ".git")] * 2
    assert len(counted.starts()) == 1


def test_the_lock_commit_lookup_names_the_common_dir_for_the_cache(
    small_repo: Path, counted: Counted
) -> None:
    repo_dirs.COMMON_DIRS.clear()
    repo = counted.git(small_repo / "a b")
    head = git(small_repo, "rev-parse", "HEAD").stdout.strip()
    assert repo_dirs.commit_noting_dirs(repo, "HEAD") == head
    assert repo_dirs.common_dir(repo) == str(small_repo / ".git")
    assert len(counted.starts()) == 1
    assert repo_dirs.commit_noting_dirs(repo, "no-such-rev") is None
    assert repo_dirs.commit_noting_dirs(repo, "HEAD:plain") is None  # a blob is no commit


@pytest.mark.usefixtures("gone_cwd")
def test_a_deleted_current_directory_is_gits_clear_error_and_nothing_is_kept() -> None:
    asked = Git()
    for question in (asked.toplevel, asked.git_dirs):
        with pytest.raises(GitError, match="rev-parse"):
            question()
    assert not asked._tops and not asked._dirs
