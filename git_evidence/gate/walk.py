"""The range's history as the endpoint rule walks it: runs of single-parent commits
(segments) and merges, each commit's parents from the stream's own listing, and for
each path that differs between base and new the commits of the range that answer for
its value at the tip (``Graph.walk`` for one path, ``Graph.walk_all`` for many at
once, one bit per path). Pure: the parents, the merges' differences (``endpoint.py``
reads them from git) and the summaries in; apart from ``endpoint.py`` so the walks are
read, and tested, without git."""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator, Mapping, Sequence

from git_evidence.core.facts import CommitSummary
from git_evidence.core.oids import Oid
from git_evidence.rules.summaries import sets_in, value_pairs


class Graph:
    """The range cut into segments: runs of single-parent commits with no branching
    inside, and merges on their own. A walk for one path steps from segment to
    segment, finding the first commit of a segment that touches the path by bisection,
    so it costs the merges and branch points it meets, not the commits."""

    def __init__(
        self,
        tip: Oid,
        parents: dict[Oid, list[Oid]],
        differs: set[tuple[str, str, str]],
        summaries: Mapping[Oid, CommitSummary],
        touching: Mapping[str, list[Oid]],
    ) -> None:
        self.summaries = summaries
        self._pairs: dict[Oid, frozenset[tuple[str | bytes, str | bytes]]] = {}
        self.parents = parents
        # (merge, parent, path) for each endpoint path a merge's result differs in
        # from that parent.
        self.differs = differs
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
