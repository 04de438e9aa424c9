"""What post-receive reads for a push that changes no lock root: one walk of the
pushed range (which names the parent of its first commit), one lookup of the notes,
trees and notes ref, and nothing written; the nearest pin found by note path when the
range's parent has none. A push that changes a lock root pins its tip in one notes
write; a broken note before the push is not reused. What git was asked is read from
GIT_TRACE."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.locks import NOTES, pin_main, push_without_post_receive
from helpers.pushes import AGENT
from helpers.repos import POLICY, Work, evidence, git, protected_clone


def pushed_unhooked(work: Work, server: Path, files: dict[str, str]) -> bytes:
    """Push a commit with the server's post-receive off; the hook's standard input."""
    work.commit("a change", files)
    return push_without_post_receive(work, server, AGENT).encode()


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


def test_a_product_push_writes_nothing_after_one_walk_and_one_lookup(
    work: Work, server: Path, tmp_path: Path
) -> None:
    """The lock before the push is the tip's own note: its root trees, from the
    validated-note cache, are the pushed tip's. No note is read, nothing is written,
    nothing is said."""
    pin_main(work)
    notes_before = git(server, "rev-parse", NOTES).stdout
    lines = pushed_unhooked(work, server, {"src/app.py": "v2\n"})
    said, commands = post_receive(server, lines, tmp_path / "trace")
    assert said == ""
    walks = [c for c in commands if c.startswith("rev-list")]
    assert len(walks) == 1 and "--first-parent" in walks[0], commands  # the tip's line
    assert not [c for c in commands if c.startswith("rev-parse")], commands
    assert sum(c == "cat-file --batch-check" for c in commands) == 1, commands
    writes = ("fast-import", "hash-object", "cat-file blob", "update-ref", "notes")
    assert not [c for c in commands if c.startswith(writes)], commands
    assert len(commands) <= 6, commands  # 9 when every tip was pinned
    assert git(server, "rev-parse", NOTES).stdout == notes_before


def test_a_second_product_push_finds_the_nearest_pin_by_note_path(
    work: Work, server: Path, tmp_path: Path
) -> None:
    """The pushed range's parent has no note of its own (the push before pinned
    nothing): the lock in force is the nearest pin on its first-parent line, looked up
    by note path in the same listing of the tip's line (one more lookup), and nothing
    is written."""
    pin_main(work)
    pinned = note(server, "main")
    notes_before = git(server, "rev-parse", NOTES).stdout
    assert work.commit("first", {"src/app.py": "v2\n"})
    assert work.push("origin", "HEAD:main", pusher=AGENT).returncode == 0
    lines = pushed_unhooked(work, server, {"src/app.py": "v3\n"})
    said, commands = post_receive(server, lines, tmp_path / "trace")
    assert said == ""
    assert sum(c.startswith("rev-list") for c in commands) == 1, commands
    assert sum(c == "cat-file --batch-check" for c in commands) == 2, commands
    assert not [c for c in commands if c.startswith(("fast-import", "cat-file blob"))], commands
    assert git(server, "rev-parse", NOTES).stdout == notes_before
    shown = evidence(work.path, "show-lock", "origin/main")
    assert shown.returncode == 0, shown.stderr
    assert pinned["commit"][:12] in shown.stdout


def test_a_push_that_changes_a_lock_root_pins_its_tip_in_one_write(
    work: Work, server: Path, tmp_path: Path
) -> None:
    pin_main(work)
    work.commit("a golden", {"tests/goldens/out.txt": "v2\n"})
    lines = push_without_post_receive(work, server, "alice").encode()
    said, commands = post_receive(server, lines, tmp_path / "trace")
    assert f"pinned refs/heads/main at {work.head()[:12]}" in said
    assert sum(c.startswith("fast-import") for c in commands) == 1, commands
    assert note(server, "main")["commit"] == work.head()


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
    notes_before = work.git("ls-remote", "origin", NOTES).stdout
    result = work.push("origin", "main:refs/heads/release/1.0", pusher="alice")
    assert result.returncode == 0, result.stderr
    assert "could not pin" not in result.stderr
    assert "pinned" not in result.stderr  # main's pin at that very commit is in force
    assert work.git("ls-remote", "origin", NOTES).stdout == notes_before
    work.git("fetch", "-q", "origin", f"+{NOTES}:{NOTES}")
    shown = evidence(work.path, "show-lock", work.head())
    assert shown.returncode == 0, shown.stderr
