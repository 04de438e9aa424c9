"""The endpoint in a judgement: the evidence that differs between an
update's base and its new tip, and for each such path the commits that answer for its
value when no commit of the range sets it on the history it reaches the tip by (a
merge that kept an older copy from a parent forked before the evidence changed).

This layer reads git and walks the range's history; ``rules`` judges the commits it
names as having made the change."""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import cast

from git_evidence.core.errors import GitError
from git_evidence.core.oids import Oid
from git_evidence.core.paths import EVIDENCE_CLASSES, SYMLINK_MODE, Classifier, PathClass
from git_evidence.gate.ranges import LinkResolver, UpdateFacts, parse_raw
from git_evidence.plumbing.git import Git, decode_path
from git_evidence.plumbing.stream import diff_pairs
from git_evidence.rules.table import CommitSummary, sets_in, value_pairs

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
    value reaches new by (see ``_Graph.walk``). A merge through which an older copy
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
    graph = _Graph(git, facts, facts.commit, summaries, parents, wanted, touching)
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


class _Graph:
    """The range cut into segments: runs of single-parent commits with no branching
    inside, and merges on their own. A walk for one path steps from segment to
    segment, finding the first commit of a segment that touches the path by bisection,
    so it costs the merges and branch points it meets, not the commits."""

    def __init__(
        self,
        git: Git,
        facts: UpdateFacts,
        tip: Oid,
        summaries: Mapping[Oid, CommitSummary],
        parents: Mapping[str, Sequence[str]],
        wanted: set[str],
        touching: Mapping[str, list[Oid]],
    ) -> None:
        self.summaries = summaries
        self._pairs: dict[Oid, frozenset[tuple[str | bytes, str | bytes]]] = {}
        commits = facts.commits
        self.parents: dict[Oid, list[Oid]] = {}
        # (merge, parent, path) for each endpoint path a merge's result differs in
        # from that parent.
        self.differs: set[tuple[str, str, str]] = set()
        if any(len(parents[c]) > 1 for c in commits):
            self.parents = {c: cast("list[Oid]", parents[c]) for c in commits}
            self.differs = merge_differs(git, facts, parents, wanted)
        else:
            # No merge: the range is one chain, listed child first; its last commit's
            # parent lies outside.
            for child, parent in itertools.pairwise(commits):
                self.parents[child] = [parent]
            if commits:
                self.parents[commits[-1]] = []
        self.merged_over = {path for _, _, path in self.differs}
        self.repeated_parent = any(len(set(ps)) < len(ps) for ps in self.parents.values())
        self.tip = tip
        self._segments(tip)
        # path → the range's commits touching it, oldest last; turned into positions
        # per segment only as a walk needs them (held for every touching path, those
        # lists were a hundred thousand small objects at the hook's peak of memory)
        self.touching = touching

    def _segments(self, tip: Oid) -> None:
        parents = self.parents
        kids: dict[Oid, int] = {}
        under_merge: set[Oid] = set()
        for ps in parents.values():
            for parent in ps:
                kids[parent] = kids.get(parent, 0) + 1
                if len(ps) > 1:
                    under_merge.add(parent)

        def head(commit: Oid) -> bool:
            return (
                commit == tip
                or len(parents[commit]) > 1
                or kids.get(commit, 0) != 1
                or commit in under_merge
            )

        self.members: list[list[Oid]] = []
        self.below: list[Oid | None] = []  # a head, a commit outside, or None (a root)
        self.where: dict[Oid, tuple[int, int]] = {}
        for start in parents:
            if len(parents[start]) > 1 or not head(start):
                continue
            run = [start]
            current: Oid | None = start
            while current is not None:
                ps = parents[current]
                if not ps:  # a root
                    current = None
                    break
                parent = ps[0]
                if parent not in parents or head(parent):
                    current = parent
                    break
                run.append(parent)
                current = parent
            for position, oid in enumerate(run):
                self.where[oid] = (len(self.members), position)
            self.members.append(run)
            self.below.append(current)

    def _positions(self, path: str) -> dict[int, list[int]]:
        """Segment → positions of the commits touching ``path`` there, in order."""
        by_segment: dict[int, list[int]] = {}
        for oid in self.touching.get(path, ()):
            found = self.where.get(oid)
            if found is not None:
                by_segment.setdefault(found[0], []).append(found[1])
        for positions in by_segment.values():
            positions.sort()
        return by_segment

    def walk(self, path: str, value: tuple[str, str, str]) -> tuple[list[Oid], bool]:
        """The commits that answer for ``path`` having ``value`` at the tip, and
        whether a commit of the range that carries the value sets it as evidence.

        Walking back from the tip through commits that carry the value (a merge: into
        the parents it shares the value with), a commit whose own diff sets it as
        evidence explains it (a non-merge commit; a merge whose result differs from
        every parent). A carrier is *stale* when the value reaches it from outside the
        range (or from a root that lacks the path) without passing such a commit. A
        stale merge that took the value over a parent's different one kept an older
        copy: it answers for it, as does a commit that sets the value but not as
        evidence."""
        touched = self._positions(path)
        stale: dict[Oid, bool] = {}
        blamed: list[Oid] = []
        explained = False
        todo: list[tuple[Oid, list[Oid] | None]] = [(self.tip, None)]
        while todo:
            commit, carriers = todo.pop()
            if carriers is not None:  # its carriers are settled: settle it
                stale[commit] = any(stale[c] for c in carriers)
                if stale[commit] and len(carriers) < len(self.parents[commit]):
                    blamed.append(commit)  # took one parent's copy over another's
                continue
            if commit in stale:
                continue
            parents = self.parents.get(commit)
            if parents is None:  # outside the range: the value comes from there
                stale[commit] = True
                continue
            if len(parents) > 1:
                differ = {p for p in parents if (commit, p, path) in self.differs}
                if len(differ) == len(parents):  # its own (combined) change
                    stale[commit] = False
                    explained = self._own(commit, value, blamed) or explained
                    continue
                carriers = [p for p in parents if p not in differ]
            else:
                segment, position = self.where[commit]
                positions = touched.get(segment, ())
                hit = bisect.bisect_left(positions, position)
                if hit < len(positions):  # the first commit below that touches it
                    stale[commit] = False
                    setter = self.members[segment][positions[hit]]
                    explained = self._own(setter, value, blamed) or explained
                    continue
                below = self.below[segment]
                if below is None:  # a root that lacks the path: nothing set it
                    stale[commit] = True
                    continue
                carriers = [below]
            stale[commit] = False  # in progress; a commit is never its own ancestor
            todo.append((commit, carriers))
            todo += [(c, None) for c in carriers if c not in stale]
        return blamed, explained

    def walk_all(
        self, wanted: Sequence[tuple[str, tuple[str, str, str]]]
    ) -> dict[str, tuple[list[Oid], bool]]:
        """``walk`` for many paths at once: one bit per path, one pass over the
        segments and merges up from the outside (is the value stale there, per path)
        and one down from the tip (which paths a walk would reach there)."""
        bit = {path: i for i, (path, _) in enumerate(wanted)}
        values = dict(wanted)
        size = len(wanted)
        everything = (1 << size) - 1

        def mask(bits: Iterable[int]) -> int:
            array = bytearray((size + 8) // 8)
            for b in bits:
                array[b >> 3] |= 1 << (b & 7)
            return int.from_bytes(array, "little")

        def ones(x: int) -> Iterator[int]:
            text = bin(x)[:1:-1]
            start = text.find("1")
            while start >= 0:
                yield start
                start = text.find("1", start + 1)

        # segment → the first touching position per path (entry is at the head)
        first: dict[int, dict[int, int]] = {}
        for path, number in bit.items():
            for segment, positions in self._positions(path).items():
                first.setdefault(segment, {})[number] = positions[0]
        touched = {segment: mask(hits) for segment, hits in first.items()}
        differ_bits: dict[tuple[str, str], list[int]] = {}
        for merge, parent, path in self.differs:
            b = bit.get(path)
            if b is not None:
                differ_bits.setdefault((merge, parent), []).append(b)
        differ = {key: mask(bits) for key, bits in differ_bits.items()}
        parents = self.parents

        # nodes: a merge, or a segment by its head; children: what a walk steps to
        def below(node: Oid) -> list[Oid | None]:
            ps = parents.get(node)
            if ps is None:
                return []
            if len(ps) > 1:
                return list(ps)
            return [self.below[self.where[node][0]]]

        order: list[Oid] = []  # post-order: everything below a node before it
        seen: set[Oid] = set()
        stack: list[tuple[Oid, bool]] = [(self.tip, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if node in seen:
                continue
            seen.add(node)
            stack.append((node, True))
            for child in below(node):
                if child is not None and child not in seen and child in parents:
                    stack.append((child, False))
        stale: dict[Oid, int] = {}

        def stale_of(node: Oid | None) -> int:
            if node is None:
                return everything  # a root that lacks the path
            if node not in parents:
                return everything  # outside the range
            return stale[node]

        own: dict[Oid, int] = {}
        for node in order:
            ps = parents[node]
            if len(ps) > 1:
                ds = [differ.get((node, p), 0) for p in ps]
                mine = everything
                for d in ds:
                    mine &= d
                own[node] = mine
                carried = 0
                for p, d in zip(ps, ds, strict=True):
                    carried |= ~d & stale_of(p)
                stale[node] = carried & ~mine & everything
            else:
                segment = self.where[node][0]
                stale[node] = stale_of(self.below[segment]) & ~touched.get(segment, 0)
        visit: dict[Oid, int] = {self.tip: everything}
        blamed: dict[int, list[Oid]] = {}
        explained: set[int] = set()

        def judge_own(commit: Oid, b: int) -> None:
            if self._sets(commit, values[wanted[b][0]]):
                explained.add(b)
            else:
                blamed.setdefault(b, []).append(commit)

        for node in reversed(order):
            here = visit.get(node, 0)
            if not here:
                continue
            ps = parents[node]
            if len(ps) > 1:
                mine = own[node] & here
                for b in ones(mine):
                    judge_own(node, b)
                rest = here & ~mine
                some_differ = 0
                for p in ps:
                    d = differ.get((node, p), 0)
                    some_differ |= d
                    if p in parents:
                        visit[p] = visit.get(p, 0) | (rest & ~d)
                for b in ones(rest & some_differ & stale[node]):
                    blamed.setdefault(b, []).append(node)
            else:
                segment = self.where[node][0]
                hits = here & touched.get(segment, 0)
                setters = first.get(segment, {})
                for b in ones(hits):
                    judge_own(self.members[segment][setters[b]], b)
                child = self.below[segment]
                if child is not None and child in parents:
                    visit[child] = visit.get(child, 0) | (here & ~hits)
        return {path: (blamed.get(b, []), b in explained) for path, b in bit.items()}

    def _own(self, commit: Oid, value: tuple[str, str, str], blamed: list[Oid]) -> bool:
        """``commit``'s own diff sets the value: as evidence, judged already (True);
        otherwise it answers for it."""
        if self._sets(commit, value):
            return True
        blamed.append(commit)
        return False

    def _sets(self, commit: Oid, value: tuple[str, str, str]) -> bool:
        """``rules.sets_value``, each commit's values gathered once per walk."""
        pairs = self._pairs.get(commit)
        if pairs is None:
            pairs = self._pairs[commit] = value_pairs(self.summaries[commit])
        return sets_in(pairs, value)
