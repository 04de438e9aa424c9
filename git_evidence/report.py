"""Text and JSON renderings of a judgement (SPEC §7)."""

from __future__ import annotations

import json
import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from git_evidence.errors import EXIT_ALLOW, EXIT_ERROR, EXIT_REFUSE, PREFIX
from git_evidence.rules import ALLOW, Finding, UpdateDecision, worst

if TYPE_CHECKING:
    from git_evidence.identity import Identity
    from git_evidence.policy import Policy

# git prefixes each relayed line with `remote: ` (8 columns); 72 keeps lines in 80.
WIDTH = 72
MAX_PATHS = 20
ACCEPTED_PATHS = 3  # paths named on the line of an accepted hold


@dataclass
class Report:
    who: Identity
    policy: Policy | None
    decisions: list[UpdateDecision] = field(default_factory=list)
    error: Finding | None = None
    notes: list[str] = field(default_factory=list)
    staged: bool = False  # pre-commit's judgement of the staged change

    @property
    def decision(self) -> str:
        if self.error is not None:
            return self.error.decision
        return worst(v.decision for v in self.decisions)

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return EXIT_ERROR
        return EXIT_ALLOW if self.decision == ALLOW else EXIT_REFUSE


def show_path(path: str) -> str:
    """A path as one printable line: odd characters are escaped, JSON-style."""
    if path.isprintable() and path.strip() == path and '"' not in path:
        try:
            path.encode("utf-8")
            return path
        except UnicodeEncodeError:
            pass
    return json.dumps(path)


def to_json(report: Report) -> str:
    doc: dict[str, Any] = {
        "decision": report.decision,
        "pusher": report.who.name,
        "policy": None
        if report.policy is None
        else {"source": report.policy.source, "digest": report.policy.digest},
        "updates": [_update_json(v) for v in report.decisions],
    }
    if report.error is not None:
        doc["error"] = _finding_json(report.error)
    if report.notes:
        doc["notes"] = report.notes
    return json.dumps(doc, indent=1, sort_keys=False)


def _update_json(outcome: UpdateDecision) -> dict[str, Any]:
    facts = outcome.facts
    return {
        "ref": facts.update.ref,
        "old": facts.update.old,
        "new": facts.update.new,
        "base": facts.base,
        "commits": len(facts.commits),
        "decision": outcome.decision,
        "findings": [_finding_json(f) for f in outcome.findings],
    }


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "rule": finding.rule,
        "decision": finding.decision,
        "commit": finding.commit,
        "paths": finding.paths,
        "message": finding.message,
        "hint": finding.hint,
        "blocking": finding.blocking,
        "accepted_by": finding.accepted_by,
    }


def to_text(report: Report, *, verbose: bool = True) -> str:
    lines: list[str] = []
    for note in report.notes:
        lines += _wrap(f"{PREFIX}: {note}")
    if report.error is not None:
        lines += _finding_lines(report.error)
    for outcome in report.decisions:
        facts = outcome.facts
        if not outcome.findings and not verbose:
            continue
        span = f"{len(facts.commits)} commit{'s' if len(facts.commits) != 1 else ''}"
        if report.staged:
            span = "the staged change"
        elif facts.base:
            span += f" since {facts.base[:12]}"
        elif outcome.judged and facts.commits:
            span += ", no history in common with the base"
        lines.append(f"{PREFIX}: {facts.update.ref}: {outcome.decision} ({span})")
        for finding in outcome.findings:
            lines += _finding_lines(finding)
    lines += textwrap.wrap(
        _summary(report),
        WIDTH,
        subsequent_indent="    ",
        break_on_hyphens=False,
        break_long_words=False,
    )
    return "\n".join(lines) + "\n"


def _wrap(text: str) -> list[str]:
    """One message in lines that fit under git's `remote: ` prefix."""
    return textwrap.wrap(
        text, WIDTH, subsequent_indent="    ", break_on_hyphens=False, break_long_words=False
    ) or [text]


def _finding_lines(finding: Finding) -> list[str]:
    if finding.accepted_by is not None:
        return _accepted_lines(finding)
    where = " ".join(x for x in (finding.ref, (finding.commit or "")[:12]) if x)
    head = (
        f"{finding.rule}: {where}: {finding.message}"
        if where
        else f"{finding.rule}: {finding.message}"
    )
    lines = textwrap.wrap(
        head, WIDTH, subsequent_indent="    ", break_on_hyphens=False, break_long_words=False
    ) or [head]
    for klass, found in finding.paths.items():
        shown = found[:MAX_PATHS]
        for path in shown:
            lines.append(f"    {klass}: {show_path(path)}")
        if len(found) > len(shown):
            lines.append(f"    {klass}: ... and {len(found) - len(shown)} more")
    lines += textwrap.wrap(
        f"To fix: {finding.hint}",
        WIDTH,
        initial_indent="  ",
        subsequent_indent="    ",
        break_on_hyphens=False,
        break_long_words=False,
    )
    return lines


def _accepted_lines(finding: Finding) -> list[str]:
    """A hold a reviewer's push accepted: one notice, not a finding to fix."""
    found = [show_path(p) for listed in finding.paths.values() for p in listed]
    shown = ", ".join(found[:ACCEPTED_PATHS])
    if len(found) > ACCEPTED_PATHS:
        shown += f" and {len(found) - ACCEPTED_PATHS} more"
    return _wrap(f"accepted by {finding.accepted_by}: {finding.rule} {shown}".rstrip())


def _summary(report: Report) -> str:
    policy = (
        "no policy"
        if report.policy is None
        else f"{report.policy.source} {report.policy.digest[:19]}"
    )
    who = report.who.describe()
    if report.error is not None:
        return f"{PREFIX}: could not decide, refusing ({who}; {policy})"
    if report.staged:  # pre-commit: nothing is pushed, there is no ref update
        verdict = "allowed" if report.decision == ALLOW else "refused"
        return f"{PREFIX}: {verdict}: the staged change ({who}; {policy})"
    refused = [v for v in report.decisions if v.decision != ALLOW]
    total = len(report.decisions)
    if not refused:
        return f"{PREFIX}: allowed {total} ref update{'s' if total != 1 else ''} ({who}; {policy})"
    return (
        f"{PREFIX}: refused: {len(refused)} of {total} ref update"
        f"{'s' if total != 1 else ''} not allowed ({who}; {policy})"
    )
