"""The push-time fixture breach is computed from the base's own manifest whether or
not the server has a lock notes ref yet: a server protected a moment ago has none."""

from __future__ import annotations

import subprocess
from pathlib import Path

from helpers.repos import POLICY, Work, clone_of, git, make_server

AGENT = "agent-bot"
NEGATED = (
    POLICY
    + """
[paths]
fixture = ["tests/fixtures/**", "!tests/fixtures/scratch/**"]
"""
)


def _notes(bare: Path) -> str:
    return git(bare, "for-each-ref", "refs/notes/").stdout


def test_a_file_added_under_a_fixture_negation_inside_a_lock_root_is_a_breach_without_notes(
    tmp_path: Path,
) -> None:
    bare = make_server(tmp_path, {".git-evidence.toml": NEGATED})
    assert _notes(bare) == ""  # no lock has been pinned on this server yet
    work = clone_of(tmp_path, bare)
    work.commit(
        "fix, and a scratch file",
        {"src/app.py": "print('fixed')\n", "tests/fixtures/scratch/cases.json": "[]\n"},
    )
    result = work.push("origin", "HEAD:refs/heads/agent/fix", pusher=AGENT)
    assert result.returncode != 0, result.stderr
    assert "fixture-breach" in result.stderr
    assert "tests/fixtures/scratch/cases.json" in result.stderr
    assert (
        git(bare, "rev-parse", "--verify", "-q", "refs/heads/agent/fix", check=False).stdout == ""
    )


def test_a_product_only_push_is_still_allowed_without_notes(tmp_path: Path) -> None:
    bare = make_server(tmp_path, {".git-evidence.toml": NEGATED})
    work: Work = clone_of(tmp_path, bare)
    work.commit("fix", {"src/app.py": "print('fixed')\n"})
    result: subprocess.CompletedProcess[str] = work.push(
        "origin", "HEAD:refs/heads/agent/fix", pusher=AGENT
    )
    assert result.returncode == 0, result.stderr
