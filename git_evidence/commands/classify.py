"""``git evidence classify PATH…``: each path's class and the glob that matched.

Paths are taken as git takes them: relative to the current directory (``app.py`` run
from ``src/`` is ``src/app.py``; ``../tests/x`` works), ``:/PATH`` from the top of the
repository, an absolute path inside the work tree; a path that leaves the repository
is an error. They need not exist: classification reads only the policy."""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import sys
from collections.abc import Callable

from git_evidence.context import chosen_policy
from git_evidence.errors import UsageError
from git_evidence.git import Git
from git_evidence.paths import EVIDENCE_CLASSES
from git_evidence.report import show_path

TOP_MAGIC = ":/"  # git's pathspec magic for "from the top of the repository"


def run(args: argparse.Namespace) -> int:
    git = Git()
    # Not `git.text`: it strips, and a directory name may start with a space.
    prefix = os.fsdecode(git.out("rev-parse", "--show-prefix").rstrip(b"\n"))
    paths = [repo_path(given, prefix, lambda: _toplevel(git)) for given in args.paths]
    policy = chosen_policy(git, args.base)
    classifier = policy.classifier()
    rows: list[dict[str, object]] = []
    lines: list[str] = []
    for given, path in zip(args.paths, paths, strict=True):
        own = classifier.classify(path)
        match = classifier.structural(path)
        negations = [n.describe() for n in own.negated]
        rows.append(
            {
                "path": path,
                "given": given,
                "class": match.klass,
                "glob": match.glob,
                "evidence": match.klass in EVIDENCE_CLASSES,
                "reason": match.reason,
                "negated": negations,
            }
        )
        why = match.reason or (f"glob {match.glob}" if match.glob else "no glob")
        # What a negation took back before the class was reached, in order.
        why = " ; ".join([why, *negations])
        lines.append(f"{show_path(path)}\t{match.klass}\t{why}")
    if args.format == "json":
        print(
            json.dumps(
                {"policy": {"source": policy.source, "digest": policy.digest}, "paths": rows},
                indent=1,
            )
        )
        return 0
    if args.verbose:
        print(f"policy: {policy.source} {policy.digest}", file=sys.stderr)
    print("\n".join(lines))
    return 0


def repo_path(given: str, prefix: str, toplevel: Callable[[], str]) -> str:
    """``given`` (as typed in the directory ``prefix`` of the work tree, ``""`` at
    the top) as a path from the top of the repository, lexically, as git does."""
    if given.startswith(TOP_MAGIC):
        joined = given[len(TOP_MAGIC) :]
    elif os.path.isabs(given):
        joined = _inside(given, toplevel())
    else:
        joined = prefix + given
    path = posixpath.normpath(joined) if joined else "."
    if path == ".." or path.startswith("../") or path.startswith("/"):
        raise UsageError(
            f"{given}: outside the repository",
            fix="name a path inside it (relative to the current directory, or :/PATH from its top)",
        )
    if path == ".":
        raise UsageError(
            f"{given}: is the top of the repository, not a path in it",
            fix="name a file or directory inside it",
        )
    return path


def _inside(absolute: str, top: str) -> str:
    """An absolute path as a path from ``top``: lexically, else through the links
    (``top`` is the real path git reports)."""
    for candidate in (os.path.normpath(absolute), os.path.realpath(absolute)):
        relative = os.path.relpath(candidate, top)
        if relative != ".." and not relative.startswith("../"):
            return relative
    return os.path.relpath(absolute, top)


def _toplevel(git: Git) -> str:
    code, out = git.run("rev-parse", "--show-toplevel", ok_codes=(0, 128))
    if code != 0:
        raise UsageError(
            "an absolute path needs a work tree (this repository is bare)",
            fix="name the path from the top of the repository",
        )
    return os.fsdecode(out.rstrip(b"\n"))
