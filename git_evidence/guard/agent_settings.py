"""The agent's settings file that runs the guard: Claude Code's ``.claude/settings.json``
with the guard merged into its ``PreToolUse`` hooks (and, when installed with a pinned
policy, into its ``ConfigChange`` hooks: a settings file changed during the session is
judged too). Pure: text in, text out.

Every entry already there is kept as it is, in its order; the guard's entry is added
once, and an entry of ours whose command differs (another pin) gets the new command (a
file that has it already is left byte for byte as it was). A file that does not parse,
or whose ``hooks`` are not shaped as Claude Code reads them, is an error naming the
file: nothing is written over a file we could not read."""

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
# The settings changes Claude Code lets a hook block (managed settings always win).
CONFIG_MATCHER: Final = "user_settings|project_settings|local_settings"


def pinned_command(digest: str) -> str:
    """The guard's command with its pinned policy's digest (``policy/pinned.py``)."""
    return f"git evidence guard --pinned={digest} || exit 2"


_RUNS_GUARD = re.compile(r"\bgit[ -]evidence\s+guard\b|\bgit_evidence\s+guard\b")


def guard_entry(command: str = GUARD_COMMAND, matcher: str = CLAUDE_MATCHER) -> dict[str, Any]:
    """The entry that runs the guard (``PreToolUse`` by default)."""
    return {"matcher": matcher, "hooks": [{"type": "command", "command": command}]}


def merge_claude_settings(
    text: str | None, source: str, command: str = GUARD_COMMAND, *, config_change: bool = False
) -> tuple[str, bool]:
    """``(the settings with the guard, whether that changed anything)``; ``text`` None
    when there is no file yet. ``command``: the guard's command line (a pinned one);
    ``config_change``: judge settings changed during the session too."""
    doc: Any = {} if text is None or not text.strip() else _parse(text, source)
    if not isinstance(doc, dict):
        raise _bad(source, "the top level is not a JSON object")
    hooks = doc.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise _bad(source, "`hooks` is not an object")
    changed = _merge_event(hooks, "PreToolUse", CLAUDE_MATCHER, command, source)
    if config_change:
        changed |= _merge_event(hooks, "ConfigChange", CONFIG_MATCHER, command, source)
    if not changed:
        return (text or ""), False
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n", True


def _merge_event(
    hooks: dict[str, Any], event: str, matcher: str, command: str, source: str
) -> bool:
    """Add (or give the new command to) the guard's entry of ``event``; whether that
    changed anything."""
    entries = hooks.setdefault(event, [])
    if not isinstance(entries, list):
        raise _bad(source, f"`hooks.{event}` is not a list")
    for number, entry in enumerate(entries):
        if not isinstance(entry, dict) or not isinstance(entry.get("hooks", []), list):
            raise _bad(source, f"`hooks.{event}[{number}]` is not an object with a `hooks` list")
    ours = [e for e in entries if e.get("matcher") == matcher and _runs_guard(e)]
    if not ours:
        entries.append(guard_entry(command, matcher))
        return True
    changed = False
    for entry in ours:
        for hook in entry["hooks"]:
            if _is_guard(hook) and hook["command"] != command:
                hook["command"] = command
                changed = True
    return changed


def _runs_guard(entry: dict[str, Any]) -> bool:
    return any(_is_guard(hook) for hook in entry.get("hooks", []))


def _is_guard(hook: object) -> bool:
    return (
        isinstance(hook, dict)
        and hook.get("type") == "command"
        and isinstance(hook.get("command"), str)
        and _RUNS_GUARD.search(hook["command"]) is not None
    )


# The keys of a settings file that switch hooks off.
HOOKS_OFF: Final = ("disableAllHooks", "allowManagedHooksOnly")


def config_change(source: object, text: str | None, holds_guard: bool, command: str) -> str:
    """Why a settings file changed during a guarded session is not taken (Claude Code
    keeps the session's settings as they were), or "" when it is: a change that
    switches hooks off, a file that is not JSON or cannot be read, or the file that
    runs the guard without its entry (``holds_guard``: that file; ``command``: the
    guard's command line). Managed settings and skills are not the guard's to judge."""
    if source in ("policy_settings", "skills"):
        return ""
    if text is None:
        return "the changed settings file cannot be read"
    try:
        doc = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError:
        return "the changed settings file is not JSON"
    if not isinstance(doc, dict):
        return "the changed settings file is not a JSON object"
    off = [key for key in HOOKS_OFF if doc.get(key)]
    if off:
        return f"the change sets {off[0]}, which switches the guard off"
    if holds_guard:
        hooks = doc.get("hooks")
        entries = hooks.get("PreToolUse") if isinstance(hooks, dict) else None
        runs = [
            hook
            for entry in (entries if isinstance(entries, list) else [])
            if isinstance(entry, dict) and entry.get("matcher") == CLAUDE_MATCHER
            for hook in (entry.get("hooks") or [])
            if _is_guard(hook) and hook.get("command") == command
        ]
        if not runs:
            return "the change removes or alters the hook that runs the guard"
    return ""


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
