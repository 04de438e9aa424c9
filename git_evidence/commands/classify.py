"""``git evidence classify PATH…``: each path's class and the glob that matched.

Paths are taken as git takes them: relative to the current directory (``app.py`` run
from ``src/`` is ``src/app.py``; ``../tests/x`` works), ``:/PATH`` from the top of the
repository, an absolute path inside the work tree; a path that leaves the repository
is an error. They need not exist: classification reads only the policy. A directory
(in the work tree or HEAD's tree, or a path given with a trailing ``/``) is said to be
one, and is classified as a file directly in it would be.

``--policy FILE`` classifies under a draft policy; without it, a warning says when
HEAD's policy file is not the one in force (a committed policy rules nothing until it
reaches the base branch)."""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import sys
from collections.abc import Callable

from git_evidence.core.errors import PREFIX, UsageError
from git_evidence.core.paths import EVIDENCE_CLASSES, Classifier
from git_evidence.gate.report import show_path
from git_evidence.plumbing.context import policy_in_waiting
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy.schema import Policy

TOP_MAGIC = ":/"  # git's pathspec magic for "from the top of the repository"


def run(args: argparse.Namespace) -> int:
    git = Git()
    prefix = git.prefix()
    paths = [repo_path(given, prefix, lambda: _toplevel(git)) for given in args.paths]
    found = resolve(git, draft=args.policy, at=args.base)
    policy = found.policy
    top = git.toplevel()
    classifier = policy.classifier()
    rows: list[dict[str, object]] = []
    lines: list[str] = []
    for given, path in zip(args.paths, paths, strict=True):
        row, line = _classified(classifier, policy, given, path)
        directory = given.endswith("/") or _is_directory(git, top, path)
        if directory:
            # The entry's own class stands in the row (a file put in its place); the
            # text says what a file in the directory is, which is what people ask.
            contents, inside = _classified(classifier, policy, given, f"{path}/{DIRECTORY_PROBE}")
            row["contents"] = {k: contents[k] for k in ("class", "glob", "evidence", "reason")}
            klass, why = inside.split("\t")[1:]
            line = f"{show_path(path + '/')}\t{klass}\ta directory: a file in it is {klass} ({why})"
            if not contents["evidence"] and row["evidence"]:
                roots = [r for r in policy.lock_roots if r.startswith(path + "/")]
                under = f" ({', '.join(roots)})" if roots else ""
                line += (
                    f"; it holds evidence roots{under}: a file or link put in its place is "
                    f"{row['class']}; classify a path under them"
                )
        row["directory"] = directory
        rows.append(row)
        lines.append(line)
    if found.origin == "draft" and args.format == "text":
        print(f"{PREFIX}: classified under {policy.source}", file=sys.stderr)
    elif not args.base and args.format == "text":
        waiting = policy_in_waiting(git, found)
        if waiting:
            print(f"{PREFIX}: {waiting}", file=sys.stderr)
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


# The name a directory's classification asks about: a file directly in it.
DIRECTORY_PROBE = "FILE"


def _classified(
    classifier: Classifier, policy: Policy, given: str, path: str
) -> tuple[dict[str, object], str]:
    """The JSON row and the text line of ``path``."""
    own = classifier.classify(path)
    match = classifier.structural(path)
    negations = [n.describe() for n in own.negated]
    row: dict[str, object] = {
        "path": path,
        "given": given,
        "class": match.klass,
        "glob": match.glob,
        "evidence": match.klass in EVIDENCE_CLASSES,
        "reason": match.reason,
        "negated": negations,
    }
    why = match.reason or (f"glob {match.glob}" if match.glob else "no glob")
    # What a negation took back before the class was reached, in order.
    why = " ; ".join([why, *negations])
    return row, f"{show_path(path)}\t{match.klass}\t{why}"


def _is_directory(git: Git, top: str | None, path: str) -> bool:
    """Whether ``path`` is a directory in the work tree ``top`` (a link to one is a
    link), else in HEAD's tree."""
    if top is not None:
        full = os.path.join(top, path)
        if os.path.isdir(full) and not os.path.islink(full):
            return True
    return git.object_type(f"HEAD:{path}") == "tree"


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
    return git.work_tree("an absolute path", fix="name the path from the top of the repository")
