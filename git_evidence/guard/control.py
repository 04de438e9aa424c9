"""What the guard protects whatever the policy says: the files that decide what guards
the session. Pure: the command gives the directories (the work tree, its git
directories, the home directory) and the environment, and asks which of the real paths
a tool call writes is one of them, or holds one (``rm -rf .claude``).

* every agent settings file that can add, remove or switch off hooks: Claude Code's
  project, local, user and managed settings (``hooks``, ``disableAllHooks``,
  ``allowManagedHooksOnly`` live there), and Gemini CLI's project, user and system
  settings and system defaults (``hooks``, ``hooksConfig``);
* the guard's pinned policy (``policy/pinned.py``);
* the repository's own control files: its git directories whole (``config``,
  ``hooks/``, the refs, the pinned policy), ``core.hooksPath``'s directory, and the
  user's git configuration files (``include`` and ``evidence.*`` could be set there);
* the commands the hook runs, as its shell finds them: ``git`` and ``git-evidence`` in
  every directory of ``PATH`` (a script planted ahead of the real one would answer
  for the guard).

A shell command's writes are read as well as the shell reader can (``shell_writes.py``);
the file tools' are exact."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Final, NamedTuple

from git_evidence.guard.tool_calls import Denial, Target

SETTINGS: Final = "the agent's hook settings"
GIT_CONTROL: Final = "the repository's git control files"
GIT_CONFIG: Final = "the user's git configuration"
HOOKS_DIR: Final = "the directory core.hooksPath names"
HOOK_COMMAND: Final = "a command the guard's hook runs"
HOOK_COMMANDS: Final = ("git", "git-evidence")  # what `git evidence guard` starts
# In the project: Claude Code's shared and local settings, Gemini CLI's.
PROJECT_SETTINGS: Final = (
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".gemini/settings.json",
)
# Managed and system-wide settings, on Linux and macOS (Windows' live under
# ProgramData, read the same way when the agent runs there).
SYSTEM_SETTINGS: Final = (
    "/etc/claude-code/managed-settings.json",
    "/etc/claude-code/managed-settings.d",
    "/Library/Application Support/ClaudeCode/managed-settings.json",
    "/Library/Application Support/ClaudeCode/managed-settings.d",
    "C:/ProgramData/ClaudeCode/managed-settings.json",
    "/etc/gemini-cli/settings.json",
    "/etc/gemini-cli/system-defaults.json",
    "/Library/Application Support/GeminiCli/settings.json",
    "/Library/Application Support/GeminiCli/system-defaults.json",
    "C:/ProgramData/gemini-cli/settings.json",
    "C:/ProgramData/gemini-cli/system-defaults.json",
)
# Environment variables that move a settings file, and the file under the directory
# they name ("" when they name the file itself).
SETTINGS_VARIABLES: Final = (
    ("CLAUDE_CONFIG_DIR", "settings.json"),
    ("GEMINI_CLI_SYSTEM_SETTINGS_PATH", ""),
    ("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", ""),
)
_HOOKS_PATH: Final = re.compile(r"^\s*hookspath\s*=\s*(.*?)\s*$", re.I | re.M)


class Protected(NamedTuple):
    path: str  # absolute
    what: str


def protected(
    top: str | None,
    git_dirs: Sequence[str],
    home: str | None,
    env: Mapping[str, str],
    hooks_path: str | None = None,
) -> list[Protected]:
    """Every file and directory the guard protects here, absolute (``top``: the work
    tree, None outside one; ``git_dirs``: its git directory and common directory)."""
    found: list[Protected] = []
    if top is not None:
        found += [Protected(os.path.join(top, p), SETTINGS) for p in PROJECT_SETTINGS]
        found.append(Protected(os.path.join(top, ".git"), GIT_CONTROL))
    found += [Protected(d, GIT_CONTROL) for d in git_dirs]
    if hooks_path:
        base = top or (git_dirs[0] if git_dirs else "")
        found.append(Protected(os.path.join(base, os.path.expanduser(hooks_path)), HOOKS_DIR))
    if home:
        found += [
            Protected(os.path.join(home, ".claude", "settings.json"), SETTINGS),
            Protected(os.path.join(home, ".claude", "settings.local.json"), SETTINGS),
            Protected(os.path.join(home, ".gemini", "settings.json"), SETTINGS),
            Protected(os.path.join(home, ".gitconfig"), GIT_CONFIG),
        ]
        xdg = env.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
        found.append(Protected(os.path.join(xdg, "git", "config"), GIT_CONFIG))
    found += [Protected(p, SETTINGS) for p in SYSTEM_SETTINGS]
    for directory in env.get("PATH", "").split(os.pathsep):
        if directory:
            found += [Protected(os.path.join(directory, c), HOOK_COMMAND) for c in HOOK_COMMANDS]
    for name, leaf in SETTINGS_VARIABLES:
        if env.get(name):
            found.append(Protected(os.path.join(env[name], leaf) if leaf else env[name], SETTINGS))
    return found


def hooks_path(config: bytes) -> str | None:
    """``core.hooksPath`` as a repository's ``config`` file sets it, read roughly (the
    last ``hooksPath =`` line): to protect its directory, never to decide a policy."""
    text = config.decode("utf-8", "replace")
    found = _HOOKS_PATH.findall(text)
    value = found[-1].strip('"') if found else ""
    return value or None


def denials(
    written: Sequence[tuple[Target, str]],
    guarded: Sequence[Protected],
    real: Mapping[str, str],
    shown: Mapping[str, str],
) -> list[Denial]:
    """A denial for each ``(target, real absolute path)`` that is a protected path, lies
    inside one, or holds one. ``real``: each protected path's real path, where its
    links lead (a settings file that is a link is protected at both ends); ``shown``:
    how a written path is named in the denial."""
    out: list[Denial] = []
    for target, path in written:
        for entry in guarded:
            if any(_touches(path, p) for p in {entry.path, real.get(entry.path, entry.path)}):
                name = shown.get(path, path)
                out.append(Denial("guard-control", name, "control", entry.what, target.how))
                break
    return out


def control_denials(found: Sequence[Target]) -> list[Denial]:
    """A denial for each shell command that changes what guards the session."""
    return [
        Denial("guard-control", t.given, "control", "it changes what guards the session", t.how)
        for t in found
        if t.control
    ]


def _touches(written: str, guarded: str) -> bool:
    """Whether writing ``written`` writes ``guarded``: the same path, a path inside
    it, or a directory that holds it (a removal, a move)."""
    if written == guarded:
        return True
    inside = written.startswith(guarded.rstrip("/") + "/")
    return inside or guarded.startswith(written.rstrip("/") + "/")
