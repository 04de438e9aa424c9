"""``git evidence doctor``: what fits where it runs (``install/doctor.py``), each
check printed as it is found. Exit 0 when nothing is missing."""

from __future__ import annotations

import argparse
import json
import os

from git_evidence.core.errors import EXIT_ALLOW, EXIT_REFUSE
from git_evidence.install.doctor import Check, examine
from git_evidence.plumbing.context import open_repo


def run(args: argparse.Namespace) -> int:
    as_json = args.format == "json"
    checks: list[Check] = []
    for check in examine(open_repo(args.repo), os.environ):
        checks.append(check)
        if not as_json:  # as it is found: what came before a failure stays said
            print(f"{check.state}: {check.text}")
    missing = sum(1 for check in checks if check.state == "missing")
    if as_json:
        doc = {"missing": missing, "checks": [check._asdict() for check in checks]}
        print(json.dumps(doc, indent=1))
    else:
        print(f"doctor: {missing} missing" if missing else "doctor: nothing missing")
    return EXIT_REFUSE if missing else EXIT_ALLOW
