"""`manifest.drift_between`: with no lock to take the base's hashes from, the drift
between two commits is the drift of their two fully hashed manifests, read from the
blobs that changed alone."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.repos import Work, git

from git_evidence.lock import manifest
from git_evidence.plumbing.git import Git

ROOTS = ["tests/data", "tests/goldens", "testdata"]
EXCLUDE = ["**/__pycache__/**", "**/*.pyc"]
LFS = "version https://git-lfs.github.com/spec/v1\noid sha256:{}\nsize 12\n"


def _commit_all(work: Work, message: str) -> str:
    work.git("add", "-A")
    work.git("commit", "-qm", message)
    return work.git("rev-parse", "HEAD").stdout.strip()


@pytest.fixture
def history(tmp_path: Path) -> tuple[Work, str, str]:
    work = Work(tmp_path / "r")
    git(tmp_path, "init", "-q", "-b", "main", str(work.path))
    files = {
        "tests/data/kept.txt": "same\n",
        "tests/data/edited.txt": "before\n",
        "tests/data/gone.txt": "removed later\n",
        "tests/data/run.sh": "echo hi\n",
        "tests/data/moved.txt": "moved bytes\n",
        "tests/data/twin-a.txt": "twin\n",
        "tests/data/becomes-dir": "a file first\n",
        "tests/data/__pycache__/x.pyc": "cache one\n",
        "tests/data/pointer.bin": LFS.format("a" * 64),
        "tests/goldens/whole-root.txt": "the root goes away\n",
        "src/product.py": "print(1)\n",
    }
    for path, text in files.items():
        work.write(path, text)
    os.symlink("kept.txt", work.path / "tests/data/link")
    base = _commit_all(work, "base")
    work.write("tests/data/edited.txt", "after\n")
    (work.path / "tests/data/gone.txt").unlink()
    (work.path / "tests/data/run.sh").chmod(0o755)
    os.rename(work.path / "tests/data/moved.txt", work.path / "tests/data/renamed.txt")
    work.write("tests/data/twin-b.txt", "twin\n")  # a copy: a blob the base has
    (work.path / "tests/data/becomes-dir").unlink()
    work.write("tests/data/becomes-dir/inside.txt", "now a directory\n")
    work.write("tests/data/__pycache__/x.pyc", "cache two\n")  # excluded either way
    work.write("tests/data/pointer.bin", LFS.format("b" * 64))
    (work.path / "tests/data/link").unlink()
    os.symlink("edited.txt", work.path / "tests/data/link")
    for name in os.listdir(work.path / "tests/goldens"):
        (work.path / "tests/goldens" / name).unlink()
    work.write("testdata/new-root.txt", "a root that appears\n")
    work.write("src/product.py", "print(2)\n")
    new = _commit_all(work, "changes")
    return work, base, new


def _full(repo: Git, rev: str) -> dict[str, object]:
    return manifest.build_manifest(repo, rev, ROOTS, EXCLUDE)[1]  # type: ignore[return-value]


def test_the_drift_is_the_drift_of_two_fully_hashed_manifests(
    history: tuple[Work, str, str],
) -> None:
    work, base, new = history
    repo = Git(cwd=str(work.path))
    trees = (manifest.root_trees(repo, base, ROOTS), manifest.root_trees(repo, new, ROOTS))
    expected = manifest.compare(
        manifest.build_manifest(repo, base, ROOTS, EXCLUDE)[1],
        manifest.build_manifest(repo, new, ROOTS, EXCLUDE)[1],
    )
    got = manifest.drift_between(repo, base, new, ROOTS, EXCLUDE, trees)
    assert got == expected
    kinds = {d.path: d.kind for d in got}
    assert kinds["tests/data/edited.txt"] == "modified"
    assert kinds["tests/data/run.sh"] == "mode"
    assert kinds["tests/data/pointer.bin"] == "lfs"
    assert kinds["tests/goldens/whole-root.txt"] == "removed"
    assert kinds["testdata/new-root.txt"] == "added"
    assert "tests/data/kept.txt" not in kinds and "tests/data/__pycache__/x.pyc" not in kinds
    assert all(d.old is None or d.old.sha256 for d in got)  # every side shown hashed
    assert all(d.new is None or d.new.sha256 or d.new.mode == "160000" for d in got)


def test_only_the_blobs_of_changed_paths_are_read(
    history: tuple[Work, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    work, base, new = history
    repo = Git(cwd=str(work.path))
    trees = (manifest.root_trees(repo, base, ROOTS), manifest.root_trees(repo, new, ROOTS))
    asked: list[str] = []
    real = manifest.hash_blobs

    def counting(git: Git, oids: list[str], progress: object = None) -> object:
        asked.extend(oids)
        return real(git, oids)

    monkeypatch.setattr(manifest, "hash_blobs", counting)
    manifest.drift_between(repo, base, new, ROOTS, EXCLUDE, trees)
    kept = work.git("rev-parse", f"{base}:tests/data/kept.txt").stdout.strip()
    twin = work.git("rev-parse", f"{base}:tests/data/twin-a.txt").stdout.strip()
    assert kept not in asked  # unchanged: never read
    assert asked.count(twin) == 1  # the copy is an added file, shown hashed, read once
    assert len(asked) == len(set(asked)) <= 14  # the changed sides' blobs, each once


def test_equal_trees_give_no_drift_and_read_nothing(
    history: tuple[Work, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    work, base, _ = history
    repo = Git(cwd=str(work.path))
    trees = manifest.root_trees(repo, base, ROOTS)
    monkeypatch.setattr(manifest, "hash_blobs", lambda *a, **k: pytest.fail("read a blob"))
    assert manifest.drift_between(repo, base, base, ROOTS, EXCLUDE, (trees, trees)) == []
