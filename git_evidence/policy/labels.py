"""Sealed test labels: which kind of test each node id is.

The file is TSV, one ``node id<TAB>kind`` row a line, ``#`` comment lines and blank
lines allowed, UTF-8 with ``\\n`` endings. It is evidence (class ``policy``) and is read
from the base revision or a sealed file, never from the revision under judgement.
Pure: bytes in, rows and problems out.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import NamedTuple

from git_evidence.core.errors import EvidenceError

DEFAULT_PATH = "tests/evidence-labels.tsv"
MAX_RETRIES = 10  # [labels].retries is 0 to this
INVARIANT = "invariant"
CHARACTERIZATION = "characterization"
NONDETERMINISTIC = "nondeterministic"
KINDS = (INVARIANT, CHARACTERIZATION, NONDETERMINISTIC)
_KIND_SET = frozenset(KINDS)
BOM = b"\xef\xbb\xbf"


class LabelsError(EvidenceError):
    """The labels file does not parse: every judgement that needs it refuses."""

    rule = "policy-error"

    def __init__(self, source: str, line: int, message: str) -> None:
        super().__init__(
            f"{source}:{line}: {message}",
            fix=f"correct {source} (one `node id<TAB>kind` a line, kind one of "
            f"{', '.join(KINDS)}); an evidence writer commits it alone",
        )
        self.source = source
        self.line = line
        self.detail = message


class Row(NamedTuple):
    node: str
    kind: str
    line: int


class BadLine(NamedTuple):
    """A line of a labels file that is not a row, a comment or blank: why."""

    line: int
    message: str


class Labels(NamedTuple):
    """The labels in force: node id → kind, where they came from, and their digest."""

    kinds: Mapping[str, str] = MappingProxyType({})
    source: str = ""
    digest: str = ""

    def get(self, node: str) -> str | None:
        return kind_for(self.kinds, node)


def unparametrized(node: str) -> str | None:
    """The node id of the test ``node`` is a parametrization of
    (``tests/t.py::test_x`` for ``tests/t.py::test_x[a-1]``), or None. The ``[…]`` that
    pytest appends is the first bracket after the file's ``::``: class and function
    names are identifiers, which hold none; the id inside may hold anything."""
    if not node.endswith("]"):
        return None
    start = node.find("::")
    bracket = node.find("[", start) if start >= 0 else -1
    return node[:bracket] if bracket > start + 2 else None


def kind_for(kinds: Mapping[str, str], node: str) -> str | None:
    """The label of ``node``: its own row, else the row of the test it parametrizes
    (a row without ``[…]`` covers every parametrization that has no row of its own,
    a new case included)."""
    kind = kinds.get(node)
    if kind is None:
        whole = unparametrized(node)
        if whole is not None:
            return kinds.get(whole)
    return kind


def digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def scan_labels(data: bytes) -> tuple[list[Row], list[BadLine]]:
    """Every row, and every line that is not a row, a comment or blank. A duplicate
    node id is a problem at its second line (the first row stands)."""
    rows: list[Row] = []
    problems: list[BadLine] = []
    first_line: dict[str, int] = {}
    for number, text in _lines(data, problems):
        found = _row(text)
        if isinstance(found, str):
            problems.append(BadLine(number, found))
        elif found is not None:
            node, kind = found
            if node in first_line:
                problems.append(
                    BadLine(
                        number, f"duplicate node id {node!r} (first at line {first_line[node]})"
                    )
                )
                continue
            first_line[node] = number
            rows.append(Row(node, kind, number))
    problems.sort()
    return rows, problems


def parse_labels(data: bytes, source: str) -> Labels:
    """Strictly: the first problem is a LabelsError naming the file and the line."""
    kinds: dict[str, str] = {}
    problems: list[BadLine] = []
    for _, text in _lines(data, problems):
        found = _row(text)
        if found is None:
            continue
        if isinstance(found, str) or found[0] in kinds:
            break  # scan_labels below says what is wrong, and where
        kinds[found[0]] = found[1]
    else:
        if not problems:
            return Labels(kinds, source, digest(data))
    _, problems = scan_labels(data)
    raise LabelsError(source, problems[0].line, problems[0].message)


def labels_problem(data: bytes, path: str) -> str | None:
    """``PATH:LINE: what is wrong`` for a labels file that does not parse, else None
    (for checks that refuse a push leaving a broken labels file behind)."""
    _, problems = scan_labels(data)
    if not problems:
        return None
    return f"{path}:{problems[0].line}: {problems[0].message}"


def format_labels(rows: Iterable[tuple[str, str]], header: str = "") -> bytes:
    """Canonical text: an optional ``#`` header, then ``node<TAB>kind`` lines."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    lines += [f"{node}\t{kind}" for node, kind in rows]
    return "".join(line + "\n" for line in lines).encode("utf-8")


# -- one line ------------------------------------------------------------------------


def _lines(data: bytes, problems: list[BadLine]) -> Iterator[tuple[int, str]]:
    if data.startswith(BOM):
        problems.append(BadLine(1, "byte order mark: the file is UTF-8 without BOM"))
        data = data[len(BOM) :]
    final = 1 if data.endswith(b"\n") else 0  # the last newline ends a line, starts none
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raw_lines = data.split(b"\n")  # line by line, to name the line that is not UTF-8
        for number, raw in enumerate(raw_lines[: len(raw_lines) - final], start=1):
            try:
                yield number, raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems.append(BadLine(number, f"not UTF-8 (byte {exc.start + 1} of the line)"))
        return
    lines = text.split("\n")
    yield from enumerate(lines[: len(lines) - final], start=1)


def _row(text: str) -> tuple[str, str] | str | None:
    """``(node, kind)``, None for a comment or blank line, or what is wrong."""
    node, _, kind = text.partition("\t")
    if (
        kind in _KIND_SET
        and node
        and node[0] not in " #"
        and node[-1] != " "
        and node.isprintable()
    ):
        return node, kind  # the common case, decided in one pass
    if "\r" in text:
        return "carriage return: lines end with \\n only"
    stripped = text.strip(" \t")
    if not stripped or stripped.startswith("#"):
        return None
    fields = text.split("\t")
    if len(fields) != 2:
        return (
            f"expected `node id<TAB>kind`, found {len(fields)} tab-separated field"
            f"{'s' if len(fields) != 1 else ''}"
        )
    node, kind = fields
    if not node or node != node.strip():
        return f"node id {node!r} is empty or has leading or trailing spaces"
    if not node.isprintable():
        odd = next(c for c in node if not c.isprintable())
        return f"node id {node!r} contains the unprintable character U+{ord(odd):04X}"
    if kind not in KINDS:
        hint = " (trailing space?)" if kind.strip() in KINDS else ""
        return f"unknown kind {kind!r}{hint}; expected one of {', '.join(KINDS)}"
    return node, kind


def once_per_test(collected: Sequence[str]) -> list[str]:
    """The rows a first labels file holds: one per collected test, a parametrized test
    once, by its node id without ``[…]`` (a case added later is labelled with it),
    unless a test of that very node id is collected too."""
    plain = set(collected)
    rows: dict[str, None] = {}
    for node in collected:
        whole = unparametrized(node)
        rows[whole if whole is not None and whole not in plain else node] = None
    return list(rows)
