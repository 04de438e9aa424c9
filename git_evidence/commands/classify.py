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
    rows: list[dict[str, object]] = []
    lines: list[str] = []
    for path in args.paths:
        own = classifier.classify(path)
        match = classifier.structural(path)
        negations = [n.describe() for n in own.negated]
        rows.append(
            {
                "path": path,
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
    else:
        print("\n".join(lines))
    return 0
