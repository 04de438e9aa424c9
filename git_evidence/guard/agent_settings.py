"""The agent's settings file that runs the guard: Claude Code's ``.claude/settings.json``
with the guard merged into its ``PreToolUse`` hooks. Pure: text in, text out.

Every entry already there is kept as it is, in its order; the guard's entry is added
once (a file that has it already is left byte for byte as it was). A file that does
not parse, or whose ``hooks`` are not shaped as Claude Code reads them, is an error
naming the file: nothing is written over a file we could not read."""

from __future__ import annotations

import json
import re
from typing import Any, Final

from git_evidence.core.errors import UsageError

CLAUDE_SETTINGS: Final = ".claude/settings.json"
CLAUDE_MATCHER: Final = "Write|Edit|MultiEdit|NotebookEdit|Bash"
# Claude Code runs the command with bash and lets a tool call go ahead on any exit
# status but 2: `|| exit 2` denies when git evidence itself cannot run (not installed,
# not on PATH), as every hook of ours fails closed.
GUARD_COMMAND: Final = "git evidence guard || exit 2"
_RUNS_GUARD = re.compile(r"\bgit[ -]evidence\s+guard\b|\bgit_evidence\s+guard\b")


def guard_entry() -> dict[str, Any]:
    """The ``PreToolUse`` entry that runs the guard."""
    return {"matcher": CLAUDE_MATCHER, "hooks": [{"type": "command", "command": GUARD_COMMAND}]}


def merge_claude_settings(text: str | None, source: str) -> tuple[str, bool]:
    """``(the settings with the guard, whether that changed anything)``; ``text`` None
    when there is no file yet."""
    doc: Any = {} if text is None or not text.strip() else _parse(text, source)
    if not isinstance(doc, dict):
        raise _bad(source, "the top level is not a JSON object")
    hooks = doc.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise _bad(source, "`hooks` is not an object")
    entries = hooks.setdefault("PreToolUse", [])
    if not isinstance(entries, list):
        raise _bad(source, "`hooks.PreToolUse` is not a list")
    for number, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("hooks", []), list):
            raise _bad(source, f"`hooks.PreToolUse[{number}]` is not an object with a `hooks` list")
    if any(_runs_guard(entry) for entry in entries if entry.get("matcher") == CLAUDE_MATCHER):
        return (text or ""), False
    entries.append(guard_entry())
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n", True


def _runs_guard(entry: dict[str, Any]) -> bool:
    return any(
        isinstance(hook, dict)
        and hook.get("type") == "command"
        and isinstance(hook.get("command"), str)
        and _RUNS_GUARD.search(hook["command"]) is not None
        for hook in entry.get("hooks", [])
    )


def _parse(text: str, source: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise _bad(
            source, f"not valid JSON ({exc.msg}, line {exc.lineno} column {exc.colno})"
        ) from None


def _bad(source: str, why: str) -> UsageError:
    return UsageError(
        f"{source}: {why}; nothing was written",
        fix=f"correct {source} (Claude Code reads it as JSON), then run this again",
    )
