"""``git evidence pre-commit``: judge the staged change against HEAD as one commit of
the current branch (a hold blocks only on a protected branch, as on the server).

During a merge (MERGE_HEAD exists) only the paths whose staged content differs from
HEAD *and* from every merged head count, as for a merge commit on the server.

Nothing is committed yet, so the hints speak of the index (`git restore --staged`),
and a committed policy that does not parse lets through the one commit that fixes it."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from git_evidence.core.errors import PolicyError
from git_evidence.core.oids import ZERO_OID, is_zero
from git_evidence.core.paths import Change
from git_evidence.gate.ranges import CommitDiff, LinkResolver, RefUpdate, UpdateFacts, parse_raw
from git_evidence.gate.report import Report
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.context import client_policy
from git_evidence.plumbing.git import Git
from git_evidence.policy import labels
from git_evidence.policy.identity import Identity, client_identity
from git_evidence.policy.parsing import parse_policy
from git_evidence.policy.schema import POLICY_FILE, Policy
from git_evidence.rules import table
from git_evidence.terminal import console

if TYPE_CHECKING:
    import argparse


def run(args: argparse.Namespace) -> Report:
    git = Git()
    refs = git.refs()
    head = git.resolve_commit("HEAD")
    parents = [head or git.empty_tree(), *_merge_heads(git)]
    with CatFile(git) as blobs:
        links = LinkResolver(git, blobs)
        diffs = [
            next(
                parse_raw(iter(git.diff_index_cached(p)), links, table.STAGED),
                CommitDiff(table.STAGED, False, ()),
            )
            for p in parents
        ]
    changes = _differs_from_all(diffs)
    who = client_identity(git.config_bool("evidence.trusted"))
    try:
        policy = client_policy(git, None, refs)
    except PolicyError as exc:
        return _broken_policy(git, exc, changes, who)
    commit = CommitDiff(table.STAGED, len(parents) > 1, changes)
    summary = table.summarize(commit, policy.classifier())
    zero = ZERO_OID
    branch = git.run("symbolic-ref", "-q", "HEAD", ok_codes=(0, 1, 128))[1].decode().strip()
    facts = UpdateFacts(
        RefUpdate(zero, zero, branch or "HEAD"),
        protected=False,
        notes=False,
        commit=table.STAGED,
        revlist=(),
        commits=[table.STAGED],
        named_ref=False,
    )
    # A detached HEAD is on no branch: its holds are reported, as on a feature branch.
    protected = bool(branch) and policy.is_protected(branch)
    # Evidence alone, committed on a branch the server takes proposals on, is one there.
    proposal = policy.proposals and branch.startswith("refs/heads/") and not protected
    outcome = table.decide_staged(
        facts, summary, policy, who, protected=protected, proposal=proposal
    )
    problem = _staged_policy_problem(git, changes)
    outcome.findings += table.decide_staged_policy(facts, problem, POLICY_FILE)
    for path, problem in _staged_labels_problems(git, changes, policy):
        outcome.findings += table.decide_staged_labels(facts, problem, path)
    return Report(who, policy, [outcome], staged=True)


def _broken_policy(
    git: Git, exc: PolicyError, changes: tuple[Change, ...], who: Identity
) -> Report:
    """The committed policy does not parse: the commit that corrects it, alone, is let
    through; anything else is refused (exit 2) with how to make that commit."""
    if [c.path for c in changes] == [POLICY_FILE] and _staged_policy_problem(git, changes) is None:
        # Said even though the hook allows: the policy in force is broken.
        console.say(
            f"{exc.message}; this commit corrects {POLICY_FILE} alone: allowed here, the "
            "server validates it (policy-invalid)"
        )
        return Report(who, None, [], staged=True)
    exc.fix = table.CLIENT_POLICY_FIX
    raise exc


def _staged_policy_problem(git: Git, changes: tuple[Change, ...]) -> str | None:
    """Why the staged policy file does not parse, or None (unchanged, deleted: the
    built-in defaults, or valid)."""
    for change in changes:
        if change.path != POLICY_FILE:
            continue
        new = change.object_ids()[1]
        if is_zero(new):
            return None
        if not change.new_mode.startswith("100"):
            return f"{POLICY_FILE}: not a regular file"
        try:
            parse_policy(git.blob_bytes(new), f"staged:{POLICY_FILE}")
        except PolicyError as exc:
            return exc.message
    return None


def _staged_labels_problems(
    git: Git, changes: tuple[Change, ...], policy: Policy
) -> list[tuple[str, str]]:
    """``(path, why)`` for a staged labels file that does not parse: at the path the
    policy names, or the one a staged policy file names."""
    named = {policy.labels_path}
    if _staged_policy_problem(git, changes) is None:
        for change in changes:
            new = change.object_ids()[1]
            if change.path == POLICY_FILE and not is_zero(new):
                named.add(parse_policy(git.blob_bytes(new), POLICY_FILE).labels_path)
    found = []
    for change in changes:
        if change.path not in named:
            continue
        new = change.object_ids()[1]
        if is_zero(new):  # deleted: no labels, nothing to parse
            continue
        source = f"staged:{change.path}"
        if not change.new_mode.startswith("100"):
            found.append((change.path, f"{source}: not a regular file"))
            continue
        problem = labels.labels_problem(git.blob_bytes(new), source)
        if problem is not None:
            found.append((change.path, problem))
    return found


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
