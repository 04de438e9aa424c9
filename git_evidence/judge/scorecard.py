"""The judge's scorecard: when the base has test labels, three votes beside
the class — ``properties`` (the property runs), ``fixtures`` (pin vs workspace, before
and after the runs), ``quota`` (the retries the runs used against what remained at the
base) — and ``merge`` only when properties and fixtures pass and the quota passes or
abstains. The class table is untouched: the scorecard is one more field of the record,
and a ``reject`` turns an exit 0 into 1.

Pure: the labels and quota bytes, the signals and the runs in; votes out. The merge
rule and the quota vote are here too (``shards.py`` merges the parts' votes by them,
``record.py`` checks a record's scorecard against them). Over 300 lines on purpose:
the votes, the rule that merges them and the card merged from shards' read together.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from git_evidence.core.errors import EvidenceError
from git_evidence.ledger import quota
from git_evidence.plugin.retries import Session, parse_retry_log
from git_evidence.policy.labels import Labels, parse_labels

if TYPE_CHECKING:  # data types only
    from git_evidence.judge.classes import Signals
    from git_evidence.judge.signals import PropertyRuns
    from git_evidence.sandbox.runner import Run

MERGE, REJECT = "merge", "reject"
PASS, FAIL, ABSTAIN = "pass", "fail", "abstain"
VOTES = ("properties", "fixtures", "quota")
MAX_LISTED = 20  # evidence lines per vote

Vote = Literal["pass", "fail", "abstain"]


@dataclass(frozen=True)
class Sealed:
    """What every run of a judgement is held to, read from the base (or sealed), never
    from the candidate: the labels, the retry quota and the retries per test."""

    labels: Labels
    labels_data: bytes
    quota_data: bytes | None  # None: the base has no quota file, so no retries
    quota_source: str
    remaining: int
    retries: int

    def labels_json(self) -> dict[str, Any]:
        return {
            "source": self.labels.source,
            "digest": self.labels.digest,
            "rows": len(self.labels.kinds),
        }


def read_sealed(
    labels_data: bytes,
    labels_source: str,
    quota_data: bytes | None,
    quota_source: str,
    retries: int,
) -> Sealed:
    """The labels (LabelsError naming file and line) and the quota (an EvidenceError
    naming its line): a judgement never runs on labels or a quota it cannot read."""
    labels = parse_labels(labels_data, labels_source)
    remaining = 0
    if quota_data is not None:
        entries, problems = quota.parse_quota(quota_data)
        if problems:
            first = problems[0]
            raise EvidenceError(
                f"{quota_source}:{first.line}: {first.message}",
                fix="the retry quota at the base does not parse: an evidence writer "
                "restores it (it is append-only) before anything is judged",
            )
        remaining = max(0, quota.remaining(entries))
    else:
        quota_source += " (none: no retries)"
    return Sealed(labels, labels_data, quota_data, quota_source, remaining, retries)


@dataclass(frozen=True)
class Reported:
    """One run's sessions, as its retries file has them (``problem``: unreadable)."""

    where: str  # "suite seed 3 run 2", "suite must-pass tests/fixtures/a.json seed 3"
    counted: bool  # whether its retries draw on the quota (a must-fail run's do not)
    sessions: tuple[Session, ...]
    problem: str | None = None


def reported(where: str, counted: bool, run: Run) -> Reported:
    if run.retry_log is None:
        return Reported(where, counted, ())
    try:
        return Reported(where, counted, tuple(parse_retry_log(run.retry_log)))
    except ValueError as exc:
        return Reported(where, counted, (), f"its retries file does not read: {exc}")


@dataclass(frozen=True)
class Judged:
    """What a judgement found, as the votes read it."""

    klass: str
    properties: int  # properties run (0: nothing ran)
    runs: int  # their runs, fixture runs apart
    failures: tuple[str, ...]  # misses, counterexamples, unfrozen flakes, unexplained
    frozen: tuple[str, ...]  # disagreements a freeze in force covers
    breach: tuple[str, ...]  # the lock roots against the pin
    checked: tuple[str, ...]  # "before", "after": when they were compared
    pin: str | None  # the pin's digest; None: the base's own manifest
    reported: tuple[Reported, ...] = ()


def judged(
    klass: str,
    signals: Signals,
    results: Sequence[PropertyRuns],
    checked: tuple[str, ...],
    pin: str | None,
) -> Judged:
    """What the scorecard's votes read of a judgement: the signals flattened to lines,
    and the sessions every run reported."""
    failures = [
        *signals.misses,
        *(
            f"{p}: seed {s} failed on every run" + signals.what_failed(p, s)
            for p, s in signals.counterexamples
        ),
        *(
            f"{f.property}: {f.test_id} seed {f.seed} gave different outcomes, no freeze"
            for f in signals.flakes
            if f.freeze is None
        ),
        *signals.unexplained,
    ]
    frozen = [
        f"{f.property}: {f.test_id} seed {f.seed} gave different outcomes, frozen until "
        f"{f.freeze['until']}"
        for f in signals.flakes
        if f.freeze is not None
    ]
    sessions: list[Reported] = []
    for result in results:
        prop = result.prop.id
        for seed, runs in result.seeds.items():
            for run in runs:
                sessions.append(reported(f"{prop} seed {seed} run {run.run}", True, run))
        for fixture in result.fixtures:
            if fixture.run is not None:  # a must-fail run fails on purpose: not counted
                kind = fixture.kind.replace("_", "-")
                where = f"{prop} {kind} {fixture.path} seed {fixture.seed}"
                counted = fixture.kind == "must_pass"
                sessions.append(reported(where, counted, fixture.run))
    return Judged(
        klass,
        len(results),
        sum(len(runs) for result in results for runs in result.seeds.values()),
        tuple(failures),
        tuple(frozen),
        signals.fixture_breach,
        checked,
        pin,
        tuple(sessions),
    )


def build(sealed: Sealed, judged: Judged) -> dict[str, Any]:
    """The scorecard of one judgement."""
    properties = _properties(sealed, judged)
    fixtures = _fixtures(judged)
    on_quota = _quota(sealed, judged.reported)
    card = merge_rule(properties[0] == PASS, fixtures[0] == PASS, on_quota["vote"])
    return {
        "result": MERGE if card["merge"] else REJECT,
        "labels": sealed.labels_json(),
        "votes": {
            "properties": {"vote": properties[0], "evidence": properties[1]},
            "fixtures": {"vote": fixtures[0], "evidence": fixtures[1]},
            "quota": on_quota,
        },
    }


def _properties(sealed: Sealed, judged: Judged) -> tuple[str, list[str]]:
    if not judged.properties:
        return FAIL, [f"nothing ran: the class is {judged.klass}"]
    foreign = [
        f"{run.where}: ran under labels {session.labels}, not {sealed.labels.digest}"
        for run in judged.reported
        for session in run.sessions
        if session.labels != sealed.labels.digest
    ]
    # A session the product kept from the plugin (unregistered it, or ran no pytest
    # at all) reports nothing: it was held to no labels.
    silent = [
        f"{run.where}: the plugin did not run (no pytest session reported through it)"
        for run in judged.reported
        if not run.sessions and not run.problem
    ]
    if judged.failures or foreign or silent:
        return FAIL, _capped([*judged.failures, *foreign, *silent])
    sessions = sum(len(run.sessions) for run in judged.reported)
    return PASS, _capped(
        [
            f"{judged.runs} run(s) of {judged.properties} property(ies) passed",
            f"{sessions} pytest session(s) held to the labels {sealed.labels.digest}",
            *judged.frozen,
        ]
    )


def _fixtures(judged: Judged) -> tuple[str, list[str]]:
    if not judged.checked:
        return FAIL, [f"not checked: no workspace was made ({judged.klass})"]
    if judged.breach:
        return FAIL, _capped(list(judged.breach))
    against = judged.pin or "the base's own manifest (unpinned base)"
    when = "before and after the runs" if "after" in judged.checked else "before any run"
    return PASS, [f"the lock roots match {against} {when}"]


def _quota(sealed: Sealed, runs: Sequence[Reported]) -> dict[str, Any]:
    """All the runs of a judgement together draw on what remained at the base: each
    run is held to it by the plugin, and their sum must stay within it too."""
    counted = [run for run in runs if run.counted]
    used = sum(s.retries_used for run in counted for s in run.sessions)
    refused = sum(t.outcome == "quota" for run in counted for s in run.sessions for t in s.tests)
    unreadable = [f"{run.where}: {run.problem}" for run in runs if run.problem]
    vote = FAIL if unreadable else quota_vote(used, sealed.remaining, refused)
    evidence = [
        *unreadable,
        f"{sealed.remaining} retry(ies) remained at the base ({sealed.quota_source})",
        f"{used} used by the runs together"
        + (f", {refused} refused for want of quota" if refused else ""),
    ]
    evidence += [
        f"{run.where}: {t.test_id}: {t.attempts} attempt(s), "
        + ("retry refused" if t.outcome == "quota" else t.outcome)
        for run in counted
        for s in run.sessions
        for t in s.tests
    ]
    return {
        "vote": vote,
        "evidence": _capped(evidence),
        "source": sealed.quota_source,
        "remaining": sealed.remaining,
        "retries_used": used,
        "refused": refused,
    }


def quota_vote(retries_used: int, remaining_retries: int, refused: int) -> Vote:
    """``abstain`` when no nondeterministic test retried (or wanted to); ``fail`` when
    the retries went past what remained or a retry was refused for want of quota."""
    if retries_used == 0 and refused == 0:
        return "abstain"
    if refused or retries_used > remaining_retries:
        return "fail"
    return "pass"


def merge_rule(properties_pass: bool, fixtures_pass: bool, quota: Vote) -> dict[str, Any]:
    """The judge's three votes: merge only when properties and fixtures pass
    and the quota passes or abstains. Properties and fixtures never abstain."""
    if quota not in ("pass", "fail", "abstain"):
        raise ValueError(f"quota vote must be pass, fail or abstain, got {quota!r}")
    votes = {
        "properties": "pass" if properties_pass else "fail",
        "fixtures": "pass" if fixtures_pass else "fail",
        "quota": quota,
    }
    return {"votes": votes, "merge": properties_pass and fixtures_pass and quota != "fail"}


def merged(shards: Sequence[tuple[Mapping[str, Any], bool]]) -> dict[str, Any]:
    """The scorecard of a judgement from its shards' (each with whether the shard ran
    something): properties and fixtures pass when every shard that ran something
    passes them; the quota counts every run's retries against what remained at the
    base."""
    cards = [card for card, _ in shards]
    ran = [card for card, ran in shards if ran] or cards
    votes: dict[str, Any] = {}
    for name, among in (("properties", ran), ("fixtures", cards)):
        failing = [c["votes"][name] for c in among if c["votes"][name]["vote"] == FAIL]
        chosen = failing or [c["votes"][name] for c in among]
        evidence = [str(e) for v in chosen for e in v.get("evidence", ())]
        vote = FAIL if failing else PASS
        votes[name] = {"vote": vote, "evidence": _capped(list(dict.fromkeys(evidence)))}
    parts = [c["votes"]["quota"] for c in cards]
    remaining = int(parts[0].get("remaining", 0))
    used = sum(int(p.get("retries_used", 0)) for p in parts)
    refused = sum(int(p.get("refused", 0)) for p in parts)
    on_quota = quota_vote(used, remaining, refused)
    source = str(parts[0].get("source", ""))
    summary = (
        f"{remaining} retry(ies) remained at the base ({source})",
        "used by the runs together",
    )
    lines = [
        str(e)
        for p in parts
        for e in p.get("evidence", ())
        if not str(e).startswith(summary[0]) and summary[1] not in str(e)
    ]
    votes["quota"] = {
        "vote": on_quota,
        "evidence": _capped(
            [
                summary[0],
                f"{used} {summary[1]}"
                + (f", {refused} refused for want of quota" if refused else ""),
                *lines,
            ]
        ),
        "source": source,
        "remaining": remaining,
        "retries_used": used,
        "refused": refused,
    }
    card = merge_rule(
        votes["properties"]["vote"] == PASS,
        votes["fixtures"]["vote"] == PASS,
        on_quota,
    )
    return {
        "result": MERGE if card["merge"] else REJECT,
        "labels": cards[0].get("labels"),
        "votes": votes,
    }


def _capped(lines: list[str]) -> list[str]:
    if len(lines) <= MAX_LISTED:
        return lines
    return [*lines[:MAX_LISTED], f"… and {len(lines) - MAX_LISTED} more"]


# -- in a record ----------------------------------------------------------------------


def problem(card: object) -> str | None:
    """What is wrong with a record's scorecard (for ``record.parse``), or
    None: three votes of the allowed values, each with its evidence, and a result
    that follows from them."""
    if not isinstance(card, Mapping) or card.get("result") not in (MERGE, REJECT):
        return "has a scorecard without a result merge or reject"
    votes = card.get("votes")
    if not isinstance(votes, Mapping) or set(votes) != set(VOTES):
        return f"has a scorecard without exactly the votes {', '.join(VOTES)}"
    values = {}
    for name in VOTES:
        vote = votes[name]
        allowed = (PASS, FAIL, ABSTAIN) if name == "quota" else (PASS, FAIL)
        if (
            not isinstance(vote, Mapping)
            or vote.get("vote") not in allowed
            or not isinstance(vote.get("evidence"), list)
        ):
            return f"has a scorecard whose {name} vote is not one of {', '.join(allowed)}"
        values[name] = vote["vote"]
    merge = merge_rule(values["properties"] == PASS, values["fixtures"] == PASS, values["quota"])[
        "merge"
    ]
    if card["result"] != (MERGE if merge else REJECT):
        return f"has a scorecard whose result {card['result']} does not follow from its votes"
    return None


def text(card: Mapping[str, Any]) -> Iterator[str]:
    """The scorecard as ``to_text`` shows it: the result and the votes, then each
    vote's evidence."""
    votes = card["votes"]
    summary = ", ".join(f"{name} {votes[name]['vote']}" for name in VOTES)
    labels = card.get("labels") or {}
    yield f"  scorecard: {card['result']} ({summary})"
    if labels:
        yield f"    labels: {labels.get('source')} ({labels.get('digest')})"
    for name in VOTES:
        for line in votes[name]["evidence"]:
            yield f"    {name}: {line}"
