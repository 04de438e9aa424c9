"""`install` in a clone: the fetch refspecs that bring the locks and the verdicts."""

from __future__ import annotations

from pathlib import Path

from helpers.repos import POLICY, clone_of, evidence, git, make_remote, make_server

from git_evidence.install.hooks import notes_refspecs

GLOB = "+refs/notes/evidence*:refs/notes/evidence*"


def fetches(work_path: Path) -> list[str]:
    return git(work_path, "config", "--get-all", "remote.origin.fetch").stdout.split()


def test_a_plain_fetch_works_before_the_server_has_any_note(tmp_path: Path) -> None:
    work = clone_of(tmp_path, make_remote(tmp_path), "clone")
    assert evidence(work.path, "install").returncode == 0
    fetched = work.git("fetch", "origin", check=False)
    assert fetched.returncode == 0, fetched.stderr
    assert "couldn't find remote ref" not in fetched.stderr


def test_a_plain_fetch_brings_the_locks_and_the_verdicts(tmp_path: Path) -> None:
    bare = make_remote(tmp_path)
    writer = clone_of(tmp_path, bare, "writer")
    writer.git("notes", "--ref=refs/notes/evidence", "add", "-m", "lock")
    writer.git("notes", "--ref=refs/notes/evidence-verdicts", "add", "-m", "verdict")
    writer.git("push", "-q", "origin", "refs/notes/evidence", "refs/notes/evidence-verdicts")
    work = clone_of(tmp_path, bare, "reader")
    assert evidence(work.path, "install").returncode == 0
    work.git("fetch", "-q", "origin")
    refs = work.git("for-each-ref", "--format=%(refname)", "refs/notes").stdout.split()
    assert refs == ["refs/notes/evidence", "refs/notes/evidence-verdicts"]


def test_install_replaces_the_exact_refspec_that_failed_fetches(tmp_path: Path) -> None:
    work = clone_of(tmp_path, make_remote(tmp_path), "clone")
    old = "+refs/notes/evidence:refs/notes/evidence"
    work.git("config", "--add", "remote.origin.fetch", old)
    result = evidence(work.path, "install", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert old not in fetches(work.path)
    assert fetches(work.path).count(GLOB) == 1
    assert '"fetches_locks": [\n  "origin"\n ]' in result.stdout


def test_install_fetches_the_notes_refs_the_policy_names(tmp_path: Path) -> None:
    policy = (
        POLICY
        + '\n[lock]\nnotes_ref = "refs/notes/locks"\n[judge]\nnotes_ref = "refs/notes/verdicts"\n'
    )
    work = clone_of(tmp_path, make_server(tmp_path, {".git-evidence.toml": policy}), "clone")
    assert evidence(work.path, "policy").returncode == 0
    assert evidence(work.path, "install").returncode == 0
    assert "+refs/notes/locks*:refs/notes/locks*" in fetches(work.path)
    assert "+refs/notes/verdicts*:refs/notes/verdicts*" in fetches(work.path)
    assert GLOB not in fetches(work.path)


def test_install_with_a_broken_policy_still_installs_and_says_so(tmp_path: Path) -> None:
    work = clone_of(tmp_path, make_server(tmp_path, {".git-evidence.toml": "[paths\n"}), "clone")
    result = evidence(work.path, "install")
    assert result.returncode == 0, result.stderr
    assert "does not parse" in result.stderr
    assert GLOB in fetches(work.path)


def test_refspecs_take_one_glob_for_refs_an_earlier_glob_covers() -> None:
    assert notes_refspecs(["refs/notes/evidence", "refs/notes/evidence-verdicts"]) == [GLOB]
    assert notes_refspecs(["refs/notes/b", "refs/notes/a"]) == [
        "+refs/notes/b*:refs/notes/b*",
        "+refs/notes/a*:refs/notes/a*",
    ]
