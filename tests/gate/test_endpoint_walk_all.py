"""The endpoint rule's all-paths pass (``Graph.walk_all``, one bit per path) must
answer exactly as the per-path walk (``Graph.walk``) on any history: random ranges of
single-parent commits and merges (some parents outside the range, some roots), random
paths touched by commits, merges that differ from some parents, values set as evidence
or not. Pure: the graph is built by hand, no git."""

from __future__ import annotations

import random

import pytest

from git_evidence.core.facts import CommitSummary
from git_evidence.core.oids import Oid
from git_evidence.gate import walk
from git_evidence.rules.summaries import value_key

VALUE_MODE = "100644"


def _graph(rng: random.Random) -> tuple[walk.Graph, list[tuple[str, tuple[str, str, str]]]]:
    count = rng.randint(1, 40)
    commits = [Oid(f"c{i}") for i in range(count)]  # c0 oldest
    parents: dict[Oid, list[Oid]] = {}
    outside = [Oid("o0"), Oid("o1")]
    for i, commit in enumerate(commits):
        if i == 0:
            parents[commit] = rng.choice([[], [outside[0]]])
            continue
        pool = commits[:i] + outside
        parents[commit] = rng.sample(pool, min(rng.choice([1, 1, 1, 2, 2, 3]), len(pool)))
    tip = commits[-1]
    reached, todo = set(), [tip]
    while todo:
        commit = todo.pop()
        if commit in reached or commit not in parents:
            continue
        reached.add(commit)
        todo += parents[commit]
    parents = {c: ps for c, ps in parents.items() if c in reached}
    names = [f"tests/fixtures/p{j}" for j in range(rng.randint(1, 6))]
    values = {name: (name, VALUE_MODE, f"{j:040x}") for j, name in enumerate(names)}
    graph = object.__new__(walk.Graph)
    graph.parents = parents
    graph.differs = {
        (merge, parent, name)
        for merge, ps in parents.items()
        if len(ps) > 1
        for parent in ps
        for name in names
        if rng.random() < 0.4
    }
    graph.merged_over = {name for _, _, name in graph.differs}
    graph.repeated_parent = False
    graph._pairs = {}
    summaries: dict[Oid, CommitSummary] = {}
    touching: dict[str, list[Oid]] = {}
    for commit, ps in parents.items():
        sets = tuple(
            part
            for n in names
            if rng.random() < 0.3
            for part in (values[n][0], value_key(values[n][1], values[n][2]))
        )
        summaries[commit] = CommitSummary(
            commit, len(ps) > 1, (), frozenset(), evidence_values=sets
        )
        for name in names:
            if len(ps) <= 1 and rng.random() < 0.15:
                touching.setdefault(name, []).append(commit)
    graph.summaries = summaries
    graph.tip = tip
    graph._segments(tip)
    graph.touching = touching
    return graph, [(name, values[name]) for name in names]


@pytest.mark.parametrize("seed", range(4))
def test_all_paths_at_once_answer_as_one_path_at_a_time(seed: int) -> None:
    rng = random.Random(seed)
    blamed_somewhere = explained_somewhere = 0
    for _ in range(500):
        graph, wanted = _graph(rng)
        together = graph.walk_all(wanted)
        for name, value in wanted:
            blamed, explained = graph.walk(name, value)
            assert sorted(together[name][0]) == sorted(blamed), (name, graph.parents)
            assert together[name][1] == explained, (name, graph.parents)
            blamed_somewhere += bool(blamed)
            explained_somewhere += explained
    # The histories exercise both answers, not only the trivial one.
    assert blamed_somewhere > 100 and explained_somewhere > 50
