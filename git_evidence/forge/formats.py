"""What a forge reads of a judgement: SARIF 2.1.0 (code scanning), GitHub workflow
commands (annotations on the paths) and GitLab Code Quality JSON, rendered from the
documents the JSON output writes (``report.to_doc`` for ``check`` and ``ci``, the
verdict record for ``judge``). Pure: documents in, text and data out.

Both kinds of document are first flattened to ``Item``s, one per finding: its rule, a
level (``error`` for a reject, ``warning`` for a hold, ``note`` for a finding that does
not block), one line of message, the fix, and the paths it is about. Each path is a
path of a tree, never display text: what a finding says about one path (its class, a
lock drift's ``(OLD -> NEW)``, that the file is deleted) is a ``Place``'s text, kept
apart. A deleted file is named by the path it had; a renamed one is the removal of
its old path and the addition of its new one. A finding about no path (a ref, a run
of a property) is located at the policy file, whose rules made it: Code Quality needs
a path for every issue, and code scanning shows results on files.

GitHub shows at most ten error, ten warning and ten notice annotations of a step
(``ANNOTATION_LIMITS``): the workflow commands are the most important first (rejects,
then holds, then notices), and when some are left out one last notice says how many
of each and that the job summary lists every finding. SARIF is sarif.py."""

from __future__ import annotations

import hashlib
import string
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final, NamedTuple

from git_evidence.policy.schema import POLICY_FILE
from git_evidence.rules.table import FIELDS, RULES

SARIF: Final = "sarif"
GITHUB: Final = "github"
CODEQUALITY: Final = "codequality"
FORMATS = (SARIF, GITHUB, CODEQUALITY)
TOOL = "git-evidence"
ERROR, WARNING, NOTE = "error", "warning", "note"
# Code Quality's scale is info, minor, major, critical, blocker: a reject blocks the
# merge, a hold waits for a person.
SEVERITY = {ERROR: "blocker", WARNING: "major", NOTE: "info"}
# What GitHub shows of one step's annotations, per kind; the last notice is kept for
# saying how many more there are.
ANNOTATION_LIMITS = {ERROR: 10, WARNING: 10, NOTE: 9}
RANK = {ERROR: 0, WARNING: 1, NOTE: 2}
DELETED = "deleted: named by the path it had"


class Item(NamedTuple):
    """One finding as the forges show it."""

    rule: str
    level: str  # error | warning | note
    message: str  # one line
    hint: str  # how to fix it
    paths: tuple[tuple[str, str], ...]  # (class, path); none: the finding is on no file
    key: str  # what the finding is about, stable across runs (its fingerprint's part)
    commit: str | None = None
    ref: str | None = None
    details: tuple[tuple[str, str], ...] = ()  # (path, what changed there)


class Place(NamedTuple):
    """Where an item is shown: a path of the tree ("" for none) and what the item says
    about that path."""

    path: str
    text: str


def places(item: Item) -> list[Place]:
    """One place per path of the item (its class, then what changed there), or one
    place on no path."""
    if not item.paths:
        return [Place("", "")]
    said = dict(item.details)
    return [
        Place(path, f"{klass}, {said[path]}" if said.get(path) else klass)
        for klass, path in item.paths
    ]


def located(item: Item, place: Place) -> str:
    """The item's message about one place: ``PATH (TEXT): MESSAGE``."""
    if not place.path:
        return item.message
    return f"{place.path} ({place.text}): {item.message}"


def ordered(items: Iterable[Item]) -> list[Item]:
    """Rejects first, then holds, then what does not block; in their order otherwise."""
    return sorted(items, key=lambda item: RANK[item.level])


# -- documents → items ------------------------------------------------------------------


def check_items(doc: Mapping[str, Any], gone: Iterable[str] = ()) -> list[Item]:
    """The findings of a ``check`` (or ``ci``) document, every update's, then its error.
    ``gone``: paths the judged head no longer has, said to be deleted."""
    deleted = frozenset(gone)
    items = []
    for update in doc.get("updates", ()):
        for finding in update.get("findings", ()):
            items.append(_finding_item(finding, update.get("ref"), deleted))
    if doc.get("error"):
        items.append(_finding_item(doc["error"], None, deleted))
    return items


def _finding_item(
    finding: Mapping[str, Any], ref: str | None, deleted: frozenset[str] = frozenset()
) -> Item:
    if not finding.get("blocking", True) or finding.get("accepted_by"):
        level = NOTE
    else:
        level = WARNING if finding.get("decision") == "hold" else ERROR
    paths = tuple(
        (str(klass), str(path))
        for klass, listed in (finding.get("paths") or {}).items()
        for path in listed
    )
    commit = finding.get("commit")
    where = " ".join(x for x in (ref, (commit or "")[:12]) if x)
    message = " ".join(str(finding.get("message", "")).split())
    if where:
        message = f"{where}: {message}"
    key = "" if paths else (ref or "")
    given = {str(k): str(v) for k, v in (finding.get("details") or {}).items()}
    details = []
    for _, path in paths:
        said = [x for x in (given.get(path), DELETED if path in deleted else None) if x]
        if said:
            details.append((path, "; ".join(said)))
    return Item(
        str(finding["rule"]),
        level,
        message,
        str(finding.get("hint") or ""),
        paths,
        key,
        commit,
        ref,
        tuple(details),
    )


# The candidate's paths by class (the record's `evidence.paths`) that each class is
# about: an oracle rewrite names the oracles, policy, ledger and test code it changed.
VERDICT_PATH_CLASSES = {
    "oracle_rewrite": ("oracle", "policy", "ledger", "test"),
    "held": ("other", "test"),
    "fixture_breach": ("fixture",),
}


def verdict_items(record: Mapping[str, Any]) -> list[Item]:
    """The verdict record as findings: nothing for a passing class; otherwise what the
    class is about (its paths, counterexamples, misses, flakes), or its reason."""
    from git_evidence.judge.classes import (
        FIXTURE_BREACH,
        FLAKE_CANDIDATE,
        FLAKE_FROZEN,
        PROPERTY_FAIL,
        PROPERTY_MISS,
    )

    klass = str(record["class"])
    exit_code = int(record.get("exit", 1))
    if exit_code == 0 and klass != FLAKE_FROZEN:
        return []
    level = WARNING if exit_code == 0 else ERROR
    reason = " ".join(str(record.get("reason", "")).split())
    hint = str(record.get("next") or "")
    items: list[Item] = []

    def add(
        message: str,
        key: str,
        paths: tuple[tuple[str, str], ...] = (),
        details: tuple[tuple[str, str], ...] = (),
    ) -> None:
        items.append(Item(klass, level, message, hint, paths, key, details=details))

    seen: set[str] = set()
    if klass == FIXTURE_BREACH:
        drift = record.get("drift") or {}
        for when in ("before", "after"):
            for moved in drift.get(when) or ():
                path = str(moved.get("path"))
                if path not in seen:
                    seen.add(path)
                    said = f"{moved.get('kind')} {when} the runs"
                    add(f"{klass}: {reason}", when, (("fixture", path),), ((path, said),))
    by_class = (record.get("evidence") or {}).get("paths") or {}
    for name in VERDICT_PATH_CLASSES.get(klass, ()):
        for path in map(str, by_class.get(name, ())):
            if path not in seen:
                seen.add(path)
                add(f"{klass}: {reason}", "", ((name, path),))
    if klass in (PROPERTY_MISS, PROPERTY_FAIL):
        for prop in record.get("properties") or ():
            for fixture in prop.get("fixtures") or ():
                if not fixture.get("ok", True):
                    path, kind = str(fixture["path"]), str(fixture["kind"]).replace("_", "-")
                    key = f"{prop['id']}\0{kind}\0{fixture['seed']}"
                    message = f"{prop['id']}: {kind} fixture (seed {fixture['seed']})"
                    add(message, key, (("fixture", path),))
        for case in record.get("counterexamples") or ():
            prop_id, seed = case["property"], case["seed"]
            add(f"property {prop_id}: seed {seed} failed on every run", f"{prop_id}\0{seed}")
    if klass in (FLAKE_FROZEN, FLAKE_CANDIDATE):
        for flake in record.get("flaky") or ():
            cited = "frozen" if flake.get("freeze") else "no freeze in force"
            message = (
                f"{flake['property']}: {flake['test_id']} seed {flake['seed']} gave "
                f"different outcomes [{flake['fingerprint']}]: {cited}"
            )
            add(message, f"{flake['test_id']}\0{flake['fingerprint']}")
    if not items:
        add(f"{klass}: {reason}", "")
    return items


def sentence(text: str, hint: str) -> str:
    return f"{text}. To fix: {hint}" if hint else text


def fingerprint(item: Item, path: str = "") -> str:
    """Stable across runs of the same finding: the rule, what it is about and the path,
    never a time or the order of the output (a rebased branch keeps its fingerprints
    when the finding stays)."""
    parts = (item.rule, item.key, path or ",".join(p for _, p in item.paths))
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]


def generic_hint(rule: str) -> str:
    """A rule's fix as the rule table words it, each field it fills in shown by name
    (``COMMIT``, ``BASE``…): the text ``git evidence rules`` shows. Empty for a rule the
    table does not have."""
    entry = RULES.get(rule)  # type: ignore[call-overload]
    if entry is None:
        return ""
    template = str(entry[1])
    names = {name for _, name, _, _ in string.Formatter().parse(template) if name}
    return template.format_map({n: FIELDS[n][0] if n in FIELDS else f"<{n}>" for n in names})


# -- GitLab Code Quality -------------------------------------------------------------------


def codequality(items: Iterable[Item]) -> list[dict[str, Any]]:
    """One Code Quality issue per item and path: description (the path, what the item
    says about it, the message, the fix), check_name, fingerprint, severity,
    location.path (a path of the tree; the policy file for a finding on no path) and
    location.lines.begin (the whole file: line 1)."""
    issues = []
    for item in ordered(items):
        for place in places(item):
            path = place.path or POLICY_FILE
            issues.append(
                {
                    "description": sentence(located(item, place), item.hint),
                    "check_name": item.rule,
                    "fingerprint": fingerprint(item, place.path),
                    "severity": SEVERITY[item.level],
                    "location": {"path": path, "lines": {"begin": 1}},
                }
            )
    return issues


# -- GitHub workflow commands -------------------------------------------------------------


def escape_data(text: str) -> str:
    """A workflow command's message: ``%``, CR and LF percent-encoded, so a message is
    one line and cannot end the command early."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``): the message escaping,
    and ``:`` and ``,``, which end a property."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def workflow_commands(items: Sequence[Item]) -> list[str]:
    """``::error file=PATH,title=RULE::message`` (``::warning`` for a hold, ``::notice``
    for what does not block), one per item and path, the most important first, no more
    of each kind than GitHub shows (``ANNOTATION_LIMITS``); then, when some were left
    out, one notice saying how many of each and where they all are."""
    lines: list[str] = []
    shown = dict.fromkeys(ANNOTATION_LIMITS, 0)
    hidden = dict.fromkeys(ANNOTATION_LIMITS, 0)
    for item in ordered(items):
        command = {ERROR: "error", WARNING: "warning", NOTE: "notice"}[item.level]
        for place in places(item):
            if shown[item.level] >= ANNOTATION_LIMITS[item.level]:
                hidden[item.level] += 1
                continue
            shown[item.level] += 1
            where = f"file={escape_property(place.path)}," if place.path else ""
            text = escape_data(sentence(located(item, place), item.hint))
            lines.append(f"::{command} {where}title={escape_property(item.rule)}::{text}")
    if any(hidden.values()):
        words = {ERROR: "error", WARNING: "warning", NOTE: "notice"}
        counts = ", ".join(
            f"{n} {words[level]}{'s' if n != 1 else ''}" for level, n in hidden.items() if n
        )
        lines.append(
            f"::notice title={TOOL}::{sum(hidden.values())} more findings not annotated "
            f"({counts}): GitHub shows {ANNOTATION_LIMITS[ERROR]} annotations of each kind "
            "per step. The job summary lists every finding"
        )
    return lines
