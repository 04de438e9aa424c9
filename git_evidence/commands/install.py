"""``git evidence install [--server]``: write the hooks, refusing to replace a hook
that git evidence did not write unless ``--force``."""

from __future__ import annotations

import argparse
import json
import os
import stat
import sys
from typing import Any, TextIO

from git_evidence.context import client_policy, open_repo
from git_evidence.errors import PolicyError, UsageError
from git_evidence.git import Git
from git_evidence.hooks import (
    CLIENT_HOOKS,
    MARKER,
    OLD_NOTES_REFSPEC,
    RECOMMENDED,
    SERVER_HOOKS,
    chain_lines,
    hook_script,
    notes_refspecs,
)
from git_evidence.policy import Policy, read_sealed


def run(args: argparse.Namespace) -> int:
    git = open_repo(args.repo)
    if getattr(args, "agent", None):
        return _install_agent(git, args)
    if getattr(args, "dry_run", False):  # git's hooks have no dry run (yet): never install for real
        raise UsageError(
            "--dry-run is for --agent", fix="git evidence install --agent claude --dry-run"
        )
    policy_file = getattr(args, "policy", None)
    if policy_file and not args.server:
        raise UsageError("--policy seals a server's policy", fix="use it with --server")
    if policy_file:
        policy_file = os.path.abspath(policy_file)
        sealed = read_sealed(policy_file)  # a policy that does not parse is not sealed
    done: dict[str, Any] = {
        "installed": [],
        "sealed": None,
        "recommended": [],
        "fetches_locks": [],
        "warnings": [],
    }
    as_json = args.format == "json"

    def say(text: str, file: TextIO | None = None) -> None:
        if not as_json:
            print(f"git-evidence: {text}", file=file)

    bare = git.is_bare()
    if args.server and not bare:
        warning = (
            "--server into a repository with a work tree; pushes to its checked-out "
            "branch are judged too"
        )
        done["warnings"].append(warning)
        say(f"warning: {warning}", sys.stderr)
    hooks_dir = git.git_path("hooks")
    names = SERVER_HOOKS if args.server else CLIENT_HOOKS
    planned = []
    for name in names:
        path = os.path.join(hooks_dir, name)
        if os.path.exists(path) and not args.force:
            with open(path, encoding="utf-8", errors="replace") as handle:
                if MARKER not in handle.read():
                    raise UsageError(
                        f"{path} exists and was not written by git evidence; nothing was changed",
                        fix="add these lines to it, or rerun with --force to replace "
                        f"it:\n{chain_lines(name)}",
                    )
        planned.append((name, path))
    os.makedirs(hooks_dir, exist_ok=True)
    for name, path in planned:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(hook_script(name))
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        done["installed"].append({"hook": name, "path": path})
        say(f"installed {name} hook: {path}")
    if policy_file:
        git.run("config", "evidence.policyFile", policy_file)
        done["sealed"] = {"file": policy_file, "digest": sealed.digest}
        say(f"sealed policy: {policy_file} ({sealed.digest[:19]})")
    if args.server:
        for key, why in RECOMMENDED.items():
            if not git.config_bool(key):
                done["recommended"].append({"key": key, "value": "true", "why": why})
                say(f"recommended, not changed: git config {key} true  # {why}")
    else:
        # The notes refs the policy in force names: the locks' and the verdicts'.
        try:
            policy = client_policy(git, None, git.refs())
        except PolicyError as exc:  # the hooks still go in; they refuse until it is fixed
            warning = (
                f"the policy in force does not parse ({exc.message}); "
                "fetching the default notes refs"
            )
            done["warnings"].append(warning)
            say(f"warning: {warning}", sys.stderr)
            policy = Policy()
        wanted = notes_refspecs([policy.notes_ref, policy.judge.notes_ref])
        for remote in _remotes(git):
            if _add_notes_refspecs(git, remote, wanted):
                done["fetches_locks"].append(remote)
                say(f"{remote} now fetches {' and '.join(wanted)} (locks and verdicts)")
    if as_json:
        print(json.dumps(done, indent=1))
    return 0


def _remotes(git: Git) -> list[str]:
    return git.text("remote").split()


def _add_notes_refspecs(git: Git, remote: str, wanted: list[str]) -> bool:
    """Add the notes' fetch refspecs to ``remote`` (replacing the exact one earlier
    installs wrote); False when they were all there."""
    key = f"remote.{remote}.fetch"
    _code, out = git.run("config", "--get-all", key, ok_codes=(0, 1))
    present = out.decode().split()
    if OLD_NOTES_REFSPEC in present:
        git.run("config", "--fixed-value", "--unset-all", key, OLD_NOTES_REFSPEC)
    missing = [spec for spec in wanted if spec not in present]
    for spec in missing:
        git.run("config", "--add", key, spec)
    return bool(missing) or OLD_NOTES_REFSPEC in present


def _install_agent(git: Git, args: argparse.Namespace) -> int:
    """``--agent claude``: the guard merged into the agent's settings file of this
    work tree; ``--dry-run`` prints the merged file and writes nothing."""
    from git_evidence.agent_settings import CLAUDE_SETTINGS, merge_claude_settings

    if args.server:
        raise UsageError("--agent guards an agent's session in a work tree", fix="drop --server")
    code, out = git.run("rev-parse", "--show-toplevel", ok_codes=(0, 128))
    if code != 0:
        raise UsageError("--agent needs a work tree (this repository is bare)")
    path = os.path.join(os.fsdecode(out.rstrip(b"\n")), CLAUDE_SETTINGS)
    try:
        with open(path, encoding="utf-8") as handle:
            text: str | None = handle.read()
    except FileNotFoundError:
        text = None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot be read ({exc}); nothing was written") from None
    merged, changed = merge_claude_settings(text, path)
    if not args.dry_run and changed:
        target = os.path.realpath(path)  # a settings file that is a link: written through it
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target + ".tmp", "w", encoding="utf-8") as handle:
            handle.write(merged)
        os.replace(target + ".tmp", target)
    if args.format == "json":
        done = {"agent": args.agent, "settings": path, "changed": changed}
        print(
            json.dumps({**done, "written": changed and not args.dry_run, "dry_run": args.dry_run})
        )
    elif args.dry_run:
        sys.stdout.write(merged)
    elif changed:
        print(f"git-evidence: {args.agent} runs `git evidence guard` before each tool call: {path}")
    else:
        print(f"git-evidence: {path} runs the guard already; nothing changed")
    return 0
