"""The verdict record: one judgement's canonical JSON document, and the one module
that builds it (from typed facts and findings), parses it (``show-verdict``, the
merge of shards) and checks it (``problems``: what is wrong with a pushed verdict
note, for the gate). Pure: documents in, documents out; publishing the record
(``--out``, ``--log``, ``--note``) is ``publish.py``'s, composing its words
``text.py``'s."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from git_evidence.core.errors import EvidenceError
from git_evidence.core.oids import Oid
from git_evidence.core.records import RecordError, parse_canonical
from git_evidence.judge import scorecard
from git_evidence.judge.classes import EXIT, FLAKE_CANDIDATE, RESULT, UNDECIDED, Signals
from git_evidence.judge.text import Explanation, freeze_line

if TYPE_CHECKING:  # data types only
    from git_evidence.judge.scorecard import Sealed
    from git_evidence.judge.signals import PropertyRuns
    from git_evidence.sandbox.runner import Run

SCHEMA = 1
KIND = "git-evidence/verdict"
TOOL = "git-evidence"


class Facts(NamedTuple):
    """What a judgement is about and how it was held, as the record states it. The
    first fields are known before anything is read; the others as the judgement
    learns them (None: not reached, and then absent from the record; ``pin`` is
    always stated, null when it could not be read)."""

    base: Oid
    candidate: str  # a commit, or ``patch:`` and the patch's digest
    policy_source: str
    policy_digest: str
    started_at: str
    runner_name: str | None  # who ran the judgement (the pusher variables)
    runner_source: str
    tool_version: str
    shard: Mapping[str, Any] | None = None  # a shard's partial record only
    pin: Mapping[str, Any] | None = None
    candidate_tree: str | None = None
    sandbox: Mapping[str, Any] | None = None
    pythonpath: tuple[str, ...] | None = None
    import_origins: Mapping[str, Any] | None = None
    dropped_origins: int | None = None  # import-origin lines the record did not take

    def as_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {
            "base": self.base,
            "candidate": self.candidate,
            "policy": {"source": self.policy_source, "digest": self.policy_digest},
            "started_at": self.started_at,
            "runner": {"name": self.runner_name, "source": self.runner_source},
            "tool": {"name": TOOL, "version": self.tool_version},
            "pin": dict(self.pin) if self.pin is not None else None,
        }
        later = {
            "shard": self.shard,
            "candidate_tree": self.candidate_tree,
            "sandbox": self.sandbox,
            "pythonpath": None if self.pythonpath is None else list(self.pythonpath),
            "import_origins": self.import_origins,
        }
        doc.update((key, value) for key, value in later.items() if value is not None)
        return doc


class Found(NamedTuple):
    """What a judgement found: its class, why, and what that rests on."""

    klass: str
    why: Explanation
    signals: Signals = Signals()
    results: Sequence[PropertyRuns] = ()
    evidence: Mapping[str, Any] | None = None  # the changes by class; None: not read
    drift: Mapping[str, Any] | None = None  # None: no workspace was compared to the pin
    freeze_writer: str | None = None  # the writer a freeze line names


def exit_and_result(klass: str, card: Mapping[str, Any] | None) -> tuple[int, str]:
    """A record's ``exit`` and in-toto ``result``: the class's, except that a scorecard
    that says ``reject`` never lets a passing class exit 0."""
    if card is not None and card.get("result") == scorecard.REJECT and EXIT[klass] == 0:
        return 1, "FAILED"
    return EXIT[klass], RESULT[klass]


def verdict(klass: str, why: Explanation) -> dict[str, Any]:
    """The fields that say the class and why: a judgement's own, or a merge's."""
    return {
        "class": klass,
        "exit": EXIT[klass],
        "result": RESULT[klass],
        "reason": why.reason,
        "details": list(why.details),
        "next": why.next,
    }


def build(facts: Facts, found: Found, duration_s: float, sealed: Sealed | None) -> dict[str, Any]:
    """The record of one judgement (with the scorecard when labels exist)."""
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
    record = {
        "schema": SCHEMA,
        "kind": KIND,
        **verdict(klass, why),
        **facts.as_json(),
        "evidence": dict(found.evidence) if found.evidence is not None else {"paths": {}},
        "drift": dict(found.drift) if found.drift is not None else {"before": [], "after": []},
        "properties": [property_json(r) for r in results],
        "counterexamples": [{"property": p, "seed": s} for p, s in signals.counterexamples],
        "failing": [f.as_json() for f in signals.failing],
        "misses": list(signals.misses),
        "flaky": [f.as_json() for f in signals.flakes],
        "freeze_allowed": False,
        "freeze_line": line,
        "configuration": _configuration(facts),
        **test_lists(results, signals),
        "duration_s": round(duration_s, 3),
    }
    if results:
        record["dropped"] = dropped_json(facts, results)
    if sealed is not None:
        _score(record, sealed, found, found.drift is not None)
    return record


def undecided(
    facts: Facts, exc: EvidenceError, duration_s: float, sealed: Sealed | None
) -> dict[str, Any]:
    """The record of a judgement that could not decide (exit 2), with what it had
    learnt."""
    why = Explanation(f"could not decide: {exc.message}", (), exc.fix or "fix it and judge again.")
    return build(facts, Found(UNDECIDED, why), duration_s, sealed)


def _score(record: dict[str, Any], sealed: Sealed, found: Found, compared: bool) -> None:
    klass, results = found.klass, found.results
    checked = ("before", "after") if results else ("before",) if compared else ()
    pin = (record.get("pin") or {}).get("digest")
    judged = scorecard.judged(klass, found.signals, results, checked, pin)
    score(record, scorecard.build(sealed, judged), quota_hint=True)


def score(record: dict[str, Any], card: Mapping[str, Any], *, quota_hint: bool) -> None:
    """The scorecard in a record, and what it does to the exit: a ``reject`` never
    exits 0, whatever the class (and then ``next`` says which votes failed; with
    ``quota_hint``, what to do when the quota alone fails)."""
    record["scorecard"] = card
    code, result = exit_and_result(record["class"], card)
    if code != record["exit"]:
        failed = [name for name in scorecard.VOTES if card["votes"][name]["vote"] == "fail"]
        record["next"] = (
            f"do not merge: the scorecard rejects it ({', '.join(failed)} "
            f"{'fails' if len(failed) == 1 else 'fail'}). "
            + (
                "The runs used more retries than the quota holds: fix the nondeterministic "
                "test, or have an evidence writer grant more (git evidence quota grant N "
                "--reason …)."
                if quota_hint and failed == ["quota"]
                else "Read the votes' evidence."
            )
        )
    record["exit"], record["result"] = code, result


def _configuration(facts: Facts) -> list[dict[str, Any]]:
    """in-toto ResourceDescriptors of what the verdict depends on."""

    def sha(value: str | None) -> dict[str, str]:
        return {"sha256": value.removeprefix("sha256:")} if value else {}

    out = [
        {"name": "policy", "uri": facts.policy_source, "digest": sha(facts.policy_digest)},
        {"name": "base", "digest": {"gitCommit": facts.base}},
    ]
    pin = facts.pin or {}
    if pin.get("digest"):
        out.append({"name": "pin", "digest": sha(pin["digest"])})
    return out


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


def test_lists(results: Sequence[PropertyRuns], signals: Signals) -> dict[str, list[str]]:
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
    return {
        "passed_tests": sorted(passed - failed - set(warned)),
        "failed_tests": sorted(failed),
        "warned_tests": warned,
    }


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
