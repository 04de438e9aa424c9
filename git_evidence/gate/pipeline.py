"""The judging pipeline shared by every judging command: ref updates → ranges →
classified commits → the facts of each update (``gather``: git only, no finding) →
the one decide pass (``rules/decide.py``, through ``decision.py``) → a report."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from git_evidence.core import paths
from git_evidence.core.facts import (
    CommitSummary,
    FileProblem,
    PushFacts,
    RefUpdate,
    RefView,
    UpdateBundle,
    UpdateFacts,
)
from git_evidence.core.oids import Oid
from git_evidence.core.path_globs import fold_path
from git_evidence.core.paths import Classifier
from git_evidence.gate import carried, decision, endpoint
from git_evidence.gate.endpoint import EndpointRow
from git_evidence.gate.ranges import plan_updates, settle_plans, stream_commits
from git_evidence.gate.report import MAX_FINDINGS, Rendering, Report
from git_evidence.gate.time_budget import PROGRESS
from git_evidence.lock import check as lock_check
from git_evidence.plumbing import lookups
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.context import policy_after_push
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.raw_diff import LinkResolver
from git_evidence.plumbing.stream import Later, diff_trees_later
from git_evidence.policy.identity import Identity
from git_evidence.policy.schema import POLICY_FILE, Policy
from git_evidence.rules.decide import judges_range
from git_evidence.rules.summaries import summarize, with_kept

if TYPE_CHECKING:
    from git_evidence.core.facts import EntryPoint, LedgerProblem

MAX_FINDINGS_KEY = "evidence.maxFindings"


def decide(
    git: Git,
    updates: Sequence[RefUpdate],
    policy: Policy,
    view: RefView,
    who: Identity,
    *,
    named_refs: bool = True,
    entry: EntryPoint | None = None,
    server_refs: Mapping[str, Oid] | None = None,
    notes: Sequence[str] = (),
    after: Sequence[str] = (),
) -> Report:
    """Gather, then decide, the cyclic collector paused throughout (``decision.acyclic``:
    the gathered summaries stay live until the last finding): ``named_refs=False``
    judges ranges that are not ref updates (``check``); ``entry`` names who asks when a
    finding is worded for it (``pre-push``); ``server_refs`` (pre-receive): the server's
    refs before the push, to read its policy as the push leaves it; ``notes``, ``after``:
    the caller's, said before and after the pass's own (``decision.decide``)."""
    entry = entry or ("pre-receive" if named_refs else "check")
    # Gathering writes nothing: its lookups share one cat-file (plumbing/lookups.py).
    with decision.acyclic(), lookups.live(git):
        push = gather(
            git,
            updates,
            policy,
            view,
            who,
            named_refs=named_refs,
            entry=entry,
            server_refs=server_refs,
        )
        return decision.decide(push, policy, who, notes, after)


def gather(
    git: Git,
    updates: Sequence[RefUpdate],
    policy: Policy,
    view: RefView,
    who: Identity,
    *,
    named_refs: bool = True,
    entry: EntryPoint = "pre-receive",
    server_refs: Mapping[str, Oid] | None = None,
) -> PushFacts:
    """Every fact the decide pass reads about ``updates``, from git; no finding."""
    push = _gather(git, updates, policy, view, who, named_refs, entry)
    if server_refs is None or not any(b.policy_changed for b in push.updates):
        return push
    # Each policy file parses; together they must still give one policy.
    problem = policy_after_push(git, server_refs, updates)
    if problem is None:
        return push
    return PushFacts(push.updates, entry, after_push=FileProblem("policy", POLICY_FILE, problem))


def _gather(
    git: Git,
    updates: Sequence[RefUpdate],
    policy: Policy,
    view: RefView,
    who: Identity,
    named_refs: bool,
    entry: EntryPoint,
) -> PushFacts:
    plans = plan_updates(git, updates, policy, view, named_refs=named_refs)
    classifier = policy.classifier()
    ledger_path = fold_path(policy.ledger_path)
    quota_path = fold_path(policy.quota_path)
    PROGRESS.stage = "diffing the pushed commits"
    # Ranges of one push overlap; boundary commits (`-<oid>`) are not judged.
    PROGRESS.listed = lambda: len({c for p in plans for c in p.listed if c[:1] != "-"})
    summaries: dict[Oid, CommitSummary] = {}
    parents: dict[str, list[str]] = {}  # each commit's, from the stream's listing
    ahead: dict[int, Later] = {}
    settled: list[UpdateFacts] | None = None
    for commit in stream_commits(git, plans, parents):
        if settled is None:
            # The ranges are listed: each base-to-tip diff the endpoint rule needs
            # starts now, on the core the stream's reader leaves free.
            settled = settle_plans(plans)
            ahead = {
                i: diff_trees_later(git, *ends)
                for i, facts in enumerate(settled)
                if (ends := _endpoint_ends(facts, parents))
            }
        summaries[commit.oid] = summarize(commit, classifier, ledger_path, quota_path)
        PROGRESS.commits += 1
    if settled is None:  # no commit came: settled only now
        settled = settle_plans(plans)
    with CatFile(git) as cat:
        PROGRESS.stage = "comparing each base with its new tip"
        links = LinkResolver(git, cat)
        endpoints = [
            _endpoint_rows(git, links, classifier, facts, parents, ahead.pop(i, None))
            for i, facts in enumerate(settled)
        ]
        # Rows were classified by their raw bytes, each distinct path once; what
        # follows asks by name (the classifier's own cache), so the raw keys can go.
        classifier.plain_classes.clear()
        judged: list[list[CommitSummary]] = []
        for facts, rows in zip(settled, endpoints, strict=True):
            commits = [summaries[c] for c in facts.commits]
            kept = endpoint.answering(git, facts, rows, summaries, parents)
            if kept:
                commits = [with_kept(c, kept[c.oid]) if c.oid in kept else c for c in commits]
            judged.append(commits)
        PROGRESS.stage = "checking the lock and the freeze ledger"
        pins = lock_check.pin_lookup(git, cat, policy.notes_ref)
        bundles = [
            _bundle(git, cat, facts, commits, rows, summaries, policy, view, who, pins)
            for facts, commits, rows in zip(settled, judged, endpoints, strict=True)
        ]
    return PushFacts(bundles, entry)


def _bundle(
    git: Git,
    cat: CatFile,
    facts: UpdateFacts,
    commits: list[CommitSummary],
    rows: Sequence[EndpointRow],
    summaries: Mapping[Oid, CommitSummary],
    policy: Policy,
    view: RefView,
    who: Identity,
    pins: Callable[[str], bool],
) -> UpdateBundle:
    """What one update's decision reads beside its commits: the notes it pushes, and
    for a range judged, the files its tip leaves, the lock, the ledger and the quota."""
    if facts.notes and facts.update.ref.casefold() == policy.judge.notes_ref.casefold():
        verdicts = _verdict_problems(git, cat, facts, policy, who)
        return UpdateBundle(facts, commits, verdicts=verdicts)
    if facts.notes:
        notes = _notes_problems(git, cat, facts, policy, who)
        return UpdateBundle(facts, commits, notes=notes)
    if not judges_range(facts, policy, who) or facts.commit is None:
        return UpdateBundle(facts, commits)
    moved = {fold_path(row[1]) for row in rows}
    policy_moved = (
        facts.base is None
        or fold_path(POLICY_FILE) in moved
        or any(_touches(summaries[c], paths.POLICY, POLICY_FILE) for c in facts.commits)
    )
    # The files a protected ref must be left with parsing; a range `check` judges
    # is no ref, so what a push of it to a protected ref would meet is a note.
    files: list[FileProblem] = []
    if facts.protected or not facts.named_ref:
        carries: Policy | None = None  # the policy file the new tip carries, parsed
        if policy_moved:
            problem, carries = carried.tip_policy(cat, facts.commit)
            if problem is not None:
                files.append(FileProblem("policy", POLICY_FILE, problem))
        # The labels file the tip leaves: at the path the policy in force after
        # the push names (a sealed policy's, else the one the tip carries).
        after = policy if carries is None or _sealed(policy) else carries
        folded = fold_path(after.labels_path)
        if policy_moved or folded in moved or _labels_touched(summaries, facts, folded):
            problem = carried.tip_labels(cat, facts.commit, after.labels_path)
            if problem is not None:
                files.append(FileProblem("labels", after.labels_path, problem))
    found = lock_check.lock_facts(git, cat, policy, facts.base, facts.commit, view.notes)
    touched = [(c, change) for c in facts.commits for change in summaries[c].ledger]
    ledger: list[tuple[Oid | None, LedgerProblem]] = []
    # The whole-range check runs whenever the ledger differs between base and
    # new, also when no commit's own diff touches it (a merge kept an older one).
    if touched or fold_path(policy.ledger_path) in moved:
        # loaded only for a push that touches the ledger, off the hook's start
        from git_evidence.ledger import check as ledger_check

        ledger = ledger_check.ledger_problems(git, cat, facts, touched, policy, pins)
    spent = [(c, change) for c in facts.commits for change in summaries[c].quota]
    quota: list[tuple[Oid | None, LedgerProblem]] = []
    if spent or fold_path(policy.quota_path) in moved:  # as the ledger: a kept older copy too
        # loaded only for a push that touches the quota, off the hook's start
        from git_evidence.ledger import quota_check

        quota = quota_check.quota_problems(git, cat, facts, spent, policy, who)
    return UpdateBundle(
        facts,
        commits,
        lock=found,
        ledger=ledger,
        quota=quota,
        files=files,
        policy_changed=facts.protected and policy_moved,
    )


def rendering(
    git: Git, report: Report, given: int | None, options: tuple[str, ...] = ()
) -> Rendering:
    """How ``report`` is shown: the ``options`` its printed commands carry, and how many
    findings the text shows in full: ``--max-findings N`` (``given``), else ``git config
    evidence.maxFindings`` (for hooks, which take no options; read only when some limit
    could hide a finding), else the default. 0 shows all."""
    if given is not None:
        return Rendering(given, options)
    if sum(len(v.findings) for v in report.decisions) <= 1:
        return Rendering(options=options)
    value = git.config_get(MAX_FINDINGS_KEY)
    if value is None:
        return Rendering(options=options)
    if value.strip().isdigit():
        return Rendering(int(value), options)
    note = (
        f"git config {MAX_FINDINGS_KEY} is {value!r}, not a number of findings: "
        f"showing {MAX_FINDINGS} (0 shows all)"
    )
    return Rendering(options=options, notes=(note,))


def _endpoint_rows(
    git: Git,
    links: LinkResolver,
    classifier: Classifier,
    plan: UpdateFacts,
    parents: Mapping[str, Sequence[str]],
    started: Later | None,
) -> list[EndpointRow]:
    """The evidence rows of ``base..new`` of a settled update (``started``: its diff,
    begun beside the stream), or none when the endpoint rule reads no diff."""
    ends = _endpoint_ends(plan, parents)
    if ends is None:
        return []
    tokens = started.tokens() if started is not None else None
    return endpoint.evidence_rows(git, links, classifier, *ends, tokens)


def _endpoint_ends(
    plan: UpdateFacts, parents: Mapping[str, Sequence[str]]
) -> tuple[Oid, Oid] | None:
    """``(base, new)`` when the endpoint rule reads ``base..new`` of a settled update
    whose commits are judged. Not when new fast-forwards old through one chain of
    single-parent commits: each difference between old and new is then some commit's
    own diff, judged already (``parents``: each commit's, as the stream listed them)."""
    base, new = plan.base, plan.commit
    if plan.revlist is None or base is None or new is None or base == new:
        return None
    if plan.fast_forward is False:
        return None
    one_chain = all(len(parents[c]) < 2 for c in plan.commits)
    if plan.fast_forward and base == plan.update.old and one_chain:
        return None
    # The same for a range that is no update of a ref (`check`, a new ref): one chain
    # whose only parent outside it is the base.
    inside = set(plan.commits)
    if one_chain and inside and {p for c in inside for p in parents[c]} - inside == {base}:
        return None
    return base, new


def _touches(summary: CommitSummary, klass: paths.PathClass, path: str) -> bool:
    return klass in summary.classes and path in dict(summary.by_class)[klass]


def _sealed(policy: Policy) -> bool:
    """A policy sealed on the server (``evidence.policyFile``), or a draft tried with
    ``--policy``, wins over any file a commit carries, its ``[labels].path`` included."""
    return policy.origin in ("sealed", "draft")


def _labels_touched(
    summaries: Mapping[Oid, CommitSummary], facts: UpdateFacts, folded: str
) -> bool:
    """Whether a commit of the range changes the labels file (any spelling of it)."""
    for commit in facts.commits:
        summary = summaries[commit]
        if paths.POLICY in summary.classes and any(
            fold_path(path) == folded for path in dict(summary.by_class)[paths.POLICY]
        ):
            return True
    return False


def _notes_problems(
    git: Git, cat: CatFile, facts: UpdateFacts, policy: Policy, who: Identity
) -> list[str]:
    """A lock writer's update of the notes ref: every note it adds must be a lock of
    its commit (anyone else's is refused by notes-forge already)."""
    if facts.update.is_delete or not who.lock_writer(policy):
        return []
    old = None if facts.update.is_create else facts.update.old
    return lock_check.check_notes_update(git, cat, old, facts.update.new, policy)


def _verdict_problems(
    git: Git, cat: CatFile, facts: UpdateFacts, policy: Policy, who: Identity
) -> list[str]:
    """A verdict writer's update of the verdict notes ref: every note it adds or
    changes must be one canonical verdict record about the commit it annotates."""
    from git_evidence.judge import record as verdict_record

    if facts.update.is_delete or not who.verdict_writer(policy):
        return []
    old = git.empty_tree() if facts.update.is_create else facts.update.old
    problems = []
    for status, _, blob, path in git.changed_files(old, facts.update.new):
        if status != "D":  # the annotated commit, as the notes tree names it (fanned out)
            problems += verdict_record.problems(cat.read(blob), path.replace("/", ""))
    return problems
