"""``git evidence install [--server]``: write the hooks, refusing to replace a hook
that git evidence did not write unless ``--force``."""

from __future__ import annotations

import argparse
import os
import shlex
import stat
import sys

from git_evidence.context import open_repo
from git_evidence.errors import UsageError
from git_evidence.git import Git
from git_evidence.policy import read_sealed

MARKER = "# installed by git-evidence"
CLIENT_HOOKS = ("pre-commit", "pre-push")
SERVER_HOOKS = ("pre-receive", "post-receive")
NOTES_REFSPEC = "+refs/notes/evidence:refs/notes/evidence"


def hook_script(hook: str) -> str:
    python = shlex.quote(sys.executable)
    return f"""#!/bin/sh
{MARKER}: `git evidence install` rewrites this file; do not edit it.
# The gate fails closed: if the interpreter is gone, the hook refuses.
if [ ! -x {python} ]; then
  echo "git-evidence: {sys.executable} is missing; refusing. Reinstall: git evidence install" >&2
  exit 2
fi
exec {python} -m git_evidence {hook} "$@"
"""


# Server settings the gate relies on but does not change: printed when not set.
RECOMMENDED = {
    "receive.fsckObjects": "reject malformed objects before any hook sees them",
    "receive.denyNonFastForwards": "git's own refusal of rewinds, beside non-fast-forward",
    "receive.denyDeletes": "git's own refusal of ref deletions, beside protected-delete",
}


def chain_lines(hook: str) -> str:
    """What to add to an existing hook so that it runs the gate too."""
    python = shlex.quote(sys.executable)
    if hook in ("pre-receive", "post-receive", "pre-push"):
        return (
            f"input=$(cat)  # at the top: the ref lines can be read only once\n"
            f'printf \'%s\\n\' "$input" | {python} -m git_evidence {hook} "$@" || '
            f'exit $?\n# ...then feed "$input" to the rest of the hook'
        )
    return f'{python} -m git_evidence {hook} "$@" || exit $?'


def run(args: argparse.Namespace) -> int:
    git = open_repo(args.repo)
    policy_file = getattr(args, "policy", None)
    if policy_file and not args.server:
        raise UsageError("--policy seals a server's policy", fix="use it with --server")
    if policy_file:
        policy_file = os.path.abspath(policy_file)
        sealed = read_sealed(policy_file)  # a policy that does not parse is not sealed
    bare = git.is_bare()
    if args.server and not bare:
        print(
            "git-evidence: warning: --server into a repository with a work tree; "
            "pushes to its checked-out branch are judged too",
            file=sys.stderr,
        )
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
        print(f"git-evidence: installed {name} hook: {path}")
    if policy_file:
        git.run("config", "evidence.policyFile", policy_file)
        print(f"git-evidence: sealed policy: {policy_file} ({sealed.digest[:19]})")
    if args.server:
        for key, why in RECOMMENDED.items():
            if not git.config_bool(key):
                print(f"git-evidence: recommended, not changed: git config {key} true  # {why}")
    else:
        for remote in _remotes(git):
            _add_notes_refspec(git, remote)
    return 0


def _remotes(git: Git) -> list[str]:
    return git.text("remote").split()


def _add_notes_refspec(git: Git, remote: str) -> None:
    key = f"remote.{remote}.fetch"
    _code, out = git.run("config", "--get-all", key, ok_codes=(0, 1))
    if NOTES_REFSPEC not in out.decode().split():
        git.run("config", "--add", key, NOTES_REFSPEC)
        print(f"git-evidence: {remote} now fetches refs/notes/evidence (locks)")
