"""``git evidence install [--server | --agent claude]``: write the hooks (refusing to
replace a hook git evidence did not write unless ``--force``) or the agent's guard, and
say what was done (``install/``)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from git_evidence.install.repository import FRAMEWORK_CONFIG, Installed, install
from git_evidence.plumbing.context import open_repo
from git_evidence.plumbing.git import Git


def run(args: argparse.Namespace) -> int:
    git = open_repo(args.repo)
    if getattr(args, "agent", None):
        return _agent(git, args)
    done = install(
        git,
        server=args.server,
        force=args.force,
        policy_file=getattr(args, "policy", None),
        dry=bool(getattr(args, "dry_run", False)),
    )
    if args.format == "json":
        print(json.dumps(_as_json(done), indent=1))
    else:
        _say(done)
    return 0


def _say(done: Installed) -> None:
    would = "would " if done.dry_run else ""
    for warning in done.warnings:
        print(f"git-evidence: warning: {warning}", file=sys.stderr)
    for hook in done.hooks:
        print(
            f"git-evidence: {would}install {hook.name} hook: {hook.path}"
            if would
            else f"git-evidence: installed {hook.name} hook: {hook.path}"
        )
    if done.framework:
        written = "nothing would be written there" if done.dry_run else "nothing written there"
        print(
            f"git-evidence: the pre-commit framework manages {' and '.join(done.framework)} "
            f"here: {written}. Add this to .pre-commit-config.yaml, then run `pre-commit "
            "install --hook-type pre-commit --hook-type pre-push`:"
        )
        print(FRAMEWORK_CONFIG, end="")
    if done.sealed is not None:
        verb = "would seal policy" if done.dry_run else "sealed policy"
        print(f"git-evidence: {verb}: {done.sealed.file} ({done.sealed.digest[:19]})")
    for key, why in done.recommended:
        print(f"git-evidence: recommended, not changed: git config {key} true  # {why}")
    if done.policy_warning is not None:
        print(f"git-evidence: warning: {done.policy_warning}", file=sys.stderr)
    fetch = "would fetch" if done.dry_run else "now fetches"
    for remote in done.fetches:
        print(f"git-evidence: {remote} {fetch} {' and '.join(done.notes)} (locks and verdicts)")
    if done.dry_run:
        print("git-evidence: dry run: nothing was changed")


def _as_json(done: Installed) -> dict[str, Any]:
    warnings = [*done.warnings, *([done.policy_warning] if done.policy_warning else [])]
    doc: dict[str, Any] = {
        "installed": [{"hook": h.name, "path": h.path} for h in done.hooks],
        "sealed": None if done.sealed is None else dict(done.sealed._asdict()),
        "recommended": [{"key": k, "value": "true", "why": w} for k, w in done.recommended],
        "fetches_locks": list(done.fetches),
        "warnings": warnings,
        "dry_run": done.dry_run,
    }
    if done.framework:
        doc["pre_commit_framework"] = {"hooks": list(done.framework), "config": FRAMEWORK_CONFIG}
    return doc


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
