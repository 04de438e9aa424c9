"""The verdict record: the module that builds a judgement's ``Verdict`` (from typed
facts and findings: the record's parts made from the runs, the scorecard), and that
reads stored records back (``parse``: ``show-verdict``) and checks them (``problems``:
what is wrong with a pushed verdict note, for the gate). A stored record is read as
the document it is, not as a ``Verdict``: a valid note need state only the fields
``REQUIRED`` lists. Pure; the ``Verdict`` and its JSON are ``verdict.py``'s,
publishing it (``--out``, ``--log``, ``--note``) ``publish.py``'s, its words
``text.py``'s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from git_evidence.core.errors import EvidenceError
from git_evidence.core.records import RecordError, parse_canonical
from git_evidence.judge import scorecard
from git_evidence.judge.classes import EXIT, FLAKE_CANDIDATE, UNDECIDED, Signals
from git_evidence.judge.text import Explanation, freeze_line
from git_evidence.judge.verdict import KIND as KIND  # named here for the record's readers
from git_evidence.judge.verdict import SCHEMA as SCHEMA
from git_evidence.judge.verdict import Facts as Facts
from git_evidence.judge.verdict import Verdict, exit_and_result

if TYPE_CHECKING:  # data types only
    from git_evidence.judge.scorecard import Sealed
    from git_evidence.judge.signals import PropertyRuns
    from git_evidence.sandbox.runner import Run


class Found(NamedTuple):
    """What a judgement found: its class, why, and what that rests on."""

    klass: str
    why: Explanation
    signals: Signals = Signals()
    results: Sequence[PropertyRuns] = ()
    evidence: Mapping[str, Any] | None = None  # the changes by class; None: not read
    drift: Mapping[str, Any] | None = None  # None: no workspace was compared to the pin
    freeze_writer: str | None = None  # the writer a freeze line names


def build(facts: Facts, found: Found, duration_s: float, sealed: Sealed | None) -> Verdict:
    """The verdict of one judgement (with the scorecard when labels exist)."""
    klass, why, signals, results = found.klass, found.why, found.signals, found.results
    props = {r.prop.id: r.prop for r in results}
    fresh = [f for f in signals.flakes if f.freeze is None]
    line = (
        freeze_line(props[fresh[0].property], fresh[0], found.freeze_writer)
        if klass == FLAKE_CANDIDATE
        and fresh
        and fresh[0].property in props
        and all(f.on_base for f in fresh)
        else None
    )
    verdict = Verdict.decided(
        klass,
        why,
        facts,
        signals,
        evidence=dict(found.evidence) if found.evidence is not None else {"paths": {}},
        drift=dict(found.drift) if found.drift is not None else {"before": [], "after": []},
        properties=tuple(property_json(r) for r in results),
        freeze_line=line,
        tests=test_lists(results, signals),
        duration_s=round(duration_s, 3),
        dropped=dropped_json(facts, results) if results else None,
    )
    if sealed is None:
        return verdict
    compared = found.drift is not None
    checked = ("before", "after") if results else ("before",) if compared else ()
    pin = (facts.pin or {}).get("digest")
    judged = scorecard.judged(klass, signals, results, checked, pin)
    return verdict.scored(scorecard.build(sealed, judged), quota_hint=True)


def undecided(
    facts: Facts, exc: EvidenceError, duration_s: float, sealed: Sealed | None
) -> Verdict:
    """The verdict of a judgement that could not decide (exit 2), with what it had
    learnt."""
    why = Explanation(f"could not decide: {exc.message}", (), exc.fix or "fix it and judge again.")
    return build(facts, Found(UNDECIDED, why), duration_s, sealed)


# -- the record's parts ----------------------------------------------------------------


def property_json(result: PropertyRuns) -> dict[str, Any]:
    prop = result.prop
    return {
        **prop.as_dict(),
        "runs": [
            {
                "seed": seed,
                "codes": [r.code for r in runs],
                "outcomes": [r.outcome_digest for r in runs],
                "outputs": [r.output for r in runs],
                "durations_s": [r.duration_s for r in runs],
                "hits": [declared_hits(prop.id, r)[0] for r in runs],
                "failed": [r.failed for r in runs],
                "run_output": run_output(runs),
            }
            for seed, runs in result.seeds.items()
        ],
        "fixtures": [
            {
                "kind": f.kind,
                "path": f.path,
                "seed": f.seed,
                "code": None if f.run is None else f.run.code,
                "ok": f.ok,
            }
            for f in result.fixtures
        ],
    }


MAX_HIT_IDS = 100  # hit ids a run's record lists


def declared_hits(prop_id: str, run: Run) -> tuple[dict[str, int], int]:
    """A run's hits as the record keeps them, and how many ids were dropped. The run
    wrote the ids: only a declared one is kept (the bare count ``""``, the property's
    id, a test id of the run's JUnit); another's count joins the bare count and its
    text is dropped, never copied."""
    known = {"", prop_id, *(run.tests or {})}
    kept: dict[str, int] = {}
    dropped = 0
    for key, count in run.hits.items():
        if key not in known or (key not in kept and len(kept) >= MAX_HIT_IDS):
            dropped += 1
            key = ""
        kept[key] = kept.get(key, 0) + count
    return kept, dropped


def dropped_json(facts: Facts, results: Sequence[PropertyRuns]) -> dict[str, int]:
    """What the runs wrote that the record did not take: hit ids, import-origin lines."""
    hits = sum(
        declared_hits(r.prop.id, run)[1]
        for r in results
        for runs in r.seeds.values()
        for run in runs
    )
    return {"hit_ids": hits, "import_origins": facts.dropped_origins or 0}


def run_output(runs: Sequence[Run]) -> dict[str, Any] | None:
    """The last output of the seed's first failing run (4 KiB at most): the run's own
    text, verbatim, never the judge's words. None when no run failed."""
    failing = next((r for r in runs if r.failed and r.tail is not None), None)
    if failing is None:
        return None
    return {"run": failing.run, "code": failing.code, "tail": failing.tail}


def test_lists(
    results: Sequence[PropertyRuns], signals: Signals
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """passed / failed / warned tests, as an in-toto test-result predicate lists them:
    JUnit ids where there are any, else the property ids."""
    warned = sorted({f.test_id for f in signals.flakes if f.freeze is not None})
    failed: set[str] = {f.test_id for f in signals.flakes if f.freeze is None}
    passed: set[str] = set()
    for result in results:
        for runs in result.seeds.values():
            for run in runs:
                if run.tests:
                    for test_id, case in run.tests.items():
                        if case.outcome in ("failed", "error"):
                            failed.add(test_id)
                        elif case.outcome == "passed":
                            passed.add(test_id)
                elif run.failed:
                    failed.add(result.prop.id)
                else:
                    passed.add(result.prop.id)
        if not all(f.ok for f in result.fixtures):
            failed.add(result.prop.id)
    failed -= set(warned)
    return tuple(sorted(passed - failed - set(warned))), tuple(sorted(failed)), tuple(warned)


# -- reading and checking a record -----------------------------------------------------


class VerdictInvalid(EvidenceError):
    """A verdict note that is not exactly one canonical verdict record."""

    rule = "verdict-invalid"


REQUIRED = {
    "schema": int,
    "kind": str,
    "class": str,
    "exit": int,
    "reason": str,
    "base": str,
    "candidate": str,
    "freeze_allowed": bool,
    "started_at": str,
    "result": str,
}
FIX = (
    "verdict notes are written by `git evidence judge --note`, by a verdict "
    "writer: judge the candidate again and push that note"
)


def parse(data: bytes, annotated: str | None = None) -> dict[str, Any]:
    """Exactly one canonical verdict record (about ``annotated``, for a note), or
    VerdictInvalid saying why."""
    doc, wrong = _read(data, annotated)
    if doc is None:
        raise VerdictInvalid(wrong, fix=FIX)
    return doc


def problems(data: bytes, annotated: str) -> list[str]:
    """What is wrong with a pushed verdict note about the commit ``annotated`` (the gate
    makes each a finding); none when it is one canonical verdict record about it."""
    _, wrong = _read(data, annotated)
    return [wrong] if wrong else []


def _read(data: bytes, annotated: str | None) -> tuple[dict[str, Any] | None, str]:
    """The record, or None and what is wrong with it (one sentence)."""
    what = f"the verdict note on {annotated[:12]}" if annotated else "the verdict"
    try:
        doc = parse_canonical(data)
    except RecordError as exc:
        return None, f"{what} {exc}"
    wrong = _wrong(doc, annotated)
    return (doc, "") if wrong is None else (None, f"{what} {wrong}")


def _wrong(doc: dict[str, Any], annotated: str | None) -> str | None:
    for key, kind in REQUIRED.items():
        if not isinstance(doc.get(key), kind) or (kind is int and isinstance(doc[key], bool)):
            return f"has no valid {key!r}"
    if doc["schema"] != SCHEMA or doc["kind"] != KIND:
        return f"is not a verdict record of schema {SCHEMA}"
    klass = doc["class"]
    if klass not in EXIT:
        return f"names an unknown class {klass!r}"
    card = doc.get("scorecard")
    if "scorecard" in doc:
        wrong = scorecard.problem(card)
        if wrong is not None:
            return wrong
    if (doc["exit"], doc["result"]) != exit_and_result(klass, card):
        with_card = f" and a scorecard that says {card['result']}" if card else ""
        return f"gives exit {doc['exit']} / result {doc['result']} for class {klass}{with_card}"
    if doc["freeze_allowed"] is not False:
        return "allows a freeze: no verdict ever does"
    if annotated is not None and doc["candidate"] != annotated:
        return f"judges {doc['candidate'][:19]}, not the commit it is attached to"
    return None
