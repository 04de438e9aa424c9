"""``git evidence install [--server]``: write the hooks, refusing to replace a hook
that git evidence did not write unless ``--force``."""

from __future__ import annotations

import argparse
import os
import shlex
import stat
import sys

from git_evidence.errors import UsageError
from git_evidence.git import Git

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


def run(args: argparse.Namespace) -> int:
    git = Git(cwd=args.repo)
    if git.run("rev-parse", "--git-dir", ok_codes=(0, 128))[0] != 0:
        raise UsageError(
            f"{args.repo or os.getcwd()} is not a git repository",
            fix="run it inside the repository, or pass --repo DIR",
        )
    bare = git.is_bare()
    if args.server and not bare:
        print(
            "git-evidence: warning: --server into a repository with a work tree; "
            "pushes to its checked-out branch are judged too",
            file=sys.stderr,
        )
    hooks_dir = git.git_path("hooks")
    os.makedirs(hooks_dir, exist_ok=True)
    names = SERVER_HOOKS if args.server else CLIENT_HOOKS
    planned = []
    for name in names:
        path = os.path.join(hooks_dir, name)
        if os.path.exists(path) and not args.force:
            with open(path, encoding="utf-8", errors="replace") as handle:
                if MARKER not in handle.read():
                    raise UsageError(
                        f"{path} exists and was not written by git evidence",
                        fix=f"chain it yourself (add `{sys.executable} -m git_evidence "
                        f'{name} "$@"` to it), or rerun with --force to replace it',
                    )
        planned.append((name, path))
    for name, path in planned:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(hook_script(name))
        os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        print(f"git-evidence: installed {name} hook: {path}")
    if not args.server:
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
