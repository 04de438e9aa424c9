"""The lock's fast paths give what the slow ones would: a re-pin that patches the
previous lock with `git diff-tree` equals a cold lock of the same commit; blobs read in
large chunks (several `cat-file` processes, blobs larger than the buffer) hash as
hashlib does; `verify` of the base itself judges nothing and still fails on drift;
a validated note parses as a fresh one does. What git was asked is read from
GIT_TRACE, never mocked."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.examples import examples
from helpers.repos import Work, evidence
from hypothesis import given, settings
from hypothesis import strategies as st

NOTES = "refs/notes/evidence"


def traced(tmp_path: Path, cwd: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], str]:
    """Run the command line with GIT_TRACE on; its result and every git command run."""
    trace = tmp_path / f"trace-{len(list(tmp_path.glob('trace-*')))}"
    result = evidence(cwd, *args, env={"GIT_TRACE": str(trace)})
    commands = [
        line.split("trace: built-in: ", 1)[1]
        for line in (trace.read_text() if trace.exists() else "").splitlines()
        if "trace: built-in: " in line
    ]
    return result, "\n".join(commands)


def note_bytes(work: Work, rev: str = "HEAD") -> bytes:
    blob = work.git("notes", f"--ref={NOTES}", "list", rev).stdout.strip()
    return subprocess.run(
        ["git", "cat-file", "blob", blob], cwd=work.path, capture_output=True, check=True
    ).stdout


def note_doc(work: Work, rev: str = "HEAD") -> dict[str, Any]:
    out = work.git("notes", f"--ref={NOTES}", "show", rev).stdout
    doc: dict[str, Any] = json.loads(out)
    return doc


def content(doc: dict[str, Any]) -> dict[str, Any]:
    """A lock record without who pinned it and when."""
    return {k: v for k, v in doc.items() if k not in ("pinned_at", "pinned_by")}


def forget_locks(work: Work) -> None:
    """No note and no validated-note cache: the next lock starts cold."""
    work.git("update-ref", "-d", NOTES)
    shutil.rmtree(work.path / ".git" / "git-evidence", ignore_errors=True)


def lock(work: Work, rev: str = "HEAD") -> str:
    result = evidence(work.path, "lock", rev)
    assert result.returncode == 0, result.stderr
    return result.stdout


def cold_lock_of(work: Work, rev: str = "HEAD") -> dict[str, Any]:
    """What a lock of ``rev`` from nothing records (the notes are put back after)."""
    saved = work.git("rev-parse", NOTES).stdout.strip()
    forget_locks(work)
    lock(work, rev)
    doc = note_doc(work, rev)
    work.git("update-ref", NOTES, saved)
    return doc


@pytest.fixture
def pinned(work: Work) -> Work:
    """A clone whose HEAD has a pinned lock over fixtures of every kind."""
    work.commit(
        "fixtures",
        {
            "tests/fixtures/keep/one.json": "1\n",
            "tests/fixtures/keep/deep/two.json": "2\n",
            "tests/fixtures/gone.json": "bye\n",
            "tests/fixtures/becomes_dir": "a file for now\n",
            "tests/fixtures/интервью.json": '{"q": "?"}\n',
            "tests/fixtures/mode.sh": "echo\n",
        },
    )
    lock(work)
    return work


def test_re_pin_after_changes_patches_the_previous_lock_and_equals_a_cold_lock(
    pinned: Work, tmp_path: Path
) -> None:
    pinned.write("tests/fixtures/keep/deep/two.json", "2, changed\n")
    pinned.write("tests/fixtures/new/nested/three.json", "3\n")
    os.remove(pinned.path / "tests/fixtures/becomes_dir")
    pinned.write("tests/fixtures/becomes_dir/inside.json", "now a directory\n")
    pinned.write("tests/fixtures/keep/__pycache__/x.cpython-311.pyc", "excluded\n")
    pinned.write("tests/fixtures/keep/stale.PYC", "excluded: globs match folded case\n")
    pinned.write("tests/goldens/out.txt", "a golden changed too\n")
    pinned.write("testdata/appears.bin", b"\x00\x01 a root that did not exist\n")
    os.chmod(pinned.path / "tests/fixtures/mode.sh", 0o755)
    os.symlink("keep/one.json", pinned.path / "tests/fixtures/link")
    pinned.commit("change fixtures", remove=("tests/fixtures/gone.json",))

    result, commands = traced(tmp_path, pinned.path, "lock", "HEAD")
    assert result.returncode == 0, result.stderr
    assert "diff-tree" in commands  # the changed roots were patched ...
    assert "ls-tree -r -z --full-tree" in commands  # ... testdata, new, was listed
    listed = next(line for line in commands.splitlines() if line.startswith("git ls-tree"))
    assert listed.endswith("-- testdata")

    patched = note_doc(pinned)
    files = patched["files"]
    assert "tests/fixtures/gone.json" not in files
    assert files["tests/fixtures/becomes_dir/inside.json"]["size"] == len(b"now a directory\n")
    assert "tests/fixtures/becomes_dir" not in files
    assert files["tests/fixtures/mode.sh"]["mode"] == "100755"
    assert files["tests/fixtures/link"]["mode"] == "120000"
    assert files["tests/fixtures/link"]["sha256"] == hashlib.sha256(b"keep/one.json").hexdigest()
    assert not any("pyc" in path.lower() for path in files)
    assert content(patched) == content(cold_lock_of(pinned))


def test_re_pin_after_a_root_disappears_equals_a_cold_lock(pinned: Work) -> None:
    pinned.commit("no more fixtures", remove=("tests/fixtures",))
    lock(pinned)
    patched = note_doc(pinned)
    assert patched["trees"]["tests/fixtures"] is None
    assert not any(p.startswith("tests/fixtures/") for p in patched["files"])
    assert content(patched) == content(cold_lock_of(pinned))


def test_re_pin_reuses_a_note_written_by_another_writer(pinned: Work, tmp_path: Path) -> None:
    """A note this repository did not write (an older git evidence, `git notes add -C`
    by hand) and never validated is read in full, then used to patch from."""
    record = note_bytes(pinned)
    forget_locks(pinned)
    blob = pinned.git("hash-object", "-w", "--stdin", input=record).stdout.strip()
    pinned.git("notes", f"--ref={NOTES}", "add", "-C", blob, "HEAD")
    pinned.commit("one change", {"tests/fixtures/keep/one.json": "1, changed\n"})

    result, commands = traced(tmp_path, pinned.path, "lock", "HEAD")
    assert result.returncode == 0, result.stderr
    assert f"cat-file blob {blob}" in commands
    assert "diff-tree" in commands and "ls-tree" not in commands
    assert content(note_doc(pinned)) == content(cold_lock_of(pinned))


def test_re_pin_from_a_note_naming_a_tree_this_repository_lacks_lists_the_root(
    pinned: Work, tmp_path: Path
) -> None:
    from git_evidence.lock.record import Lock, parse_note

    head = pinned.head()
    old = parse_note(note_bytes(pinned), head)
    trees = {**old.trees, "tests/fixtures": "1" * 40}
    bogus = Lock(head, old.roots, trees, old.files, old.pinned_by, old.pinned_at)
    blob = pinned.git("hash-object", "-w", "--stdin", input=bogus.canonical).stdout.strip()
    pinned.git("notes", f"--ref={NOTES}", "add", "-f", "-C", blob, head)
    pinned.commit("one change", {"tests/fixtures/keep/one.json": "1, changed\n"})

    result, commands = traced(tmp_path, pinned.path, "lock", "HEAD")
    assert result.returncode == 0, result.stderr
    assert "-- tests/fixtures" in commands  # listed instead of patched
    assert content(note_doc(pinned)) == content(cold_lock_of(pinned))


def test_re_pin_does_not_list_unchanged_roots_or_read_unchanged_blobs(
    work: Work, tmp_path: Path
) -> None:
    work.commit("many fixtures", {f"tests/fixtures/d{i % 7}/f{i}.txt": f"{i}\n" for i in range(60)})
    lock(work)
    work.commit("one changed", {"tests/fixtures/d3/f3.txt": "changed\n"})
    result, commands = traced(tmp_path, work.path, "lock", "HEAD")
    assert result.returncode == 0, result.stderr
    assert "ls-tree" not in commands
    assert commands.count("git cat-file --batch --buffer") == 1  # the one new blob
    assert content(note_doc(work)) == content(cold_lock_of(work))


def test_cold_lock_hashes_blobs_of_every_size_as_hashlib_does(work: Work) -> None:
    """Empty, header-like, larger than the reader's one-mebibyte buffer, and enough
    files for several cat-file processes: each recorded hash is the file's sha256."""
    big = bytes(range(256)) * (5 * 4096 + 17)  # 5 MiB and a bit, not a multiple
    odd = b"0123456789abcdef0123456789abcdef01234567 blob 12\n\n"
    many = {f"tests/fixtures/many/{i:04d}.txt": f"file {i}\n" * (i % 5 + 1) for i in range(900)}
    work.commit("fixtures", {**many, "tests/fixtures/odd.bin": odd.decode()})
    work.write("tests/fixtures/big.bin", big)
    work.write("tests/fixtures/empty", b"")
    work.commit("big and empty")
    lock(work)
    files = note_doc(work)["files"]
    for path in [*many, "tests/fixtures/odd.bin", "tests/fixtures/big.bin", "tests/fixtures/empty"]:
        data = (work.path / path).read_bytes()
        assert files[path]["sha256"] == hashlib.sha256(data).hexdigest(), path
        assert files[path]["size"] == len(data), path


def test_hash_blobs_in_several_processes_equals_one(
    work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    from git_evidence.lock import manifest
    from git_evidence.plumbing import batch
    from git_evidence.plumbing.git import Git

    monkeypatch.setattr(batch, "_cpus", lambda: 4)  # whatever this machine has

    work.commit("fixtures", {f"tests/fixtures/{i}.txt": f"{i}\n" * i for i in range(1000)})
    listed = list(Git(cwd=str(work.path)).ls_tree("HEAD", ["tests/fixtures"]))
    oids = [oid for _, oid, _ in listed]
    seen: list[int] = []
    several = manifest.hash_blobs(
        Git(cwd=str(work.path)), oids, lambda done, total: seen.append(done)
    )
    monkeypatch.setattr(batch, "PARALLEL_MAX", 1)
    one = manifest.hash_blobs(Git(cwd=str(work.path)), oids)
    assert several == one and list(several) == oids
    assert seen[-1] == len(oids) > 1000


def test_hash_blobs_refuses_a_missing_object_without_hanging(
    work: Work, monkeypatch: pytest.MonkeyPatch
) -> None:
    from git_evidence.core.errors import GitError
    from git_evidence.core.oids import Oid
    from git_evidence.lock import manifest
    from git_evidence.plumbing import batch
    from git_evidence.plumbing.git import Git

    monkeypatch.setattr(batch, "_cpus", lambda: 2)  # two processes, the second fails

    work.commit("fixtures", {f"tests/fixtures/{i}.txt": f"{i}\n" for i in range(900)})
    oids = [oid for _, oid, _ in Git(cwd=str(work.path)).ls_tree("HEAD", ["tests/fixtures"])]
    oids[450] = Oid("1" * 40)
    with pytest.raises(GitError, match="missing or not a blob"):
        manifest.hash_blobs(Git(cwd=str(work.path)), oids)


def test_verify_of_the_base_itself_judges_nothing_and_reads_no_blob(
    pinned: Work, tmp_path: Path
) -> None:
    head = pinned.head()
    result, commands = traced(tmp_path, pinned.path, "verify", head, "--base", head)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "matches it" in result.stdout
    assert "nothing to judge" in result.stdout
    note = pinned.git("notes", f"--ref={NOTES}", "list", head).stdout.strip()
    for unneeded in (
        "diff-tree",
        "rev-list",
        "merge-base",
        f"cat-file blob {note}",
        "for-each-ref",
    ):
        assert unneeded not in commands, unneeded
    assert "git rev-parse --git-common-dir\n" not in commands + "\n"  # asked with the rev
    doc = json.loads(
        evidence(pinned.path, "verify", head, "--base", head, "--format", "json").stdout
    )
    assert doc["matches"] is True and doc["check"]["decision"] == "allow"


def test_verify_of_the_base_itself_fails_when_its_lock_is_stale(pinned: Work) -> None:
    pinned.commit("fixture changed, not pinned", {"tests/fixtures/keep/one.json": "9\n"})
    head = pinned.head()
    result = evidence(pinned.path, "verify", head, "--base", head)
    assert result.returncode == 1, result.stdout
    assert "differs from it in 1 file(s)" in result.stdout
    assert "modified: tests/fixtures/keep/one.json" in result.stdout


def test_verify_in_a_subdirectory_and_a_linked_worktree_uses_the_lock_s_cache(
    pinned: Work, tmp_path: Path
) -> None:
    head = pinned.head()
    note = pinned.git("notes", f"--ref={NOTES}", "list", head).stdout.strip()
    pinned.git("worktree", "add", "-q", "--detach", str(tmp_path / "linked"), head)
    for where in (pinned.path / "tests" / "fixtures", tmp_path / "linked"):
        result, commands = traced(tmp_path, where, "verify", head, "--base", head)
        assert result.returncode == 0, result.stdout + result.stderr
        assert f"cat-file blob {note}" not in commands  # `lock` cached its summary


# -- pure parts --------------------------------------------------------------------

hexes = st.text(alphabet="0123456789abcdef", min_size=40, max_size=40)


@st.composite
def entries(draw: st.DrawFn) -> Any:
    from git_evidence.core.facts import Entry

    kind = draw(st.sampled_from(["file", "exec", "link", "gitlink", "lfs"]))
    blob = draw(hexes)
    if kind == "gitlink":
        return Entry("160000", blob)
    sha = draw(st.text(alphabet="0123456789abcdef", min_size=64, max_size=64))
    size = draw(st.integers(0, 10**9))
    mode = {"file": "100644", "exec": "100755", "link": "120000", "lfs": "100644"}[kind]
    return Entry(mode, blob, size, sha, f"sha256:{sha} {size}" if kind == "lfs" else None)


paths = st.text(min_size=1, max_size=20).filter(lambda p: "\n" not in p)


@given(st.dictionaries(paths, entries(), max_size=8), hexes)
@settings(max_examples=examples(100))
def test_a_validated_note_parses_as_a_fresh_one(files: dict[str, Any], commit: str) -> None:
    from git_evidence.core.oids import Oid
    from git_evidence.lock.record import Lock, parse_note

    lock = Lock(Oid(commit), ("r",), {"r": commit}, files, "who", "2026-01-01T00:00:00Z")
    fresh = parse_note(lock.canonical, Oid(commit))
    assert parse_note(lock.canonical, Oid(commit), known_canonical=True) == fresh == lock


path_chars = st.sampled_from([*"aEZ._ /\\-*", "\u00e9", "\u0301", "\u200b", "\u00df"])


@given(st.lists(st.text(path_chars, min_size=1, max_size=12), max_size=30))
@settings(max_examples=examples(300))
def test_excluding_many_paths_at_once_agrees_with_one_at_a_time(paths: list[str]) -> None:
    from git_evidence.lock.manifest import Excluder

    excluded = Excluder(["**/*.pyc", "**/__pycache__/**", "**/.*.sw?", "**/a/**", "z*"])
    assert excluded.among(paths) == {path for path in paths if excluded(path)}


def test_excluding_folds_trailing_dots_and_spaces_as_checkouts_do() -> None:
    from git_evidence.lock.manifest import Excluder

    excluded = Excluder(["**/*.pyc", "tests/fixtures/tmp/**"])
    paths = ["x/Y.PYC", "x/y.pyc. ", "tests/fixtures/tmp. /a", "tests/fixtures/tmpx/a", "x/y.py"]
    assert excluded.among(paths) == {"x/Y.PYC", "x/y.pyc. ", "tests/fixtures/tmp. /a"}


def test_notes_on_a_stale_tip_are_not_written_and_the_lock_writes_on_top(pinned: Work) -> None:
    """The notes ref's value is read once, before hashing; when another writer moved
    it meanwhile, the notes commit is refused (never a non-fast-forward that would drop
    their note) and written again on top of theirs."""
    from git_evidence.plumbing.git import Git
    from git_evidence.plumbing.notes import write_blobs, write_notes

    other = pinned.commit("another commit", {"src/app.py": "v2\n"})
    pinned.commit("fixture", {"tests/fixtures/keep/one.json": "changed\n"})
    repo = Git(cwd=str(pinned.path))
    tip = repo.ref_oid(NOTES)
    blob = write_blobs(repo, [b"their note"])[0]
    assert write_notes(repo, NOTES, tip, {other: blob}, "another writer\n")
    assert not write_notes(repo, NOTES, tip, {pinned.head(): blob}, "on the stale tip\n")
    assert repo.ref_oid(NOTES) != tip
    lock(pinned)
    assert note_bytes(pinned, other) == b"their note"
    assert note_doc(pinned)["commit"] == pinned.head()
