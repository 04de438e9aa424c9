"""A judgement as it is reported: the ``Report`` (built once, frozen), ``join`` (reports
judged apart as one new report), the ``Rendering`` it is shown with (how many findings,
the options a printed command carries), and its text and JSON."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from git_evidence.core.errors import EXIT_ALLOW, EXIT_ERROR, EXIT_REFUSE, PREFIX
from git_evidence.core.slots import Frozen
from git_evidence.rules.findings import Finding, UpdateDecision, creates_base, worst
from git_evidence.rules.table import ALLOW

if TYPE_CHECKING:
    from git_evidence.core.facts import UpdateFacts
    from git_evidence.policy.identity import Identity
    from git_evidence.policy.schema import Decision, Policy

# git prefixes each relayed line with `remote: ` (8 columns); 72 keeps lines in 80.
WIDTH = 72
MAX_PATHS = 20
ACCEPTED_PATHS = 3  # paths named on the line of an accepted hold
# Findings a text report shows in full; the rest are counted per rule, with the
# command that lists them (`--max-findings N`, `git config evidence.maxFindings N`).
MAX_FINDINGS = 20
# Above this many findings JSON is written without indentation: json's C encoder
# serves only that case, and nobody reads thousands of findings by eye.
JSON_INDENT_FINDINGS = 200
_SPACES = str.maketrans("\t\n\r\v\f", "     ")
_KEEP = "\0"  # stands for the spaces of a command that a wrapped line keeps whole
CONTINUED = "    "  # how a wrapped line goes on


class Report(Frozen):
    """A judgement, built once from what was decided (``decision.decide``) and the notes
    said with it; how it is shown is the renderers' (``Rendering``), not its own."""

    who: Identity
    policy: Policy | None
    decisions: tuple[UpdateDecision, ...] = ()
    error: Finding | None = None
    notes: tuple[str, ...] = ()
    staged: bool = False  # pre-commit's judgement of the staged change

    @property
    def decision(self) -> Decision:
        if self.error is not None:
            return self.error.decision
        return worst(v.decision for v in self.decisions)

    @property
    def exit_code(self) -> int:
        if self.error is not None:
            return EXIT_ERROR
        return EXIT_ALLOW if self.decision == ALLOW else EXIT_REFUSE


def join(
    who: Identity,
    policy: Policy | None,
    parts: Iterable[Report],
    *,
    before: Sequence[str] = (),
    after: Sequence[str] = (),
) -> Report:
    """One report of judgements made apart for ``who`` under ``policy`` (``check``'s
    ranges, ``ci``'s pick among its pushers): their decisions in order, and the notes
    ``before``, then each part's, then ``after``: a new report, the parts (judgements
    that finished: none carries an error) left as they are."""
    listed = tuple(parts)
    return Report(
        who,
        policy,
        tuple(v for part in listed for v in part.decisions),
        notes=(*before, *(note for part in listed for note in part.notes), *after),
    )


class Rendering(Frozen):
    """How a report is shown, which is not what it says: the findings the text shows
    in full (``max_findings``; 0: all), the options a printed command carries
    (``--base``, ``--as``, ``--policy`` as words a shell reads back: ``given_options``)
    and what the settings themselves call for (a limit that is no number). The command
    builds it from its command line and git's config, and hands it to the renderers
    with the report."""

    max_findings: int = MAX_FINDINGS
    options: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def hint(self, text: str) -> str:
        """``text`` (a finding's hint) with the options carried onto every
        ``git evidence check|split`` it suggests (``split`` takes only ``--policy``: it
        classifies, it does not judge a pusher)."""
        if not self.options or "`git evidence " not in text:
            return text
        options = self.options
        for_split = tuple(
            word
            for flag, value in zip(options[::2], options[1::2], strict=True)
            if flag == "--policy"
            for word in (flag, value)
        )

        def carried(found: re.Match[str]) -> str:
            extra = options if found.group(1) == "check" else for_split
            command = found.group(1) + (found.group(2) or "")
            return "`" + " ".join(["git evidence", command, *extra]) + "`"

        return _HINT_COMMAND.sub(carried, text)


PLAIN = Rendering()  # the defaults: 20 findings in full, no option carried

# The options a printed command carries over from the command line.
CARRIED = (("base", "--base"), ("as_name", "--as"), ("policy", "--policy"))


def given_options(args: object) -> tuple[str, ...]:
    """``--base REF``, ``--as NAME`` and ``--policy FILE`` as given on the command line
    (``args`` is its namespace), quoted for a shell."""
    words: list[str] = []
    for dest, flag in CARRIED:
        value = getattr(args, dest, None)
        if value:
            import shlex  # only when options are carried into a hint

            words += [flag, shlex.quote(str(value))]
    return tuple(words)


# Commands a hint names that judge or split by the policy: they carry the options too.
_HINT_COMMAND = re.compile(r"`git evidence (check|split)( [^`]*)?`")


def show_path(path: str) -> str:
    """A path as one printable line: odd characters are escaped, JSON-style."""
    if path.isprintable() and path.strip() == path and '"' not in path:
        try:
            path.encode("utf-8")
            return path
        except UnicodeEncodeError:
            pass
    import json  # here: most reports print no odd path and no JSON

    return json.dumps(path)


def to_json(report: Report, rendering: Rendering = PLAIN) -> str:
    import json

    doc = to_doc(report, rendering)
    many = sum(len(v.findings) for v in report.decisions) > JSON_INDENT_FINDINGS
    return json.dumps(doc, indent=None if many else 1, sort_keys=False)


def to_doc(report: Report, rendering: Rendering = PLAIN) -> dict[str, Any]:
    """The JSON document of a judgement, as data: what ``to_json`` writes and what the
    forge formats (forge/formats.py) render; every finding, whatever the limit."""
    doc: dict[str, Any] = {
        "decision": report.decision,
        "pusher": report.who.name,
        "policy": None
        if report.policy is None
        else {"source": report.policy.source, "digest": report.policy.digest},
        "updates": [_update_json(v, rendering) for v in report.decisions],
    }
    if report.error is not None:
        doc["error"] = _finding_json(report.error)
    notes = [*report.notes, *rendering.notes]
    if notes:
        doc["notes"] = notes
    return doc


def _update_json(outcome: UpdateDecision, rendering: Rendering) -> dict[str, Any]:
    facts = outcome.facts
    return {
        "ref": facts.update.ref,
        "old": facts.update.old,
        "new": facts.update.new,
        "base": facts.base,
        "commits": len(facts.commits),
        "decision": outcome.decision,
        "findings": [_finding_json(f, rendering.hint) for f in outcome.findings],
    }


def _finding_json(finding: Finding, hint: Callable[[str], str] = str) -> dict[str, Any]:
    return {
        "rule": finding.rule,
        "decision": finding.decision,
        "commit": finding.commit,
        "paths": finding.paths,
        "message": finding.message,
        "hint": hint(finding.hint),
        "blocking": finding.blocking,
        "accepted_by": finding.accepted_by,
        **({"details": dict(finding.details)} if finding.details else {}),
    }


def to_text(
    report: Report, rendering: Rendering = PLAIN, *, verbose: bool = True, width: int = WIDTH
) -> str:
    """The report for people: lines of at most ``width`` columns (a path or a command
    longer than that stays whole); the first ``rendering.max_findings`` findings in
    full, then per update one line per rule counting the rest, with the command that
    lists them."""
    lines: list[str] = []
    for note in (*report.notes, *rendering.notes):
        lines += wrap(f"{PREFIX}: {note}", width)
    if report.error is not None:
        lines += _finding_lines(report.error, width)
    room = rendering.max_findings if rendering.max_findings > 0 else None
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
            creates = creates_base(facts)
            span += ", creating the base" if creates else ", no history in common with the base"
        lines += wrap(f"{PREFIX}: {facts.update.ref}: {outcome.decision} ({span})", width)
        findings = outcome.findings
        shown = findings if room is None else findings[:room]
        for finding in shown:
            lines += _finding_lines(finding, width, rendering.hint)
        if room is not None:
            room -= len(shown)
            if len(findings) > len(shown):
                lines += _more_lines(outcome, findings[len(shown) :], width, rendering.options)
    lines += wrap(_summary(report), width)
    return "\n".join(lines) + "\n"


def wrap(
    text: str, width: int = WIDTH, first: str = "", rest: str = CONTINUED, keep: str = ""
) -> list[str]:
    """``text`` in lines of at most ``width`` columns (a wide character counts two),
    broken at spaces: the first line starts with ``first``, the others with ``rest``.
    A word longer than a line stays whole, and so does ``keep`` (a command to copy)."""
    line = first + text
    if line.isascii() and len(line) <= width and line.isprintable():
        return [line]
    text = text.translate(_SPACES)
    if keep:
        text = text.replace(keep, keep.replace(" ", _KEEP))
    lines: list[str] = []
    line, used, fresh = first, _columns(first), True
    for word in text.split(" "):
        if fresh and not word:
            continue  # spaces where a line starts or breaks
        size = _columns(word)
        if fresh:
            line, used, fresh = line + word, used + size, False
        elif used + 1 + size <= width:
            line, used = f"{line} {word}", used + 1 + size
        else:
            lines.append(line)
            line, used = rest + word, len(rest) + size
    lines.append(line)
    return [x.replace(_KEEP, " ") for x in lines] if keep else lines


def _columns(text: str) -> int:
    """Terminal columns ``text`` takes: East Asian wide and full-width characters
    two, combining and format characters none."""
    if text.isascii():
        return len(text)
    total = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
            continue
        total += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return total


def _finding_lines(
    finding: Finding, width: int = WIDTH, hint: Callable[[str], str] = str
) -> list[str]:
    if finding.accepted_by is not None:
        return _accepted_lines(finding, width)
    where = " ".join(x for x in (finding.ref, (finding.commit or "")[:12]) if x)
    head = (
        f"{finding.rule}: {where}: {finding.message}"
        if where
        else f"{finding.rule}: {finding.message}"
    )
    lines = wrap(head, width)
    for klass, found in finding.paths.items():
        shown = found[:MAX_PATHS]
        for path in shown:
            line = f"    {klass}: {show_path(path)}"
            detail = (finding.details or {}).get(path)
            if detail and len(line) + 1 + len(detail) > width:
                # a drift entry, `PATH (OLD -> NEW)`: the change goes on a line of its own
                lines += [line, f"{CONTINUED * 2}{detail}"]
                continue
            lines.append(f"{line} {detail}" if detail else line)
        if len(found) > len(shown):
            lines.append(f"    {klass}: ... and {len(found) - len(shown)} more")
    # What a finding that holds nothing asks for is a next step, not a fix.
    label = "To fix" if finding.blocking and finding.decision != ALLOW else "Next"
    lines += wrap(f"{label}: {hint(finding.hint)}", width, first="  ")
    return lines


def _accepted_lines(finding: Finding, width: int) -> list[str]:
    """A hold a reviewer's push accepted: one notice, not a finding to fix."""
    found = [show_path(p) for listed in finding.paths.values() for p in listed]
    shown = ", ".join(found[:ACCEPTED_PATHS])
    if len(found) > ACCEPTED_PATHS:
        shown += f" and {len(found) - ACCEPTED_PATHS} more"
    return wrap(f"accepted by {finding.accepted_by}: {finding.rule} {shown}".rstrip(), width)


def _more_lines(
    outcome: UpdateDecision, hidden: Sequence[Finding], width: int, options: Sequence[str] = ()
) -> list[str]:
    """One line per rule counting the findings not shown, then the command that lists
    them all: `check` judges the same commits, when they were judged (findings on the
    ref itself come from the push: its hook shows them with --max-findings 0)."""
    lines: list[str] = []
    for rule, count in Counter(f.rule for f in hidden).items():
        lines.append(f"  ... and {count:,} more {rule} finding{'s' if count != 1 else ''}")
    command = _listing_command(outcome.facts, width, options) if outcome.judged else ""
    if command:
        lines += wrap(f"To list them all (or --format json): {command}", width, "  ", keep=command)
    else:
        lines += wrap("To list them all: --max-findings 0, or --format json", width, "  ")
    return lines


def _listing_command(facts: UpdateFacts, width: int, options: Sequence[str] = ()) -> str:
    """``git evidence check <base>..<new> --max-findings 0``, its ids as long as the
    line allows (12 hex digits, or down to 7 under a narrower host prefix), and the
    ``options`` the report was made with, so that it judges the same way."""
    commit = facts.commit
    if commit is None or not all(c in "0123456789abcdef" for c in commit):
        return ""
    base = facts.base
    fixed = len("git evidence check  --max-findings 0") + len(CONTINUED)
    digits = (width - fixed - 2) // 2 if base else width - fixed
    digits = max(7, min(12, digits))
    span = f"{base[:digits]}..{commit[:digits]}" if base else commit[:digits]
    return " ".join(["git evidence check", span, *options, "--max-findings", "0"])


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
