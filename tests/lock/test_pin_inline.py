"""Pins write small notes inline through fast-import and large ones as blobs first:
either way the note is the lock's exact bytes, and the cache learns it under the blob
id git gave it (a validated entry must name exactly that content)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.repos import git

from git_evidence.core.oids import Oid
from git_evidence.lock import pinning
from git_evidence.lock.store import LockCache
from git_evidence.plumbing.git import Git

NOTES = "refs/notes/evidence"


@pytest.mark.parametrize("inline", [True, False], ids=["inline", "blobs first"])
def test_a_pin_note_is_the_exact_bytes_under_gits_blob_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inline: bool
) -> None:
    git(tmp_path, "init", "-q")
    for i in range(40):
        (tmp_path / "tests" / "fixtures").mkdir(parents=True, exist_ok=True)
        (tmp_path / "tests" / "fixtures" / f"f{i}.json").write_text(f'{{"n": {i}}}\n')
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "fixtures")
    monkeypatch.setattr(pinning, "INLINE_NOTES", 1 << 20 if inline else 0)
    repo = Git(cwd=str(tmp_path))
    tip = Oid(git(tmp_path, "rev-parse", "HEAD").stdout.strip())
    lock, written = pinning.pin(repo, tip, ["tests/fixtures"], [], NOTES, "test")
    assert written
    listed = git(tmp_path, "notes", f"--ref={NOTES}", "list", tip).stdout.strip()
    assert git(tmp_path, "cat-file", "blob", listed, check=True).stdout.encode() == lock.canonical
    cached = LockCache(repo).get(Oid(listed))
    assert cached is not None and cached.commit == tip
