"""SARIF 2.1.0 for GitHub code scanning (and any SARIF reader), from the forge
``Item``s (formats.py). Pure: items in, the log as data out.

What code scanning asks of a log, and how this one meets it:

* **One result per item and path**, located at that path (a path of the tree,
  URI-encoded, relative to the repository root) with a ``region`` (line 1: a finding is
  about the whole file); a finding on no path is located at the policy file. So no
  result carries more than one location (code scanning reads at most 1,000).
* **Every rule described**: ``shortDescription``, ``fullDescription`` (rule_texts.py),
  ``help`` (the fix, as text and Markdown) and ``helpUri`` (its documentation page).
* **A category per tool**: ``automationDetails.id`` is ``git-evidence/fence/`` for a
  judgement of commits (``check``, ``ci``) and ``git-evidence/judge/`` for a judge's
  verdict, so that both can be uploaded for one commit without one replacing the other.
* **Stable ``partialFingerprints``**: the rule, what the finding is about and the path
  (formats.fingerprint), so an alert survives a rebase that keeps it.
* At most ``MAX_RESULTS`` results (code scanning's limit per run): past it the run's
  ``toolExecutionNotifications`` says how many were left out."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final
from urllib.parse import quote

from git_evidence.forge.formats import (
    TOOL,
    Item,
    fingerprint,
    generic_hint,
    located,
    ordered,
    places,
    sentence,
)
from git_evidence.forge.rule_texts import HOME, description, help_uri
from git_evidence.policy.schema import POLICY_FILE

SARIF_VERSION: Final = "2.1.0"
SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"
FENCE: Final = "git-evidence/fence/"
JUDGE: Final = "git-evidence/judge/"
MAX_RESULTS = 25_000
FINGERPRINT = "gitEvidence/v1"


def uri_reference(path: str) -> str:
    """The path as a relative URI reference: RFC 3986's unreserved characters and the
    slash kept, every other byte of the UTF-8 path percent-encoded."""
    return quote(path.encode("utf-8", "surrogateescape"), safe="/")


def sarif(
    items: Sequence[Item],
    *,
    version: str,
    category: str,
    succeeded: bool,
    exit_code: int,
    properties: Mapping[str, Any],
    help_for: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A SARIF 2.1.0 log of one run. ``category``: FENCE or JUDGE. ``help_for``: a
    rule's fix where the rule table has none (the judge's classes)."""
    rules: dict[str, dict[str, Any]] = {}
    results: list[dict[str, Any]] = []
    left_out = 0
    for item in ordered(items):
        if item.rule not in rules:
            rules[item.rule] = _rule(item, (help_for or {}).get(item.rule))
        index = list(rules).index(item.rule)
        classes: dict[str, set[str]] = {}
        for klass, path in item.paths:
            classes.setdefault(path, set()).add(klass)
        for place in places(item):
            if len(results) >= MAX_RESULTS:
                left_out += 1
                continue
            found = sorted(classes.get(place.path, ()))
            results.append(_result(item, index, place.path, located(item, place), found))
    invocation: dict[str, Any] = {"executionSuccessful": succeeded, "exitCode": exit_code}
    if left_out:
        invocation["toolExecutionNotifications"] = [
            {
                "level": "warning",
                "message": {
                    "text": f"{left_out} more results left out: code scanning reads at "
                    f"most {MAX_RESULTS} per run; `--format json` lists every finding"
                },
            }
        ]
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL,
                        "version": version,
                        "semanticVersion": version,
                        "informationUri": HOME,
                        "rules": list(rules.values()),
                    }
                },
                "automationDetails": {"id": category},
                "invocations": [invocation],
                "results": results,
                "properties": dict(properties),
            }
        ],
    }


def _result(item: Item, index: int, path: str, text: str, classes: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": item.rule,
        "ruleIndex": index,
        "level": item.level,
        "message": {"text": sentence(text, item.hint)},
        "locations": [_location(path or POLICY_FILE)],
        "partialFingerprints": {FINGERPRINT: fingerprint(item, path)},
    }
    extra: dict[str, Any] = {}
    if classes:
        extra["classes"] = classes
    if item.commit:
        extra["commit"] = item.commit
    if item.ref:
        extra["ref"] = item.ref
    if extra:
        result["properties"] = extra
    return result


def _rule(item: Item, help_text: str | None) -> dict[str, Any]:
    fix = help_text or generic_hint(item.rule) or item.hint or "see `git evidence rules`"
    uri = help_uri(item.rule)
    return {
        "id": item.rule,
        "name": "".join(word.capitalize() for word in item.rule.replace("_", "-").split("-")),
        "shortDescription": {"text": f"git evidence: {item.rule}"},
        "fullDescription": {"text": description(item.rule)},
        "help": {"text": fix, "markdown": f"**To fix:** {fix}\n\n[The rules]({uri})"},
        "helpUri": uri,
        "defaultConfiguration": {"level": item.level},
    }


def _location(path: str) -> dict[str, Any]:
    return {
        "physicalLocation": {
            "artifactLocation": {"uri": uri_reference(path)},
            "region": {"startLine": 1},
        }
    }
