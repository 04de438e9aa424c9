"""``git evidence judge [CANDIDATE] [--patch FILE] …``: classify a candidate's test
results, on a machine the candidate cannot write.

Evidence first, nothing run: the changes base → candidate are classified and the lock
roots of an exported workspace are hashed from disk and compared with the pin. Only a
candidate that changes no evidence and nothing held has its properties run, each in a
workspace that shares nothing with the repository's git directory; the lock roots are
hashed again afterwards. Then one class, one verdict record.

Over 300 lines on purpose: the judge's steps in order and the record they make."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any, BinaryIO

from git_evidence import (
    __version__,
    forge_formats,
    forge_output,
    held,
    judging,
    lock,
    runner,
    sandbox,
    scorecard,
    shards,
    verdict,
    workspace,
)
from git_evidence.context import (
    client_policy_rev,
    draft_policy,
    is_draft,
    policy_at,
    require_commit,
    sealed_policy,
    tracking_ref,
)
from git_evidence.errors import EvidenceError, UsageError
from git_evidence.git import Git
from git_evidence.identity import server_pusher
from git_evidence.manifest import Drift
from git_evidence.oids import Oid
from git_evidence.policy import Policy
from git_evidence.properties import JUNIT_PLACEHOLDER, JudgeProperty
from git_evidence.records import canonical_json, digest, now_utc
from git_evidence.scorecard import Sealed
from git_evidence.verdict import PropertyRuns, Signals


def run(args: argparse.Namespace) -> int:
    started_at, clock = now_utc(), time.monotonic()
    git = Git()
    if args.merge:  # the shards' partial records into one verdict; nothing runs
        return _merged(git, args)
    command = list(getattr(args, "command_argv", None) or [])
    _check_usage(args, command)
    refs = git.refs()
    candidate = None if args.patch else require_commit(git, args.candidate or "HEAD")
    draft = draft_policy(args.policy) if args.policy else None
    policy, base = judge_base(git, refs, args.base, candidate or require_commit(git, "HEAD"), draft)
    props = select_properties(policy, args, command)
    shard = None
    if args.shard:
        props, shard = shards.select(props, *args.shard)
    patch = _read_patch(args.patch) if args.patch else None
    label = candidate or "patch:" + digest(patch or b"")
    facts: dict[str, Any] = {
        "base": base,
        "candidate": label,
        "policy": {"source": policy.source, "digest": policy.digest},
        "started_at": started_at,
        "runner": _runner_identity(),
        "tool": {"name": "git-evidence", "version": __version__},
        **({"shard": shard} if shard else {}),
    }
    sealed = None
    try:
        pin = judging.read_pin(git, policy, base)
        facts["pin"] = pin.as_json()
        sealed = judging.read_sealed(git, policy, base)
        record = _judge(git, policy, base, candidate, patch, pin, props, args, facts, clock, sealed)
    except EvidenceError as exc:
        record = _undecided(facts, exc, clock, sealed)
    _publish(git, policy, record, candidate, args)
    _print(record, args.format)
    return int(record["exit"])


def _print(record: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        sys.stdout.write(canonical_json(record).decode() + "\n")
    elif fmt in forge_formats.FORMATS:
        forge_output.emit_record(record, fmt, sys.stdout)
    else:
        sys.stdout.write(verdict.to_text(record))


def _merged(git: Git, args: argparse.Namespace) -> int:
    record = shards.merge([(path, shards.load(path)) for path in args.merge])
    candidate = require_commit(git, record["candidate"]) if args.note else None
    source = str((record.get("policy") or {}).get("source", ""))
    if args.note and (args.policy or source.startswith("draft policy ")):
        raise _draft_note(source if not args.policy else "")
    policy = sealed_policy(git) or policy_at(git, record["base"])
    _publish(git, policy, record, candidate, args)
    _print(record, args.format)
    return int(record["exit"])


def _check_usage(args: argparse.Namespace, command: list[str]) -> None:
    if args.patch and args.candidate:
        raise UsageError(
            "give a CANDIDATE commit or --patch FILE, not both",
            fix="a patch is judged on the base (--base REF)",
        )
    if args.note and args.shard:
        raise UsageError(
            "a shard's partial record is no verdict: it is never noted",
            fix="note the merged record: git evidence judge --merge PART… --note",
        )
    if args.note and args.policy:
        raise _draft_note("")
    if args.note and args.patch:
        raise UsageError(
            "--note stores the verdict on the candidate commit, and a patch has none",
            fix="use --out FILE for a patch, or commit it and judge the commit",
        )
    if args.jobs < 1 or (args.repeat is not None and args.repeat < 2):
        raise UsageError("--jobs must be at least 1 and --repeat at least 2")
    if args.seeds is not None and args.seeds < 1:
        raise UsageError("--seeds must be at least 1")
    if any(s < 0 for s in args.seed or ()):
        raise UsageError("--seed takes whole numbers from 0")
    if args.property and command:
        raise UsageError(
            "-- CMD defines the property `cli` and replaces the policy's: --property "
            "selects among the policy's",
            fix="give one or the other",
        )


def _draft_note(source: str) -> UsageError:
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


def judge_base(
    git: Git, refs: dict[str, Oid], base_arg: str | None, head: Oid, draft: Policy | None = None
) -> tuple[Policy, Oid]:
    """``--base``, else the merge-base of the candidate with ``rules.base`` (the
    remote's copy when this clone has one); and the policy there, unless sealed, or a
    draft (``--policy FILE``) replaces it."""
    sealed = draft or sealed_policy(git)
    guide_rev = None
    if base_arg:
        base = require_commit(git, base_arg)
    else:
        guide = sealed
        if guide is None:
            guide_rev = client_policy_rev(git, None, refs)
            guide = policy_at(git, guide_rev)
        tip = tracking_ref("origin", guide.base, refs) or (
            guide.base if guide.base in refs else None
        )
        if tip is None:
            raise UsageError(
                f"no {guide.base} here to find the base from",
                fix="fetch it (git fetch origin) or pass --base REF",
            )
        found = git.merge_base(refs[tip], head)
        if found is None:
            raise UsageError(f"the candidate shares no history with {tip}", fix="pass --base REF")
        base = found
        if sealed is None and base == guide_rev:
            return guide, base  # read already
    return sealed or policy_at(git, base), base


def select_properties(
    policy: Policy, args: argparse.Namespace, command: list[str]
) -> tuple[JudgeProperty, ...]:
    judge = policy.judge
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
    if args.property:
        known = {p.id: p for p in props}
        missing = [i for i in args.property if i not in known]
        if missing:
            raise UsageError(
                f"no property {', '.join(missing)} (known: {', '.join(known) or 'none'})",
                fix="name a [[judge.property]] id of the "
                + ("draft policy" if is_draft(policy) else "base's policy"),
            )
        props = tuple(known[i] for i in dict.fromkeys(args.property))
    if not props:
        raise UsageError(
            f"no property to run: the policy ({policy.source}) has no [[judge.property]]",
            fix="add [[judge.property]] tables to the base's policy, or give -- CMD ARGS…",
        )
    out = []
    for prop in props:
        if args.repeat is not None:
            prop = prop._replace(repeat=args.repeat)
        if args.seed:
            prop = prop._replace(seeds=tuple(dict.fromkeys(args.seed)))
        elif args.seeds is not None:
            prop = prop._replace(seeds=tuple(range(prop.seeds[0], prop.seeds[0] + args.seeds)))
        out.append(prop)
    return tuple(out)


def _judge(
    git: Git,
    policy: Policy,
    base: Oid,
    candidate: Oid | None,
    patch: bytes | None,
    pin: judging.Pin,
    props: Sequence[JudgeProperty],
    args: argparse.Namespace,
    facts: dict[str, Any],
    clock: float,
    sealed: Sealed | None,
) -> dict[str, Any]:
    code, out = git.run("rev-parse", "--show-toplevel", ok_codes=(0, 128))
    top = out.decode("utf-8", "surrogateescape").strip() if code == 0 else None  # bare
    area = workspace.make_area(top)
    facts["top"] = top
    state = sandbox.repository_state(held.repository_dirs(git))
    try:
        with runner.interruptible():
            record = _judge_in(
                git, policy, base, candidate, patch, pin, props, args, facts, clock, area, sealed
            )
        changed = sandbox.state_changes(state, sandbox.repository_state(held.repository_dirs(git)))
        if changed:
            raise EvidenceError(
                "the repository changed during the judgement: " + "; ".join(changed[:10]),
                fix="something outside the sandbox wrote the repository while the candidate "
                "ran (or the sandbox is off): find it, restore the repository, judge again",
            )
        return record
    finally:
        if args.keep:
            print(f"git-evidence: workspace kept in {area.root}", file=sys.stderr)
        else:
            workspace.remove(area.root)


def _judge_in(
    git: Git,
    policy: Policy,
    base: Oid,
    candidate: Oid | None,
    patch: bytes | None,
    pin: judging.Pin,
    props: Sequence[JudgeProperty],
    args: argparse.Namespace,
    facts: dict[str, Any],
    clock: float,
    area: workspace.Area,
    sealed: Sealed | None,
) -> dict[str, Any]:
    reader, treeish = git, candidate or ""
    by_id = {p.id: p for p in props}
    if patch is not None:
        try:
            reader, treeish = workspace.patched_tree(git, base, patch, area)
        except workspace.PatchInvalid as exc:
            signals = Signals(patch_invalid=True)
            why = verdict.explain(
                verdict.PATCH_INVALID, signals, base=base, props=by_id, patch_error=str(exc)
            )
            return _record(facts, verdict.PATCH_INVALID, why, signals, [], {}, clock, sealed)
    facts["candidate_tree"] = reader.text("rev-parse", f"{treeish}^{{tree}}")
    changes = judging.changed_paths(reader, base, treeish)
    first_ws = area.workspace(1)
    workspace.export_tree(reader, treeish, first_ws)
    before = judging.drift(first_ws, pin, policy)
    drift: dict[str, Any] = {"before": [judging.drift_json(d) for d in before], "after": []}
    evidence, first = judging.evidence_signals(policy, changes, before)
    if not verdict.runs_before_runs(first):
        klass = verdict.classify(first)
        why = verdict.explain(klass, first, base=base, props=by_id)
        extra = {"evidence": evidence, "drift": drift}
        return _record(facts, klass, why, first, [], extra, clock, sealed)

    spaces = [first_ws]
    chains = sum(len(p.seeds) * (1 + len(p.must_fail) + len(p.must_pass)) for p in props)
    for number in range(2, min(args.jobs, chains) + 1):
        workspace.copy_workspace(first_ws, area.workspace(number))
        spaces.append(area.workspace(number))
    env = judging.run_env(area)
    extra_ro: list[str] = []
    if sealed is not None:
        env.update(judging.sealed_env(sealed, area, env))
        extra_ro.append(os.path.join(area.root, "sealed"))
    outputs = [p for p in (args.out, args.log) if p]
    hold = held.hold(
        git,
        policy,
        props,
        first_ws,
        top=facts.pop("top"),
        outputs=outputs,
        extra_ro=extra_ro,
        env=env,
    )
    facts["sandbox"] = hold.box.as_json()
    facts["pythonpath"] = list(hold.pythonpath)
    env["EVIDENCE_PACKAGES"] = ",".join(held.top_packages(first_ws, hold.pythonpath))
    loaded = held.runner_config_files(first_ws)
    results = judging.run_properties(props, spaces, area, env, _progress(), hold)
    _progress_done()
    origins = held.import_origins(results, spaces)
    if origins["outside"]:
        raise held.outside_error(origins["outside"])
    facts["import_origins"] = origins["origins"]
    after: dict[str, Drift] = {}
    for space in spaces:
        for item in judging.drift(space, pin, policy):
            after.setdefault(item.path, item)
    drift["after"] = [judging.drift_json(d) for d in after.values()]
    breach = tuple(f"changed during the run: {d.describe()}" for d in after.values())
    breach += tuple(held.runner_config_written(loaded, spaces))
    if lock.find_lock(git, policy.notes_ref, base) != judging.lock_ref(pin):
        breach += (verdict.PIN_MOVED,)
    freezes = {}
    if verdict.any_disagreement(results):  # only then is the ledger read
        now = datetime.now(timezone.utc)
        freezes = verdict.active_freezes(judging.base_freezes(git, policy, base), now)
    signals = verdict.signals_from_runs(results, freezes, replace(first, fixture_breach=breach))
    klass = verdict.classify(signals)
    if klass == verdict.FLAKE_CANDIDATE:
        base_ws = area.workspace(0)
        workspace.export_tree(git, base, base_ws)
        signals = judging.flakes_on_base(signals, by_id, base_ws, area, env, hold)
    runs = sum(len(r) for res in results for r in res.seeds.values())
    writer = _freeze_writer(git) if klass == verdict.FLAKE_CANDIDATE else None
    facts["freeze_writer"] = writer
    why = verdict.explain(
        klass,
        signals,
        base=base,
        props=by_id,
        during_run=bool(breach),
        runs=runs,
        writer=writer,
        pythonpath=hold.pythonpath,
    )
    extra = {"evidence": evidence, "drift": drift}
    return _record(facts, klass, why, signals, results, extra, clock, sealed)


def _record(
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
    judged = judging.judged(klass, signals, results, checked, pin)
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


def _undecided(
    facts: dict[str, Any], exc: EvidenceError, clock: float, sealed: Sealed | None
) -> dict[str, Any]:
    why = verdict.Explanation(
        f"could not decide: {exc.message}", (), exc.fix or "fix it and judge again."
    )
    facts.setdefault("pin", None)
    return _record(facts, verdict.UNDECIDED, why, Signals(), [], {}, clock, sealed)


def _publish(
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
        (blob,) = git.write_blobs([data])
        ref = policy.judge.notes_ref
        for _ in range(3):
            if git.write_notes(ref, git.ref_oid(ref), {candidate: blob}, "git evidence judge"):
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


def _read_patch(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"cannot read the patch {path}: {exc.strerror}") from None


def _freeze_writer(git: Git) -> str | None:
    """Who the printed freeze line names as its writer: ``evidence.writer``, else the
    pusher variable CI sets."""
    return git.config_get("evidence.writer") or os.environ.get("GIT_EVIDENCE_PUSHER") or None


def _runner_identity() -> dict[str, Any]:
    who = server_pusher(os.environ)
    return {"name": who.name, "source": who.source}


_SHOWN = False


def _progress() -> Callable[[str], None] | None:
    """Progress on stderr, only on a terminal."""
    if not sys.stderr.isatty():
        return None

    def show(text: str) -> None:
        global _SHOWN
        _SHOWN = True
        sys.stderr.write(f"\r\033[Kjudging: {text}")
        sys.stderr.flush()

    return show


def _progress_done() -> None:
    if _SHOWN:
        sys.stderr.write("\r\033[K")
        sys.stderr.flush()
