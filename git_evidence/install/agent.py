"""Installing the agent's guard into a work tree: the policy in force pinned for the
guard (``policy/pinned.py``) and the guard, with the pin's digest on its command line,
merged into the agent's settings file. ``install_agent`` returns what it did (or, dry,
would do); ``commands/install.py`` prints it."""

from __future__ import annotations

import os

from git_evidence.core.errors import UsageError
from git_evidence.core.slots import Frozen
from git_evidence.guard.agent_settings import (
    CLAUDE_SETTINGS,
    merge_claude_settings,
    pinned_command,
)
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import SEALED_KEY, pinned_values, resolve
from git_evidence.plumbing.repo_dirs import common_dir
from git_evidence.policy.pinned import (
    PIN_DIR,
    PIN_FILE,
    VALUES_FILE,
    Pin,
    flag_value,
    parse_pinned,
    pin_bytes,
    pinned_commit,
)
from git_evidence.policy.pinned import digest as pin_digest
from git_evidence.policy.schema import POLICY_FILE


class AgentInstalled(Frozen):
    settings: str  # the agent's settings file
    merged: str  # its text with the guard in it
    changed: bool  # the guard's entry was missing or named another pin
    pin: str  # where the pinned policy is
    digest: str  # the pinned policy's digest


def install_agent(git: Git, *, dry: bool) -> AgentInstalled:
    """Pin the policy in force and merge the guard into the work tree's Claude Code
    settings, keeping every other entry; ``dry`` writes nothing. A settings file that
    cannot be read or does not parse, or a policy in force that does not parse, is an
    error and nothing is written."""
    path = os.path.join(git.work_tree("--agent"), CLAUDE_SETTINGS)
    try:
        with open(path, encoding="utf-8") as handle:
            text: str | None = handle.read()
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot be read ({exc}); nothing was written") from None
    pin_path, pinned, values = _pin(git)
    digest = pin_digest(pinned)
    flag = flag_value(digest, pin_digest(values))
    merged, changed = merge_claude_settings(text, path, pinned_command(flag), config_change=True)
    if not dry:
        _write(pin_path, pinned)
        _write(os.path.join(os.path.dirname(pin_path), VALUES_FILE), values)
        if changed:  # a settings file that is a link is written through it
            _write(os.path.realpath(path), merged.encode("utf-8"))
    return AgentInstalled(path, merged, changed, pin_path, digest)


def _pin(git: Git) -> tuple[str, bytes, bytes]:
    """Where the guard's pinned policy goes, its bytes and its parsed values: the
    policy in force for this clone now (read from the committed file, never the cache),
    with where it came from. A policy that does not parse is not pinned."""
    found = resolve(git, cached=False)  # a PolicyError: nothing is written
    if found.origin == "sealed":
        sealed = git.config_get(SEALED_KEY) or ""
        with open(sealed, "rb") as handle:
            data, read_from = handle.read(), f"the sealed file {sealed}"
    elif found.rev is not None:
        data = git.blob_at(found.rev, POLICY_FILE) or b""
        read_from = f"{found.ref} at {found.rev}"
    else:
        data, read_from = b"", "no commit (the built-in defaults)"
    pinned = pin_bytes(data, read_from)
    path = os.path.join(common_dir(git), PIN_DIR, PIN_FILE)
    again = parse_pinned(pinned, Pin(path, pin_digest(pinned)))
    if again.digest != found.policy.digest:  # never pin other than what is in force
        raise UsageError(f"{path}: the pinned policy would differ from the one in force")
    return path, pinned, pinned_values(again, pinned_commit(pinned))


def _write(path: str, data: bytes) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "wb") as handle:
        handle.write(data)
    os.replace(path + ".tmp", path)
