"""Writing the forge formats: the document on standard output, and on GitHub the job
summary appended to the file ``$GITHUB_STEP_SUMMARY`` names (when it is set). The
renderings themselves are formats.py and job_summary.py.

``--format github`` prints the workflow commands first, then the text report between
``::stop-commands::`` and its end token (a fresh random one per run, as the runner
asks): a path in the text that looks like a workflow command stays text."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TextIO

from git_evidence import __version__
from git_evidence.core.errors import UsageError
from git_evidence.forge import formats, job_summary

if TYPE_CHECKING:
    from git_evidence.gate.report import Rendering, Report

SUMMARY_VARIABLE = "GITHUB_STEP_SUMMARY"


def emit_report(
    report: Report,
    fmt: str,
    stream: TextIO,
    context: Mapping[str, str] | None = None,
    environ: Mapping[str, str] = os.environ,
    gone: frozenset[str] = frozenset(),
    rendering: Rendering | None = None,
) -> None:
    """A fence decision (``check``, ``ci``) in ``fmt``, shown as ``rendering`` says
    (default: ``report.PLAIN``); ``context`` as job_summary.check_summary takes it;
    ``gone``: the paths the judged head no longer has (deleted files, said so)."""
    from git_evidence.gate.report import PLAIN, to_doc, to_text

    shown = PLAIN if rendering is None else rendering
    doc = to_doc(report, shown)
    items = formats.check_items(doc, gone)
    if fmt == formats.SARIF:
        from git_evidence.forge import sarif

        policy = doc.get("policy") or {}
        properties = {"decision": doc["decision"], "pusher": doc["pusher"], "policy": policy}
        log = sarif.sarif(
            items,
            version=__version__,
            category=sarif.FENCE,
            succeeded=report.error is None,
            exit_code=report.exit_code,
            properties=properties,
        )
        stream.write(json.dumps(log, indent=1) + "\n")
    elif fmt == formats.CODEQUALITY:
        stream.write(json.dumps(formats.codequality(items), indent=1) + "\n")
    else:
        _github(items, to_text(report, shown), stream)
        append_summary(job_summary.check_summary(doc, context, gone), environ)


def emit_record(
    record: Mapping[str, Any], fmt: str, stream: TextIO, environ: Mapping[str, str] = os.environ
) -> None:
    """A verdict record (``judge``) in ``fmt``."""
    from git_evidence.judge.text import to_text

    items = formats.verdict_items(record)
    if fmt == formats.SARIF:
        from git_evidence.forge import sarif

        properties = {
            key: record.get(key) for key in ("class", "exit", "base", "candidate", "policy")
        }
        log = sarif.sarif(
            items,
            version=__version__,
            category=sarif.JUDGE,
            succeeded=record.get("class") != "undecided",
            exit_code=int(record.get("exit", 2)),
            properties=properties,
            help_for={str(record["class"]): str(record.get("next") or "")},
        )
        stream.write(json.dumps(log, indent=1) + "\n")
    elif fmt == formats.CODEQUALITY:
        stream.write(json.dumps(formats.codequality(items), indent=1) + "\n")
    else:
        _github(items, to_text(record), stream)
        append_summary(job_summary.verdict_summary(record), environ)


def _github(items: list[formats.Item], text: str, stream: TextIO) -> None:
    for line in formats.workflow_commands(items):
        stream.write(line + "\n")
    token = os.urandom(16).hex()  # the runner asks for a token no one can guess
    stream.write(f"::stop-commands::{token}\n{text.rstrip(chr(10))}\n::{token}::\n")


def append_summary(markdown: str, environ: Mapping[str, str] = os.environ) -> None:
    """Append to the job summary file, when the runner names one."""
    path = environ.get(SUMMARY_VARIABLE)
    if not path:
        return
    try:
        with open(path, "a", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(markdown + "\n")
    except OSError as exc:
        raise UsageError(
            f"cannot append the job summary to {path} ({SUMMARY_VARIABLE}): {exc.strerror}",
            fix=f"unset {SUMMARY_VARIABLE} or make the file writable",
        ) from None


def write_file(path: str, data: str) -> None:
    """Write a report file (``ci --codequality FILE``), replacing what was there."""
    try:
        with open(path, "w", encoding="utf-8", errors="backslashreplace") as handle:
            handle.write(data)
    except OSError as exc:
        raise UsageError(
            f"cannot write {path}: {exc.strerror}", fix="choose a writable path"
        ) from None
