"""An agent's session as the guard sees it: the hooks `git evidence install --agent
claude` wrote, started as Claude Code starts them (bash, in the project,
`CLAUDE_PROJECT_DIR` set, one JSON event on stdin)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers.repos import Work, evidence


def event(tool: str, cwd: Path | str, **tool_input: object) -> bytes:
    """A PreToolUse event as Claude Code sends it."""
    doc = {"cwd": str(cwd), "hook_event_name": "PreToolUse", "tool_name": tool}
    return json.dumps({**doc, "tool_input": tool_input}).encode()


def bash(work: Work, command: str) -> bytes:
    return event("Bash", work.path, command=command)


def install(work: Work) -> None:
    """What a person runs once: the guard, its policy pinned."""
    result = evidence(work.path, "install", "--agent", "claude")
    assert result.returncode == 0, result.stderr


def agent_env(home: Path | None = None) -> dict[str, str]:
    """Claude Code's environment for a hook: git evidence on the PATH."""
    bin_dir = os.path.dirname(sys.executable)
    env = {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    if home is not None:
        env["HOME"] = str(home)
    return env


def hooks(
    work: Work,
    data: bytes,
    env: dict[str, str] | None = None,
    loaded: dict[str, Any] | None = None,
) -> list[subprocess.CompletedProcess[str]]:
    """Every hook of the event's kind whose matcher takes it, run as Claude Code runs
    it: its command through bash, in the project, the event on stdin. ``loaded``: the
    settings the session started with (default: the file as it is)."""
    settings = loaded or json.loads((work.path / ".claude" / "settings.json").read_text())
    doc = json.loads(data)
    kind = doc.get("hook_event_name", "PreToolUse")
    subject = doc.get("tool_name") if kind == "PreToolUse" else doc.get("source")
    runs = []
    for entry in settings["hooks"].get(kind, []):
        if not re.fullmatch(entry.get("matcher") or ".*", subject or ""):
            continue
        for hook in entry["hooks"]:
            runs.append(
                subprocess.run(
                    [shutil.which("bash") or "bash", "-c", hook["command"]],
                    cwd=work.path,
                    input=data.decode(),
                    capture_output=True,
                    text=True,
                    check=False,
                    env={
                        **os.environ,
                        **(env or agent_env()),
                        "CLAUDE_PROJECT_DIR": str(work.path),
                    },
                )
            )
    return runs


def decide(
    work: Work, data: bytes, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The one guard hook's answer to ``data``."""
    (run,) = hooks(work, data, env)
    return run
