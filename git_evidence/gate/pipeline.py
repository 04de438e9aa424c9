"""The judging pipeline shared by every judging command:
ref updates → ranges → classified commits → findings → report."""

from __future__ import annotations

import gc
from collections.abc import Mapping, Sequence

from git_evidence.core import paths
from git_evidence.core.errors import PolicyError
from git_evidence.core.oids import Oid
from git_evidence.core.path_globs import fold_path
from git_evidence.core.paths import Classifier
from git_evidence.gate import endpoint
from git_evidence.gate.endpoint import EndpointRow
from git_evidence.gate.ranges import (
    LinkResolver,
    RefUpdate,
    RefView,
    UpdateFacts,
    plan_updates,
    settle_plans,
    stream_commits,
)
from git_evidence.gate.report import Report
from git_evidence.gate.time_budget import PROGRESS
from git_evidence.ledger import check as ledger_check
from git_evidence.lock import check as lock_check
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.stream import Later, diff_trees_later
from git_evidence.policy import labels
from git_evidence.policy.identity import Identity
from git_evidence.policy.parsing import parse_policy
from git_evidence.policy.schema import POLICY_FILE, Policy
from git_evidence.rules import table

MAX_FINDINGS_KEY = "evidence.maxFindings"
UNPUSHED_FILES = (
    "a push of this to a protected ref is refused until the file parses: fix it and commit again"
)


def decide(
    git: Git,
    updates: Sequence[RefUpdate],
    policy: Policy,
    view: RefView,
    who: Identity,
    *,
    named_refs: bool = True,
) -> Report:
    """``named_refs=False`` judges ranges that are not ref updates (``check``)."""
    # A judgement allocates acyclic data (tuples, strings, dicts and lists of them):
    # the cyclic collector would only rescan every live summary again and again on a
    # large push (a quarter of a second of 15,000 commits). It resumes afterwards.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _judge(git, updates, policy, view, who, named_refs)
    finally:
        if collecting:
            gc.enable()


def _judge(
    git: Git,
    updates: Sequence[RefUpdate],
    policy: Policy,
    view: RefView,
    who: Identity,
    named_refs: bool,
) -> Report:
    plans = plan_updates(git, updates, policy, view)
    for plan in plans:
        plan.named_ref = named_refs
    classifier = policy.classifier()
    ledger_path = fold_path(policy.ledger_path)
    quota_path = fold_path(policy.quota_path)
    PROGRESS.stage = "diffing the pushed commits"
    # Ranges of one push overlap; boundary commits (`-<oid>`) are not judged.
    PROGRESS.listed = lambda: len({c for p in plans for c in p.listed if c[:1] != "-"})
    summaries: dict[Oid, table.CommitSummary] = {}
    parents: dict[str, list[str]] = {}  # each commit's, from the stream's listing
    ahead: dict[int, Later] = {}
    for commit in stream_commits(git, plans, parents):
        if not summaries:
            # The ranges are listed: each base-to-tip diff the endpoint rule needs
            # starts now, on the core the stream's reader leaves free.
            settle_plans(plans)
            ahead = {
                i: diff_trees_later(git, *ends)
                for i, p in enumerate(plans)
                if (ends := _endpoint_ends(p, parents))
            }
        summaries[commit.oid] = table.summarize(commit, classifier, ledger_path, quota_path)
        PROGRESS.commits += 1
    if not summaries:  # no commit came: settled only now
        settle_plans(plans)
    with CatFile(git) as cat:
        PROGRESS.stage = "comparing each base with its new tip"
        links = LinkResolver(git, cat)
        endpoints = [
            _endpoint_rows(git, links, classifier, plan, parents, ahead.pop(i, None))
            for i, plan in enumerate(plans)
        ]
        # Rows were classified by their raw bytes, each distinct path once; what
        # follows asks by name (the classifier's own cache), so the raw keys can go.
        classifier.plain_classes.clear()
        decisions = []
        for plan, rows in zip(plans, endpoints, strict=True):
            commits = [summaries[c] for c in plan.commits]
            kept = endpoint.answering(git, plan, rows, summaries, parents)
            if kept:
                commits = [table.with_kept(c, kept[c.oid]) if c.oid in kept else c for c in commits]
            decisions.append(table.decide_update(plan, commits, policy, who))
        PROGRESS.stage = "checking the lock and the freeze ledger"
        pins = lock_check.pin_lookup(git, cat, policy.notes_ref)
        notes: list[str] = []
        for outcome, rows in zip(decisions, endpoints, strict=True):
            facts = outcome.facts
            if facts.notes and facts.update.ref.casefold() == policy.judge.notes_ref.casefold():
                outcome.findings += _verdict_findings(git, cat, facts, policy, who)
            elif facts.notes:
                outcome.findings += _notes_findings(git, cat, facts, policy, who)
            if not outcome.judged or facts.commit is None:
                continue
            moved = {fold_path(row[1]) for row in rows}
            policy_moved = (
                facts.base is None
                or fold_path(POLICY_FILE) in moved
                or any(_touches(summaries[c], paths.POLICY, POLICY_FILE) for c in facts.commits)
            )
            # The files a protected ref must be left with parsing; a range `check` judges
            # is no ref, so what a push of it to a protected ref would meet is a note.
            if facts.protected or not facts.named_ref:
                carried: Policy | None = None  # the policy file the new tip carries, parsed
                files: list[table.Finding] = []
                if policy_moved:
                    facts.policy_changed = facts.protected
                    problem, carried = _policy_problem(cat, facts.commit)
                    files += table.decide_policy_file(facts, problem, POLICY_FILE)
                # The labels file the tip leaves: at the path the policy in force after
                # the push names (a sealed policy's, else the one the tip carries).
                after = policy if carried is None or _sealed(policy) else carried
                folded = fold_path(after.labels_path)
                if policy_moved or folded in moved or _labels_touched(summaries, facts, folded):
                    problem = _labels_problem(cat, facts.commit, after.labels_path)
                    files += table.decide_labels_file(facts, problem, after.labels_path)
                if facts.protected:
                    outcome.findings += files
                else:
                    notes += [f"{f.rule}: {f.message} ({UNPUSHED_FILES})" for f in files]
            found = lock_check.lock_facts(git, cat, policy, facts.base, facts.commit, view.notes)
            proposed = any(f.rule == "evidence-proposed" for f in outcome.findings)
            outcome.findings += table.decide_lock(facts, found, policy, who, proposed=proposed)
            touched = [(c, change) for c in facts.commits for change in summaries[c].ledger]
            # The whole-range check runs whenever the ledger differs between base and
            # new, also when no commit's own diff touches it (a merge kept an older one).
            if touched or ledger_path in moved:
                problems = ledger_check.ledger_problems(git, cat, facts, touched, policy, pins)
                outcome.findings += table.decide_ledger(facts, problems, policy.ledger_path)
            spent = [(c, change) for c in facts.commits for change in summaries[c].quota]
            if spent or quota_path in moved:  # as the ledger: a kept older copy too
                # loaded only for a push that touches the quota, off the hook's start
                from git_evidence.ledger import quota, quota_check

                faults = quota_check.quota_problems(git, cat, facts, spent, policy, who)
                outcome.findings += quota.decide_quota(facts, faults, policy.quota_path)
    return Report(who, policy, decisions, notes=notes)


def show_findings(git: Git, report: Report, given: int | None) -> None:
    """How many findings the text report shows in full: ``--max-findings N``, else
    ``git config evidence.maxFindings`` (for hooks, which take no options; read only
    when some limit could hide a finding), else the default. 0 shows all."""
    if given is not None:
        report.max_findings = given
        return
    if sum(len(v.findings) for v in report.decisions) <= 1:
        return
    value = git.config_get(MAX_FINDINGS_KEY)
    if value is None:
        return
    if value.strip().isdigit():
        report.max_findings = int(value)
    else:
        report.notes.append(
            f"git config {MAX_FINDINGS_KEY} is {value!r}, not a number of findings: "
            f"showing {report.max_findings} (0 shows all)"
        )


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
    return base, new


def _touches(summary: table.CommitSummary, klass: paths.PathClass, path: str) -> bool:
    return klass in summary.classes and path in dict(summary.by_class)[klass]


def _policy_problem(cat: CatFile, commit: str) -> tuple[str | None, Policy | None]:
    """Why the policy file ``commit`` carries does not parse and validate, or None
    and the policy (the built-in defaults when there is no file, which are valid)."""
    hit = cat.get(f"{commit}:{POLICY_FILE}")
    if hit is None:
        return None, Policy()
    _, kind, data = hit
    source = f"{commit[:12]}:{POLICY_FILE}"
    if kind != "blob":
        return f"{source}: a {kind}, not a policy file", None
    try:
        return None, parse_policy(data, source)
    except PolicyError as exc:
        return exc.message, None


def _sealed(policy: Policy) -> bool:
    """A policy sealed on the server (``evidence.policyFile``), or a draft tried with
    ``--policy``, wins over any file a commit carries, its ``[labels].path`` included."""
    return policy.source.startswith(("sealed:", "draft policy "))


def _labels_touched(
    summaries: dict[Oid, table.CommitSummary], facts: UpdateFacts, folded: str
) -> bool:
    """Whether a commit of the range changes the labels file (any spelling of it)."""
    for commit in facts.commits:
        summary = summaries[commit]
        if paths.POLICY in summary.classes and any(
            fold_path(path) == folded for path in dict(summary.by_class)[paths.POLICY]
        ):
            return True
    return False


def _labels_problem(cat: CatFile, commit: str, path: str) -> str | None:
    """Why the labels file ``commit`` carries at ``path`` does not parse (``FILE:LINE:
    what``), or None (no file: no labels, nothing to parse)."""
    hit = cat.get(f"{commit}:{path}")
    if hit is None:
        return None
    _, kind, data = hit
    source = f"{commit[:12]}:{path}"
    if kind != "blob":
        return f"{source}: a {kind}, not a labels file"
    return labels.labels_problem(data, source)


def _notes_findings(
    git: Git, cat: CatFile, facts: UpdateFacts, policy: Policy, who: Identity
) -> list[table.Finding]:
    """A lock writer's update of the notes ref: every note it adds must be a lock of
    its commit (anyone else's is refused by notes-forge already)."""
    if facts.update.is_delete or not who.lock_writer(policy):
        return []
    old = None if facts.update.is_create else facts.update.old
    problems = lock_check.check_notes_update(git, cat, old, facts.update.new, policy)
    return table.decide_notes(facts, problems)


def _verdict_findings(
    git: Git, cat: CatFile, facts: UpdateFacts, policy: Policy, who: Identity
) -> list[table.Finding]:
    """A verdict writer's update of the verdict notes ref: every note it adds or
    changes must be one canonical verdict record about the commit it annotates."""
    from git_evidence.judge.verdict import VerdictInvalid, parse_verdict

    if facts.update.is_delete or not who.verdict_writer(policy):
        return []
    old = git.empty_tree() if facts.update.is_create else facts.update.old
    out = git.out("diff-tree", "-r", "-z", "--raw", "--no-renames", old, facts.update.new)
    problems = []
    tokens = out.split(b"\0")
    for meta, raw in zip(tokens[0::2], tokens[1::2], strict=False):
        fields = meta.decode().split()
        if not meta.startswith(b":") or fields[-1] == "D":
            continue
        annotated = raw.decode("utf-8", "replace").replace("/", "")
        try:
            parse_verdict(cat.read(fields[3]), annotated)
        except VerdictInvalid as exc:
            problems.append(exc.message)
    return table.decide_verdict_notes(facts, problems)
