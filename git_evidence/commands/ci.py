"""``git evidence ci``: judge the pull request, merge request or push a CI job runs
for, as the server's gate would, and print what the forge reads (forge/ci.py says what
is judged, forge/event.py where it is read from).

Output: ``--format auto`` (the default) is ``github`` in GitHub Actions (annotations on
the paths, the text report, the job summary) and ``text`` in GitLab CI, which also
writes the Code Quality report to ``gl-code-quality-report.json`` (``--codequality
FILE``; ``-`` for none) for the job's ``artifacts: reports: codequality``. Exit as
``check``: 0 allowed, 1 refused, 2 could not decide."""

from __future__ import annotations

import argparse
import json
import os
import sys

from git_evidence.forge import formats, output
from git_evidence.forge.ci import judge_job
from git_evidence.forge.event import GITHUB, GITLAB
from git_evidence.gate.report import to_doc, to_json, to_text

GITLAB_REPORT = "gl-code-quality-report.json"


def run(args: argparse.Namespace) -> int:
    job = judge_job(
        os.environ,
        _read,
        as_name=args.as_name,
        fetch=not args.no_fetch,
        max_findings=args.max_findings,
    )
    report, rendering, gone = job.judged.report, job.rendering, job.gone
    fmt = args.format
    if fmt == "auto":
        fmt = formats.GITHUB if job.request.forge == GITHUB else "text"
    if fmt == "json":
        sys.stdout.write(to_json(report, rendering) + "\n")
    elif fmt in formats.FORMATS:
        output.emit_report(report, fmt, sys.stdout, job.context, gone=gone, rendering=rendering)
    else:
        sys.stdout.write(to_text(report, rendering))
    target = args.codequality or (GITLAB_REPORT if job.request.forge == GITLAB else None)
    if target and target != "-":
        issues = formats.codequality(formats.check_items(to_doc(report, rendering), gone))
        output.write_file(target, json.dumps(issues, indent=1) + "\n")
    return report.exit_code


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()
