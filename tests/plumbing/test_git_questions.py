"""`Git`'s named questions answer as git does, with one reading of failure each: the
work tree's top (`toplevel`: a path as git prints it, None where there is none), the
error a command needing a work tree gives (`work_tree`), HEAD's branch (`head_branch`),
and the small questions the commands used to spell themselves."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.repos import git

from git_evidence.core.errors import GitError, UsageError
from git_evidence.plumbing.git import Git


def test_toplevel_is_the_work_tree_as_git_names_it(small_repo: Path) -> None:
    inside = small_repo / "a b"
    assert Git(cwd=str(inside)).toplevel() == str(small_repo)


def test_toplevel_keeps_a_name_ending_in_a_space(tmp_path: Path) -> None:
    spaced = tmp_path / "work "
    spaced.mkdir()
    git(spaced, "init", "-q")
    assert Git(cwd=str(spaced)).toplevel() == str(spaced)


def test_a_bare_repository_has_no_toplevel(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "--bare")
    assert Git(cwd=str(tmp_path)).toplevel() is None


def test_outside_any_repository_there_is_no_toplevel(tmp_path: Path) -> None:
    env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(tmp_path)}
    assert Git(cwd=str(tmp_path), env=env).toplevel() is None


def test_inside_the_git_directory_there_is_no_toplevel(small_repo: Path) -> None:
    assert Git(cwd=str(small_repo / ".git")).toplevel() is None


def test_a_broken_repository_is_an_error_not_a_missing_work_tree(small_repo: Path) -> None:
    # git fails for another reason than "no work tree": toplevel must not read it as
    # "none" (the agent's guard would take the path for one outside any repository)
    (small_repo / ".git" / "config").write_text("[[[ not a config\n")
    with pytest.raises(GitError) as raised:
        Git(cwd=str(small_repo)).toplevel()
    assert b"bad config" in raised.value.stderr


def test_work_tree_names_what_needs_one(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "--bare")
    with pytest.raises(UsageError) as raised:
        Git(cwd=str(tmp_path)).work_tree("--agent", fix="run it in a clone")
    assert raised.value.message == "--agent needs a work tree (this repository is bare)"
    assert raised.value.fix == "run it in a clone"


def test_head_branch_is_the_ref_head_names_even_unborn(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "trunk")
    assert Git(cwd=str(tmp_path)).head_branch() == "refs/heads/trunk"


def test_a_detached_head_has_no_branch(small_repo: Path) -> None:
    git(small_repo, "checkout", "-q", "--detach")
    assert Git(cwd=str(small_repo)).head_branch() is None


def test_prefix_is_where_the_directory_sits_in_the_work_tree(small_repo: Path) -> None:
    assert Git(cwd=str(small_repo / "a b")).prefix() == "a b/"
    assert Git(cwd=str(small_repo)).prefix() == ""


def test_config_values_are_written_added_read_and_removed(small_repo: Path) -> None:
    repo = Git(cwd=str(small_repo))
    assert repo.config_all("remote.x.fetch") == []
    repo.set_config("remote.x.fetch", "+refs/a:refs/a")
    repo.set_config("remote.x.fetch", "+refs/b:refs/b", add=True)
    assert repo.config_all("remote.x.fetch") == ["+refs/a:refs/a", "+refs/b:refs/b"]
    repo.unset_config("remote.x.fetch", "+refs/a:refs/a")
    assert repo.config_all("remote.x.fetch") == ["+refs/b:refs/b"]


def test_revision_questions(small_repo: Path) -> None:
    repo = Git(cwd=str(small_repo))
    git(small_repo, "commit", "-q", "--allow-empty", "-m", "two")
    first = git(small_repo, "rev-parse", "HEAD~1").stdout.strip()
    head = git(small_repo, "rev-parse", "HEAD").stdout.strip()
    assert repo.is_repository()
    assert repo.is_ancestor(first, head) and not repo.is_ancestor(head, first)
    branch = git(small_repo, "symbolic-ref", "HEAD").stdout.strip()
    assert repo.full_ref_name(branch.removeprefix("refs/heads/")) == branch
    assert repo.full_ref_name(head) is None
    assert repo.valid_ref_name("refs/heads/ok") and not repo.valid_ref_name("refs/heads/a..b")
    assert repo.object_type("HEAD:a b") == "tree"
    assert repo.object_type("HEAD:missing") is None
    assert repo.topo_parents(head, "--not", first) == [(head, [first])]
    assert repo.commit_time(head) == int(
        git(small_repo, "log", "-1", "--format=%ct", head).stdout.strip()
    )
    assert repo.added_times("plain") == [repo.commit_time(first)]


def test_a_shallow_clone_is_unshallowed_from_its_remote(small_repo: Path, tmp_path: Path) -> None:
    for number in range(3):
        git(small_repo, "commit", "-q", "--allow-empty", "-m", f"more {number}")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{small_repo}", str(clone))
    repo = Git(cwd=str(clone))
    assert repo.remotes() == ["origin"]
    assert repo.is_shallow()
    assert repo.unshallow("origin").returncode == 0
    assert not repo.is_shallow()
    assert len(git(clone, "rev-list", "HEAD").stdout.split()) == 4


def test_a_failed_unshallow_is_an_answer_not_a_crash(small_repo: Path) -> None:
    # not shallow, no such remote: git's refusal is handed back for the caller to read
    done = Git(cwd=str(small_repo)).unshallow("origin")
    assert done.returncode != 0 and done.stderr
    assert Git(cwd=str(small_repo)).remotes() == []
