"""What a forge reads of a judgement: SARIF 2.1.0 (code scanning), GitHub workflow
commands (annotations on the paths) and GitLab Code Quality JSON, rendered from the
documents the JSON output writes (``report.to_doc`` for ``check`` and ``ci``, the
verdict record for ``judge``). Pure: documents in, text and data out.

Both kinds of document are first flattened to ``Item``s, one per finding: its rule, a
level (``error`` for a reject, ``warning`` for a hold, ``note`` for a finding that does
not block), one line of message, the fix, and the paths it is about. A finding about no
path (a ref, a run of a property) is located at the policy file, whose rules made it:
Code Quality needs a path for every issue, and code scanning shows results on files.

Over 300 lines on purpose: one flattening of both documents, and the three formats
that read it."""

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
SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
ERROR, WARNING, NOTE = "error", "warning", "note"
# Code Quality's scale is info, minor, major, critical, blocker: a reject blocks the
# merge, a hold waits for a person.
SEVERITY = {ERROR: "blocker", WARNING: "major", NOTE: "info"}
MAX_ANNOTATIONS = 50  # workflow commands printed per run; the summary lists the rest


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


# -- documents → items ------------------------------------------------------------------


def check_items(doc: Mapping[str, Any]) -> list[Item]:
    """The findings of a ``check`` (or ``ci``) document, every update's, then its error."""
    items = []
    for update in doc.get("updates", ()):
        for finding in update.get("findings", ()):
            items.append(_finding_item(finding, update.get("ref")))
    if doc.get("error"):
        items.append(_finding_item(doc["error"], None))
    return items


def _finding_item(finding: Mapping[str, Any], ref: str | None) -> Item:
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
    return Item(
        str(finding["rule"]),
        level,
        message,
        str(finding.get("hint") or ""),
        paths,
        key,
        commit,
        ref,
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

    def add(message: str, key: str, paths: tuple[tuple[str, str], ...] = ()) -> None:
        items.append(Item(klass, level, message, hint, paths, key))

    seen: set[str] = set()
    if klass == FIXTURE_BREACH:
        drift = record.get("drift") or {}
        for when in ("before", "after"):
            for moved in drift.get(when) or ():
                path = str(moved.get("path"))
                if path not in seen:
                    seen.add(path)
                    message = f"{klass}: {path} {moved.get('kind')} ({when} the runs): {reason}"
                    add(message, when, (("fixture", path),))
    by_class = (record.get("evidence") or {}).get("paths") or {}
    for name in VERDICT_PATH_CLASSES.get(klass, ()):
        for path in map(str, by_class.get(name, ())):
            if path not in seen:
                seen.add(path)
                add(f"{klass}: {path} ({name}): {reason}", "", ((name, path),))
    if klass in (PROPERTY_MISS, PROPERTY_FAIL):
        for prop in record.get("properties") or ():
            for fixture in prop.get("fixtures") or ():
                if not fixture.get("ok", True):
                    path, kind = str(fixture["path"]), str(fixture["kind"]).replace("_", "-")
                    key = f"{prop['id']}\0{kind}\0{fixture['seed']}"
                    message = f"{prop['id']}: {kind} fixture {path} (seed {fixture['seed']})"
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


# -- SARIF -------------------------------------------------------------------------------


def sarif(
    items: Sequence[Item],
    *,
    version: str,
    succeeded: bool,
    exit_code: int,
    properties: Mapping[str, Any],
    help_for: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one run: one result per item, the rules it names (with their
    fix) in ``tool.driver.rules``. ``help_for``: a rule's fix where the rule table has
    none (the judge's classes)."""
    rules: dict[str, dict[str, Any]] = {}
    results = []
    for item in items:
        if item.rule not in rules:
            rules[item.rule] = _rule(item, (help_for or {}).get(item.rule))
        index = list(rules).index(item.rule)
        result: dict[str, Any] = {
            "ruleId": item.rule,
            "ruleIndex": index,
            "level": item.level,
            "message": {"text": _sentence(item)},
            "locations": [_location(path) for _, path in item.paths] or [_location(POLICY_FILE)],
            "partialFingerprints": {"gitEvidence/v1": fingerprint(item)},
        }
        extra: dict[str, Any] = {}
        if item.paths:
            extra["classes"] = sorted({k for k, _ in item.paths})
        if item.commit:
            extra["commit"] = item.commit
        if item.ref:
            extra["ref"] = item.ref
        if extra:
            result["properties"] = extra
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL,
                        "version": version,
                        "rules": list(rules.values()),
                    }
                },
                "invocations": [{"executionSuccessful": succeeded, "exitCode": exit_code}],
                "results": results,
                "properties": dict(properties),
            }
        ],
    }


def _rule(item: Item, help_text: str | None) -> dict[str, Any]:
    fix = help_text or generic_hint(item.rule) or item.hint or "see `git evidence rules`"
    return {
        "id": item.rule,
        "name": item.rule.replace("-", "_"),
        "shortDescription": {"text": f"git evidence rule {item.rule}"},
        "help": {"text": fix},
        "defaultConfiguration": {"level": item.level},
    }


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


# What a URI reference keeps as it is (RFC 3986's unreserved characters, and the slash):
# every other byte of the UTF-8 path is percent-encoded.
_URI_KEEP = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")


def uri_reference(path: str) -> str:
    data = path.encode("utf-8", "surrogateescape")
    return "".join(chr(b) if b in _URI_KEEP else f"%{b:02X}" for b in data)


def _location(path: str) -> dict[str, Any]:
    return {"physicalLocation": {"artifactLocation": {"uri": uri_reference(path)}}}


def _sentence(item: Item) -> str:
    return f"{item.message}. To fix: {item.hint}" if item.hint else item.message


def fingerprint(item: Item, path: str = "") -> str:
    """Stable across runs of the same finding: the rule, what it is about and the path,
    never a time or the order of the output (a rebased branch keeps its fingerprints
    when the finding stays)."""
    parts = (item.rule, item.key, path or ",".join(p for _, p in item.paths))
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()[:32]


# -- GitLab Code Quality -------------------------------------------------------------------


def codequality(items: Iterable[Item]) -> list[dict[str, Any]]:
    """One Code Quality issue per item and path: description, check_name, fingerprint,
    severity, location.path and location.lines.begin (the whole file: line 1)."""
    issues = []
    for item in items:
        for klass, path in item.paths or (("policy", POLICY_FILE),):
            issues.append(
                {
                    "description": f"{_sentence(item)} ({klass}: {path})",
                    "check_name": item.rule,
                    "fingerprint": fingerprint(item, path),
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


def workflow_commands(items: Sequence[Item], limit: int = MAX_ANNOTATIONS) -> list[str]:
    """``::error file=PATH,title=RULE::message`` (``::warning`` for a hold, ``::notice``
    for what does not block), one per item and path, at most ``limit`` of them."""
    lines: list[str] = []
    total = 0
    for item in items:
        command = {ERROR: "error", WARNING: "warning", NOTE: "notice"}[item.level]
        text = escape_data(_sentence(item))
        for _, path in item.paths or (("", ""),):
            total += 1
            if len(lines) >= limit:
                continue
            where = f"file={escape_property(path)}," if path else ""
            lines.append(f"::{command} {where}title={escape_property(item.rule)}::{text}")
    if total > len(lines):
        lines.append(
            f"::warning title={TOOL}::{total - len(lines)} more annotations not shown: "
            "the job summary and --format json list them all"
        )
    return lines
