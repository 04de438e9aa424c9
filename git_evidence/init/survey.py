"""``git evidence init`` as a library call, ``survey(git, commits)``: the default
branch and the files at its tip (plumbing/layout.py), the draft (draft.py) as a
commented policy file (render.py) parsed back by the policy's own parser, what the
draft makes of each file, and the last commits of the branch judged under the draft
by the very call ``check`` makes (``gate/checking.check_range``), so the figures are
the ones ``git evidence check --policy FILE START..TIP`` prints."""

from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from git_evidence.core.errors import UsageError
from git_evidence.core.oids import Oid
from git_evidence.core.paths import PRECEDENCE, PathClass
from git_evidence.gate.checking import check_range
from git_evidence.gate.report import Report
from git_evidence.init.draft import draft
from git_evidence.init.render import POLICY_FILE, draft_toml
from git_evidence.plumbing import lookups
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.layout import default_branch, history_start, tracked_paths
from git_evidence.policy.identity import client_identity
from git_evidence.policy.parsing import DRAFT_SOURCE, parse_policy
from git_evidence.policy.schema import Decision, Policy
from git_evidence.rules.findings import worst
from git_evidence.rules.table import ALLOW, HOLD, REJECT

EXAMPLES = 3  # paths shown for each class


class Impact(NamedTuple):
    """The last commits of the branch under the draft, as ``check`` judges them."""

    start: Oid | None  # None: the branch's whole history
    tip: Oid
    commits: int  # commits judged (what the first-parent ones merged included)
    allowed: int
    held: int
    refused: int
    held_by: dict[str, int]  # rule → held commits with a finding of it
    refused_by: dict[str, int]  # rule → refused commits with a finding of it
    # rule → its decision and the paths it names, for findings about the range as a
    # whole (the holds of [rules], what the range changes in all), not one commit
    range_rules: dict[str, tuple[Decision, int]]
    decision: str  # the decision check gives the range


class Survey(NamedTuple):
    base: str  # the default branch, as a ref
    tip: Oid
    files: int
    text: str  # the draft policy file
    policy: Policy
    classes: dict[PathClass | str, tuple[int, list[str]]]  # class → count, examples
    impact: Impact


def survey(git: Git, commits: int, target: str = POLICY_FILE) -> Survey:
    """The draft for ``git``'s repository and its figures over the last ``commits``
    first-parent commits of the default branch; ``target`` is where the draft will be
    (the policy's source says so)."""
    with lookups.live(git):
        refs = git.refs()
        base, tip = default_branch(git, refs)
        if tip is None:
            raise UsageError(
                f"{base} has no commit to read a layout from",
                fix="commit the project first, then run `git evidence init`",
            )
        paths = tracked_paths(git, tip)
        text = draft_toml(draft(paths, base), len(paths), tip)
        policy = parse_policy(text.encode(), target)
        policy = policy._replace(source=DRAFT_SOURCE.format(path=target), origin="draft")
        start = history_start(git, tip, commits)
        who = client_identity(git.config_bool("evidence.trusted"), None)
        report = check_range(git, refs, policy, who, start, tip, range_text(start, tip))
    return Survey(
        base, tip, len(paths), text, policy, classes_of(policy, paths), tally(report, start, tip)
    )


def range_text(start: Oid | None, tip: Oid) -> str:
    return f"{start[:12]}..{tip[:12]}" if start else tip[:12]


def classes_of(policy: Policy, paths: list[str]) -> dict[PathClass | str, tuple[int, list[str]]]:
    """How many of ``paths`` each class gets under ``policy``, and a few of them (one
    per glob first, so the examples show different places)."""
    classifier = policy.classifier()
    counts: Counter[str] = Counter()
    examples: dict[str, list[str]] = {}
    globs_shown: set[tuple[str, str | None]] = set()
    for path in paths:
        match = classifier.classify(path)
        counts[match.klass] += 1
        shown = examples.setdefault(match.klass, [])
        if len(shown) < EXAMPLES and (match.klass, match.glob) not in globs_shown:
            globs_shown.add((match.klass, match.glob))
            shown.append(path)
    order = [*PRECEDENCE, "other"]
    return {k: (counts[k], examples.get(k, [])) for k in order if counts[k]}


def tally(report: Report, start: Oid | None, tip: Oid) -> Impact:
    """Each commit's decision: the worst of the findings about it (none: allowed), and
    the rules that held or refused it. Pure over the report."""
    findings: dict[str, list[tuple[str, str]]] = {}
    commits: list[Oid] = []
    range_rules: dict[str, tuple[Decision, int]] = {}
    for outcome in report.decisions:
        commits += outcome.facts.commits
        for f in outcome.findings:
            if f.commit is None:
                decision, paths = range_rules.get(f.rule, (ALLOW, 0))
                named = sum(len(v) for v in f.paths.values())
                range_rules[f.rule] = (worst([decision, f.decision]), paths + named)
            else:
                findings.setdefault(f.commit, []).append((f.rule, f.decision))
    held_by: Counter[str] = Counter()
    refused_by: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for commit in commits:
        found = findings.get(commit, [])
        decision = worst(d for _, d in found)  # type: ignore[misc]
        counts[decision] += 1
        into = held_by if decision == HOLD else refused_by if decision == REJECT else None
        if into is not None:
            for rule in {r for r, d in found if d == decision}:
                into[rule] += 1
    return Impact(
        start=start,
        tip=tip,
        commits=len(commits),
        allowed=counts[ALLOW],
        held=counts[HOLD],
        refused=counts[REJECT],
        held_by=dict(held_by.most_common()),
        refused_by=dict(refused_by.most_common()),
        range_rules=range_rules,
        decision=report.decision,
    )
