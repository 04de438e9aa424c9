"""The plumbing held to an independent reader: what ``plumbing/`` reads through git
(objects by name, one at a time and in bulk; trees listed; a commit's raw changes as the
gate streams and parses them; notes) equals what GitPython's pure-Python object
database reads from the same files (tests/helpers/odb.py), on generated histories:
merges and octopus merges, renames off, mode and type changes, symlinks, gitlinks, a
file replacing a directory, paths with a newline or bytes that are not UTF-8, blobs
larger than the reader's buffer."""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import pytest
from helpers.examples import examples
from helpers.odb import Commit, Independent, fast_import
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_evidence.core.oids import Oid
from git_evidence.plumbing import batch, notes
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.raw_diff import LinkResolver, parse_raw
from git_evidence.plumbing.stream import diff_tree_stream

Row = tuple[str, str, str, str, str, str]

# A file and a directory of the same name (`t`, `t/u`), a newline, a byte that is not
# UTF-8, a space, a quote, a deep path.
PATHS = [b"a", b"dir/b", b"dir/sub/c", b"x\ny", b"caf\xe9", b"sp ace/f", b"t", b"t/u", b'q"']
MODES = ["100644", "100755", "120000", "160000"]
BODIES = [b"", b"x\n", b"y\n", b"a", b"dir/sub", b"../../out", b"\x00\xff\n", b"dir/b"]
LINKED = [b"1" * 40, b"2" * 40]

commits = st.lists(
    st.tuples(
        st.dictionaries(
            st.sampled_from(PATHS),
            st.tuples(st.sampled_from(MODES), st.integers(0, len(BODIES) - 1)),
            max_size=4,
        ),
        st.lists(st.sampled_from(PATHS), max_size=2),
        st.lists(st.integers(2, 5), max_size=2),  # further parents, so many commits back
    ),
    min_size=1,
    max_size=8,
)


def _history(
    raw: Sequence[tuple[dict[bytes, tuple[str, int]], list[bytes], list[int]]],
) -> list[Commit]:
    history = []
    for index, (sets, removes, backs) in enumerate(raw):
        written = {
            path: (mode, LINKED[body % 2] if mode == "160000" else BODIES[body])
            for path, (mode, body) in sets.items()
        }
        merge = sorted({index - back for back in backs if index - back >= 0})
        history.append(Commit(written, removes, merge))
    return history


@contextmanager
def generated(history: Sequence[Commit]) -> Iterator[tuple[Git, Independent, list[str]]]:
    with tempfile.TemporaryDirectory() as where:
        subprocess.run(["git", "init", "-q", where], check=True)
        ids = fast_import(Path(where), history)
        with Independent(Path(where)) as independent:
            yield Git(cwd=where), independent, ids


def streamed_changes(g: Git, tip: str) -> tuple[dict[str, set[Row]], list[str], dict[str, str]]:
    """Each commit's rows as the gate reads them (one ``diff-tree --stdin`` fed by
    ``rev-list``, parsed by ``raw_diff.parse_raw``), the commits listed, and the text
    of every symlink a row added or changed."""
    members: list[list[str]] = [[]]
    rows: dict[str, set[Row]] = {}
    links: dict[str, str] = {}
    with CatFile(g) as cat:
        for diff in parse_raw(diff_tree_stream(g, [[tip]], members), LinkResolver(g, cat)):
            rows[diff.oid] = set()
            for change in diff.changes:
                old, new = change.object_ids()
                rows[diff.oid].add(
                    (change.status, change.old_mode, change.new_mode, old, new, change.path)
                )
                if change.link_target is not None:
                    links[new] = change.link_target
    return rows, members[0], links


def every_object(independent: Independent, ids: Sequence[str]) -> dict[str, str]:
    """Every object the commits reach (gitlinks aside), by id: its type."""
    found: dict[str, str] = {}

    def tree(oid: str) -> None:
        found[oid] = "tree"
        for mode, _, entry in independent.tree(oid):
            if mode >> 12 == 4:
                tree(entry)
            elif mode >> 12 != 14:
                found[entry] = "blob"

    for commit in ids:
        found[commit] = "commit"
        tree(independent.commit(commit)[0])
    return found


def check_history(g: Git, independent: Independent, ids: list[str]) -> None:
    rows, listed, links = streamed_changes(g, ids[-1])
    reachable = {ids[-1]}
    todo = [ids[-1]]
    while todo:  # the tip's history, walked through GitPython's reading of the parents
        for parent in independent.commit(todo.pop())[1]:
            if parent not in reachable:
                reachable.add(parent)
                todo.append(parent)
    assert set(listed) == reachable == set(rows)
    for commit in reachable:
        assert rows[commit] == independent.changes(commit), commit
        tree, parents = independent.commit(commit)
        expected = independent.leaves(tree)
        listed_tree = {path: (mode, oid) for mode, oid, path in g.ls_tree(commit, [])}
        assert listed_tree == expected
        if len(parents) == 1:  # tree against tree, as the lock patches its manifest
            parent_tree = independent.commit(parents[0])[0]
            pairs = {
                (status, path, mode, oid)
                for status, mode, oid, path in g.changed_files(parent_tree, tree)
            }
            assert pairs == {
                (s, path, new_mode, new_oid)
                for s, _, new_mode, _, new_oid, path in independent.changes(commit)
            }
    for oid, text in links.items():
        assert text.encode("utf-8", "surrogateescape") == independent.object(oid)[1]
    objects = every_object(independent, ids)
    assert batch.check(g, list(objects)) == [(oid, kind) for oid, kind in objects.items()]
    with CatFile(g) as cat:
        for oid in objects:
            assert cat.get(oid) == (oid, *independent.object(oid))
    blobs = [oid for oid, kind in objects.items() if kind == "blob"]
    read = batch.read_blobs(g, blobs, lambda _o, _s, content: _bytes(content))
    assert read == {oid: independent.object(oid)[1] for oid in blobs}


def _bytes(content: batch.Content) -> bytes:
    if isinstance(content, memoryview):
        return bytes(content)
    return b"".join(bytes(piece) for piece in content)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(commits)
def test_what_the_plumbing_reads_is_what_gitpython_reads(
    raw: list[tuple[dict[bytes, tuple[str, int]], list[bytes], list[int]]],
) -> None:
    with generated(_history(raw)) as (g, independent, ids):
        check_history(g, independent, ids)


def test_a_merge_and_an_octopus_merge_are_read_as_the_independent_reader_reads_them() -> None:
    history = [
        Commit({b"a": ("100644", b"1"), b"b": ("100644", b"1"), b"l": ("120000", b"a")}),
        Commit({b"a": ("100644", b"2"), b"x\ny": ("100755", b"n")}),
        Commit({b"b": ("100644", b"2"), b"caf\xe9/z": ("160000", b"1" * 40)}, merge=[0]),
        Commit({b"a": ("100644", b"3"), b"b": ("120000", b"a")}, remove=[b"l"], merge=[0, 1]),
        Commit({b"a/now": ("100644", b"a dir")}, merge=[2]),  # a file becomes a directory
    ]
    with generated(history) as (g, independent, ids):
        assert len(independent.commit(ids[3])[1]) == 3
        assert independent.changes(ids[3])  # the octopus changes what no parent had
        check_history(g, independent, ids)


def test_blobs_larger_than_the_readers_buffer_are_read_whole() -> None:
    """Sizes about the reader's buffer (one byte short, equal, one past, several
    times), and enough small blobs between them that the bulk read runs on several
    processes: each blob's bytes are its own, never a piece of another's buffer."""
    chunk = batch._Reader.CHUNK
    sizes = [chunk - 1, chunk, chunk + 1, 3 * chunk + 7]
    files: dict[bytes, tuple[str, bytes]] = {}
    for n, size in enumerate(sizes):
        files[b"big/%d" % n] = ("100644", bytes((n * 7 + i) % 251 for i in range(size)))
    for n in range(batch.PARALLEL_MIN * 2 + 3):
        files[b"small/%04d" % n] = ("100644", b"%d\n" % n)
    with generated([Commit(files)]) as (g, independent, ids):
        leaves = independent.leaves(independent.commit(ids[0])[0])
        blobs = [oid for _, oid in leaves.values()]
        # the big ones in the middle: a large blob is read after small ones and
        # followed by more, in the bulk reader's order
        order = blobs[len(blobs) // 2 :] + blobs[: len(blobs) // 2]
        read = batch.read_blobs(g, order, lambda _o, _s, content: _bytes(content))
        assert read == {oid: independent.object(oid)[1] for oid in blobs}
        with CatFile(g) as cat:
            for path in files:
                oid = leaves[path.decode()][1]
                assert cat.read(oid) == independent.object(oid)[1] == files[path][1]
                assert g.blob_bytes(oid) == files[path][1]


def test_notes_are_the_notes_the_independent_reader_finds() -> None:
    """Enough notes that git fans their tree out into directories."""
    history = [Commit({b"f": ("100644", b"%d" % n)}) for n in range(300)]
    with generated(history) as (g, independent, ids):
        contents = {Oid(commit): b"note of %s\n" % commit.encode() for commit in ids}
        assert notes.write_notes(g, "refs/notes/evidence", None, contents, "notes")
        independent.repo.odb.update_cache(force=True)
        read = g.notes("refs/notes/evidence")
        assert read == independent.notes("refs/notes/evidence")
        assert any(
            "/" in path
            for path in independent.leaves(
                independent.commit(independent.repo.commit("refs/notes/evidence").hexsha)[0]
            )
        )
        assert {commit: g.blob_bytes(blob) for commit, blob in read.items()} == contents


@pytest.mark.slow
def test_a_long_generated_history_is_read_as_the_independent_reader_reads_it() -> None:
    """600 commits, a third of them merges, every kind of path and entry."""
    import random

    rng = random.Random(7)
    history = []
    for index in range(600):
        sets: dict[bytes, tuple[str, bytes]] = {}
        for _ in range(rng.randint(0, 5)):
            path = rng.choice([*PATHS, b"d%d/f%d" % (index % 17, index % 5)])
            mode = rng.choice(MODES)
            body = rng.choice(LINKED if mode == "160000" else [*BODIES, b"%d" % index])
            sets[path] = (mode, body)
        removes = rng.sample(PATHS, rng.randint(0, 2))
        backs = {index - rng.randint(2, 40) for _ in range(rng.choice([0, 0, 1, 2]))}
        history.append(Commit(sets, removes, sorted(m for m in backs if m >= 0)))
    with generated(history) as (g, independent, ids):
        check_history(g, independent, ids)
