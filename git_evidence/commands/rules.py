"""``git evidence rules``: every rule id, its decision and how to fix it.

The hints carry fields the finding fills in (``{commit}``, ``{base}``…); here each is
shown by a name (``COMMIT``, ``BASE``…) explained once below, or filled with the words
it always stands for (``rules.FIELDS``)."""

from __future__ import annotations

import argparse
import json
import string

from git_evidence.core.errors import (
    ERROR,
    ERROR_RULES,
    INTERNAL_ERROR,
    INTERNAL_HINT,
    USAGE_HINT,
    UsageError,
)
from git_evidence.policy.schema import Policy
from git_evidence.rules.table import FIELDS, RULES


def table() -> list[dict[str, str]]:
    """One row per rule: rule, decision (as said to people), hint with ``<field>``s."""
    rows = []
    defaults = Policy()
    for rule, (decision, hint) in RULES.items():
        if rule in ERROR_RULES:
            said = f"{ERROR}, exit 2"
        elif decision is None:  # other-path, added-test, test-edit: the policy decides
            key = rule.replace("-", "_")
            said = f"per [rules].{key}, default {getattr(defaults, key, 'hold')}"
        else:
            said = decision
        rows.append({"rule": rule, "decision": said, "hint": _shown(hint)})
    # The errors of the command line itself, outside the rule table (a hook that fails on
    # them reports them as a finding of their own).
    for error, hint in ((UsageError.rule, USAGE_HINT), (INTERNAL_ERROR, INTERNAL_HINT)):
        if error not in RULES:
            rows.append({"rule": error, "decision": f"{ERROR}, exit 2", "hint": hint})
    return rows


def hint_for(rule: str) -> str:
    """The fix a rule's table row gives, its fields shown as ``<field>``."""
    return _shown(_raw_hint(rule))


def fields_of(rows: list[dict[str, str]]) -> dict[str, str]:
    """Each name a shown hint uses → what it stands for."""
    used = {name for row in rows for name in _fields(_raw_hint(row["rule"]))}
    return {
        FIELDS[name][0]: FIELDS[name][1]
        for name in sorted(used)
        if name in FIELDS and FIELDS[name][1]
    }


def run(args: argparse.Namespace) -> int:
    rows = table()
    legend = fields_of(rows)
    if args.format == "json":
        print(json.dumps({"rules": rows, "fields": legend}, indent=1))
        return 0
    for row in rows:
        print(f"{row['rule']} ({row['decision']}): {row['hint']}")
    print("\nIn the hints:")
    for name, meaning in legend.items():
        print(f"  {name}: {meaning}")
    return 0


def _raw_hint(rule: str) -> str:
    return RULES[rule][1] if rule in RULES else ""


def _fields(hint: str) -> list[str]:
    return [name for _, name, _, _ in string.Formatter().parse(hint) if name]


def _shown(hint: str) -> str:
    return hint.format_map(
        {name: FIELDS.get(name, (name.upper(), ""))[0] for name in _fields(hint)}
    )
