"""What a judgement is asked (``Request``: the candidate, the base, the properties and
how often, the slice of the work, where the record goes), the requests that make no
sense, and the properties a request selects from the policy. Pure: the command line's
words become these fields, and nothing here reads git or runs anything."""

from __future__ import annotations

from typing import NamedTuple

from git_evidence.core.errors import UsageError
from git_evidence.policy.properties import JUNIT_PLACEHOLDER, JudgeProperty
from git_evidence.policy.schema import Policy


class Request(NamedTuple):
    """What a judgement is asked: which candidate, on which base, which properties how
    often, which slice of the work (``shard``) or which parts to merge, and where the
    record goes."""

    candidate: str | None = None  # a commit (default HEAD)
    patch: str | None = None  # a patch file, judged applied to the base
    base: str | None = None
    policy: str | None = None  # a draft policy file, in place of the base's
    properties: tuple[str, ...] = ()  # only these ids
    command: tuple[str, ...] = ()  # an ad-hoc property ``cli`` replacing the policy's
    repeat: int | None = None
    seeds: int | None = None
    seed: tuple[int, ...] = ()
    jobs: int = 1
    shard: tuple[int, int] | None = None  # (I, N)
    merge: tuple[str, ...] = ()  # the partial records of every shard
    out: str | None = None
    log: str | None = None
    note: bool = False
    keep: bool = False  # keep the workspace and each run's output (its path on stderr)
    verbose: bool = False  # print the last lines of each failing run's output (stderr)


def check(request: Request) -> None:
    """The requests that make no sense, refused before anything is read."""
    if request.patch and request.candidate:
        raise UsageError(
            "give a CANDIDATE commit or --patch FILE, not both",
            fix="a patch is judged on the base (--base REF)",
        )
    if request.note and request.shard:
        raise UsageError(
            "a shard's partial record is no verdict: it is never noted",
            fix="note the merged record: git evidence judge --merge PART… --note",
        )
    if request.note and request.policy:
        raise draft_note("")
    if request.note and request.patch:
        raise UsageError(
            "--note stores the verdict on the candidate commit, and a patch has none",
            fix="use --out FILE for a patch, or commit it and judge the commit",
        )
    if request.jobs < 1 or (request.repeat is not None and request.repeat < 2):
        raise UsageError("--jobs must be at least 1 and --repeat at least 2")
    if request.seeds is not None and request.seeds < 1:
        raise UsageError("--seeds must be at least 1")
    if any(s < 0 for s in request.seed):
        raise UsageError("--seed takes whole numbers from 0")
    if request.properties and request.command:
        raise UsageError(
            "-- CMD defines the property `cli` and replaces the policy's: --property "
            "selects among the policy's",
            fix="give one or the other",
        )


def draft_note(source: str) -> UsageError:
    """A verdict judged under a draft is never noted: a note is the verdict in force."""
    what = (
        f"the parts were judged under the {source}"
        if source
        else "--policy FILE is a draft (not in force)"
    )
    return UsageError(
        f"--note publishes the verdict, and {what}",
        fix="try the draft without --note; note a verdict once the policy is in force",
    )


def select_properties(policy: Policy, request: Request) -> tuple[JudgeProperty, ...]:
    """The properties to run: the policy's (or the command line's ``cli``), those named
    only, with the repeats and seeds the request asks for."""
    judge = policy.judge
    command = request.command
    if command:
        props: tuple[JudgeProperty, ...] = (
            JudgeProperty(
                "cli",
                tuple(command),
                tuple(range(judge.seeds)),
                judge.repeat,
                judge.timeout_s,
                junit=any(JUNIT_PLACEHOLDER in a for a in command),
                source="command line",
            ),
        )
    else:
        props = judge.properties
    if request.properties:
        known = {p.id: p for p in props}
        missing = [i for i in request.properties if i not in known]
        if missing:
            raise UsageError(
                f"no property {', '.join(missing)} (known: {', '.join(known) or 'none'})",
                fix="name a [[judge.property]] id of the "
                + ("draft policy" if request.policy else "base's policy"),
            )
        props = tuple(known[i] for i in dict.fromkeys(request.properties))
    if not props:
        raise UsageError(
            f"no property to run: the policy ({policy.source}) has no [[judge.property]]",
            fix="add [[judge.property]] tables to the base's policy, or give -- CMD ARGS…",
        )
    out = []
    for prop in props:
        if request.repeat is not None:
            prop = prop._replace(repeat=request.repeat)
        if request.seed:
            prop = prop._replace(seeds=tuple(dict.fromkeys(request.seed)))
        elif request.seeds is not None:
            prop = prop._replace(seeds=tuple(range(prop.seeds[0], prop.seeds[0] + request.seeds)))
        out.append(prop)
    return tuple(out)
