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
import shlex
import sys

from git_evidence.forge import formats, output
from git_evidence.forge.ci import gone_paths, judge_request
from git_evidence.forge.current import current_base, token_env
from git_evidence.forge.event import GITHUB, GITLAB, detect
from git_evidence.forge.job_summary import code
from git_evidence.gate import pipeline
from git_evidence.gate.report import to_doc, to_json, to_text
from git_evidence.plumbing.git import Git

GITLAB_REPORT = "gl-code-quality-report.json"


def run(args: argparse.Namespace) -> int:
    request = detect(os.environ, _read)
    request, notes = current_base(request, os.environ)
    git = Git(env=token_env(os.environ) if request.forge == GITHUB else None)
    judged = judge_request(git, request, as_name=args.as_name, fetch=not args.no_fetch, notes=notes)
    report = judged.report
    rendering = pipeline.rendering(git, report, args.max_findings)
    gone = gone_paths(git, judged.head, report)
    fmt = args.format
    if fmt == "auto":
        fmt = formats.GITHUB if request.forge == GITHUB else "text"
    span = f"{judged.bottom}..{judged.head}" if judged.bottom else judged.head
    command = ["git", "evidence", "check", span]
    if judged.who.name is not None:
        command += ["--as", judged.who.name]
    context = {
        "who": f"{code(judged.who.describe())} ({judged.who.source}), for the {request.describe()}",
        "reproduce": shlex.join(command),
    }
    if fmt == "json":
        sys.stdout.write(to_json(report, rendering) + "\n")
    elif fmt in formats.FORMATS:
        output.emit_report(report, fmt, sys.stdout, context, gone=gone, rendering=rendering)
    else:
        sys.stdout.write(to_text(report, rendering))
    target = args.codequality or (GITLAB_REPORT if request.forge == GITLAB else None)
    if target and target != "-":
        issues = formats.codequality(formats.check_items(to_doc(report, rendering), gone))
        output.write_file(target, json.dumps(issues, indent=1) + "\n")
    return report.exit_code


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()
