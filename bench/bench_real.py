"""Benchmark the fence on a history shaped like real ones.

Generates (once, seeded, cached under bench/.work) a history shaped like two large
public projects' (a Rust workspace whose linter and formatter keep Python fixtures
and snapshots beside the code, and a Python type checker with its test-data; 13,751
and 16,862 commits): changed paths per commit median 3, 90th percentile 12, 99th
percentile 90, a few crate moves of 1,000-6,000 paths (renames: delete + add), ~25,000
distinct paths 3-8 components deep with long names, ~40% of the commits mixing a
fixture or a snapshot with product, some merges with changes of their own. The base
commit carries a policy of ~40 globs with character classes and negations mapping
that layout. Written with `git fast-import` into a bare repository (repacked, with a
commit-graph, the server hooks installed by `git evidence install --server`).

Reports medians of alternating runs of pre-receive judging the whole push (pusher
agent-bot, refused with thousands of mixed-commit findings) against
`git log --raw -z --no-renames` on the same range: wall ratio (target <= 1.3), CPU
ratio of the process trees (user + sys, target <= 1.6), peak memory of the process
trees (target <= git's + 60 MiB), the findings and the size of the text report.
With `--budget S` the policy says `[rules] time_budget_s = S` and the hook's longest
wall time is reported instead (target <= S + 0.2).

Usage: python bench/bench_real.py [--runs N] [--no-negation] [--budget S] [--profile]
                                  [--commits N] [--seed N]
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from common import (
    NOTES,
    WORK,
    Run,
    alternate,
    compile_package,
    fastest,
    git,
    machine_note,
    measure,
    median_of,
    profile,
    spread,
)

# The generator's own idea of what a path is (the policy decides what it counts as).
PRODUCT, FIXTURE, SNAPSHOT, TEST, DOCS, OTHER = (
    "product",
    "fixture",
    "snapshot",
    "test",
    "docs",
    "other",
)
POLICY_MARK = 1  # the policy blob: written by the caller, before the stream
GENERATOR = 1  # bump when the generated history changes: names the cached stream

# (cumulative probability, paths) points of the changed-paths distribution; log-linear
# in between.
SIZE_QUANTILES = ((0.0, 1.0), (0.3, 1.0), (0.5, 3.0), (0.75, 6.0), (0.9, 12.0), (0.99, 90.0))
SIZE_TAIL = (1.0, 400.0)

PLUGINS = (
    ("airflow", "AIR"),
    ("eradicate", "ERA"),
    ("fastapi", "FAST"),
    ("flake8_2020", "YTT"),
    ("flake8_annotations", "ANN"),
    ("flake8_async", "ASYNC"),
    ("flake8_bandit", "S"),
    ("flake8_blind_except", "BLE"),
    ("flake8_boolean_trap", "FBT"),
    ("flake8_bugbear", "B"),
    ("flake8_builtins", "A"),
    ("flake8_commas", "COM"),
    ("flake8_comprehensions", "C4"),
    ("flake8_copyright", "CPY"),
    ("flake8_datetimez", "DTZ"),
    ("flake8_debugger", "T10"),
    ("flake8_django", "DJ"),
    ("flake8_errmsg", "EM"),
    ("flake8_executable", "EXE"),
    ("flake8_fixme", "FIX"),
    ("flake8_future_annotations", "FA"),
    ("flake8_gettext", "INT"),
    ("flake8_implicit_str_concat", "ISC"),
    ("flake8_import_conventions", "ICN"),
    ("flake8_logging", "LOG"),
    ("flake8_logging_format", "G"),
    ("flake8_no_pep420", "INP"),
    ("flake8_pie", "PIE"),
    ("flake8_print", "T20"),
    ("flake8_pyi", "PYI"),
    ("flake8_pytest_style", "PT"),
    ("flake8_quotes", "Q"),
    ("flake8_raise", "RSE"),
    ("flake8_return", "RET"),
    ("flake8_self", "SLF"),
    ("flake8_simplify", "SIM"),
    ("flake8_slots", "SLOT"),
    ("flake8_tidy_imports", "TID"),
    ("flake8_todos", "TD"),
    ("flake8_type_checking", "TC"),
    ("flake8_unused_arguments", "ARG"),
    ("flake8_use_pathlib", "PTH"),
    ("flynt", "FLY"),
    ("isort", "I"),
    ("mccabe", "C90"),
    ("numpy", "NPY"),
    ("pandas_vet", "PD"),
    ("pep8_naming", "N"),
    ("perflint", "PERF"),
    ("pycodestyle", "E"),
    ("pydoclint", "DOC"),
    ("pydocstyle", "D"),
    ("pyflakes", "F"),
    ("pygrep_hooks", "PGH"),
    ("pylint", "PLE"),
    ("pyupgrade", "UP"),
    ("refurb", "FURB"),
    ("ruff", "RUF"),
    ("tryceratops", "TRY"),
)
WORDS = (  # noqa: SIM905 (a list literal would take 100 lines)
    "unused import mutable argument default redundant open mode unnecessary comprehension "
    "literal call assert raises exception return implicit optional string format type "
    "annotation missing self private member access loop variable overwrite lambda "
    "assignment global statement nested collapsible else yoda sorted dict list set tuple "
    "generator subprocess shell hardcoded password sql injection datetime timezone naive "
    "path getcwd blocking sleep async await http logger warn exc info print debugger todo "
    "legacy random inplace name mismatch model without dunder str bytes slice index "
    "compare chained boolean positional keyword star unpack fstring docstring quotes "
    "parenthesized match case pattern guard decorator class method property"
).split()
FORMAT_AREAS = (
    "statement",
    "expression",
    "parentheses",
    "fmt_on_off",
    "fmt_skip",
    "docstring",
    "trailing_comments",
    "range_formatting",
    "stub_files",
    "pattern",
    "call_chains",
    "preview",
)
PARSER_AREAS = (
    "statement",
    "expressions",
    "other",
    "re_lexing",
    "f_string",
    "match",
    "type_params",
    "lambda",
)
CRATES = (
    "ruff",
    "ruff_annotate_snippets",
    "ruff_benchmark",
    "ruff_cache",
    "ruff_db",
    "ruff_dev",
    "ruff_diagnostics",
    "ruff_formatter",
    "ruff_graph",
    "ruff_index",
    "ruff_macros",
    "ruff_notebook",
    "ruff_python_ast",
    "ruff_python_codegen",
    "ruff_python_index",
    "ruff_python_literal",
    "ruff_python_semantic",
    "ruff_python_stdlib",
    "ruff_python_trivia",
    "ruff_server",
    "ruff_source_file",
    "ruff_text_size",
    "ruff_wasm",
    "ruff_workspace",
    "red_knot_python_semantic",
)
MYPY_AREAS = (
    ("checker", ("checker", "checkexpr", "checkmember", "checkpattern", "checkstrformat")),
    ("semanal", ("semanal", "semanal_main", "semanal_shared", "semanal_namedtuple")),
    ("types", ("types", "typeops", "subtypes", "meet", "join", "erasetype")),
    ("build", ("build", "modulefinder", "fscache", "options", "config_parser")),
    ("server", ("server/update", "server/deps", "server/astdiff", "server/aststrip")),
    ("plugins", ("plugins/attrs", "plugins/dataclasses", "plugins/enums", "plugins/functools")),
    ("stubtest", ("stubtest", "stubgen", "stubgenc", "stubutil", "stubdoc")),
    ("dmypy", ("dmypy/client", "dmypy_server", "dmypy_util", "dmypy_os")),
)
MYPYC_AREAS = ("irbuild", "codegen", "transform", "analysis", "ir", "primitives")
STDLIB = (
    "asyncio",
    "collections",
    "concurrent/futures",
    "email",
    "importlib",
    "json",
    "multiprocessing",
    "os",
    "sqlite3",
    "tkinter",
    "unittest",
    "urllib",
    "xml/etree",
    "ctypes",
    "distutils",
    "http",
    "logging",
    "wsgiref",
)

Namer = Callable[[str, int], str]


@dataclass
class Area:
    """A part of the tree commits touch together (a linter plugin's rules, fixtures and
    snapshots; a formatter category; a mypy subsystem and its test-data)."""

    name: str
    weight: float
    root: str  # renamed by a crate move; namers build paths from it
    namers: dict[str, Namer]
    paths: dict[str, list[str]] = field(default_factory=dict)
    counter: int = 0

    def new_path(self, kind: str) -> str:
        self.counter += 1
        path = self.namers[kind](self.root, self.counter)
        self.paths.setdefault(kind, []).append(path)
        return path


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.areas: list[Area] = []

    # -- names ---------------------------------------------------------------------

    def words(self, low: int, high: int) -> str:
        return "_".join(self.rng.sample(WORDS, self.rng.randint(low, high)))

    def code(self, prefix: str) -> str:
        return f"{prefix}{self.rng.randint(1, 999):03d}"

    # -- the tree --------------------------------------------------------------------

    def build_areas(self) -> None:
        rng = self.rng
        linter = "crates/ruff_linter"
        for plugin, prefix in PLUGINS:
            rules = rng.randint(8, 70)

            def rule_rs(root: str, n: int, plugin: str = plugin) -> str:
                return f"{root}/src/rules/{plugin}/rules/{self.words(2, 4)}.rs"

            def fixture(root: str, n: int, plugin: str = plugin, prefix: str = prefix) -> str:
                variant = rng.choice(("", "", f"_{n}", "_extended", "_py39", "_preview"))
                sub = rng.choice(("", "", "", "sub/", f"{self.words(1, 1)}/"))
                return (
                    f"{root}/resources/test/fixtures/{plugin}/{sub}{self.code(prefix)}"
                    f"{variant}.py{rng.choice(('', '', '', 'i'))}"
                )

            def snapshot(root: str, n: int, plugin: str = plugin, prefix: str = prefix) -> str:
                code = self.code(prefix)
                return (
                    f"{root}/src/rules/{plugin}/snapshots/ruff_linter__rules__{plugin}__tests__"
                    f"{self.words(1, 3)}_{code}_{code}_{n}.py.snap"
                )

            area = Area(
                f"linter/{plugin}",
                rules,
                linter,
                {PRODUCT: rule_rs, FIXTURE: fixture, SNAPSHOT: snapshot},
            )
            area.paths[PRODUCT] = [
                f"{linter}/src/rules/{plugin}/{name}.rs"
                for name in ("mod", "settings", "helpers")[: rng.randint(1, 3)]
            ]
            for _ in range(rules):
                area.paths[PRODUCT].append(rule_rs(linter, 0))
            for kind, per_rule in ((FIXTURE, 1.4), (SNAPSHOT, 1.6)):
                for _ in range(int(rules * per_rule)):
                    area.new_path(kind)
            self.areas.append(area)

        fmt = "crates/ruff_python_formatter"
        for category in FORMAT_AREAS:

            def fmt_fixture(root: str, n: int, category: str = category) -> str:
                return f"{root}/resources/test/fixtures/ruff/{category}/{self.words(1, 3)}_{n}.py"

            def fmt_snapshot(root: str, n: int, category: str = category) -> str:
                return f"{root}/tests/snapshots/format@{category}__{self.words(1, 3)}_{n}.py.snap"

            def fmt_rs(root: str, n: int, category: str = category) -> str:
                return f"{root}/src/{category}/{self.words(1, 2)}.rs"

            area = Area(
                f"formatter/{category}",
                40,
                fmt,
                {FIXTURE: fmt_fixture, SNAPSHOT: fmt_snapshot, PRODUCT: fmt_rs},
            )
            for kind, count in ((FIXTURE, 85), (SNAPSHOT, 85), (PRODUCT, 25)):
                for _ in range(count):
                    area.new_path(kind)
            self.areas.append(area)

        def black_case(root: str, n: int) -> str:
            ext = rng.choice((".py", ".py.expect", ".options.json"))
            return f"{root}/resources/test/fixtures/black/cases/{self.words(1, 3)}_{n}{ext}"

        def black_snap(root: str, n: int) -> str:
            return (
                f"{root}/tests/snapshots/black_compatibility@cases__{self.words(1, 3)}_{n}.py.snap"
            )

        def fmt_tests(root: str, n: int) -> str:
            return f"{root}/tests/{self.words(1, 2)}.rs"

        black = Area(
            "formatter/black",
            15,
            fmt,
            {FIXTURE: black_case, SNAPSHOT: black_snap, PRODUCT: fmt_tests, TEST: fmt_tests},
        )
        for kind, count in ((FIXTURE, 300), (SNAPSHOT, 160), (TEST, 4)):
            for _ in range(count):
                black.new_path(kind)
        black.paths[PRODUCT] = [f"{fmt}/src/lib.rs", f"{fmt}/src/options.rs", f"{fmt}/Cargo.toml"]
        self.areas.append(black)

        parser = "crates/ruff_python_parser"
        for category in PARSER_AREAS:
            for side, label in (("valid", "valid_syntax"), ("invalid", "invalid_syntax")):

                def p_fixture(root: str, n: int, category: str = category, side: str = side) -> str:
                    return f"{root}/resources/{side}/{category}/{self.words(1, 3)}_{n}.py"

                def p_snapshot(
                    root: str, n: int, category: str = category, label: str = label
                ) -> str:
                    return (
                        f"{root}/tests/snapshots/{label}@{category}__{self.words(1, 3)}_{n}.py.snap"
                    )

                def p_rs(root: str, n: int) -> str:
                    return f"{root}/src/parser/{self.words(1, 2)}.rs"

                area = Area(
                    f"parser/{side}/{category}",
                    12,
                    parser,
                    {FIXTURE: p_fixture, SNAPSHOT: p_snapshot, PRODUCT: p_rs},
                )
                for kind, count in ((FIXTURE, 55), (SNAPSHOT, 55), (PRODUCT, 6)):
                    for _ in range(count):
                        area.new_path(kind)
                self.areas.append(area)

        for crate in CRATES:
            root = f"crates/{crate}"
            size = rng.randint(30, 220)

            def c_rs(root: str, n: int) -> str:
                module = rng.choice(("", "", f"{self.words(1, 1)}/", f"{self.words(1, 1)}/nested/"))
                return f"{root}/src/{module}{self.words(1, 3)}.rs"

            def c_test(root: str, n: int) -> str:
                return f"{root}/tests/{self.words(1, 3)}.rs"

            def c_doc(root: str, n: int) -> str:
                name = rng.choice(("README", "CONTRIBUTING", "docs/" + self.words(1, 2)))
                return f"{root}/{name}.md"

            area = Area(
                f"crate/{crate}", size / 5, root, {PRODUCT: c_rs, TEST: c_test, DOCS: c_doc}
            )
            for _ in range(size):
                area.new_path(PRODUCT)
            area.paths[PRODUCT] += [f"{root}/Cargo.toml"]
            for _ in range(rng.randint(0, 8)):
                area.new_path(TEST)
            area.new_path(DOCS)
            if crate == "ruff_python_semantic":
                for _ in range(420):
                    area.new_path(PRODUCT)
            self.areas.append(area)

        for name, modules in MYPY_AREAS:

            def m_py(root: str, n: int, modules: tuple[str, ...] = modules) -> str:
                return (
                    f"{root}/{rng.choice(modules)}{rng.choice(('', '', f'_{self.words(1, 1)}'))}.py"
                )

            def m_test(root: str, n: int, name: str = name) -> str:
                return f"{root}/test/test{name}{rng.choice(('', '', self.words(1, 1)))}.py"

            def m_data(root: str, n: int, name: str = name) -> str:
                what = rng.choice(("check", "check", "semanal", "fine-grained", "pythoneval"))
                return f"test-data/unit/{what}-{name}-{self.words(1, 2).replace('_', '-')}.test"

            area = Area(f"mypy/{name}", 25, "mypy", {PRODUCT: m_py, TEST: m_test, FIXTURE: m_data})
            for kind, count in ((PRODUCT, 45), (TEST, 14), (FIXTURE, 60)):
                for _ in range(count):
                    area.new_path(kind)
            area.paths[FIXTURE] += [
                f"test-data/unit/fixtures/{self.words(1, 1)}.pyi" for _ in range(15)
            ] + [f"test-data/unit/lib-stub/{self.words(1, 1)}/__init__.pyi" for _ in range(15)]
            area.paths[SNAPSHOT] = [f"test-data/unit/{name}-{i}.out" for i in range(3)]
            self.areas.append(area)

        for name in MYPYC_AREAS:

            def y_py(root: str, n: int, name: str = name) -> str:
                if rng.random() < 0.15:
                    return f"{root}/lib-rt/{self.words(1, 2)}.{rng.choice('ch')}"
                return f"{root}/{name}/{self.words(1, 2)}.py"

            def y_test(root: str, n: int) -> str:
                return f"{root}/test/test_{self.words(1, 2)}.py"

            def y_data(root: str, n: int, name: str = name) -> str:
                what = rng.choice(("run", "irbuild", "refcount", "exceptions"))
                return f"{root}/test-data/{what}-{name}-{self.words(1, 2).replace('_', '-')}.test"

            def y_doc(root: str, n: int) -> str:
                return f"{root}/doc/{self.words(1, 2)}.rst"

            area = Area(
                f"mypyc/{name}",
                10,
                "mypyc",
                {PRODUCT: y_py, TEST: y_test, FIXTURE: y_data, DOCS: y_doc},
            )
            for kind, count in ((PRODUCT, 45), (TEST, 6), (FIXTURE, 25), (DOCS, 4)):
                for _ in range(count):
                    area.new_path(kind)
            self.areas.append(area)

        def typeshed(root: str, n: int) -> str:
            return f"{root}/stdlib/{rng.choice(STDLIB)}/{self.words(1, 2)}_{n}.pyi"

        shed = Area("typeshed", 6, "mypy/typeshed", {DOCS: typeshed})
        for _ in range(2100):
            shed.new_path(DOCS)
        self.areas.append(shed)

        def doc(root: str, n: int) -> str:
            section = rng.choice(("rules", "configuration", "editors", "source", "formatter"))
            return (
                f"{root}/{section}/{self.words(1, 3).replace('_', '-')}.{rng.choice(('md', 'rst'))}"
            )

        def other(root: str, n: int) -> str:
            return rng.choice(
                (
                    f".github/workflows/{self.words(1, 2)}.yaml",
                    f"scripts/{self.words(1, 3)}.py",
                    f"python/ruff/{self.words(1, 1)}.py",
                    "Cargo.toml",
                    "Cargo.lock",
                    "pyproject.toml",
                    "tox.ini",
                    "mypy_self_check.ini",
                    ".pre-commit-config.yaml",
                    "setup.py",
                    "CHANGELOG.md",
                    "README.md",
                )
            )

        docs = Area("docs", 25, "docs", {DOCS: doc, OTHER: other})
        for _ in range(380):
            docs.new_path(DOCS)
        for _ in range(60):
            docs.new_path(OTHER)
        docs.paths[OTHER] = sorted(set(docs.paths[OTHER]))
        docs.paths[PRODUCT] = [p for p in docs.paths[OTHER] if p.startswith(("scripts", "python"))]
        self.areas.append(docs)
        for area in self.areas:  # names drawn twice collapse into one path
            for kind, listed in area.paths.items():
                area.paths[kind] = list(dict.fromkeys(listed))

    def all_paths(self) -> list[str]:
        out: dict[str, None] = {}
        for area in self.areas:
            for listed in area.paths.values():
                out.update(dict.fromkeys(listed))
        return list(out)

    def size(self) -> int:
        u = self.rng.random()
        points = (*SIZE_QUANTILES, SIZE_TAIL)
        for (p0, k0), (p1, k1) in itertools.pairwise(points):
            if u <= p1:
                t = (u - p0) / (p1 - p0)
                return max(1, round(math.exp(math.log(k0) + t * (math.log(k1) - math.log(k0)))))
        return int(SIZE_TAIL[1])

    def pick_area(self, needs: tuple[str, ...] = ()) -> Area:
        candidates = [a for a in self.areas if all(a.paths.get(k) for k in needs)]
        return self.rng.choices(candidates, weights=[a.weight for a in candidates])[0]


@dataclass
class Stats:
    commits: int = 0
    merges: int = 0
    mixed: int = 0  # commits the generator meant to mix evidence with product
    sizes: list[int] = field(default_factory=list)
    big: list[int] = field(default_factory=list)
    changed_paths: set[str] = field(default_factory=set)
    base_files: int = 0


class Writer:
    """Writes the fast-import stream; keeps path → blob mark of the current tip."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.mark = POLICY_MARK
        self.when = 1_600_000_000
        self.serial = 0

    def blob(self, path: str) -> int:
        self.mark += 1
        self.serial += 1
        data = f"// {path}\n// revision {self.serial}\n".encode()
        self.out.write(b"blob\nmark :%d\ndata %d\n%s\n" % (self.mark, len(data), data))
        return self.mark

    def commit(
        self,
        message: str,
        parent: int | None,
        files: list[tuple[str, int | None]],
        merge: int | None = None,
    ) -> int:
        self.mark += 1
        self.when += 60
        body = message.encode()
        out = self.out
        out.write(b"commit refs/heads/bench\nmark :%d\n" % self.mark)
        out.write(b"author Dev <dev@example.com> %d +0000\n" % self.when)
        out.write(b"committer Dev <dev@example.com> %d +0000\n" % self.when)
        out.write(b"data %d\n%s\n" % (len(body), body))
        if parent is not None:
            out.write(b"from :%d\n" % parent)
        if merge is not None:
            out.write(b"merge :%d\n" % merge)
        for path, blob in files:
            if blob is None:
                out.write(b"D %s\n" % path.encode())
            else:
                out.write(b"M 100644 :%d %s\n" % (blob, path.encode()))
        return self.mark


MOVES = (  # (fraction of the history, old prefix, new prefix)
    (0.18, "crates/ruff_python_semantic", "crates/ruff_python_semantic_model"),
    (0.41, "crates/ruff_python_parser", "crates/ruff_python_parser_v2"),
    (0.63, "crates/ruff_python_formatter", "crates/ruff_python_fmt"),
)
TYPESHED_SYNC = 0.80  # a vendored-stubs sync touching ~1,000 files
# P(a commit of 2+ paths mixes evidence with product): ~37% of commits change one path,
# so this makes ~40% of all commits mixed.
MIX_GIVEN_TWO = 0.64


def new_prefix(special: list[tuple[int, str, str]]) -> str:
    return special[0][2]


def generate(out: BinaryIO, commits: int, seed: int) -> Stats:
    """Write the stream (the policy blob, mark :1, is the caller's) for ``commits``
    commits on top of a base commit that holds the whole tree and the policy."""
    gen = Generator(seed)
    gen.build_areas()
    rng = gen.rng
    w = Writer(out)
    stats = Stats()
    live: dict[str, int] = {}
    for path in gen.all_paths():
        live[path] = w.blob(path)
    stats.base_files = len(live) + 1
    base = w.commit(
        "base: the tree and its policy",
        None,
        [(".git-evidence.toml", POLICY_MARK), *live.items()],
    )
    mainline = [base]
    # (commit number, old prefix, new prefix); an empty new prefix: the stubs sync
    special = sorted(
        [(round(f * commits), old, new) for f, old, new in MOVES]
        + [(round(TYPESHED_SYNC * commits), "", "")]
    )

    def changes_for(k: int, side: bool) -> tuple[list[tuple[str, int | None]], bool]:
        """``k`` changed paths of one commit, and whether it mixes evidence with
        product on purpose."""
        mixed = False
        if k >= 2 and rng.random() < MIX_GIVEN_TWO:
            mixed = True
            area = gen.pick_area((PRODUCT, FIXTURE))
            n_product = max(1, round(k * rng.uniform(0.2, 0.5)))
            n_evidence = k - n_product
            n_fixture = max(1, round(n_evidence * rng.uniform(0.3, 0.7)))
            plan = {PRODUCT: n_product, FIXTURE: n_fixture, SNAPSHOT: n_evidence - n_fixture}
        else:
            roll = rng.random()
            if roll < 0.70:
                area = gen.pick_area((PRODUCT,))
                plan = {PRODUCT: k}
                if k >= 3 and area.namers.get(TEST) and rng.random() < 0.2:
                    plan = {PRODUCT: k - 1, TEST: 1}
            elif roll < 0.84:
                area = gen.pick_area((FIXTURE,))
                plan = {FIXTURE: max(1, k // 2), SNAPSHOT: k - max(1, k // 2)}
            elif roll < 0.95:
                area = gen.pick_area((DOCS,))
                plan = {DOCS: k}
            else:
                area = next(a for a in gen.areas if a.name == "docs")
                plan = {OTHER: 1, PRODUCT: k - 1} if k > 1 else {OTHER: 1}
        files: list[tuple[str, int | None]] = []
        for kind, count in plan.items():
            source = area
            seen: set[int] = set()
            while count > 0 and len(seen) < len(gen.areas):
                seen.add(id(source))
                listed = source.paths.get(kind, [])
                chosen = rng.sample(listed, min(count, len(listed)))
                count -= len(chosen)
                for path in chosen:
                    if rng.random() < 0.01 and not side and len(listed) > 10:
                        listed.remove(path)
                        live.pop(path, None)
                        files.append((path, None))
                    else:
                        live[path] = w.blob(path)
                        files.append((path, live[path]))
                if kind in source.namers and rng.random() < 0.04:  # a new file
                    path = source.new_path(kind)
                    live[path] = w.blob(path)
                    files.append((path, live[path]))
                if count > 0:  # more than this area holds: a sweeping change
                    source = gen.pick_area((kind,))
        return list(dict(files).items()), mixed

    def record(files: list[tuple[str, int | None]], mixed: bool, merge: bool = False) -> None:
        stats.commits += 1
        stats.mixed += mixed
        if merge:
            stats.merges += 1
        else:
            stats.sizes.append(len(files))
        stats.changed_paths.update(p for p, _ in files)

    files: list[tuple[str, int | None]]
    while stats.commits < commits:
        n = stats.commits
        if special and special[0][0] <= n and new_prefix(special) == "":
            special.pop(0)
            shed = next(a for a in gen.areas if a.name == "typeshed")
            files = []
            for path in rng.sample(shed.paths[DOCS], 1000):
                live[path] = w.blob(path)
                files.append((path, live[path]))
            mainline.append(w.commit("sync typeshed", mainline[-1], files))
            record(files, False)
            stats.big.append(len(files))
            continue
        if special and special[0][0] <= n:
            _, old, new = special.pop(0)
            files = []
            for path in [p for p in live if p.startswith(old + "/")]:
                moved = new + path[len(old) :]
                blob = live.pop(path)
                live[moved] = blob
                files += [(path, None), (moved, blob)]
            for area in gen.areas:
                if area.root == old:
                    area.root = new
                for listed in area.paths.values():
                    listed[:] = [
                        new + p[len(old) :] if p.startswith(old + "/") else p for p in listed
                    ]
            mainline.append(w.commit(f"move {old} to {new}", mainline[-1], files))
            record(files, False)
            stats.big.append(len(files))
            continue
        if rng.random() < 1 / 30 and commits - n > 8 and len(mainline) > 10:
            # a side branch forked a few commits back, merged with changes of its own
            fork = mainline[-rng.randint(2, 9)]
            side_tip = fork
            side_files: dict[str, int | None] = {}
            for _ in range(rng.randint(1, 4)):
                files, mixed = changes_for(min(gen.size(), 12), side=True)
                side_tip = w.commit(f"side change {n}", side_tip, files)
                side_files.update(files)
                record(files, mixed)
            own, mixed = changes_for(rng.choice((1, 2, 2, 3)), side=True)
            merged = [(p, b) for p, b in side_files.items() if p not in dict(own)]
            mainline.append(w.commit(f"merge side {n}", mainline[-1], merged + own, merge=side_tip))
            record(own, mixed, merge=True)
            continue
        files, mixed = changes_for(gen.size(), side=False)
        mainline.append(w.commit(f"change {n}", mainline[-1], files))
        record(files, mixed)
    return stats


# -- the policy ------------------------------------------------------------------------

POLICY = """\
# A Rust workspace whose linter, formatter and parser keep Python fixtures and
# snapshots beside the code, and a Python type checker with its test-data.
[paths]
product = [
  "crates/**",
  "!crates/*/resources/**",
  "!crates/*/tests/**",
  "!crates/**/*.md",
  "mypy/**",
  "!mypy/test/**",
  "!mypy/typeshed/**",
  "mypyc/**",
  "!mypyc/test/**",
  "!mypyc/test-data/**",
  "!mypyc/doc/**",
  "python/**",
  "scripts/[a-z]*.py",
  "setup.py",
]
fixture = [
  "crates/*/resources/test/fixtures/**",
  "crates/*/resources/[iv]*/**",
  "crates/*/resources/inline/**",
  "test-data/**",
  "!test-data/**/*.md",
  "mypyc/test-data/**",
  "**/testdata/**",
]
oracle = [
  "**/*.snap",
  "**/*.snap.new",
  "**/snapshots/**",
  "**/__snapshots__/**",
  "test-data/unit/*.out",
  "crates/*/resources/test/fixtures/**/*.py.expect",
]
test = [
  "crates/*/tests/**",
  "mypy/test/**",
  "mypyc/test/**",
  "**/test_*.py",
  "**/conftest.py",
]
neutral = [
  "docs/**",
  "*.md",
  "*.rst",
  "README*",
  "CHANGELOG*",
  "LICENSE*",
  "mypy/typeshed/**",
  "mypyc/doc/**",
  ".github/ISSUE_TEMPLATE/**",
  "assets/[a-z]*/**",
]

[rules]
time_budget_s = {budget}

[lock]
roots = ["crates/ruff_linter/resources/test/fixtures", "test-data"]
"""

# The same layout without `!` (for code that does not read negations yet): product is
# listed by what it is rather than carved out of the crates. The crates' evidence globs
# start with `**/` here: code that takes the literal components before the first
# wildcard as an evidence root reads `crates/*/resources/**` as "everything under
# crates/ is evidence", which would make every crate change evidence and hide the
# mixed commits this benchmark is about.
NO_NEGATION = {
    "product": """\
product = [
  "crates/*/src/**",
  "crates/*/Cargo.toml",
  "crates/*/build.rs",
  "crates/*/benches/**",
  "mypy/*.py",
  "mypy/[!t]*/**",
  "mypy/t[!ey]*/**",
  "mypyc/*.py",
  "mypyc/[!dt]*/**",
  "python/**",
  "scripts/[a-z]*.py",
  "setup.py",
]
""",
    "fixture": """\
fixture = [
  "**/resources/test/fixtures/**",
  "**/resources/[iv]*/**",
  "**/resources/inline/**",
  "test-data/**",
  "mypyc/test-data/**",
  "**/testdata/**",
]
""",
    "oracle": """\
oracle = [
  "**/*.snap",
  "**/*.snap.new",
  "**/snapshots/**",
  "**/__snapshots__/**",
  "test-data/unit/*.out",
  "**/resources/test/fixtures/**/*.py.expect",
]
""",
}


def policy_text(negation: bool, budget: float) -> str:
    text = POLICY.replace("{budget}", f"{budget:g}")
    if negation:
        return text
    for key, replacement in NO_NEGATION.items():
        start = text.index(f"{key} = [")
        end = text.index("]\n", start) + 2
        text = text[:start] + replacement + text[end:]
    assert '"!' not in text
    return text


# -- building the repository -----------------------------------------------------------


def stream_file(commits: int, seed: int) -> tuple[Path, dict[str, object]]:
    """The fast-import stream (without the policy blob) and its statistics, generated
    once."""
    path = WORK / f"real-{commits}-s{seed}-g{GENERATOR}.fi"
    meta = path.with_suffix(".json")
    if path.exists() and meta.exists():
        return path, json.loads(meta.read_text())
    t0 = time.perf_counter()
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb", buffering=1 << 20) as out:
        stats = generate(out, commits, seed)
    sizes = sorted(stats.sizes)

    def q(p: float) -> int:
        return sizes[min(len(sizes) - 1, int(p * len(sizes)))]

    doc: dict[str, object] = {
        "commits": stats.commits,
        "merges": stats.merges,
        "mixed_by_design": stats.mixed,
        "paths_per_commit": {"median": q(0.5), "p90": q(0.9), "p99": q(0.99), "max": sizes[-1]},
        "big_commits": stats.big,
        "distinct_changed_paths": len(stats.changed_paths),
        "base_files": stats.base_files,
        "depths": [
            min(p.count("/") + 1 for p in stats.changed_paths),
            max(p.count("/") + 1 for p in stats.changed_paths),
        ],
        "mean_path_length": round(
            sum(len(p) for p in stats.changed_paths) / len(stats.changed_paths), 1
        ),
    }
    os.replace(tmp, path)
    meta.write_text(json.dumps(doc, indent=1))
    print(f"generated {path.name} in {time.perf_counter() - t0:.1f} s")
    return path, doc


def build(repo: Path, commits: int, seed: int, policy: str) -> tuple[str, str]:
    """The bare repository: main at the base commit (which carries the policy), the
    history's tip under refs/bench/tip; hooks installed. Cached by the marker file."""
    marker = repo / "bench-built"
    if marker.exists():
        base, tip = marker.read_text().split()
        return base, tip
    stream, _ = stream_file(commits, seed)
    t0 = time.perf_counter()
    subprocess.run(["rm", "-rf", str(repo)], check=True)
    subprocess.run(["git", "init", "-q", "--bare", str(repo)], check=True)
    git(repo, "symbolic-ref", "HEAD", "refs/heads/main")
    proc = subprocess.Popen(
        ["git", "fast-import", "--quiet", "--done"], cwd=repo, stdin=subprocess.PIPE
    )
    assert proc.stdin is not None
    data = policy.encode()
    proc.stdin.write(b"blob\nmark :%d\ndata %d\n%s\n" % (POLICY_MARK, len(data), data))
    with open(stream, "rb") as handle:
        shutil.copyfileobj(handle, proc.stdin, 1 << 20)
    proc.stdin.write(b"done\n")
    proc.stdin.close()
    if proc.wait() != 0:
        raise SystemExit("git fast-import failed")
    tip = git(repo, "rev-parse", "refs/heads/bench")
    base = git(repo, "rev-list", "--max-parents=0", tip)
    git(repo, "update-ref", "refs/heads/main", base)
    git(repo, "update-ref", "refs/bench/tip", tip)
    git(repo, "update-ref", "-d", "refs/heads/bench")
    # As a served repository is after `git gc`: one pack with deltas, a commit-graph.
    git(repo, "repack", "-adq")
    git(repo, "commit-graph", "write", "--reachable")
    installed = subprocess.run(
        [sys.executable, "-m", "git_evidence", "install", "--server", "--repo", str(repo)],
        capture_output=True,
        check=False,
    )
    if installed.returncode != 0:
        print(f"note: `install --server` failed: {installed.stderr.decode()[-500:]}")
    marker.write_text(f"{base} {tip}\n")
    print(f"built {repo.name} in {time.perf_counter() - t0:.1f} s")
    return base, tip


# -- measuring -------------------------------------------------------------------------


def findings_of(repo: Path, stdin: bytes) -> tuple[int, dict[str, int], str]:
    """How many findings the push gets, by rule, and the decision (one JSON run)."""
    run = measure([*HOOK, "--format", "json"], repo, stdin, ok=(0, 1, 2), env=PUSHER)
    doc = json.loads(run.stderr)
    by_rule: dict[str, int] = {}
    for update in doc.get("updates", []):
        for finding in update["findings"]:
            by_rule[finding["rule"]] = by_rule.get(finding["rule"], 0) + 1
    if "error" in doc:
        by_rule[doc["error"]["rule"]] = 1
    return sum(by_rule.values()), by_rule, doc["decision"]


HOOK = [sys.executable, "-m", "git_evidence", "pre-receive"]
PUSHER = {"GIT_EVIDENCE_PUSHER": "agent-bot"}


def mib(kib: float) -> float:
    return kib / 1024


def push_ratio(
    repo: Path, base: str, tip: str, runs: int, samples: int, mixed_by_design: int
) -> None:
    stdin = f"{base} {tip} refs/heads/main\n".encode()
    log = ["git", "log", "--raw", "-z", "--no-renames", "--format=%H", f"{base}..{tip}"]

    def ours(sample: bool = False) -> Run:
        return measure(HOOK, repo, stdin, ok=(0, 1), sample=sample, env=PUSHER)

    def theirs(sample: bool = False) -> Run:
        return measure(log, repo, sample=sample)

    first = measure(HOOK, repo, stdin, ok=(0, 1, 2), env=PUSHER)  # warms the caches too
    if first.code == 2:
        raise SystemExit(
            "the hook could not decide (exit 2):\n"
            + first.stderr.decode(errors="replace")[:1500]
            + "(does this code read negated globs? try --no-negation)"
        )
    theirs()
    a, b = alternate(runs, ours, theirs)
    wall_a, wall_b = median_of(a, "wall"), median_of(b, "wall")
    cpu_a, cpu_b = median_of(a, "cpu"), median_of(b, "cpu")
    a_mem = [ours(sample=True) for _ in range(samples)]
    b_mem = [theirs(sample=True) for _ in range(samples)]
    pss_a, pss_b = max(r.pss_kib for r in a_mem), max(r.pss_kib for r in b_mem)
    rss_a, rss_b = max(r.rss_kib for r in a_mem), max(r.rss_kib for r in b_mem)
    count, by_rule, decision = findings_of(repo, stdin)
    print(
        f"push: hook {wall_a * 1000:.0f} ms (runs {spread(a)}), git log "
        f"{wall_b * 1000:.0f} ms (runs {spread(b)}): wall ratio {wall_a / wall_b:.2f} "
        f"(target <= 1.3; fastest runs {fastest(a) / fastest(b):.2f})"
    )
    print(
        f"      CPU user+sys hook {cpu_a * 1000:.0f} ms, git log {cpu_b * 1000:.0f} ms: "
        f"CPU ratio {cpu_a / cpu_b:.2f} (target <= 1.6; least CPU "
        f"{fastest(a, 'cpu') / fastest(b, 'cpu'):.2f})"
    )
    print(
        f"      peak memory of the process tree: PSS hook {mib(pss_a):.0f} MiB, git log "
        f"{mib(pss_b):.0f} MiB (+{mib(pss_a - pss_b):.0f}); RSS sum hook {mib(rss_a):.0f} "
        f"MiB, git log {mib(rss_b):.0f} MiB (+{mib(rss_a - rss_b):.0f}) (target <= +60 MiB)"
    )
    print(
        f"      decision {decision} (exit {a[0].code}), {count} findings "
        f"({', '.join(f'{k} {v}' for k, v in sorted(by_rule.items()))}), text report "
        f"{len(a[0].stderr):,} bytes, {len(a[0].stderr.splitlines()):,} lines"
    )
    found = by_rule.get("mixed-commit", 0)
    if abs(found - mixed_by_design) > mixed_by_design // 20:
        print(
            f"      note: {found} mixed-commit findings for {mixed_by_design} commits the "
            "history mixes by design: this code reads the layout otherwise (evidence roots? "
            "globs?), so it judges a different push than the one meant"
        )


def budget_run(repo: Path, base: str, tip: str, runs: int, budget: float) -> None:
    stdin = f"{base} {tip} refs/heads/main\n".encode()
    measure(HOOK, repo, stdin, ok=(0, 1, 2), env=PUSHER)  # warm
    done = [measure(HOOK, repo, stdin, ok=(0, 1, 2), env=PUSHER) for _ in range(runs)]
    walls = [r.wall for r in done]
    for r in done:
        stopped = b"time-budget" in r.stderr
        print(
            f"  {r.wall * 1000:5.0f} ms, exit {r.code}, "
            + ("stopped by the budget" if stopped else "judged in full")
            + f", report {len(r.stderr):,} bytes"
        )
    print(
        f"budget {budget:g} s: hook wall max {max(walls) * 1000:.0f} ms, median "
        f"{statistics.median(walls) * 1000:.0f} ms over {runs} runs (target: max <= "
        f"{budget + 0.2:g} s)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--commits", type=int, default=15_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--no-negation",
        action="store_true",
        help="write the policy without `!globs` (for code that does not read them)",
    )
    parser.add_argument(
        "--budget",
        type=float,
        metavar="SECONDS",
        help="instead: the policy's [rules].time_budget_s; report the hook's longest wall time",
    )
    parser.add_argument(
        "--memory-samples", type=int, default=3, help="sampled runs for peak memory (3)"
    )
    parser.add_argument(
        "--profile", action="store_true", help="also run the hook once under cProfile"
    )
    args = parser.parse_args()
    compile_package()
    WORK.mkdir(exist_ok=True)
    budget = args.budget if args.budget is not None else 3600
    negation = not args.no_negation
    policy = policy_text(negation, budget)
    digest = hashlib.sha256(policy.encode()).hexdigest()[:10]
    repo = WORK / f"real-{args.commits}-s{args.seed}-g{GENERATOR}-{digest}.git"
    base, tip = build(repo, args.commits, args.seed, policy)
    _, shape = stream_file(args.commits, args.seed)
    subprocess.run(["git", "update-ref", "-d", NOTES], cwd=repo, check=False)
    print(f"repository {repo}")
    print(f"shape: {json.dumps(shape)}")
    print(f"machine: {machine_note()}")
    print(
        "pre-receive run in the bare repository, stdin `<base> <tip> refs/heads/main`, "
        "pusher agent-bot"
    )
    if args.budget is not None:
        budget_run(repo, base, tip, max(args.runs, 5), args.budget)
    else:
        mixed = shape["mixed_by_design"]
        assert isinstance(mixed, int)
        push_ratio(repo, base, tip, args.runs, args.memory_samples, mixed)
    if args.profile:
        stdin = f"{base} {tip} refs/heads/main\n".encode()
        profile(HOOK, repo, stdin, WORK / "real-pre-receive.prof", ok=(0, 1, 2), env=PUSHER)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
