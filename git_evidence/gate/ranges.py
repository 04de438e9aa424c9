"""Ref updates → the commits they bring → the changes of each commit.

This layer asks git questions and gathers facts (the records of ``core/facts.py``); it
decides nothing.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import NamedTuple, cast

from git_evidence.core.errors import GitError, UsageError
from git_evidence.core.facts import CommitDiff, RefUpdate, UpdateFacts
from git_evidence.core.links import LinkWalk, follow_link
from git_evidence.core.oids import Oid, is_oid, is_zero
from git_evidence.core.paths import GITLINK_MODE, SYMLINK_MODE, Change
from git_evidence.core.slots import Slotted
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.git import Git, decode_path
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


class RefView(NamedTuple):
    """The refs an update is judged against: the server's current refs, or on a client
    what it knows of the remote's (its remote-tracking refs)."""

    protected: Mapping[str, Oid]  # protected ref → current oid (existing ones only)
    base: Oid | None  # current oid of the base ref
    notes: bool = False  # the lock notes ref exists here


class UpdatePlan(Slotted):
    """One ref update as it is planned and its range listed: what git says before the
    stream (``plan_updates``), and rev-list's lines as the stream reads them. When the
    listing is complete, ``settle_plans`` makes the ``UpdateFacts`` the rules read."""

    __slots__ = (
        "base",
        "commit",
        "creates_base",
        "fast_forward",
        "listed",
        "named_ref",
        "notes",
        "protected",
        "revlist",
        "update",
    )

    def __init__(
        self,
        update: RefUpdate,
        protected: bool,
        notes: bool,
        named_ref: bool = True,
    ) -> None:
        self.update = update
        self.protected = protected
        self.notes = notes
        self.commit: Oid | None = None  # `new` peeled to a commit
        self.fast_forward: bool | None = None
        self.base: Oid | None = None
        self.revlist: tuple[str, ...] | None = None  # rev-list arguments for the range
        # rev-list's lines for the range as the stream reads them: commit ids, and with
        # `--boundary` the boundary commits as `-<oid>` (stream_commits)
        self.listed: list[str] = []
        self.named_ref = named_ref  # False for `check` ranges: no ref-name rules
        # the update creates [rules].base itself, which does not exist here (a first push)
        self.creates_base = False


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
        )
        facts.creates_base = update.is_create and view.base is None and update.ref == policy.base
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
    return plans


def _base_of(git: Git, commit: Oid, base_tip: Oid, protected: Sequence[Oid]) -> Oid | None:
    """merge-base(rules.base, new) — unless other protected lines exist and the range
    sits on exactly one of them (a hotfix off `release/1.0`): then the commit of that
    line it sits on, since that line's history is as accepted as the base's."""
    if not set(protected) - {base_tip}:
        return git.merge_base(base_tip, commit)
    return git.nearest_of(commit, protected) or git.merge_base(base_tip, commit)


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
        settled.append(
            UpdateFacts(
                plan.update,
                plan.protected,
                plan.notes,
                commit=plan.commit,
                fast_forward=fast_forward,
                base=plan.base,
                revlist=plan.revlist,
                listed=listed,
                commits=cast("list[Oid]", [c for c in listed if not c.startswith("-")]),
                named_ref=plan.named_ref,
                creates_base=plan.creates_base,
            )
        )
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
    chunks = diff_tree_chunks(git, [p.revlist or () for p in judged], members, parents)
    with CatFile(git) as blobs:
        yield from parse_raw(
            itertools.chain.from_iterable(chunks),
            LinkResolver(git, blobs),
            plain_rows=True,
        )


def parse_raw(
    tokens: Iterator[bytes],
    links: LinkResolver,
    first_commit: Oid | None = None,
    *,
    plain_rows: bool = False,
) -> Iterator[CommitDiff]:
    """Parse ``diff-tree -z --raw`` (combined rows for merges) token by token.

    ``first_commit`` names the changes when the output has no header (``diff-index
    --cached``: links are then followed through the index). ``plain_rows``: plain
    rows are handed on raw in ``rows`` instead of as ``Change`` objects."""
    in_index = first_commit is not None
    oid = first_commit
    merge = False
    changes: list[Change] = []
    rows: list[bytes] = []
    for token in tokens:
        if not token or token[0] != _COLON:
            if oid is not None:
                yield _commit(oid, merge, changes, rows, links, in_index)
            oid, merge, changes, rows = _intern_oid(token.decode()), False, [], []
            continue
        raw = next(tokens, None)
        if raw is None:
            raise GitError(["git", "diff-tree"], 0, token, b"a row without a path")
        if plain_rows and token[1] != _COLON and _PLAIN_MODES[token[1:14]]:
            rows.append(token)
            rows.append(raw)
            continue
        # Interned: a push touches the same paths again and again.
        changes.append(
            _change(token, sys.intern(decode_path(raw)), links, None if in_index else oid)
        )
        if token[1] == _COLON:
            merge = True
    if oid is not None:
        yield _commit(oid, merge, changes, rows, links, in_index)


def _commit(
    oid: Oid,
    merge: bool,
    changes: list[Change],
    rows: list[bytes],
    links: LinkResolver,
    in_index: bool,
) -> CommitDiff:
    if not changes:
        return CommitDiff(oid, merge, (), rows)
    return CommitDiff(oid, merge, links.dependents(None if in_index else oid, changes), rows)


_COLON = ord(":")


class _PlainModes(dict[bytes, bool]):
    """``<old mode> <new mode>`` of a raw row → whether it is plain: neither side a
    symlink or a gitlink (whose rows need their targets read)."""

    def __missing__(self, key: bytes) -> bool:
        modes = key.split(b" ")
        plain = (
            len(modes) == 2
            and all(len(mode) == 6 and mode.isdigit() for mode in modes)
            and not {_SYMLINK_BYTES, _GITLINK_BYTES} & set(modes)
        )
        self[key] = plain
        return plain


_PLAIN_MODES = _PlainModes()


_SYMLINK_BYTES = SYMLINK_MODE.encode()
_GITLINK_BYTES = GITLINK_MODE.encode()
_MODES: dict[bytes, str] = {}


def _change(meta: bytes, path: str, links: LinkResolver, treeish: str | None) -> Change:
    if not meta.startswith(b"::") and _SYMLINK_BYTES not in meta:
        # The common row, `:<old> <new> <oid> <oid> <S>`, read at fixed offsets. The
        # object ids are only needed to read link targets, so plain rows skip them.
        old_mode = _MODES.get(meta[1:7]) or _MODES.setdefault(meta[1:7], meta[1:7].decode())
        new_mode = _MODES.get(meta[8:14]) or _MODES.setdefault(meta[8:14], meta[8:14].decode())
        return Change(chr(meta[-1]), old_mode, new_mode, "", "", path, raw_meta=meta)
    text = meta.decode()
    parents = len(text) - len(text.lstrip(":"))
    fields = text.lstrip(":").split()
    modes = fields[: parents + 1]
    oids = cast("list[Oid]", fields[parents + 1 : 2 * parents + 2])
    letters = fields[2 * parents + 2] if len(fields) > 2 * parents + 2 else "M"
    if parents > 1:
        # combined row: A everywhere = added, D = deleted, anything else = modified
        status = letters[0] if len(set(letters)) == 1 and letters[0] in "AD" else "M"
    else:
        status = letters[0]
    old_mode, new_mode, old_oid, new_oid = modes[0], modes[-1], oids[0], oids[-1]
    link = old_link = None
    walk = LinkWalk((), False)
    if new_mode == SYMLINK_MODE and not is_zero(new_oid):
        link = links.text(new_oid)
        walk = links.follow(treeish, path, link)
    if old_mode == SYMLINK_MODE and not is_zero(old_oid):
        old_link = links.text(old_oid)
    return Change(
        status,
        old_mode,
        new_mode,
        old_oid,
        new_oid,
        path,
        link,
        old_link,
        walk.reached,
        link_outside=walk.outside,
    )


class LinkResolver:
    """Resolves symlinks through the links of one tree (a commit's, or the index), so
    a chain of product-side links cannot reach evidence unseen (links.follow_link).
    A tree's links are listed once, when one of its rows is a link."""

    def __init__(self, git: Git, blobs: CatFile) -> None:
        self.git = git
        self.blobs = blobs
        self._texts: dict[Oid, str] = {}  # blob id → link text
        self._tree: tuple[str | None, dict[str, Oid]] | None = None  # the last tree's links

    def text(self, oid: Oid) -> str:
        text = self._texts.get(oid)
        if text is None:
            text = self._texts[oid] = decode_path(self.blobs.read(oid))
        return text

    def _links(self, treeish: str | None) -> dict[str, Oid]:
        if self._tree is None or self._tree[0] != treeish:
            self._tree = (treeish, self.git.symlinks(treeish))
        return self._tree[1]

    def _reader(self, treeish: str | None) -> Callable[[Sequence[str]], dict[str, str]]:
        links = self._links(treeish)
        return lambda paths: {p: self.text(links[p]) for p in paths if p in links}

    def follow(self, treeish: str | None, link_path: str, text: str) -> LinkWalk:
        return follow_link(link_path, text, self._reader(treeish))

    def dependents(self, treeish: str | None, changes: list[Change]) -> tuple[Change, ...]:
        """``changes`` with, for each link it adds or changes, where the tree's other
        links that climb (``..``) through it now lead: `src/l -> sub/../../fixtures/g`
        committed first, `src/sub -> ../tests/unit/deep` later, makes the later
        commit's `src/sub` lead to tests/fixtures/g."""
        changed = {c.path for c in changes if c.link_target is not None}
        if not changed:
            return tuple(changes)
        read = self._reader(treeish)
        extra: dict[str, list[str]] = {}
        for path, oid in self._links(treeish).items():
            text = self.text(oid)
            # Without a `..` a walk through a link stays under that link's target,
            # which the link's own walk judges.
            if path in changed or ".." not in text:
                continue
            walk = follow_link(path, text, read)
            for hop in walk.through:
                if hop in changed:
                    extra.setdefault(hop, []).extend(walk.reached)
        return tuple(
            c._replace(link_hops=(*c.link_hops, *extra[c.path])) if c.path in extra else c
            for c in changes
        )
