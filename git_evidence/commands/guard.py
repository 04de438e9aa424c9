"""``git evidence guard``: the agent's own hook. Reads one pre-tool-use event on stdin
(Claude Code's ``PreToolUse``, Gemini CLI's ``BeforeTool``), or judges ``--path P…``
for any other agent's hook, and denies a write to evidence, runner configuration or
existing test code, and any change to what guards the session (``guard/control.py``):
exit 2 and one line on stderr, or with ``--json`` Claude Code's deny answer on stdout
and exit 0. It allows in silence (exit 0). What a call is denied is
``guard/session.py``'s to say; this reads the event and prints.

It runs before every tool call, so it is cheap: no argparse (``cli.hook_args``),
nothing imported before it is needed, no git when the call writes no path."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from git_evidence.core.errors import UsageError
from git_evidence.guard import tool_calls
from git_evidence.guard.tool_calls import Target
from git_evidence.terminal import console

if TYPE_CHECKING:
    import argparse

PROJECT_VARS = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR")  # set by each agent for its hooks


def run(args: argparse.Namespace) -> int:
    as_json = bool(args.json) or args.format == "json"
    variables = {n: os.environ[n] for n in (*PROJECT_VARS, "HOME") if os.environ.get(n)}
    if args.paths:
        cwd = os.getcwd()
        found = [Target(path, "--path") for path in args.paths]
        where = args.repo or cwd
    else:
        if sys.stdin.isatty():
            raise UsageError(
                "guard reads one hook event on stdin (an agent starts it so)",
                fix="name the paths instead: git evidence guard --path P…",
            )
        event = tool_calls.parse_event(sys.stdin.buffer.read())
        if event.tool == tool_calls.CONFIG_CHANGE:
            return _config_change(event, args)
        cwd = os.path.abspath(event.cwd) if event.cwd else os.getcwd()
        found = tool_calls.targets(event, variables)
        # The agent names the project it guards for its hooks; the agent's own `cd`
        # (the event's cwd follows it) does not take the session out of it.
        where = args.repo or next((os.environ[n] for n in PROJECT_VARS if os.environ.get(n)), cwd)
    if not found:
        return 0
    from git_evidence.guard import session

    denials, why = session.judge(found, cwd, where, getattr(args, "pinned", None))
    if not denials:
        if args.verbose:
            console.say(f"guard allowed: {why}")
        return 0
    line = tool_calls.deny_line(denials)
    if as_json:
        print(tool_calls.deny_json(line))
        return 0
    sys.stderr.write(line + "\n")
    return tool_calls.DENY_EXIT


def _config_change(event: tool_calls.Event, args: argparse.Namespace) -> int:
    """A settings file changed during the session (Claude Code's ``ConfigChange``):
    exit 2, which keeps the session's settings as they were, when the change would
    switch the guard off."""
    from git_evidence.guard import session

    project = args.repo or next((os.environ[n] for n in PROJECT_VARS if os.environ.get(n)), "")
    path, why = session.settings_change(event, project, getattr(args, "pinned", None))
    if not why:
        return 0
    sys.stderr.write(
        f"git-evidence: guard-control: {path or 'a settings file'}: {why}; the session keeps "
        "its settings: a person changes them, then starts a new session\n"
    )
    return tool_calls.DENY_EXIT
