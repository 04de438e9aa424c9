"""What post-receive reads for a push that changes no lock root: one walk of the
pushed range (which names the parent of its first commit), one lookup of the notes,
trees and notes ref, the note of the lock before the push, and one notes write. The
lock it pins on the tip is what a cold lock of the tip would be, and a broken note
before the push is not reused. What git was asked is read from GIT_TRACE."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.locks import NOTES, pin_main
from helpers.pushes import AGENT
from helpers.repos import POLICY, Work, evidence, git, protected_clone


def pushed_unhooked(work: Work, server: Path, files: dict[str, str]) -> bytes:
    """Push a commit with the server's post-receive off; the hook's standard input."""
    old = work.git("rev-parse", "origin/main").stdout.strip()
    work.commit("a change", files)
    hook = server / "hooks" / "post-receive"
    hook.rename(server / "hooks" / "post-off")
    try:
        result = work.push("origin", "HEAD:main", pusher=AGENT)
    finally:
        (server / "hooks" / "post-off").rename(hook)
    assert result.returncode == 0, result.stderr
    return f"{old} {work.head()} refs/heads/main\n".encode()


def post_receive(server: Path, lines: bytes, trace: Path) -> tuple[str, list[str]]:
    """Run post-receive as git runs it; what it said and the git commands it ran."""
    env = {"GIT_DIR": ".", "GIT_TRACE": str(trace), "GIT_EVIDENCE_PUSHER": AGENT}
    result = evidence(server, "post-receive", input=lines, env=env)
    assert result.returncode == 0, result.stderr
    commands = [
        line.split("trace: built-in: git ", 1)[1]
        for line in trace.read_text().splitlines()
        if "trace: built-in: git " in line
    ]
    return result.stderr, commands


def note(server: Path, rev: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(git(server, "notes", f"--ref={NOTES}", "show", rev).stdout)
    return doc


def test_a_product_push_is_pinned_with_one_walk_one_lookup_and_one_write(
    work: Work, server: Path, tmp_path: Path
) -> None:
    pin_main(work)
    before = note(server, "main")
    lines = pushed_unhooked(work, server, {"src/app.py": "v2\n"})
    said, commands = post_receive(server, lines, tmp_path / "trace")
    assert f"pinned refs/heads/main at {work.head()[:12]}" in said
    walks = [c for c in commands if c.startswith("rev-list")]
    assert len(walks) == 1 and "--parents" in walks[0], commands
    assert not [c for c in commands if c.startswith("rev-parse")], commands
    assert sum(c == "cat-file --batch-check" for c in commands) == 1, commands
    assert sum(c.startswith("cat-file blob") for c in commands) == 1, commands  # the lock before
    assert sum(c.startswith("fast-import") for c in commands) == 1, commands
    ours = [c for c in commands if not c.startswith("unpack-objects")]  # fast-import's own
    assert len(ours) <= 9, commands  # 13 before: two more lookups, a second walk, rev-parse
    pinned = note(server, "main")
    assert pinned["commit"] == work.head()
    assert (pinned["files"], pinned["trees"]) == (before["files"], before["trees"])


def test_a_push_after_a_broken_note_pins_the_tip_from_its_own_files(
    work: Work, server: Path, tmp_path: Path
) -> None:
    """The note before the push is not the canonical record's bytes (a newline added):
    nothing is reused from it, and the tip's lock is what its own files say."""
    pin_main(work)
    good = note(server, "main")
    lines = pushed_unhooked(work, server, {"src/app.py": "v2\n"})
    broken = git(server, "notes", f"--ref={NOTES}", "show", "main~1").stdout.encode() + b"\n"
    blob = git(server, "hash-object", "-w", "--stdin", input=broken).stdout.strip()
    git(server, "notes", f"--ref={NOTES}", "add", "-f", "-C", blob, "main~1")
    said, commands = post_receive(server, lines, tmp_path / "trace")
    assert f"pinned refs/heads/main at {work.head()[:12]}" in said
    assert any(c.startswith("ls-tree") for c in commands), commands  # listed, not copied
    pinned = note(server, "main")
    assert (pinned["files"], pinned["trees"]) == (good["files"], good["trees"])


def test_a_protected_ref_created_at_a_known_commit_is_pinned_at_that_commit(
    tmp_path: Path,
) -> None:
    """No new commit to walk: the tip is resolved on its own, and its lock is the one
    in force there."""
    releases = '[rules]\nprotected = ["refs/heads/main", "refs/heads/release/*"]\n'
    work = protected_clone(tmp_path, {".git-evidence.toml": releases + POLICY})
    work.commit("fixture", {"tests/fixtures/a.json": "{}\n"})
    assert work.push("origin", "HEAD:main", pusher="alice").returncode == 0
    result = work.push("origin", "main:refs/heads/release/1.0", pusher="alice")
    assert result.returncode == 0, result.stderr
    assert f"refs/heads/release/1.0 at {work.head()[:12]}" in result.stderr, result.stderr
    assert "could not pin" not in result.stderr
