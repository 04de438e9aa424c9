"""The raw-diff parser (plumbing/raw_diff.py's `parse_raw`), table by table: `diff-tree -z
--raw -c` tokens in, each commit's `CommitDiff` out. No git runs here (a row with no
link asks git for nothing), fast enough to run on each mutation (bench/mutation.py)."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.rule_facts import NEW, OLD, row

from git_evidence.core.facts import CommitDiff
from git_evidence.core.oids import Oid
from git_evidence.plumbing.raw_diff import LinkResolver, parse_raw

ZERO = "0" * 40


# -- ranges.parse_raw: `diff-tree -z --raw -c` token by token ------------------------------------

A, B, C = "1" * 40, "2" * 40, "3" * 40


class _NoGit:
    """parse_raw asks git only for symlink rows: none here."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"parse_raw asked git for {name} on a row with no link")


def parse(tokens: list[bytes], first_commit: Oid | None = None) -> list[CommitDiff]:
    resolver = LinkResolver(_NoGit(), _NoGit())  # type: ignore[arg-type]
    return list(parse_raw(iter(tokens), resolver, first_commit))


RAW_TABLE: list[
    tuple[str, list[bytes], list[tuple[str, bool, list[tuple[str, str, str, str]]]]]
] = [
    (
        "one modified file",
        [NEW.encode(), *row(f":100644 100644 {A} {B} M", "src/app.py")],
        [(NEW, False, [("M", "100644", "100644", "src/app.py")])],
    ),
    (
        "added, deleted and a mode change",
        [
            NEW.encode(),
            *row(f":000000 100644 {ZERO} {A} A", "a"),
            *row(f":100644 000000 {A} {ZERO} D", "b"),
            *row(f":100644 100755 {A} {A} M", "c"),
        ],
        [
            (
                NEW,
                False,
                [
                    ("A", "000000", "100644", "a"),
                    ("D", "100644", "000000", "b"),
                    ("M", "100644", "100755", "c"),
                ],
            )
        ],
    ),
    (
        "two commits, the second with no change",
        [NEW.encode(), *row(f":100644 100644 {A} {B} M", "x"), OLD.encode()],
        [(NEW, False, [("M", "100644", "100644", "x")]), (OLD, False, [])],
    ),
    (
        "a combined row of a merge",
        [NEW.encode(), *row(f"::100644 100644 100644 {A} {B} {C} MM", "m")],
        [(NEW, True, [("M", "100644", "100644", "m")])],
    ),
    (
        "a file both parents lacked",
        [NEW.encode(), *row(f"::000000 000000 100644 {ZERO} {ZERO} {C} AA", "new")],
        [(NEW, True, [("A", "000000", "100644", "new")])],
    ),
    (
        "a file deleted against both parents",
        [NEW.encode(), *row(f"::100644 100644 000000 {A} {B} {ZERO} DD", "gone")],
        [(NEW, True, [("D", "100644", "000000", "gone")])],
    ),
    (
        "added on one side only",
        [NEW.encode(), *row(f"::000000 100644 100644 {ZERO} {B} {C} AM", "half")],
        [(NEW, True, [("M", "000000", "100644", "half")])],
    ),
    (
        "an octopus row",
        [NEW.encode(), *row(f":::100644 100644 100644 100644 {A} {B} {C} {A} MMM", "o")],
        [(NEW, True, [("M", "100644", "100644", "o")])],
    ),
    (
        "a path with a newline and a space",
        [NEW.encode(), *row(f":100644 100644 {A} {B} M", "a dir/new\nline")],
        [(NEW, False, [("M", "100644", "100644", "a dir/new\nline")])],
    ),
    ("nothing at all", [], []),
]


@pytest.mark.parametrize(
    ("tokens", "expected"), [pytest.param(t, x, id=name) for name, t, x in RAW_TABLE]
)
def test_raw_table(
    tokens: list[bytes], expected: list[tuple[str, bool, list[tuple[str, ...]]]]
) -> None:
    got = [
        (d.oid, d.merge, [(c.status, c.old_mode, c.new_mode, c.path) for c in d.changes])
        for d in parse(tokens)
    ]
    assert got == expected


def test_raw_rows_keep_their_object_ids() -> None:
    ((plain,),) = [d.changes for d in parse([NEW.encode(), *row(f":100644 100644 {A} {B} M", "p")])]
    assert (plain.old_oid, plain.new_oid) == ("", "")  # not decoded on the hot path
    assert plain.object_ids() == (A, B)
    ((merged,),) = [
        d.changes
        for d in parse([NEW.encode(), *row(f"::100644 100644 100644 {A} {B} {C} MM", "m")])
    ]
    assert merged.object_ids() == (A, C)  # the first parent's and the merge's


def test_raw_without_a_header_is_the_staged_change() -> None:
    (diff,) = parse(row(f":100644 100644 {A} {ZERO} M", "src/app.py"), first_commit=Oid("index"))
    assert diff.oid == "index"
    assert [c.path for c in diff.changes] == ["src/app.py"]


def test_a_non_utf8_path_survives() -> None:
    (diff,) = parse([NEW.encode(), f":100644 100644 {A} {B} M".encode(), b"caf\xe9"])
    assert diff.changes[0].path.encode("utf-8", "surrogateescape") == b"caf\xe9"
