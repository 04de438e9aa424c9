"""``git evidence show-verdict [REV]``: the verdict ``judge --note`` stored on REV.

Exit 0: a valid verdict is shown (whatever its class: its own ``exit`` says that);
1: REV has no verdict note; 2: the note is not one canonical verdict record."""

from __future__ import annotations

import argparse
import json
import sys

from git_evidence.core.errors import EXIT_ALLOW, EXIT_REFUSE
from git_evidence.judge import record as verdict_record
from git_evidence.judge.text import to_text
from git_evidence.lock import store
from git_evidence.plumbing.context import require_commit
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve


def run(args: argparse.Namespace) -> int:
    git = Git()
    rev = require_commit(git, args.rev)
    policy = resolve(git).policy
    notes_ref = policy.judge.notes_ref
    blob = store.own_notes(git, notes_ref, [rev])[0].get(rev)
    if blob is None:
        print(
            f"git-evidence: no verdict on {rev[:12]} in {notes_ref}.\n  To fix: fetch the "
            f"verdicts (git fetch origin {notes_ref}:{notes_ref}), or judge it: "
            f"git evidence judge {rev[:12]} --note"
        )
        return EXIT_REFUSE
    record = verdict_record.parse(git.blob_bytes(blob), rev)
    if args.format == "json":
        print(json.dumps({"rev": rev, "notes_ref": notes_ref, "note": blob, "verdict": record}))
        return EXIT_ALLOW
    print(f"verdict on {rev[:12]} (note {blob[:12]} in {notes_ref}, {record['started_at']}):")
    sys.stdout.write(to_text(record))
    return EXIT_ALLOW
