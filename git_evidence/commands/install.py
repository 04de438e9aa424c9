"""``git evidence install [--server | --agent claude]``: write the hooks (refusing to
replace a hook git evidence did not write unless ``--force``) or the agent's guard, and
say what was done (``install/``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from git_evidence.install.repository import (
    FRAMEWORK_CONFIG,
    Fetches,
    Framework,
    Hook,
    Recommended,
    SealedPolicy,
    Step,
    Warned,
    install,
)
from git_evidence.plumbing.context import open_repo
from git_evidence.plumbing.git import Git


def run(args: argparse.Namespace) -> int:
    git = open_repo(args.repo)
    if getattr(args, "agent", None):
        return _agent(git, args)
    dry = bool(getattr(args, "dry_run", False))
    as_json = args.format == "json"
    doc: dict[str, Any] = {
        "installed": [],
        "sealed": None,
        "recommended": [],
        "fetches_locks": [],
        "warnings": [],
        "dry_run": dry,
    }
    steps = install(
        git,
        server=args.server,
        force=args.force,
        policy_file=getattr(args, "policy", None),
        dry=dry,
    )
    for step in steps:  # each said as it is done: what came before a failure stays said
        _record(doc, step)
        if not as_json:
            _say(step, dry)
    if as_json:
        print(json.dumps(doc, indent=1))
    elif dry:
        print("git-evidence: dry run: nothing was changed")
    return 0


def _say(step: Step, dry: bool) -> None:
    if isinstance(step, Warned):
        print(f"git-evidence: warning: {step.text}", file=sys.stderr)
    elif isinstance(step, Hook):
        done = "would install" if dry else "installed"
        print(f"git-evidence: {done} {step.name} hook: {step.path}")
    elif isinstance(step, Framework):
        written = "nothing would be written there" if dry else "nothing written there"
        print(
            f"git-evidence: the pre-commit framework manages {' and '.join(step.hooks)} "
            f"here: {written}. Add this to .pre-commit-config.yaml, then run `pre-commit "
            "install --hook-type pre-commit --hook-type pre-push`:"
        )
        print(FRAMEWORK_CONFIG, end="")
    elif isinstance(step, SealedPolicy):
        verb = "would seal policy" if dry else "sealed policy"
        print(f"git-evidence: {verb}: {step.file} ({step.digest[:19]})")
    elif isinstance(step, Recommended):
        print(f"git-evidence: recommended, not changed: git config {step.key} true  # {step.why}")
    else:
        fetch = "would fetch" if dry else "now fetches"
        notes = " and ".join(step.notes)
        print(f"git-evidence: {step.remote} {fetch} {notes} (locks and verdicts)")


def _record(doc: dict[str, Any], step: Step) -> None:
    """``step`` in the JSON document, in the shape of each key."""
    if isinstance(step, Warned):
        doc["warnings"].append(step.text)
    elif isinstance(step, Hook):
        doc["installed"].append({"hook": step.name, "path": step.path})
    elif isinstance(step, Framework):
        doc["pre_commit_framework"] = {"hooks": list(step.hooks), "config": FRAMEWORK_CONFIG}
    elif isinstance(step, SealedPolicy):
        doc["sealed"] = {"file": step.file, "digest": step.digest}
    elif isinstance(step, Recommended):
        doc["recommended"].append({"key": step.key, "value": "true", "why": step.why})
    elif isinstance(step, Fetches):
        doc["fetches_locks"].append(step.remote)


def _agent(git: Git, args: argparse.Namespace) -> int:
    from git_evidence.core.errors import UsageError
    from git_evidence.install.agent import install_agent  # only for the agent's guard

    if args.server:
        raise UsageError("--agent guards an agent's session in a work tree", fix="drop --server")
    done = install_agent(git, dry=args.dry_run)
    if args.format == "json":
        written = done.changed and not args.dry_run
        doc = {"agent": args.agent, "settings": done.settings, "changed": done.changed}
        print(json.dumps({**doc, "written": written, "dry_run": args.dry_run}))
        return 0
    if args.dry_run:
        sys.stdout.write(done.merged)
        return 0
    if done.changed:
        print(
            f"git-evidence: {args.agent} runs `git evidence guard` before each tool call: "
            f"{done.settings}"
        )
    else:
        print(f"git-evidence: {done.settings} runs the guard already; nothing changed")
    print(f"git-evidence: the guard's policy is pinned ({done.digest[:19]}): {done.pin}")
    return 0
