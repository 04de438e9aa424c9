"""``git evidence pre-commit``: judge the staged change against HEAD as one commit.

During a merge (MERGE_HEAD exists) only the paths whose staged content differs from
HEAD *and* from every merged head count, as for a merge commit on the server."""

from __future__ import annotations

import argparse
import os

from git_evidence import rules
from git_evidence.context import client_policy
from git_evidence.git import CatFile, Git
from git_evidence.identity import client_identity
from git_evidence.paths import Change
from git_evidence.ranges import CommitDiff, LinkResolver, RefUpdate, UpdateFacts, parse_raw
from git_evidence.report import Report

STAGED = "staged"


def run(args: argparse.Namespace) -> Report:
    git = Git()
    refs = git.refs()
    policy = client_policy(git, None, refs)
    head = git.resolve_commit("HEAD")
    parents = [head or git.empty_tree(), *_merge_heads(git)]
    with CatFile(git) as blobs:
        links = LinkResolver(git, blobs)
        diffs = [
            next(
                parse_raw(iter(git.diff_index_cached(p)), links, STAGED),
                CommitDiff(STAGED, False, ()),
            )
            for p in parents
        ]
    changes = _differs_from_all(diffs)
    commit = CommitDiff(STAGED, len(parents) > 1, changes)
    summary = rules.summarize(commit, policy.classifier())
    zero = "0" * 40
    branch = git.run("symbolic-ref", "-q", "HEAD", ok_codes=(0, 1, 128))[1]
    facts = UpdateFacts(
        RefUpdate(zero, zero, branch.decode().strip() or "HEAD"),
        protected=False,
        notes=False,
        commit=STAGED,
        revlist=(),
        commits=[STAGED],
        named_ref=False,
    )
    who = client_identity(git.config_bool("evidence.trusted"))
    verdict = rules.judge_update(facts, [summary], policy, who)
    return Report(who, policy, [verdict])


def _merge_heads(git: Git) -> list[str]:
    path = git.git_path("MERGE_HEAD")
    if not os.path.exists(path):
        return []
    with open(path) as handle:
        return [line.strip() for line in handle if line.strip()]


def _differs_from_all(diffs: list[CommitDiff]) -> tuple[Change, ...]:
    first, *others = diffs
    keep = set.intersection(*[{c.path for c in d.changes} for d in diffs]) if others else None
    return tuple(c for c in first.changes if keep is None or c.path in keep)
