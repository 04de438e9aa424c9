"""``git evidence classify PATH…``: each path's class and the glob that matched."""

from __future__ import annotations

import argparse
import json

from git_evidence.context import client_policy, policy_at
from git_evidence.errors import UsageError
from git_evidence.git import Git
from git_evidence.paths import EVIDENCE_CLASSES
from git_evidence.report import show_path


def run(args: argparse.Namespace) -> int:
    git = Git()
    if args.base:
        rev = git.resolve_commit(args.base)
        if rev is None:
            raise UsageError(f"{args.base!r} does not name a commit")
        policy = policy_at(git, rev)
    else:
        policy = client_policy(git, None, git.refs())
    classifier = policy.classifier()
    rows = []
    for path in args.paths:
        match = classifier.classify(path)
        if match.klass not in EVIDENCE_CLASSES:
            structural = classifier.root_relation(path)
            if structural is not None:
                match = structural
        rows.append(
            {
                "path": path,
                "class": match.klass,
                "glob": match.glob,
                "evidence": match.klass in EVIDENCE_CLASSES,
                "reason": match.reason,
            }
        )
    if args.format == "json":
        print(
            json.dumps(
                {"policy": {"source": policy.source, "digest": policy.digest}, "paths": rows},
                indent=1,
            )
        )
    else:
        for row in rows:
            why = row["reason"] or (f"glob {row['glob']}" if row["glob"] else "no glob")
            print(f"{show_path(str(row['path']))}\t{row['class']}\t{why}")
    return 0
