"""Pinning main as a lock writer would, and the notes ref the lock lives in."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

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


def push_without_post_receive(work: Work, server: Path, pusher: str) -> str:
    """Push HEAD to the server's main with its post-receive off (as a push whose hook
    never ran); the ``<old> <new> <ref>`` line post-receive would have been given."""
    old = work.git("rev-parse", "origin/main").stdout.strip()
    hook = server / "hooks" / "post-receive"
    hook.rename(server / "hooks" / "post-off")
    try:
        result = work.push("origin", "HEAD:main", pusher=pusher)
    finally:
        (server / "hooks" / "post-off").rename(hook)
    assert result.returncode == 0, result.stderr
    return f"{old} {work.head()} refs/heads/main\n"


def run_hook(server: Path, name: str, lines: str) -> subprocess.CompletedProcess[str]:
    """The server's installed ``name`` hook, run by this process (its parent), as
    alice's push would run it."""
    env = {**os.environ, "GIT_DIR": ".", "GIT_EVIDENCE_PUSHER": "alice"}
    hook = str(server / "hooks" / name)
    return subprocess.run(
        [hook], cwd=server, input=lines, env=env, capture_output=True, text=True, check=False
    )
