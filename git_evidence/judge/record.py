"""The verdict record of one judgement: built from the class, its explanation, the
signals and the runs (with the scorecard when labels exist), and published after
every run has ended: ``--out`` and ``--log`` never through a link, ``--note`` on the
candidate commit. The one place a judgement's record is made; ``verdict.py`` holds its
parts and its text, ``shards.py`` merges partial ones."""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Sequence
from typing import Any, BinaryIO

from git_evidence.core.errors import EvidenceError
from git_evidence.core.oids import Oid
from git_evidence.core.records import canonical_json, now_utc
from git_evidence.judge import scorecard, steps, verdict
from git_evidence.judge.scorecard import Sealed
from git_evidence.judge.verdict import PropertyRuns, Signals
from git_evidence.plumbing import notes
from git_evidence.plumbing.git import Git
from git_evidence.policy.schema import Policy


def build(
    facts: dict[str, Any],
    klass: str,
    why: verdict.Explanation,
    signals: Signals,
    results: Sequence[PropertyRuns],
    extra: dict[str, Any],
    clock: float,
    sealed: Sealed | None,
) -> dict[str, Any]:
    props = {r.prop.id: r.prop for r in results}
    fresh = [f for f in signals.flakes if f.freeze is None]
    writer = facts.pop("freeze_writer", None)
    line = (
        verdict.freeze_line(props[fresh[0].property], fresh[0], writer)
        if klass == verdict.FLAKE_CANDIDATE
        and fresh
        and fresh[0].property in props
        and all(f.on_base for f in fresh)
        else None
    )
    record = {
        "schema": verdict.SCHEMA,
        "kind": verdict.KIND,
        "class": klass,
        "exit": verdict.EXIT[klass],
        "result": verdict.RESULT[klass],
        "reason": why.reason,
        "details": list(why.details),
        "next": why.next,
        **facts,
        "evidence": extra.get("evidence", {"paths": {}}),
        "drift": extra.get("drift", {"before": [], "after": []}),
        "properties": [verdict.property_json(r) for r in results],
        "counterexamples": [{"property": p, "seed": s} for p, s in signals.counterexamples],
        "failing": [f.as_json() for f in signals.failing],
        "misses": list(signals.misses),
        "flaky": [f.as_json() for f in signals.flakes],
        "freeze_allowed": False,
        "freeze_line": line,
        "configuration": _configuration(facts),
        **verdict.test_lists(results, signals),
        "duration_s": round(time.monotonic() - clock, 3),
    }
    if sealed is not None:
        _score(record, sealed, klass, signals, results, "drift" in extra)
    return record


def _score(
    record: dict[str, Any],
    sealed: Sealed,
    klass: str,
    signals: Signals,
    results: Sequence[PropertyRuns],
    compared: bool,
) -> None:
    """The scorecard, and what it does to the exit: a ``reject`` never
    exits 0, whatever the class."""
    checked = ("before", "after") if results else ("before",) if compared else ()
    pin = (record.get("pin") or {}).get("digest")
    judged = steps.judged(klass, signals, results, checked, pin)
    card = scorecard.build(sealed, judged)
    record["scorecard"] = card
    code, result = verdict.exit_and_result(klass, card)
    if code != record["exit"]:
        failed = [name for name in scorecard.VOTES if card["votes"][name]["vote"] == "fail"]
        record["next"] = (
            f"do not merge: the scorecard rejects it ({', '.join(failed)} "
            f"{'fails' if len(failed) == 1 else 'fail'}). "
            + (
                "The runs used more retries than the quota holds: fix the nondeterministic "
                "test, or have an evidence writer grant more (git evidence quota grant N "
                "--reason …)."
                if failed == ["quota"]
                else "Read the votes' evidence."
            )
        )
    record["exit"], record["result"] = code, result


def _configuration(facts: dict[str, Any]) -> list[dict[str, Any]]:
    """in-toto ResourceDescriptors of what the verdict depends on."""

    def sha(value: str | None) -> dict[str, str]:
        return {"sha256": value.removeprefix("sha256:")} if value else {}

    pin = facts.get("pin") or {}
    out = [
        {
            "name": "policy",
            "uri": facts["policy"]["source"],
            "digest": sha(facts["policy"]["digest"]),
        },
        {"name": "base", "digest": {"gitCommit": facts["base"]}},
    ]
    if pin.get("digest"):
        out.append({"name": "pin", "digest": sha(pin["digest"])})
    return out


def undecided(
    facts: dict[str, Any], exc: EvidenceError, clock: float, sealed: Sealed | None
) -> dict[str, Any]:
    why = verdict.Explanation(
        f"could not decide: {exc.message}", (), exc.fix or "fix it and judge again."
    )
    facts.setdefault("pin", None)
    return build(facts, verdict.UNDECIDED, why, Signals(), [], {}, clock, sealed)


def publish(
    git: Git,
    policy: Policy,
    record: dict[str, Any],
    candidate: Oid | None,
    args: argparse.Namespace,
) -> None:
    data = canonical_json(record)
    if args.out:
        with _output(args.out, "--out", os.O_TRUNC) as handle:
            handle.write(data)
    if args.log:
        line = {
            "at": now_utc(),
            "base": record["base"],
            "candidate": record["candidate"],
            "class": record["class"],
            "exit": record["exit"],
            "pin": (record.get("pin") or {}).get("digest"),
            "duration_s": record["duration_s"],
        }
        if "scorecard" in record:
            line["scorecard"] = record["scorecard"]["result"]
        with _output(args.log, "--log", os.O_APPEND) as handle:
            handle.write(canonical_json(line) + b"\n")
    if args.note and candidate is not None:
        # Written byte for byte; a writer that moved the ref meanwhile is written over
        # in a second try on top of its commit, never replaced.
        (blob,) = notes.write_blobs(git, [data])
        ref = policy.judge.notes_ref
        for _ in range(3):
            tip = git.ref_oid(ref)
            if notes.write_notes(git, ref, tip, {candidate: blob}, "git evidence judge"):
                break
        else:
            raise EvidenceError(
                f"could not write the verdict note on {policy.judge.notes_ref}",
                fix="another writer keeps moving it: retry",
            )


def _output(path: str, option: str, mode: int) -> BinaryIO:
    """An output file opened for writing, never through a symbolic link."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | mode, 0o644)
    except OSError as exc:
        link = os.path.islink(path)
        raise EvidenceError(
            f"{option} {path}: "
            + ("a symbolic link stands there (refused)" if link else str(exc.strerror)),
            fix=f"remove it, or give {option} a path of its own",
        ) from None
    return os.fdopen(fd, "wb")
