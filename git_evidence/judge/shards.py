"""A judgement spread over a CI matrix: ``judge --shard I/N`` runs one shard of the
(property, seed) pairs and writes a partial record; ``judge --merge PART…`` combines
the partial records of every shard into the one ``Verdict``. The CI system is the
distributed engine; nothing here schedules anything. Pure: properties and record
documents in, properties, the ``shard`` field and the merged ``Verdict`` out.

* **The split.** The pairs in the judgement's order (the properties as the policy lists
  them, each one's seeds in order), dealt round-robin: pair ``k`` (from 0) goes to
  shard ``k mod N + 1``, so a slow property is spread over the shards. A shard with no
  pair still makes the evidence checks and records them.
* **A partial record** is a verdict record of its shard's runs with a ``shard`` field:
  index, count, its pairs, how many pairs there are in all, and the digest of the
  properties as the whole judgement defines them (commands, seeds, repeats, fixtures).
  It is not a verdict: it is never noted.
* **The merge** refuses a part that is no partial record (no ``shard`` field, or not
  the facts a record states), a part of another judgement (base, candidate, its tree,
  pin, policy, tool, shard count or properties differ: it names the file and the
  field), two parts of one shard, a missing shard, and a part whose pairs are not its
  shard's. Each (property, seed) ran in exactly one shard, so
  the runs, the counterexamples, the misses and the flakes of the parts together are
  those of one unsharded judgement, in its order; the class is computed from them by
  the same table (``classes.classify``), and the scorecard's votes from the parts'.

Over 300 lines on purpose: one split and the merge that undoes it."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from git_evidence.core.errors import UsageError
from git_evidence.core.records import canonical_json, digest, no_duplicate_keys
from git_evidence.judge import scorecard
from git_evidence.judge.classes import (
    FIXTURE_BREACH,
    FLAKE_CANDIDATE,
    HELD,
    ORACLE_REWRITE,
    PATCH_INVALID,
    PROPERTY_FAIL,
    UNDECIDED,
    Failing,
    Flake,
    Signals,
    classify,
)
from git_evidence.judge.text import Explanation, explain
from git_evidence.judge.verdict import Facts, Verdict
from git_evidence.policy.properties import JudgeProperty

Pair = tuple[str, int]
PRE_RUN = (PATCH_INVALID, ORACLE_REWRITE, FIXTURE_BREACH, HELD)
# What the parts of one judgement share; pin and policy are compared by digest.
SAME = ("base", "candidate", "candidate_tree", "pin", "policy", "tool")
SHARD_SAME = ("count", "of", "properties")
# What a part must state for the merged record to state it too.
STATED = {
    "base": str,
    "candidate": str,
    "started_at": str,
    "policy": Mapping,
    "runner": Mapping,
    "tool": Mapping,
    "evidence": Mapping,
}


def pairs_of(props: Sequence[JudgeProperty]) -> list[Pair]:
    return [(prop.id, seed) for prop in props for seed in prop.seeds]


def dealt(pairs: Sequence[Pair], index: int, count: int) -> list[Pair]:
    """Shard ``index`` (1…count) of ``pairs``: every ``count``-th from ``index - 1``."""
    return list(pairs[index - 1 :: count])


def select(
    props: Sequence[JudgeProperty], index: int, count: int
) -> tuple[tuple[JudgeProperty, ...], dict[str, Any]]:
    """The properties with only this shard's seeds (those left with none dropped), and
    the record's ``shard`` field."""
    pairs = pairs_of(props)
    mine = dealt(pairs, index, count)
    chosen = set(mine)
    kept = []
    for prop in props:
        seeds = tuple(s for s in prop.seeds if (prop.id, s) in chosen)
        if seeds:
            kept.append(prop._replace(seeds=seeds))
    field = {
        "index": index,
        "count": count,
        "of": len(pairs),
        "pairs": [[p, s] for p, s in mine],
        "properties": digest(canonical_json([p.as_dict() for p in props])),
    }
    return tuple(kept), field


def load(path: str) -> dict[str, Any]:
    """A partial record from a file (``--out``, or ``--format json`` output)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise UsageError(f"cannot read the part {path}: {exc.strerror}") from None
    try:
        doc = json.loads(data, object_pairs_hook=no_duplicate_keys)
    except ValueError as exc:
        raise UsageError(f"{path}: not a verdict record: {exc}") from None
    if not isinstance(doc, dict):
        raise UsageError(f"{path}: not a verdict record (not a JSON object)")
    return doc


def merge(parts: Sequence[tuple[str, Mapping[str, Any]]]) -> Verdict:
    """The verdict of the judgement the named partial records are the shards of."""
    ordered = _checked(parts)
    names = [name for name, _ in ordered]
    docs = [doc for _, doc in ordered]
    first = docs[0]
    count = int(first["shard"]["count"])
    total = int(first["shard"]["of"])
    full = [tuple(docs[k % count]["shard"]["pairs"][k // count]) for k in range(total)]
    rank = {(str(p), int(s)): k for k, (p, s) in enumerate(full)}
    props = _properties(docs, rank)
    by_id = {p["id"]: _property(p) for p in props}
    held = [d["pythonpath"] for d in docs if isinstance(d.get("pythonpath"), list)]
    facts = Facts.from_json(first)._replace(
        shard=None,
        started_at=min(str(d.get("started_at", "")) for d in docs),
        pythonpath=tuple(held[0]) if held else None,  # a shard that ran nothing held no run
    )
    undecided = [(n, d) for n, d in ordered if d.get("class") == UNDECIDED]
    signals = _signals(docs, rank)
    klass = UNDECIDED if undecided else classify(signals)
    runs = sum(len(r["codes"]) for p in props for r in p["runs"])
    after = {d["path"]: d for doc in docs for d in (doc.get("drift") or {}).get("after", ())}
    if undecided:
        name, doc = undecided[0]
        why = Explanation(f"{name}: {doc.get('reason')}", (), str(doc.get("next", "")))
    elif klass in PRE_RUN:
        doc = next(d for d in docs if d.get("class") == klass)
        why = Explanation(
            str(doc["reason"]), tuple(doc.get("details", ())), str(doc.get("next", ""))
        )
    else:
        why = explain(
            klass,
            signals,
            base=str(facts.base),
            props=by_id,
            during_run=bool(after),
            runs=runs,
            pythonpath=[str(p) for p in facts.pythonpath or ()],
        )
    fresh = [f for f in signals.flakes if f.freeze is None]
    verdict = Verdict.decided(
        klass,
        why,
        facts,
        signals,
        evidence=first["evidence"],
        drift={
            "before": (first.get("drift") or {}).get("before", []),
            "after": list(after.values()),
        },
        properties=tuple(props),
        # printed only when the base flakes too: the part that re-ran it says so
        freeze_line=next((d["freeze_line"] for d in docs if d.get("freeze_line")), None)
        if klass == FLAKE_CANDIDATE and fresh and all(f.on_base for f in fresh)
        else None,
        tests=_tests(docs),
        duration_s=max(float(d.get("duration_s", 0)) for d in docs),
        dropped=_dropped(docs),
        shards={
            "count": count,
            "parts": [
                {
                    "index": d["shard"]["index"],
                    "file": name,
                    "digest": digest(canonical_json(d)),
                    "class": d.get("class"),
                    "pairs": len(d["shard"]["pairs"]),
                    "duration_s": d.get("duration_s"),
                    "runner": d.get("runner"),
                }
                for name, d in zip(names, docs, strict=True)
            ],
        },
    )
    cards = [(d["scorecard"], bool(d["shard"]["pairs"])) for d in docs if d.get("scorecard")]
    if cards:
        return verdict.scored(scorecard.merged(cards), quota_hint=False)
    return verdict


def _dropped(docs: Sequence[Mapping[str, Any]]) -> dict[str, int] | None:
    """What the runs of every part wrote that the records did not take, added up;
    None when no part ran anything."""
    found = [d["dropped"] for d in docs if d.get("dropped") is not None]
    if not found:
        return None
    keys = dict.fromkeys(k for counts in found for k in counts)
    return {k: sum(int(counts.get(k, 0)) for counts in found) for k in keys}


def _checked(parts: Sequence[tuple[str, Mapping[str, Any]]]) -> list[tuple[str, Mapping[str, Any]]]:
    """The parts in shard order, each checked against the first and its split."""
    if not parts:
        raise UsageError("--merge takes the partial records of every shard")
    for name, doc in parts:
        shard = doc.get("shard")
        if not isinstance(shard, Mapping) or not all(
            k in shard for k in ("index", "count", "of", "pairs", "properties")
        ):
            raise UsageError(
                f"{name}: not a partial record (no shard field): write each part with "
                "`git evidence judge --shard I/N --out PART`"
            )
        for key, kind in STATED.items():
            if not isinstance(doc.get(key), kind):
                raise UsageError(
                    f"{name}: not a partial record: it states no {key!r}",
                    fix="write each part with `git evidence judge --shard I/N --out PART`",
                )
        counts = doc.get("dropped")
        if counts is not None and not (
            isinstance(counts, Mapping) and all(type(n) is int and n >= 0 for n in counts.values())
        ):
            raise UsageError(
                f"{name}: not a partial record: its 'dropped' is not counts",
                fix="write each part with `git evidence judge --shard I/N --out PART`",
            )
    first_name, first = parts[0]
    for name, doc in parts[1:]:
        for key in SAME:
            if _same(doc.get(key), key) != _same(first.get(key), key):
                raise UsageError(
                    f"{name}: a part of another judgement: its {key} is "
                    f"{_same(doc.get(key), key)!r}, not {_same(first.get(key), key)!r} as in "
                    f"{first_name}",
                    fix="merge the parts of one judgement only: same base, candidate, pin, "
                    "policy and --shard I/N",
                )
        for key in SHARD_SAME:
            if doc["shard"][key] != first["shard"][key]:
                raise UsageError(
                    f"{name}: a part of another judgement: its shard {key} is "
                    f"{doc['shard'][key]!r}, not {first['shard'][key]!r} as in {first_name}",
                    fix="merge the parts of one judgement only: same properties and shard count",
                )
    count = int(first["shard"]["count"])
    seen: dict[int, str] = {}
    for name, doc in parts:
        index = int(doc["shard"]["index"])
        if index in seen:
            raise UsageError(f"{seen[index]} and {name}: both are shard {index} of {count}")
        seen[index] = name
    missing = [i for i in range(1, count + 1) if i not in seen]
    if missing:
        listed = ", ".join(f"{i}/{count}" for i in missing)
        raise UsageError(
            f"shard {listed} missing: {len(seen)} of {count} parts given",
            fix="give the part of every shard (judge --shard I/N --out PART)",
        )
    total = int(first["shard"]["of"])
    by_index = {int(doc["shard"]["index"]): (name, doc) for name, doc in parts}
    for index, (name, doc) in sorted(by_index.items()):
        if len(doc["shard"]["pairs"]) != len(range(index - 1, total, count)):
            raise UsageError(f"{name}: its pairs are not those of shard {index}/{count}")
    return [by_index[i] for i in range(1, count + 1)]


def _same(value: Any, key: str) -> Any:
    if key in ("pin", "policy") and isinstance(value, Mapping):
        return value.get("digest")
    return value


def _properties(
    docs: Sequence[Mapping[str, Any]], rank: Mapping[Pair, int]
) -> list[dict[str, Any]]:
    """Each property once, in the judgement's order, with every shard's runs and fixture
    runs in the order one judgement makes them."""
    found: dict[str, dict[str, Any]] = {}
    for doc in docs:
        for prop in doc.get("properties") or ():
            entry = found.setdefault(prop["id"], {**prop, "seeds": [], "runs": [], "fixtures": []})
            entry["seeds"] += prop["seeds"]
            entry["runs"] += prop["runs"]
            entry["fixtures"] += prop["fixtures"]
    out = []
    for prop in sorted(found.values(), key=lambda p: min(rank[(p["id"], s)] for s in p["seeds"])):
        order = {s: rank[(prop["id"], s)] for s in prop["seeds"]}
        prop["seeds"] = sorted(prop["seeds"], key=order.__getitem__)
        prop["runs"] = sorted(prop["runs"], key=lambda r: order[r["seed"]])
        kinds = {"must_fail": prop.get("must_fail", []), "must_pass": prop.get("must_pass", [])}
        prop["fixtures"] = sorted(
            prop["fixtures"],
            key=lambda f: (
                list(kinds).index(f["kind"]),
                kinds[f["kind"]].index(f["path"]) if f["path"] in kinds[f["kind"]] else 0,
                order.get(f["seed"], 0),
            ),
        )
        out.append(prop)
    return out


def _property(doc: Mapping[str, Any]) -> JudgeProperty:
    return JudgeProperty(
        str(doc["id"]),
        tuple(doc["command"]),
        tuple(doc["seeds"]),
        int(doc["repeat"]),
        float(doc["timeout_s"]),
        int(doc.get("min_hits", 0)),
        tuple(doc.get("must_fail", ())),
        tuple(doc.get("must_pass", ())),
        bool(doc.get("junit", False)),
        str(doc.get("source", "policy")),
    )


def _signals(docs: Sequence[Mapping[str, Any]], rank: Mapping[Pair, int]) -> Signals:
    """The signals of the whole judgement, from its parts': each seed ran in one shard."""
    pre: dict[str, list[str]] = {k: [] for k in PRE_RUN}
    misses: list[str] = []
    cases: list[Pair] = []
    flakes: list[Flake] = []
    unexplained: list[str] = []
    failing: list[Failing] = []
    for doc in docs:
        klass = doc.get("class")
        index = doc["shard"]["index"]
        if klass in pre:
            pre[str(klass)] += [str(x) for x in doc.get("details") or ()] or [
                str(doc.get("reason"))
            ]
        misses += [str(m) for m in doc.get("misses") or ()]
        cases += [(str(c["property"]), int(c["seed"])) for c in doc.get("counterexamples") or ()]
        failing += [
            Failing(
                str(f["property"]),
                int(f["seed"]),
                tuple(map(str, f["tests"])),
                tuple(f["codes"]),
                None if f.get("junit") is None else str(f["junit"]),
            )
            for f in doc.get("failing") or ()
        ]
        part_flakes = [
            Flake(
                f["property"],
                f["test_id"],
                int(f["seed"]),
                f["fingerprint"],
                f["freeze"],
                f.get("on_base"),
            )
            for f in doc.get("flaky") or ()
        ]
        flakes += part_flakes
        # A failure no seed and no freeze explains is not in the record as such: the
        # part's class says it (a flake candidate whose flakes are all frozen, a
        # property failure with no counterexample).
        quiet = not doc.get("misses") and not doc.get("counterexamples")
        frozen = bool(part_flakes) and all(f.freeze is not None for f in part_flakes)
        if quiet and (
            (klass == FLAKE_CANDIDATE and frozen) or (klass == PROPERTY_FAIL and not part_flakes)
        ):
            unexplained.append(f"shard {index}: {doc.get('reason')}")
    return Signals(
        patch_invalid=bool(pre[PATCH_INVALID]),
        oracle_rewrite=tuple(pre[ORACLE_REWRITE]),
        fixture_breach=tuple(pre[FIXTURE_BREACH]),
        held=tuple(pre[HELD]),
        misses=tuple(misses),
        counterexamples=tuple(sorted(cases, key=lambda c: rank.get(c, 0))),
        flakes=tuple(sorted(flakes, key=lambda f: rank.get((f.property, f.seed), 0))),
        unexplained=tuple(unexplained),
        failing=tuple(sorted(failing, key=lambda f: rank.get((f.property, f.seed), 0))),
    )


def _tests(
    docs: Sequence[Mapping[str, Any]],
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """passed / failed / warned tests of the whole: what one judgement would list."""
    warned = {t for d in docs for t in d.get("warned_tests") or ()}
    failed = {t for d in docs for t in d.get("failed_tests") or ()} - warned
    passed = {t for d in docs for t in d.get("passed_tests") or ()} - failed - warned
    return tuple(sorted(passed)), tuple(sorted(failed)), tuple(sorted(warned))
