"""``git evidence classify PATH…``: each path's class and the glob that matched."""

from __future__ import annotations

import argparse
import json

from git_evidence.context import chosen_policy
from git_evidence.git import Git
from git_evidence.paths import EVIDENCE_CLASSES
from git_evidence.report import show_path


def run(args: argparse.Namespace) -> int:
    git = Git()
    policy = chosen_policy(git, args.base)
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
