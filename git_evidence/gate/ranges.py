"""Ref updates → the commits they bring → the changes of each commit.

This layer asks git questions and gathers facts (the records of ``core/facts.py``); it
decides nothing.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import cast

from git_evidence.core.errors import UsageError
from git_evidence.core.facts import CommitDiff, RefUpdate, RefView, UpdateFacts
from git_evidence.core.oids import Oid, is_oid
from git_evidence.core.slots import Slotted
from git_evidence.plumbing import batch
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.raw_diff import LinkResolver, parse_raw
from git_evidence.plumbing.stream import diff_tree_chunks
from git_evidence.policy.schema import Policy

# ``sys.intern`` for the ids the stream parses: typed to give an Oid, at no cost per id.
_intern_oid = cast("Callable[[str], Oid]", sys.intern)


def parse_receive_lines(data: bytes) -> list[RefUpdate]:
    """``<old> SP <new> SP <ref> LF`` lines as pre-receive reads them."""
    updates = []
    for number, raw in enumerate(data.splitlines(), start=1):
        line = raw.decode("utf-8", "surrogateescape")
        parts = line.split(" ", 2)
        if len(parts) != 3 or not (is_oid(parts[0]) and is_oid(parts[1])):
            raise UsageError(
                f"hook input line {number} is not `<old> <new> <ref>`: {line[:120]!r}",
                fix="run this as git's pre-receive hook",
            )
        updates.append(RefUpdate(Oid(parts[0]), Oid(parts[1]), parts[2]))
    return updates


def parse_push_lines(data: bytes) -> list[RefUpdate]:
    """pre-push lines ``<local ref> <local oid> <remote ref> <remote oid>`` as updates
    of the remote refs."""
    out = []
    for number, raw in enumerate(data.splitlines(), start=1):
        parts = raw.decode("utf-8", "surrogateescape").rsplit(" ", 3)
        if len(parts) != 4 or not (is_oid(parts[1]) and is_oid(parts[3])):
            raise UsageError(
                f"pre-push input line {number} is not "
                "`<local ref> <local oid> <remote ref> <remote oid>`",
                fix="run this as git's pre-push hook",
            )
        out.append(RefUpdate(Oid(parts[3]), Oid(parts[1]), parts[2]))
    return out


class UpdatePlan(Slotted):
    """One ref update as it is planned and its range listed: what git says before the
    stream (``plan_updates``), and rev-list's lines as the stream reads them. When the
    listing is complete, ``settle_plans`` makes the ``UpdateFacts`` the rules read."""

    update: RefUpdate
    protected: bool
    notes: bool
    named_ref: bool = True  # False for `check` ranges: no ref-name rules
    # the update creates [rules].base itself, which does not exist here (a first push)
    creates_base: bool = False
    commit: Oid | None = None  # `new` peeled to a commit
    fast_forward: bool | None = None
    base: Oid | None = None
    revlist: tuple[str, ...] | None = None  # rev-list arguments for the range
    # rev-list's lines for the range as the stream reads them: commit ids, and with
    # `--boundary` the boundary commits as `-<oid>` (stream_commits)
    listed: list[str] = []  # noqa: RUF012  # a fresh list per plan (core/slots.py)
    # rev-list's lines for a range of one commit on its only parent, known from a
    # lookup already: no rev-list is started for it (``_one_commit_ranges``)
    known: bytes | None = None


def plan_updates(
    git: Git,
    updates: Sequence[RefUpdate],
    policy: Policy,
    view: RefView,
    *,
    named_refs: bool = True,
) -> list[UpdatePlan]:
    """``named_refs=False`` plans ranges that are not ref updates (``check``)."""
    wanted = [u.new for u in updates if not u.is_delete]
    is_protected = policy.is_protected
    wanted += [u.old for u in updates if not u.is_create and is_protected(u.ref)]
    peeled = git.peel_all(sorted(set(wanted)))
    plans = []
    exclude = sorted(set(view.protected.values()))
    for update in updates:
        facts = UpdatePlan(
            update,
            protected=is_protected(update.ref),
            notes=update.ref.casefold()
            in (policy.notes_ref.casefold(), policy.judge.notes_ref.casefold()),
            named_ref=named_refs,
            creates_base=update.is_create and view.base is None and update.ref == policy.base,
        )
        plans.append(facts)
        if update.is_delete or facts.notes:
            continue
        facts.commit = peeled.get(update.new)
        if facts.commit is None:
            continue
        if facts.protected and not update.is_create:
            old = update.old
            # An old tip this repository lacks cannot be an ancestor of what it has.
            if peeled.get(old) is None:
                facts.fast_forward = False
                continue
            # old is an ancestor of new exactly when it is a boundary commit of
            # `new --not old` (or equals new): the range's own walk answers it.
            facts.base = old
            facts.revlist = ("--boundary", facts.commit, "--not", old)
            continue
        others = [oid for ref, oid in view.protected.items() if ref != update.ref]
        exclude_here = sorted(set(others)) if facts.protected else exclude
        if view.base is not None:
            facts.base = _base_of(git, facts.commit, view.base, exclude_here)
        facts.revlist = (facts.commit, "--not", *exclude_here)
    _one_commit_ranges(git, plans)
    return plans


def _one_commit_ranges(git: Git, plans: Sequence[UpdatePlan]) -> None:
    """A range ``C --not P`` (``--boundary`` too) where ``P`` is ``C``'s only parent is
    ``C`` alone: rev-list would print ``C P`` (and the boundary ``-P``). Its parents are
    asked in the lookups the command keeps open, and the lines kept for the stream, so
    the everyday push and one-commit check start no rev-list."""
    single = [
        p
        for p in plans
        if p.revlist is not None
        and p.commit is not None
        and len(p.revlist) - (p.revlist[0] == "--boundary") == 3
        and p.revlist[-2] == "--not"
    ]
    if not single:
        return
    hits = batch.check(git, [f"{p.commit}^{n}" for p in single for n in (1, 2)])
    for i, plan in enumerate(single):
        first, second = hits[2 * i], hits[2 * i + 1]
        assert plan.revlist is not None
        parent = plan.revlist[-1]
        if second is None and first is not None and first[1] == "commit" and first[0] == parent:
            boundary = f"-{parent}\n" if plan.revlist[0] == "--boundary" else ""
            plan.known = f"{plan.commit} {parent}\n{boundary}".encode()


def _base_of(git: Git, commit: Oid, base_tip: Oid, protected: Sequence[Oid]) -> Oid | None:
    """merge-base(rules.base, new) — unless other protected lines exist and the range
    sits on exactly one of them (a hotfix off `release/1.0`): then the commit of that
    line it sits on, since that line's history is as accepted as the base's."""
    if not set(protected) - {base_tip}:
        # The common case needs no merge-base: the base tip is the commit or one of
        # its parents (one lookup in the batch-check the command keeps open).
        if commit == base_tip or base_tip in _parents(git, commit):
            return base_tip
        return git.merge_base(base_tip, commit)
    return git.nearest_of(commit, protected) or git.merge_base(base_tip, commit)


def _parents(git: Git, commit: Oid) -> set[str]:
    """The first two parents of ``commit`` (fewer when it has fewer)."""
    return {hit[0] for hit in batch.check(git, [f"{commit}^1", f"{commit}^2"]) if hit is not None}


def settle_plans(plans: Sequence[UpdatePlan]) -> list[UpdateFacts]:
    """After the listing: each plan's facts, built once: the boundary commits split off
    each range, and the fast-forward question of protected updates (listed with
    ``--boundary``) settled."""
    settled = []
    for plan in plans:
        listed = plan.listed
        fast_forward = plan.fast_forward
        if plan.revlist and plan.revlist[0] == "--boundary":
            old = plan.update.old
            fast_forward = old == plan.commit or f"-{old}" in listed
        fields = {name: getattr(plan, name) for name in UpdateFacts._fields if name != "commits"}
        fields["fast_forward"] = fast_forward
        commits = cast("list[Oid]", [c for c in listed if not c.startswith("-")])
        settled.append(UpdateFacts(**fields, commits=commits))
    return settled


def stream_commits(
    git: Git, plans: Sequence[UpdatePlan], parents: dict[str, list[str]] | None = None
) -> Iterator[CommitDiff]:
    """Every commit of every plan's range, each once, through one ``diff-tree``.
    Fills each plan's ``listed`` and ``parents`` (each listed commit's parents) as
    side effects, both complete when the first commit comes. Plain rows come as raw
    ``rows`` (``CommitDiff``): the summary classifies them by their bytes."""
    judged = [p for p in plans if p.revlist is not None]
    members: list[list[str]] = [p.listed for p in judged]
    parents = {} if parents is None else parents
    revlists = [p.revlist or () for p in judged]
    known = [p.known for p in judged]
    chunks = diff_tree_chunks(git, revlists, members, parents, known)
    with CatFile(git) as blobs:
        yield from parse_raw(
            itertools.chain.from_iterable(chunks),
            LinkResolver(git, blobs),
            plain_rows=True,
        )
