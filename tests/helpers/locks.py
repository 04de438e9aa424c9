"""Pinning main as a lock writer would, and the notes ref the lock lives in."""

from __future__ import annotations

from helpers.repos import Work, evidence, pinned_copy

NOTES = "refs/notes/evidence"


def pin_main(work: Work) -> str:
    """A lock writer pins the server's main and pushes the note; the pin digest."""
    return pinned_copy(work, _pin_main)


def _pin_main(work: Work) -> str:
    work.git("fetch", "-q", "origin")
    result = evidence(work.path, "lock", "origin/main")
    assert result.returncode == 0, result.stderr
    digest = result.stdout.split("\t")[0]
    assert digest.startswith("sha256:")
    pushed = work.push("origin", NOTES, pusher="ci-bot")
    assert pushed.returncode == 0, pushed.stderr
    return digest
