"""The policy as TOML that parses back to the same policy (``git evidence policy``):
every key with its value in force, defaults included, ``[[judge.property]]`` tables
for the judge's properties. Pure: a ``Policy`` in, text out."""

from __future__ import annotations

import json
from typing import Any

from git_evidence.policy.properties import JudgeProperty
from git_evidence.policy.schema import BUILTIN_POLICY_GLOBS, Policy


def value(item: Any) -> str:
    """A TOML value: strings, numbers, booleans and lists of them are written as JSON
    writes them, which TOML reads the same way (non-ASCII kept as it is: TOML has no
    escape for half of a surrogate pair)."""
    return json.dumps(item, ensure_ascii=False)


def policy_toml(policy: Policy) -> str:
    """``policy`` as a policy file: pasted into ``.git-evidence.toml`` (or given with
    ``--policy``), it is the same policy, with the same digest."""
    builtin = ", ".join(BUILTIN_POLICY_GLOBS)
    lines = [
        "[paths]",
        f"# always added to policy: {builtin}, /{policy.labels_path}",
        f"# always added to freeze_ledger: /{policy.ledger_path}, /{policy.quota_path}",
    ]
    lines += [f"{klass} = {value(list(globs))}" for klass, globs in policy.paths.items()]
    rules = {
        "other_path": policy.other_path,
        "added_test": policy.added_test,
        "test_edit": policy.test_edit,
        "protected": list(policy.protected),
        "base": policy.base,
        "allow_namespaces": list(policy.allow_namespaces),
        "time_budget_s": policy.time_budget_s,
        "proposals": policy.proposals,
    }
    identities: dict[str, Any] = {
        "evidence_writers": sorted(policy.evidence_writers),
        "ledger_writers": sorted(policy.ledger_writers),
        "lock_writers": sorted(policy.lock_writers),
    }
    if policy.reviewers is not None:
        identities["reviewers"] = sorted(policy.reviewers)
    if policy.verdict_writers is not None:
        identities["verdict_writers"] = sorted(policy.verdict_writers)
    lock = {
        "roots": list(policy.lock_roots),
        "exclude": list(policy.lock_exclude),
        "notes_ref": policy.notes_ref,
        "required": policy.lock_required,
    }
    ledger = {"path": policy.ledger_path, "max_window_hours": policy.max_window_hours}
    judge = policy.judge
    judge_table = {
        "notes_ref": judge.notes_ref,
        "repeat": judge.repeat,
        "seeds": judge.seeds,
        "timeout_s": judge.timeout_s,
    }
    labels = {
        "path": policy.labels_path,
        "quota_path": policy.quota_path,
        "retries": policy.retries,
    }
    for name, table in (
        ("rules", rules),
        ("identities", identities),
        ("lock", lock),
        ("ledger", ledger),
        ("labels", labels),
        ("judge", judge_table),
    ):
        lines += ["", f"[{name}]", *(f"{key} = {value(v)}" for key, v in table.items())]
        if name == "identities":
            if policy.reviewers is None:
                lines.append("# reviewers: the evidence writers (unless listed)")
            if policy.verdict_writers is None:
                lines.append("# verdict_writers: the lock writers (unless listed)")
    for prop in judge.properties:
        lines += ["", "[[judge.property]]", *_property_lines(prop)]
    return "\n".join(lines) + "\n"


def _property_lines(prop: JudgeProperty) -> list[str]:
    seeds = list(prop.seeds)
    if seeds == list(range(seeds[0], seeds[0] + len(seeds))):
        seed_keys: dict[str, Any] = {"seed": seeds[0], "seeds": len(seeds)}
    else:
        seed_keys = {"seed_list": seeds}
    table: dict[str, Any] = {
        "id": prop.id,
        "command": list(prop.command),
        **seed_keys,
        "repeat": prop.repeat,
        "timeout_s": prop.timeout_s,
        "min_hits": prop.min_hits,
        "must_fail": list(prop.must_fail),
        "must_pass": list(prop.must_pass),
        "junit": prop.junit,
    }
    return [f"{key} = {value(v)}" for key, v in table.items()]
