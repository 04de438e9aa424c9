"""The staged change as the facts of one commit of the current branch (pre-commit):
what the index changes against HEAD (during a merge, only what differs from HEAD *and*
from every merged head, as for a merge commit on the server), classified as a commit
is, and the policy and labels files it stages that do not parse. Git only, no finding:
the decide pass words them for the index (``rules/decide.py``)."""

from __future__ import annotations

from git_evidence.core.facts import CommitDiff, PushFacts, RefUpdate, UpdateBundle, UpdateFacts
from git_evidence.core.oids import ZERO_OID
from git_evidence.core.paths import Change
from git_evidence.gate import carried
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.raw_diff import LinkResolver, parse_raw
from git_evidence.plumbing.repo_dirs import head_state
from git_evidence.policy.schema import Policy
from git_evidence.rules.summaries import summarize
from git_evidence.rules.table import STAGED


class Staged:
    """What the index changes: the changes that count, and whether a merge is made."""

    __slots__ = ("branch", "changes", "merge")

    def __init__(self, changes: tuple[Change, ...], merge: bool, branch: str) -> None:
        self.changes = changes
        self.merge = merge
        self.branch = branch  # "" when HEAD is detached


def staged_changes(git: Git) -> Staged:
    head = head_state(git)
    parents = [head.commit or git.empty_tree(), *head.merge_heads]
    with CatFile(git) as blobs:
        links = LinkResolver(git, blobs)
        diffs = [
            next(
                parse_raw(iter(git.diff_index_cached(p)), links, STAGED),
                CommitDiff(STAGED, False, ()),
            )
            for p in parents
        ]
    return Staged(_differs_from_all(diffs), len(parents) > 1, head.branch)


def gather(git: Git, staged: Staged, policy: Policy) -> PushFacts:
    """The staged change judged as one commit of the current branch: a hold blocks only
    when that branch is protected, as on the server."""
    summary = summarize(CommitDiff(STAGED, staged.merge, staged.changes), policy.classifier())
    zero = ZERO_OID
    branch = staged.branch
    facts = UpdateFacts(
        RefUpdate(zero, zero, branch or "HEAD"),
        protected=False,
        notes=False,
        commit=STAGED,
        revlist=(),
        commits=(STAGED,),
        named_ref=False,
    )
    # A detached HEAD is on no branch: its holds are reported, as on a feature branch.
    protected = bool(branch) and policy.is_protected(branch)
    # Evidence alone, committed on a branch the server takes proposals on, is one there.
    proposal = policy.proposals and branch.startswith("refs/heads/") and not protected
    files = carried.staged_files(git, staged.changes, policy)
    bundle = UpdateBundle(facts, (summary,), files=files)
    return PushFacts((bundle,), "pre-commit", staged_protected=protected, staged_proposal=proposal)


def _differs_from_all(diffs: list[CommitDiff]) -> tuple[Change, ...]:
    first, *others = diffs
    keep = set.intersection(*[{c.path for c in d.changes} for d in diffs]) if others else None
    return tuple(c for c in first.changes if keep is None or c.path in keep)
