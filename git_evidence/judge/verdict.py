"""The judge's public result: ``Verdict``, one immutable, typed value that a judgement,
a merge of shards and a judgement that could not decide all return. Its callers read
fields (``verdict.exit``, ``verdict.klass``); the published record (``--out``,
``--log``, ``--note``, ``--format``) is ``as_json()``, written in one place, in the
record's order. Pure: ``record.py`` makes a ``Verdict`` from what a judgement found,
``shards.py`` from the shards' partial records; stored records are read back as
documents (``record.parse``), never as a ``Verdict``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from git_evidence.core.oids import Oid
from git_evidence.judge import scorecard
from git_evidence.judge.classes import EXIT, RESULT, Signals
from git_evidence.judge.text import Explanation

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

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> Facts:
        """The facts a record states (a shard's part, for the merge): its ``policy``,
        ``runner`` and ``tool`` are objects (``shards`` checks that first)."""
        policy, runner, tool = doc["policy"], doc["runner"], doc["tool"]
        name, pin, path = runner.get("name"), doc.get("pin"), doc.get("pythonpath")
        return cls(
            Oid(str(doc["base"])),
            str(doc["candidate"]),
            str(policy.get("source", "")),
            str(policy.get("digest", "")),
            str(doc["started_at"]),
            None if name is None else str(name),
            str(runner.get("source", "")),
            str(tool.get("version", "")),
            shard=doc.get("shard"),
            pin=pin if isinstance(pin, Mapping) else None,
            candidate_tree=doc.get("candidate_tree"),
            sandbox=doc.get("sandbox"),
            pythonpath=tuple(map(str, path)) if isinstance(path, list) else None,
            import_origins=doc.get("import_origins"),
        )

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

    def configuration(self) -> list[dict[str, Any]]:
        """in-toto ResourceDescriptors of what the verdict depends on."""

        def sha(value: str | None) -> dict[str, str]:
            return {"sha256": value.removeprefix("sha256:")} if value else {}

        out = [
            {"name": "policy", "uri": self.policy_source, "digest": sha(self.policy_digest)},
            {"name": "base", "digest": {"gitCommit": self.base}},
        ]
        pin = self.pin or {}
        if pin.get("digest"):
            out.append({"name": "pin", "digest": sha(pin["digest"])})
        return out


class Verdict(NamedTuple):
    """One judgement's result. The class and what it means first (``exit`` and
    ``result`` are the class's, unless a scorecard rejects a passing class), then
    the facts, the signals the class was computed from, and the record's other parts
    (documents where the record holds the runs' own data: properties, evidence,
    drift, the scorecard). ``shards``: a merge's parts, None for one judgement."""

    klass: str
    exit: int
    result: str
    reason: str
    details: tuple[str, ...]
    next: str
    facts: Facts
    signals: Signals
    evidence: Mapping[str, Any]  # the changes by class
    drift: Mapping[str, Any]  # the lock roots against the pin, before and after the runs
    properties: tuple[Mapping[str, Any], ...]  # each property's runs and fixture runs
    freeze_line: str | None
    passed_tests: tuple[str, ...]
    failed_tests: tuple[str, ...]
    warned_tests: tuple[str, ...]
    duration_s: float
    dropped: Mapping[str, int] | None = None  # what the runs wrote that was not taken
    scorecard: Mapping[str, Any] | None = None
    shards: Mapping[str, Any] | None = None

    @classmethod
    def decided(
        cls,
        klass: str,
        why: Explanation,
        facts: Facts,
        signals: Signals,
        *,
        evidence: Mapping[str, Any],
        drift: Mapping[str, Any],
        properties: tuple[Mapping[str, Any], ...],
        freeze_line: str | None,
        tests: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]],
        duration_s: float,
        dropped: Mapping[str, int] | None = None,
        shards: Mapping[str, Any] | None = None,
    ) -> Verdict:
        """The verdict of class ``klass`` for the reasons ``why``, with the class's
        own exit and result (``scored`` may change them)."""
        passed, failed, warned = tests
        return cls(
            klass,
            EXIT[klass],
            RESULT[klass],
            why.reason,
            tuple(why.details),
            why.next,
            facts,
            signals,
            evidence,
            drift,
            properties,
            freeze_line,
            passed,
            failed,
            warned,
            duration_s,
            dropped,
            shards=shards,
        )

    def scored(self, card: Mapping[str, Any], *, quota_hint: bool) -> Verdict:
        """The verdict with its scorecard: a ``reject`` never exits 0, whatever the
        class (and then ``next`` says which votes failed; with ``quota_hint``, what to
        do when the quota alone fails)."""
        code, result = exit_and_result(self.klass, card)
        then = self.next
        if code != self.exit:
            failed = [name for name in scorecard.VOTES if card["votes"][name]["vote"] == "fail"]
            then = (
                f"do not merge: the scorecard rejects it ({', '.join(failed)} "
                f"{'fails' if len(failed) == 1 else 'fail'}). "
                + (
                    "The runs used more retries than the quota holds: fix the "
                    "nondeterministic test, or have an evidence writer grant more (git "
                    "evidence quota grant N --reason …)."
                    if quota_hint and failed == ["quota"]
                    else "Read the votes' evidence."
                )
            )
        return self._replace(scorecard=card, exit=code, result=result, next=then)

    def as_json(self) -> dict[str, Any]:
        """The verdict record, as it is published: its keys in the record's order."""
        signals = self.signals
        doc: dict[str, Any] = {
            "schema": SCHEMA,
            "kind": KIND,
            "class": self.klass,
            "exit": self.exit,
            "result": self.result,
            "reason": self.reason,
            "details": list(self.details),
            "next": self.next,
            **self.facts.as_json(),
            "evidence": dict(self.evidence),
            "drift": dict(self.drift),
            "properties": [dict(p) for p in self.properties],
            "counterexamples": [{"property": p, "seed": s} for p, s in signals.counterexamples],
            "failing": [f.as_json() for f in signals.failing],
            "misses": list(signals.misses),
            "flaky": [f.as_json() for f in signals.flakes],
            "freeze_allowed": False,
            "freeze_line": self.freeze_line,
            "configuration": self.facts.configuration(),
            "passed_tests": list(self.passed_tests),
            "failed_tests": list(self.failed_tests),
            "warned_tests": list(self.warned_tests),
            "duration_s": self.duration_s,
        }
        later = {"dropped": self.dropped, "scorecard": self.scorecard, "shards": self.shards}
        doc.update((key, dict(value)) for key, value in later.items() if value is not None)
        return doc


def exit_and_result(klass: str, card: Mapping[str, Any] | None) -> tuple[int, str]:
    """A record's ``exit`` and in-toto ``result``: the class's, except that a scorecard
    that says ``reject`` never lets a passing class exit 0."""
    if card is not None and card.get("result") == scorecard.REJECT and EXIT[klass] == 0:
        return 1, "FAILED"
    return EXIT[klass], RESULT[klass]
