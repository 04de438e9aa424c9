"""How many git processes each hook starts for an everyday change (a one-file product
commit pushed to a protected branch): each costs a few milliseconds on every commit
and push, so the count is held here. Each hook is run as git runs it, its git
processes counted from git's own trace (``GIT_TRACE2_EVENT``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from helpers.repos import Work, evidence

# What each hook starts today for this change, at most.
LIMITS = {"pre-commit": 5, "pre-push": 8, "pre-receive": 6}


def _git_starts(trace: Path) -> list[str]:
    if not trace.exists():
        return []
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    return [" ".join(e["argv"][1:3]) for e in events if e["event"] == "start"]


def _run_hook(hook: Path, cwd: Path, trace: Path, stdin: bytes, *args: str) -> list[str]:
    env = {**os.environ, "GIT_TRACE2_EVENT": str(trace)}
    if cwd.name.endswith(".git"):
        env["GIT_DIR"] = "."  # as git gives a server hook
    done = subprocess.run([str(hook), *args], cwd=cwd, env=env, input=stdin, capture_output=True)
    assert done.returncode == 0, done.stderr.decode()
    return _git_starts(trace)


@pytest.fixture
def change(work: Work, server: Path) -> tuple[Work, str, str]:
    assert evidence(work.path, "install").returncode == 0
    assert evidence(server, "install", "--server").returncode == 0
    old = work.git("rev-parse", "HEAD").stdout.strip()
    work.write("src/app.py", "print('a product change')\n")
    work.git("add", "src/app.py")
    return work, old, server.as_posix()


def test_pre_commit_starts_few_git_processes(change: tuple[Work, str, str], tmp_path: Path) -> None:
    work, _, _ = change
    hook = work.path / ".git" / "hooks" / "pre-commit"
    starts = _run_hook(hook, work.path, tmp_path / "t.json", b"")
    assert 0 < len(starts) <= LIMITS["pre-commit"], starts


def test_pre_push_and_pre_receive_start_few_git_processes(
    change: tuple[Work, str, str], tmp_path: Path
) -> None:
    work, old, server = change
    work.git("commit", "-qm", "a product change", "--no-verify")
    new = work.git("rev-parse", "HEAD").stdout.strip()
    line = f"refs/heads/main {new} refs/heads/main {old}\n".encode()
    pushed = _run_hook(
        work.path / ".git" / "hooks" / "pre-push",
        work.path,
        tmp_path / "p.json",
        line,
        "origin",
        server,
    )
    assert 0 < len(pushed) <= LIMITS["pre-push"], pushed
    # the server judges the same commit, as git runs pre-receive before the refs move
    work.git("push", "-q", "--no-verify", server, f"{new}:refs/heads/incoming")
    received = _run_hook(
        Path(server) / "hooks" / "pre-receive",
        Path(server),
        tmp_path / "r.json",
        f"{old} {new} refs/heads/main\n".encode(),
    )
    assert 0 < len(received) <= LIMITS["pre-receive"], received
