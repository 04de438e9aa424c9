"""The Markdown a GitHub job summary shows (``$GITHUB_STEP_SUMMARY``): for a fence
decision the decision, who it judged and with which policy, the findings by rule, each
rule's fix and the command that reproduces it; for a judgement the class, why, what to
do, its facts and the scorecard. Pure: the documents the JSON output writes in, text
out.

Everything that comes from the repository (paths, refs, messages that quote them) is
written as inline code or escaped text: a path can neither close a code span nor start
a link, a table cell or HTML."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from git_evidence.forge.formats import Item, check_items, ordered, places, verdict_items

MAX_LISTED = 20  # lines listed per rule before the rest is collapsed (<details>)
# GitHub keeps at most 1 MiB of a step's summary; what would go past this is left out,
# and the summary says so.
SUMMARY_BUDGET = 900_000
DECISION_WORDS = {
    "allow": "allowed",
    "hold": "refused",
    "reject": "refused",
    "error": "could not decide",
}


def code(text: str) -> str:
    """``text`` as one inline code span, whatever backticks it holds; its line breaks
    and table bars escaped so that it stays in its line and its cell."""
    text = text.replace("\r", " ").replace("\n", " ").replace("|", "\\|")
    fence = "`" * (_longest_run(text) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def block(text: str) -> list[str]:
    """``text`` as a fenced code block, fenced by more backticks than it holds in a row."""
    fence = "`" * max(3, _longest_run(text) + 1)
    return [fence, text, fence]


def _longest_run(text: str) -> int:
    run = longest = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    return longest


def plain(text: str) -> str:
    """Free text, inline: no HTML, no link, no table cell can start inside it. Code
    spans the text carries (``git evidence split …``) stay code spans."""
    out = " ".join(text.split())
    for char, escaped in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;")):
        out = out.replace(char, escaped)
    for char in "[]|":
        out = out.replace(char, "\\" + char)
    return out


def check_summary(
    doc: Mapping[str, Any],
    context: Mapping[str, str] | None = None,
    gone: frozenset[str] = frozenset(),
) -> str:
    """``context``: ``who`` (whom the request was judged as, and from where),
    ``reproduce`` (the command that judges the same range on a clone); ``gone``: paths
    the judged head no longer has."""
    context = context or {}
    decision = str(doc.get("decision", "error"))
    items = check_items(doc, gone)
    lines = [f"### git evidence: {DECISION_WORDS.get(decision, decision)} ({decision})", ""]
    who = context.get("who") or (code(str(doc["pusher"])) if doc.get("pusher") else "anonymous")
    policy = doc.get("policy") or {}
    where = (
        f"the policy {code(str(policy.get('source')))} ({code(str(policy.get('digest'))[:19])})"
        if policy
        else "no policy: it stopped before one was read"
    )
    lines += [f"Judged as {who} with {where}.", ""]
    for update in doc.get("updates", ()):
        base = str(update.get("base") or "")[:12] or "no common history"
        lines.append(
            f"- {code(str(update.get('ref')))}: {update.get('decision')}, "
            f"{update.get('commits')} commit(s) since {code(base)}"
        )
    if doc.get("updates"):
        lines.append("")
    lines += _by_rule(items)
    if context.get("reproduce"):
        lines += ["", f"Reproduce on a clone: {code(context['reproduce'])}"]
    return "\n".join(lines) + "\n"


def _by_rule(items: Sequence[Item]) -> list[str]:
    """A table of the rules, then every finding by rule with its paths: the first
    ``MAX_LISTED`` lines of a rule shown, the rest collapsed under ``<details>``."""
    if not items:
        return ["No finding."]
    items = ordered(items)
    counts = Counter(item.rule for item in items)
    spots: Counter[str] = Counter()
    for item in items:
        spots[item.rule] += sum(1 for place in places(item) if place.path)
    lines = ["| rule | level | findings | paths |", "| --- | --- | --- | --- |"]
    levels = {item.rule: item.level for item in items}
    for rule, count in counts.items():
        lines.append(f"| {code(rule)} | {levels[rule]} | {count} | {spots[rule]} |")
    used = sum(len(line) + 1 for line in lines)
    for rule in counts:
        found = [item for item in items if item.rule == rule]
        entries = _entries(found)
        shown, rest = entries[:MAX_LISTED], entries[MAX_LISTED:]
        block = ["", f"#### {code(rule)}", "", *(line for _, line in shown)]
        if rest:
            more = sum(1 for is_path, _ in rest if is_path) or len(rest)
            what = "paths" if any(is_path for is_path, _ in rest) else "findings"
            block += ["", f"<details><summary>{more} more {what} of {rule}</summary>", ""]
            if rest[0][0]:  # the list goes on inside a finding
                block.append(f"- {_owner(entries, MAX_LISTED)} (continued)")
            block += [line for _, line in rest] + ["", "</details>"]
        if found[0].hint:
            block += ["", f"To fix: {plain(found[0].hint)}"]
        size = sum(len(line.encode("utf-8", "replace")) + 1 for line in block)
        if used + size > SUMMARY_BUDGET:
            lines += [
                "",
                f"The summary stops before {code(rule)}: GitHub keeps 1 MiB of a step's "
                "summary. The command below lists every finding with `--format json`.",
            ]
            break
        used += size
        lines += block
    return lines


def _entries(found: Sequence[Item]) -> list[tuple[bool, str]]:
    """Each finding's line and its paths' lines, ``(is a path, line)``."""
    entries: list[tuple[bool, str]] = []
    for item in found:
        entries.append((False, f"- {plain(item.message)}"))
        for place in places(item):
            if place.path:
                entries.append((True, f"  - {code(place.path)} ({plain(place.text)})"))
    return entries


def _owner(entries: Sequence[tuple[bool, str]], index: int) -> str:
    """The message of the finding whose path line ``index`` is."""
    for is_path, line in reversed(entries[:index]):
        if not is_path:
            return line.removeprefix("- ")
    return ""


def verdict_summary(record: Mapping[str, Any]) -> str:
    klass = str(record.get("class"))
    lines = [f"### git evidence judge: {code(klass)} (exit {record.get('exit')})", ""]
    lines.append(f"**Why:** {plain(str(record.get('reason', '')))}")
    for detail in list(record.get("details") or ())[:MAX_LISTED]:
        lines.append(f"- {plain(str(detail))}")
    lines += ["", f"**Do:** {plain(str(record.get('next', '')))}", ""]
    pin = record.get("pin") or {}
    policy = record.get("policy") or {}
    shards = record.get("shards") or record.get("shard")
    facts = [
        ("base", code(str(record.get("base", ""))[:12])),
        ("candidate", code(str(record.get("candidate", ""))[:19])),
        ("pin", code(str(pin.get("digest"))[:19]) if pin.get("digest") else "unpinned base"),
        ("policy", code(f"{policy.get('source')} {str(policy.get('digest'))[:19]}")),
        (
            "runs",
            str(sum(len(r["codes"]) for p in record.get("properties") or () for r in p["runs"])),
        ),
    ]
    if shards:
        facts.append(("shards", plain(_shards_text(shards))))
    lines += ["| | |", "| --- | --- |"] + [f"| {name} | {value} |" for name, value in facts]
    card = record.get("scorecard")
    if card:
        lines += ["", f"**Scorecard:** {card.get('result')}", ""]
        lines += ["| vote | result | evidence |", "| --- | --- | --- |"]
        for name, vote in (card.get("votes") or {}).items():
            evidence = "; ".join(plain(str(e)) for e in list(vote.get("evidence") or ())[:5])
            lines.append(f"| {name} | {vote.get('vote')} | {evidence} |")
    if record.get("freeze_line"):
        lines += [
            "",
            "Freeze line (CI reproduces it first):",
            "",
            *block(str(record["freeze_line"])),
        ]
    items = verdict_items(record)
    if items:
        lines += ["", *_by_rule(items)]
    return "\n".join(lines) + "\n"


def _shards_text(shards: Mapping[str, Any]) -> str:
    if "parts" in shards:
        return f"merged from {shards.get('count')} shards"
    return f"shard {shards.get('index')} of {shards.get('count')} (a partial record)"
