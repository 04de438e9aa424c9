"""The endpoint in a judgement: the evidence that differs between an
update's base and its new tip, and for each such path the commits that answer for its
value when no commit of the range sets it on the history it reaches the tip by (a
merge that kept an older copy from a parent forked before the evidence changed).

This layer reads git and walks the range's history; ``rules`` judges the commits it
names as having made the change."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, cast

from git_evidence.core.errors import GitError
from git_evidence.core.facts import CommitSummary, UpdateFacts
from git_evidence.core.oids import Oid
from git_evidence.core.paths import EVIDENCE_CLASSES, SYMLINK_MODE, Classifier, PathClass
from git_evidence.plumbing.raw_diff import LinkResolver, parse_raw

if TYPE_CHECKING:
    from git_evidence.gate import walk
from git_evidence.plumbing.git import Git, decode_path
from git_evidence.plumbing.stream import diff_pairs

# (class, path, new mode, new object id) of an evidence path that differs between
# base and new; a path new lacks has mode 000000 and a zero id, as git prints them.
EndpointRow = tuple[PathClass, str, str, str]
_SYMLINK = SYMLINK_MODE.encode()
_PATHSPEC_MAX = 32


def evidence_rows(
    git: Git,
    links: LinkResolver,
    classifier: Classifier,
    base: str,
    new: str,
    tokens: list[bytes] | None = None,
) -> list[EndpointRow]:
    """One ``diff-tree base new`` for the whole update (``tokens``: its output, when
    the caller started it early). It is not limited by pathspec: evidence is matched
    on folded paths and by structure (links, entries above a root), which no pathspec
    expresses; the rows are classified as commits' are."""
    if tokens is None:
        tokens = git.diff_trees(base, new)
    rows: list[EndpointRow] = []
    header = new.encode()
    pairs = iter(tokens)
    known = classifier.plain_classes
    # A large push differs from its base in thousands of product paths: a plain row is
    # classified by its path alone (mostly found by its bytes: the stream classified
    # it), only a symlink row is parsed whole, its target followed through `new`'s tree.
    for meta, raw in zip(pairs, pairs, strict=True):
        if _SYMLINK in meta:
            diff = next(parse_raw(iter([header, meta, raw]), links))
            path = diff.changes[0].path
            klass = classifier.classify_change(diff.changes[0]).klass
        else:
            path, klass = known.get(raw) or classifier.classify_plain(raw)
        if klass in EVIDENCE_CLASSES:
            fields = meta.decode().split()
            rows.append((klass, path, fields[1], fields[3]))
    return rows


def answering(
    git: Git,
    facts: UpdateFacts,
    rows: Sequence[EndpointRow],
    summaries: Mapping[Oid, CommitSummary],
    parents: Mapping[str, Sequence[str]],
) -> dict[Oid, list[tuple[PathClass, str]]]:
    """commit → ``(class, path)`` of the endpoint rows it is judged as changing
    although its own diff does not.
    ``parents``: each commit's, as the stream listed them.

    Each evidence path that differs between base and new must get its value at new
    from a commit of the range that sets it by its own diff, on the history that
    value reaches new by (see ``walk.Graph.walk``). A merge through which an older copy
    arrives instead — it took a parent's copy that came from outside the range over
    another parent's different one — is judged as changing the path. When no commit
    of the range answers, the value came with history the range excludes (another
    protected ref's accepted commits), except on a protected ref, whose whole new
    history is the range: there the tip answers.
    """
    found: dict[Oid, list[tuple[PathClass, str]]] = {}
    if not rows or facts.commit is None:
        return found
    wanted = {row[1] for row in rows}
    touching: dict[str, list[Oid]] = {}
    plain: set[str] = set()  # paths some commit touches, but not as evidence
    for oid in facts.commits:
        for klass, listed in summaries[oid].by_class:
            for path in listed:
                if path in wanted:
                    touching.setdefault(path, []).append(oid)
                    if klass not in EVIDENCE_CLASSES:
                        plain.add(path)
    graph = _graph(git, facts, facts.commit, summaries, parents, wanted, touching)
    walked = [row for row in rows if row[1] in graph.merged_over or row[1] in plain]
    # All paths in one pass over the graph (a bit per path); a merge that names one
    # parent twice (commit-tree allows it) is left to the per-path walk, whose
    # reading of it the bit-parallel pass does not reproduce.
    answers = (
        graph.walk_all([(path, (path, mode, oid)) for _, path, mode, oid in walked])
        if not graph.repeated_parent
        else {path: graph.walk(path, (path, mode, oid)) for _, path, mode, oid in walked}
    )
    for klass, path, _mode, _oid in rows:
        if path in graph.merged_over or path in plain:
            blamed, explained = answers[path]
        else:
            # No merge takes this path from one parent against another's copy, and
            # every commit touching it does so as evidence: walking back from new,
            # the first commit touching it on every way sets the value, as evidence.
            blamed, explained = [], path in touching
        if not blamed and not explained and facts.protected:
            blamed = [facts.commit]
        for commit in blamed:
            found.setdefault(commit, []).append((klass, path))
    return found


def merge_differs(
    git: Git, facts: UpdateFacts, parents: Mapping[str, Sequence[str]], wanted: set[str]
) -> set[tuple[str, str, str]]:
    """``(merge, parent, path)`` for each ``wanted`` path a merge of the range differs
    in from that parent: one ``diff-tree --stdin`` of the (merge, parent) pairs,
    limited by pathspec when few paths are asked (git matches every tree entry against
    every pathspec: past a few paths, the whole diff filtered here costs less). A
    merge is diffed per parent only here, for the evidence that differs between base
    and new: the stream's combined diff skips what a merge took whole from one parent
    (a subtree pull), which a diff per parent would read in full."""
    pairs = [(m, p) for m in facts.commits if len(parents[m]) > 1 for p in parents[m]]
    # diff-tree answers the lines in order, each with its commit id as a header.
    blocks = iter(pairs)
    current: tuple[str, str] = ("", "")
    meta: bytes | None = None
    paths = sorted(wanted)
    limit = paths if len(paths) <= _PATHSPEC_MAX else []
    differs: set[tuple[str, str, str]] = set()
    for token in diff_pairs(git, [f"{m} {p}" for m, p in pairs], limit) if pairs else ():
        if meta is not None:
            path = decode_path(token)
            if path in wanted:
                differs.add((*current, path))
            meta = None
        elif token.startswith(b":"):
            meta = token
        else:
            current = next(blocks)
            if token.decode() != current[0]:
                raise GitError(["git", "diff-tree", "--stdin"], 0, token, b"out of order")
    return differs


def _graph(
    git: Git,
    facts: UpdateFacts,
    tip: Oid,
    summaries: Mapping[Oid, CommitSummary],
    parents: Mapping[str, Sequence[str]],
    wanted: set[str],
    touching: Mapping[str, list[Oid]],
) -> walk.Graph:
    """The range's graph: each commit's parents inside it, and the merges' differences
    from each parent in the ``wanted`` paths (none to read when no commit is a merge)."""
    # loaded only for an update whose evidence differs between base and new (most
    # pushes change none), off the hook's start
    from git_evidence.gate.walk import Graph

    commits = facts.commits
    if any(len(parents[c]) > 1 for c in commits):
        inside = {c: cast("list[Oid]", parents[c]) for c in commits}
        return Graph(tip, inside, merge_differs(git, facts, parents, wanted), summaries, touching)
    # No merge: the range is one chain, listed child first; its last commit's parent
    # lies outside.
    chain: dict[Oid, list[Oid]] = {}
    for child, parent in itertools.pairwise(commits):
        chain[child] = [parent]
    if commits:
        chain[commits[-1]] = []
    return Graph(tip, chain, set(), summaries, touching)
