"""``git evidence judge [CANDIDATE] [--patch FILE] …``: classify a candidate's test
results, on a machine the candidate cannot write.

Evidence first, nothing run: the changes base → candidate are classified and the lock
roots of an exported workspace are hashed from disk and compared with the pin. Only a
candidate that changes no evidence and nothing held has its properties run, each in the
sandbox, in a workspace that shares nothing with the repository's git directory; the
lock roots are hashed again afterwards. Then one class, and one verdict record
(``verdict_record.py``). Over 300 lines on purpose: the judge's steps in order."""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from git_evidence import __version__
from git_evidence.core.errors import EvidenceError, UsageError
from git_evidence.core.oids import Oid
from git_evidence.core.records import canonical_json, digest, now_utc
from git_evidence.forge import formats, output
from git_evidence.judge import held, shards, steps, verdict, workspace
from git_evidence.judge import record as judge_record
from git_evidence.judge.scorecard import Sealed
from git_evidence.judge.verdict import Signals
from git_evidence.lock import store
from git_evidence.lock.manifest import Drift
from git_evidence.plumbing.context import (
    client_policy_rev,
    draft_policy,
    is_draft,
    policy_at,
    require_commit,
    sealed_policy,
    tracking_ref,
)
from git_evidence.plumbing.git import Git
from git_evidence.policy.identity import WRITER_KEY, line_writer, server_pusher
from git_evidence.policy.properties import JUNIT_PLACEHOLDER, JudgeProperty
from git_evidence.policy.schema import Policy
from git_evidence.sandbox import repo_state, runner
from git_evidence.terminal.progress import Progress


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
        pin = steps.read_pin(git, policy, base)
        facts["pin"] = pin.as_json()
        sealed = steps.read_sealed(git, policy, base)
        record = _judge(git, policy, base, candidate, patch, pin, props, args, facts, clock, sealed)
    except EvidenceError as exc:
        record = judge_record.undecided(facts, exc, clock, sealed)
    judge_record.publish(git, policy, record, candidate, args)
    _print(record, args.format)
    return int(record["exit"])


def _print(record: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        sys.stdout.write(canonical_json(record).decode() + "\n")
    elif fmt in formats.FORMATS:
        output.emit_record(record, fmt, sys.stdout)
    else:
        sys.stdout.write(verdict.to_text(record))


def _merged(git: Git, args: argparse.Namespace) -> int:
    record = shards.merge([(path, shards.load(path)) for path in args.merge])
    candidate = require_commit(git, record["candidate"]) if args.note else None
    source = str((record.get("policy") or {}).get("source", ""))
    if args.note and (args.policy or source.startswith("draft policy ")):
        raise _draft_note(source if not args.policy else "")
    policy = sealed_policy(git) or policy_at(git, record["base"])
    judge_record.publish(git, policy, record, candidate, args)
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
    pin: steps.Pin,
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
    dirs = held.repository_dirs(git)
    state = repo_state.repository_state(dirs)
    try:
        with runner.interruptible():
            record = _judge_in(
                git, policy, base, candidate, patch, pin, props, args, facts, clock, area, sealed
            )
        changed = repo_state.state_changes(state, repo_state.repository_state(dirs))
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
    pin: steps.Pin,
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
            return judge_record.build(
                facts, verdict.PATCH_INVALID, why, signals, [], {}, clock, sealed
            )
    facts["candidate_tree"] = reader.text("rev-parse", f"{treeish}^{{tree}}")
    changes = steps.changed_paths(reader, base, treeish)
    first_ws = area.workspace(1)
    workspace.export_tree(reader, treeish, first_ws)
    before = steps.drift(first_ws, pin, policy)
    drift: dict[str, Any] = {"before": [steps.drift_json(d) for d in before], "after": []}
    evidence, first = steps.evidence_signals(policy, changes, before)
    if not verdict.runs_before_runs(first):
        klass = verdict.classify(first)
        why = verdict.explain(klass, first, base=base, props=by_id)
        extra = {"evidence": evidence, "drift": drift}
        return judge_record.build(facts, klass, why, first, [], extra, clock, sealed)

    spaces = [first_ws]
    chains = sum(len(p.seeds) * (1 + len(p.must_fail) + len(p.must_pass)) for p in props)
    for number in range(2, min(args.jobs, chains) + 1):
        workspace.copy_workspace(first_ws, area.workspace(number))
        spaces.append(area.workspace(number))
    env = steps.run_env(area)
    extra_ro: list[str] = []
    if sealed is not None:
        env.update(steps.sealed_env(sealed, area, env))
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
    with Progress("judging") as progress:
        results = steps.run_properties(props, spaces, area, env, progress, hold)
    origins = held.import_origins(results, spaces)
    if origins["outside"]:
        raise held.outside_error(origins["outside"])
    facts["import_origins"] = origins["origins"]
    after: dict[str, Drift] = {}
    for space in spaces:
        for item in steps.drift(space, pin, policy):
            after.setdefault(item.path, item)
    drift["after"] = [steps.drift_json(d) for d in after.values()]
    breach = tuple(f"changed during the run: {d.describe()}" for d in after.values())
    breach += tuple(held.runner_config_written(loaded, spaces))
    if store.find_lock(git, policy.notes_ref, base) != steps.lock_ref(pin):
        breach += (verdict.PIN_MOVED,)
    freezes = {}
    if verdict.any_disagreement(results):  # only then is the ledger read
        now = datetime.now(timezone.utc)
        freezes = verdict.active_freezes(steps.base_freezes(git, policy, base), now)
    signals = verdict.signals_from_runs(results, freezes, replace(first, fixture_breach=breach))
    klass = verdict.classify(signals)
    if klass == verdict.FLAKE_CANDIDATE:
        base_ws = area.workspace(0)
        workspace.export_tree(git, base, base_ws)
        signals = steps.flakes_on_base(signals, by_id, base_ws, area, env, hold)
    runs = sum(len(r) for res in results for r in res.seeds.values())
    writer = (
        line_writer(None, git.config_get(WRITER_KEY), os.environ)[0]
        if klass == verdict.FLAKE_CANDIDATE
        else None
    )
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
    return judge_record.build(facts, klass, why, signals, results, extra, clock, sealed)


def _read_patch(path: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise UsageError(f"cannot read the patch {path}: {exc.strerror}") from None


def _runner_identity() -> dict[str, Any]:
    who = server_pusher(os.environ)
    return {"name": who.name, "source": who.source}
