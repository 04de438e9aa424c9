"""``git evidence doctor``: what is installed in a (bare) repository, the policy in
force, whether a pusher identity is visible, and what is missing. Exit 0 when nothing
is missing."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable

from git_evidence.core.errors import EXIT_ALLOW, EXIT_REFUSE, EvidenceError
from git_evidence.install.hooks import MARKER, RECOMMENDED, SERVER_HOOKS
from git_evidence.lock import store
from git_evidence.plumbing.context import open_repo
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy.identity import PUSHER_VARIABLES, server_pusher


def run(args: argparse.Namespace) -> int:
    checks: list[tuple[str, str]] = []  # (ok | warning | missing, what)
    as_json = args.format == "json"

    def note(check: tuple[str, str]) -> None:
        checks.append(check)
        if not as_json:  # as it is found: what came before a failure stays said
            print(f"{check[0]}: {check[1]}")

    code = _examine(args, note)
    missing = sum(1 for state, _ in checks if state == "missing")
    if as_json:
        doc = {
            "missing": missing,
            "checks": [{"state": state, "text": text} for state, text in checks],
        }
        print(json.dumps(doc, indent=1))
    else:
        print(f"doctor: {missing} missing" if missing else "doctor: nothing missing")
    return code


def _examine(args: argparse.Namespace, note: Callable[[tuple[str, str]], None]) -> int:
    git = open_repo(args.repo)
    missing = 0

    def say(state: str, text: str) -> None:
        nonlocal missing
        missing += state == "missing"
        note((state, text))

    say(
        "ok" if git.is_bare() else "warning",
        "a bare repository" if git.is_bare() else "not a bare repository",
    )
    hooks = git.git_path("hooks")
    for name in SERVER_HOOKS:
        path = os.path.join(hooks, name)
        if not os.path.exists(path):
            say("missing", f"{name} hook ({path}): run git evidence install --server")
            continue
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        if not os.access(path, os.X_OK):
            say("missing", f"{name} hook is not executable: chmod +x {path}")
        elif MARKER in text:
            say("ok", f"{name} hook installed by git evidence ({path})")
        elif "git_evidence" in text or "git-evidence" in text:
            say("ok", f"{name} hook chains git evidence ({path})")
        else:
            say(
                "missing",
                f"{name} hook exists but does not run git evidence ({path}): "
                "git evidence install --server prints the lines to add",
            )
    refs = git.refs()
    try:
        policy = resolve(git, refs=refs, server=True).policy
    except EvidenceError as exc:
        say("missing", f"a policy that parses: {exc.message} (every push is refused)")
        return EXIT_REFUSE
    say("ok", f"policy from {policy.source}, {policy.digest}")
    for role in ("evidence_writers", "ledger_writers", "lock_writers"):
        names = sorted(getattr(policy, role))
        say(
            "ok" if names else "warning",
            f"{role}: {', '.join(names) if names else 'none: nobody may push that kind'}",
        )
    who = server_pusher(os.environ)
    if who.name:
        say("ok", f"pusher identity visible here: {who.name} (from {who.source})")
    else:
        say(
            "warning",
            "no pusher variable in this environment "
            f"({', '.join(PUSHER_VARIABLES)}): pushes that reach the hook like this are "
            "anonymous, trusted for nothing; check what your server exports to hooks",
        )
    for key, why in RECOMMENDED.items():
        if git.config_bool(key):
            say("ok", f"{key} = true")
        else:
            say("warning", f"{key} is not true ({why}): git config {key} true")
    tip = refs.get(policy.base)
    if tip is None:
        say("warning", f"{policy.base} does not exist yet: nothing is pinned")
    elif policy.notes_ref not in refs:
        say(
            "warning" if not policy.lock_required else "missing",
            f"no locks ({policy.notes_ref} is missing): post-receive pins the next push "
            f"to {policy.base}, or a lock writer runs git evidence lock",
        )
    else:
        found = store.find_lock(git, policy.notes_ref, tip)
        say(
            "ok" if found else "warning",
            f"lock in force at {policy.base}: note on {found.commit[:12]}"
            if found
            else f"no lock in force at {policy.base}",
        )
    return EXIT_REFUSE if missing else EXIT_ALLOW
