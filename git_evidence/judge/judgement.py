"""One judgement, as a library call: ``judge(git, request)`` runs the judge's steps in
order and returns the published ``Verdict``; ``git evidence judge`` only turns its
command line into a ``Request``, prints the verdict's record and exits with its code.

Evidence first, nothing run: the changes base → candidate are classified and the lock
roots of an exported workspace are hashed from disk and compared with the pin. Only a
candidate that changes no evidence and nothing held has its properties run, each in the
sandbox, in a workspace that shares nothing with the repository's git directory; the
lock roots are hashed again afterwards. Then one class, one ``Verdict`` (built by
``record.py``), published last (``publish.py``). The steps themselves are ``steps.py``'s
and ``held.py``'s; this module orders them and says what the verdict learns from each."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from git_evidence import __version__
from git_evidence.core.errors import EvidenceError, UsageError
from git_evidence.core.facts import Drift
from git_evidence.core.oids import Oid
from git_evidence.core.records import digest, now_utc
from git_evidence.judge import held, shards, steps, workspace
from git_evidence.judge import record as verdict_record
from git_evidence.judge.classes import (
    FLAKE_CANDIDATE,
    HELD,
    PATCH_INVALID,
    PIN_MOVED,
    Signals,
    classify,
    runs_before_runs,
)
from git_evidence.judge.publish import publish
from git_evidence.judge.record import Found
from git_evidence.judge.request import Request, check, draft_note, select_properties
from git_evidence.judge.scorecard import Sealed
from git_evidence.judge.signals import (
    PropertyRuns,
    active_freezes,
    any_disagreement,
    signals_from_runs,
)
from git_evidence.judge.text import explain, failing_lines
from git_evidence.judge.verdict import Facts, Verdict
from git_evidence.lock import store
from git_evidence.plumbing.context import require_commit
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve, tracking_ref
from git_evidence.policy.identity import WRITER_KEY, line_writer, server_pusher
from git_evidence.policy.parsing import recorded_origin
from git_evidence.policy.properties import JudgeProperty
from git_evidence.policy.schema import Policy
from git_evidence.sandbox import repo_state, runner
from git_evidence.terminal.progress import Progress

if TYPE_CHECKING:
    from git_evidence.ledger.entries import Freeze


def judge(git: Git, request: Request) -> Verdict:
    """The verdict of ``request``, published (``--out``, ``--log``, ``--note``). A
    judgement that could not decide is a verdict too (class ``undecided``, exit 2); a
    request that makes no sense is a UsageError before anything is read."""
    started_at, clock = now_utc(), time.monotonic()
    if request.merge:  # the shards' partial records into one verdict; nothing runs
        return _merged(git, request)
    check(request)
    refs = git.refs()
    candidate = None if request.patch else require_commit(git, request.candidate or "HEAD")
    head = candidate or require_commit(git, "HEAD")
    policy, base = judge_base(git, refs, request.base, head, request.policy)
    props = select_properties(policy, request)
    shard = None
    if request.shard:
        props, shard = shards.select(props, *request.shard)
    patch = workspace.read_patch(request.patch) if request.patch else None
    who = server_pusher(os.environ)
    facts = Facts(
        base,
        candidate or "patch:" + digest(patch or b""),
        policy.source,
        policy.digest,
        started_at,
        who.name,
        who.source,
        __version__,
        shard=shard,
    )
    verdict = _Judgement(git, policy, request, facts, clock).verdict(candidate, patch, props)
    _publish(git, policy, verdict, candidate, request)
    return verdict


def _merged(git: Git, request: Request) -> Verdict:
    verdict = shards.merge([(path, shards.load(path)) for path in request.merge])
    facts, source = verdict.facts, verdict.facts.policy_source
    candidate = require_commit(git, facts.candidate) if request.note else None
    if request.note and (request.policy or recorded_origin(source) == "draft"):
        raise draft_note(source if not request.policy else "")
    policy = resolve(git, at=facts.base).policy
    _publish(git, policy, verdict, candidate, request)
    return verdict


def _publish(
    git: Git, policy: Policy, verdict: Verdict, candidate: Oid | None, request: Request
) -> None:
    notes_ref = policy.judge.notes_ref
    publish(git, notes_ref, verdict, candidate, out=request.out, log=request.log, note=request.note)


def judge_base(
    git: Git, refs: dict[str, Oid], base_arg: str | None, head: Oid, draft: str | None = None
) -> tuple[Policy, Oid]:
    """``--base``, else the merge-base of the candidate with ``rules.base`` (the
    remote's copy when this clone has one); and the policy in force there
    (``in_force.resolve``: a draft, ``--policy FILE``, or a sealed file first)."""
    guide = None
    if base_arg:
        base = require_commit(git, base_arg)
    else:
        guide = resolve(git, draft=draft, refs=refs)
        tip = tracking_ref("origin", guide.policy.base, refs) or (
            guide.policy.base if guide.policy.base in refs else None
        )
        if tip is None:
            raise UsageError(
                f"no {guide.policy.base} here to find the base from",
                fix="fetch it (git fetch origin) or pass --base REF",
            )
        found = git.merge_base(refs[tip], head)
        if found is None:
            raise UsageError(f"the candidate shares no history with {tip}", fix="pass --base REF")
        base = found
        if guide.rev == base or guide.origin in ("draft", "sealed"):
            return guide.policy, base  # read already
    return resolve(git, draft=draft, at=base).policy, base


class _Judgement:
    """The steps of one judgement. ``facts`` grows as the steps learn (each a new
    ``Facts``), so that a judgement that cannot decide still states what it learnt."""

    def __init__(
        self, git: Git, policy: Policy, request: Request, facts: Facts, clock: float
    ) -> None:
        self.git, self.policy, self.request = git, policy, request
        self.facts, self.clock = facts, clock
        self.sealed: Sealed | None = None

    def built(self, found: Found) -> Verdict:
        duration = time.monotonic() - self.clock
        return verdict_record.build(self.facts, found, duration, self.sealed)

    def verdict(
        self, candidate: Oid | None, patch: bytes | None, props: Sequence[JudgeProperty]
    ) -> Verdict:
        git, policy, base = self.git, self.policy, self.facts.base
        try:
            pin = steps.read_pin(git, policy, base)
            self.facts = self.facts._replace(pin=pin.as_json())
            self.sealed = steps.read_sealed(git, policy, base)
            return self._held(candidate, patch, pin, props)
        except EvidenceError as exc:
            duration = time.monotonic() - self.clock
            return verdict_record.undecided(self.facts, exc, duration, self.sealed)

    def _held(
        self,
        candidate: Oid | None,
        patch: bytes | None,
        pin: steps.Pin,
        props: Sequence[JudgeProperty],
    ) -> Verdict:
        """The judgement in its own area, the repository fingerprinted around it."""
        git = self.git
        top = git.toplevel()  # None in a bare repository
        area = workspace.make_area(top)
        dirs = held.repository_dirs(git)
        state = repo_state.repository_state(dirs)
        try:
            with runner.interruptible():
                verdict = self._in(area, top, candidate, patch, pin, props)
            changed = repo_state.state_changes(state, repo_state.repository_state(dirs))
            if changed:
                raise EvidenceError(
                    "the repository changed during the judgement: " + "; ".join(changed[:10]),
                    fix="something outside the sandbox wrote the repository while the "
                    "candidate ran (or the sandbox is off): find it, restore the repository, "
                    "judge again",
                )
            return verdict
        finally:
            if self.request.keep:
                print(
                    f"git-evidence: workspace kept in {area.root} (each run's output: "
                    "scratch/run-N.stdout and .stderr)",
                    file=sys.stderr,
                )
            else:
                workspace.remove(area.root)

    def _in(
        self,
        area: workspace.Area,
        top: str | None,
        candidate: Oid | None,
        patch: bytes | None,
        pin: steps.Pin,
        props: Sequence[JudgeProperty],
    ) -> Verdict:
        """The steps in order: the candidate's tree, its evidence, the sandbox, the
        runs, what they changed, the class (a patch that does not apply, changed
        evidence and a shadowed import end it early)."""
        base, by_id = self.facts.base, {p.id: p for p in props}
        tree = self._candidate_tree(area, candidate, patch, by_id)
        if isinstance(tree, Found):
            return self.built(tree)
        first_ws = area.workspace(1)
        evidence, first, drift = self._evidence(*tree, first_ws, pin)
        if not runs_before_runs(first):
            klass = classify(first)
            why = explain(klass, first, base=base, props=by_id)
            return self.built(Found(klass, why, first, evidence=evidence, drift=drift))
        spaces = self._workspaces(first_ws, area, props)
        env, hold, packages = self._hold(area, props, first_ws, top)
        shadow = held.preflight(props, first_ws, area, env, hold)
        if shadow:
            signals = replace(first, held=first.held + shadow)
            why = explain(HELD, signals, base=base, props=by_id)
            return self.built(Found(HELD, why, signals, evidence=evidence, drift=drift))
        loaded = held.runner_config_files(first_ws)  # as it was before the runs
        results = self._run(props, spaces, area, env, hold)
        self._origins(results, spaces, packages)
        breach = self._breach(spaces, pin, drift, loaded)
        signals = signals_from_runs(
            results, self._freezes(results), replace(first, fixture_breach=breach)
        )
        klass, writer = classify(signals), None
        if klass == FLAKE_CANDIDATE:
            signals, writer = self._flakes(signals, by_id, area, env, hold)
        runs = sum(len(r) for res in results for r in res.seeds.values())
        why = explain(
            klass,
            signals,
            base=base,
            props=by_id,
            during_run=bool(breach),
            runs=runs,
            writer=writer,
            pythonpath=hold.pythonpath,
        )
        return self.built(Found(klass, why, signals, results, evidence, drift, writer))

    def _candidate_tree(
        self,
        area: workspace.Area,
        candidate: Oid | None,
        patch: bytes | None,
        by_id: dict[str, JudgeProperty],
    ) -> tuple[Git, str] | Found:
        """Where the candidate's tree is read from: the repository for a commit, a
        scratch object store for a patch applied to the base (``patch-invalid`` when
        it does not apply). The tree's id joins the facts."""
        reader, treeish, base = self.git, candidate or "", self.facts.base
        if patch is not None:
            try:
                reader, treeish = workspace.patched_tree(self.git, base, patch, area)
            except workspace.PatchInvalid as exc:
                signals = Signals(patch_invalid=True)
                why = explain(PATCH_INVALID, signals, base=base, props=by_id, patch_error=str(exc))
                return Found(PATCH_INVALID, why, signals)
        self.facts = self.facts._replace(candidate_tree=reader.tree_of(treeish))
        return reader, treeish

    def _evidence(
        self, reader: Git, treeish: str, first_ws: str, pin: steps.Pin
    ) -> tuple[dict[str, Any], Signals, dict[str, Any]]:
        """Evidence first, nothing run: the changes base → candidate classified, the
        candidate exported to the first workspace and its lock roots compared with
        the pin. Returns the evidence, the signals so far, and the drift record (its
        ``after`` filled once the runs are over)."""
        changes = steps.changed_paths(reader, self.facts.base, treeish)
        workspace.export_tree(reader, treeish, first_ws)
        before = steps.drift(first_ws, pin, self.policy)
        drift: dict[str, Any] = {"before": [steps.drift_json(d) for d in before], "after": []}
        evidence, first = steps.evidence_signals(self.policy, changes, before)
        return evidence, first, drift

    def _workspaces(
        self, first_ws: str, area: workspace.Area, props: Sequence[JudgeProperty]
    ) -> list[str]:
        """The first workspace and a copy per further job, no more than there are
        chains of runs to share out."""
        spaces = [first_ws]
        chains = sum(len(p.seeds) * (1 + len(p.must_fail) + len(p.must_pass)) for p in props)
        for number in range(2, min(self.request.jobs, chains) + 1):
            workspace.copy_workspace(first_ws, area.workspace(number))
            spaces.append(area.workspace(number))
        return spaces

    def _hold(
        self,
        area: workspace.Area,
        props: Sequence[JudgeProperty],
        first_ws: str,
        top: str | None,
    ) -> tuple[dict[str, str], runner.Held, list[str]]:
        """The runs' environment (the sealed files read-only beside it) and the
        sandbox that holds them; the sandbox and the import path join the facts."""
        policy = self.policy
        env = steps.run_env(area, policy.judge.env)
        extra_ro: list[str] = []
        if self.sealed is not None:
            env.update(steps.sealed_env(self.sealed, area, env))
            extra_ro.append(os.path.join(area.root, "sealed"))
        outputs = [p for p in (self.request.out, self.request.log) if p]
        hold = held.hold(
            self.git, policy, props, first_ws, top=top, outputs=outputs, extra_ro=extra_ro, env=env
        )
        self.facts = self.facts._replace(
            sandbox=hold.box.as_json(), pythonpath=tuple(hold.pythonpath)
        )
        packages = held.top_packages(first_ws, hold.pythonpath)
        env["EVIDENCE_PACKAGES"] = ",".join(packages)
        return env, hold, packages

    def _run(
        self,
        props: Sequence[JudgeProperty],
        spaces: list[str],
        area: workspace.Area,
        env: dict[str, str],
        hold: runner.Held,
    ) -> list[PropertyRuns]:
        """Every property's runs, in the sandbox; an error if any never started."""
        with Progress("judging") as progress:
            results = steps.run_properties(props, spaces, area, env, progress, hold)
        if self.request.verbose:
            sys.stderr.write("".join(line + "\n" for line in failing_lines(results)))
        held.never_started(results)
        return results

    def _origins(
        self, results: Sequence[PropertyRuns], spaces: list[str], packages: list[str]
    ) -> None:
        """Where the runs imported from joins the facts; an import from outside the
        workspaces is an error (the dropped ones are stated first)."""
        origins = held.import_origins(results, spaces, packages)
        self.facts = self.facts._replace(dropped_origins=origins["dropped"])
        if origins["outside"]:
            raise held.outside_error(origins["outside"])
        self.facts = self.facts._replace(import_origins=origins["origins"])

    def _breach(
        self, spaces: list[str], pin: steps.Pin, drift: dict[str, Any], loaded: dict[str, str]
    ) -> tuple[str, ...]:
        """What changed during the runs: a lock root in any workspace (recorded in
        ``drift["after"]``), a runner configuration written, the pin moved."""
        after: dict[str, Drift] = {}
        for space in spaces:
            for item in steps.drift(space, pin, self.policy):
                after.setdefault(item.path, item)
        drift["after"] = [steps.drift_json(d) for d in after.values()]
        breach = tuple(f"changed during the run: {d.describe()}" for d in after.values())
        breach += tuple(held.runner_config_written(loaded, spaces))
        lock = store.find_lock(self.git, self.policy.notes_ref, self.facts.base)
        if lock != steps.lock_ref(pin):
            breach += (PIN_MOVED,)
        return breach

    def _freezes(self, results: Sequence[PropertyRuns]) -> dict[tuple[str, str], Freeze]:
        """The freezes active at the base; the ledger is read only when some runs
        disagree."""
        if not any_disagreement(results):
            return {}
        now = datetime.now(timezone.utc)
        return active_freezes(steps.base_freezes(self.git, self.policy, self.facts.base), now)

    def _flakes(
        self,
        signals: Signals,
        by_id: dict[str, JudgeProperty],
        area: workspace.Area,
        env: dict[str, str],
        hold: runner.Held,
    ) -> tuple[Signals, str | None]:
        """A flake candidate's tests run again on the base (a test flaky there too is
        not the candidate's), and the writer a freeze line would name."""
        base_ws = area.workspace(0)
        workspace.export_tree(self.git, self.facts.base, base_ws)
        signals = steps.flakes_on_base(signals, by_id, base_ws, area, env, hold)
        return signals, line_writer(None, self.git.config_get(WRITER_KEY), os.environ)[0]
