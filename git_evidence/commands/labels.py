"""``git evidence labels check|init``: the sealed test labels against what the suite
collects.

``check`` lists the collected tests that have no row, the rows that match no collected
test, duplicates and bad lines. ``init`` writes a starting file from a collection, every
row ``invariant``, for a person to review: it never overwrites, and never runs in CI
(a machine that labels the tests it is judged by has graded its own work).
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Sequence

from git_evidence.core.errors import EXIT_ALLOW, EXIT_REFUSE, UsageError
from git_evidence.plumbing.context import open_repo
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy import labels
from git_evidence.sandbox.collection import collect, project_python

HEADER = f"""\
git evidence test labels: node id<TAB>kind, kind one of {", ".join(labels.KINDS)}.
Written by `git evidence labels init`: every test starts as invariant. A person
reviews each row; an evidence writer commits this file alone and pushes it."""
CI_VARIABLES = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD")


def run(args: argparse.Namespace) -> int:
    git = open_repo(None)
    policy = resolve(git).policy
    top = git.work_tree("labels")
    extra = args.pytest_args[1:] if args.pytest_args[:1] == ["--"] else args.pytest_args
    python = project_python(getattr(args, "python", None))
    if args.verb == "init":
        return _init(git, top, policy.labels_path, python, extra)
    return _check(git, top, policy.labels_path, args.rev, python, extra, args.format)


def _read(git: Git, top: str, path: str, rev: str | None) -> tuple[bytes | None, str]:
    if rev is not None:
        return git.blob_at(rev, path), f"{rev}:{path}"
    try:
        with open(os.path.join(top, path), "rb") as handle:
            return handle.read(), path
    except FileNotFoundError:
        return None, path


def _check(
    git: Git,
    top: str,
    path: str,
    rev: str | None,
    python: str,
    extra: Sequence[str],
    fmt: str,
) -> int:
    data, source = _read(git, top, path, rev)
    if data is None:
        raise UsageError(
            f"no labels file {source}",
            fix="a person writes one with `git evidence labels init` and reviews it",
        )
    rows, problems = labels.scan_labels(data)
    collected = collect(top, extra, python)
    kinds = {row.node: row.kind for row in rows}
    # A row matches its node id, or (without `[…]`) every parametrization of it.
    seen = set(collected) | {w for node in collected if (w := labels.unparametrized(node))}
    missing = [node for node in collected if labels.kind_for(kinds, node) is None]
    stale = [row for row in rows if row.node not in seen]
    if fmt == "json":
        doc = {
            "labels": source,
            "collected": len(collected),
            "missing": missing,
            "stale": [{"node": r.node, "kind": r.kind, "line": r.line} for r in stale],
            "problems": [{"line": p.line, "message": p.message} for p in problems],
        }
        print(json.dumps(doc, indent=1))
    else:
        print(f"{source}: {len(rows)} rows; {len(collected)} tests collected")
        if missing:
            print(f"no row ({len(missing)}): collected tests the labels do not name")
            print("".join(f"  {node}\n" for node in missing), end="")
        if stale:
            print(f"no test ({len(stale)}): rows that match no collected test")
            print("".join(f"  {source}:{r.line}: {r.node}\n" for r in stale), end="")
        if problems:
            print(f"bad lines ({len(problems)}), duplicates included:")
            print("".join(f"  {source}:{p.line}: {p.message}\n" for p in problems), end="")
        if missing or stale or problems:
            print(
                "To fix: an evidence writer edits the rows and commits the labels file "
                "alone; `git evidence labels check` again until it is clean"
            )
        else:
            print("every collected test has exactly one row")
    return EXIT_REFUSE if missing or stale or problems else EXIT_ALLOW


def _init(git: Git, top: str, path: str, python: str, extra: Sequence[str]) -> int:
    ci = [name for name in CI_VARIABLES if os.environ.get(name)]
    if ci:
        raise UsageError(
            f"labels init does not run in CI ({ci[0]} is set): labels are a person's "
            "judgement of each test, never a machine's",
            fix="run it in your own clone, review every row, commit the file alone",
        )
    target = os.path.join(top, path)
    if os.path.lexists(target) or git.blob_at("HEAD", path) is not None:
        raise UsageError(
            f"{path} exists already; init never overwrites it",
            fix="edit it by hand (an evidence writer commits the change alone), and see "
            "`git evidence labels check`",
        )
    collected = collect(top, extra, python)
    rows = labels.once_per_test(collected)
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    with open(target, "xb") as handle:
        handle.write(labels.format_labels([(n, labels.INVARIANT) for n in rows], HEADER))
    folded = len(collected) - len(rows)
    once = (
        f" (a parametrized test has one row, without `[…]`, for all its cases: {len(rows)} rows)"
        if folded
        else ""
    )
    print(
        f"wrote {path}: {len(collected)} tests{once}, every one labelled invariant.\n"
        "A person must now review each row: characterization for a test that records "
        "what the product does today, nondeterministic for one that may fail on a "
        "correct product. Then an evidence writer commits the file alone and pushes it."
    )
    return EXIT_ALLOW
