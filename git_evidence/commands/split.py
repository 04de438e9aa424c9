"""``git evidence split [REV] [--range BASE..TOP] [--evidence-branch NAME]
[--order evidence-first|product-first] [--dry-run]``: a commit the gate calls mixed
becomes an evidence commit and a product commit (split/splitter.py); this prints what
was done, as text or JSON, or the one line that says why nothing was."""

from __future__ import annotations

import argparse
import json
import sys

from git_evidence.core.errors import EXIT_ERROR, PREFIX, EvidenceError
from git_evidence.split.outcome import as_json, as_text
from git_evidence.split.splitter import split


def run(args: argparse.Namespace) -> int:
    try:
        outcome = split(
            args.rev,
            commits=args.range,
            evidence_branch=args.evidence_branch,
            order=args.order,
            draft=getattr(args, "policy", None),
            dry_run=getattr(args, "dry_run", False),
        )
    except EvidenceError as exc:
        if args.format == "json":
            error = {"rule": exc.rule, "message": exc.message, "hint": exc.fix}
            print(json.dumps({"decision": "error", "error": error}, indent=1))
        else:
            fix = f" (to fix: {exc.fix})" if exc.fix else ""
            text = " ".join(f"{exc.message}{fix}".split())  # one line, whatever git said
            print(f"{PREFIX}: {exc.rule}: {text}", file=sys.stderr)
        return EXIT_ERROR
    if args.format == "json":
        print(json.dumps(as_json(outcome), indent=1))
    else:
        sys.stdout.write(as_text(outcome))
    return 0
