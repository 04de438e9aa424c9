"""The shapes a draft policy looks for, as names: what a folder of tests, of test data,
of snapshots, of properties or of documentation is called in the common layouts, which
extensions hold code, and which files pin dependencies or list flaky tests. Pure: names
and small predicates over one path component or file name, shared by the drafting
(draft.py) and its tests.

Names are compared lower-cased. A name alone decides nothing: draft.py asks where it
stands (a `data` folder is test data under a test folder, product data elsewhere)."""

from __future__ import annotations

from typing import Final

# A folder of tests: `tests/`, `test/`, Jest's `__tests__/`, RSpec's `spec/`, and a
# package of tests named for it (`ruff_python_ast_integration_tests/`).
TEST_DIRS: Final = frozenset(
    {"test", "tests", "testing", "__tests__", "spec", "specs", "testsuite", "test-suite", "e2e"}
)
TEST_DIR_SUFFIXES: Final = ("_tests", "-tests")

# Test data, when it stands under a folder of tests (`tests/data/`, Maven's
# `src/test/resources/`, pylint's `tests/regrtest_data/`).
DATA_DIRS: Final = frozenset(
    {
        "data",
        "fixtures",
        "fixture",
        "testdata",
        "test_data",
        "test-data",
        "resources",
        "regrtest_data",
        "input",
        "inputs",
        "expected",
        "expected_output",
        "expected_outputs",
        "goldens",
        "golden",
        "baselines",
        "baseline",
        "samples",
        "corpus",
        "assets",
        "cassettes",
        "files",
        "output",
        "outputs",
    }
)
# Test data wherever it stands: names nothing but tests use (Go's `testdata/`,
# mypy's `test-data/`).
STRONG_DATA_DIRS: Final = frozenset(
    {
        "testdata",
        "test_data",
        "test-data",
        "test-resources",
        "test_resources",
        "regrtest_data",
        "goldens",
        "golden",
        "fixtures",
    }
)
# Snapshot folders: Jest's and Vitest's `__snapshots__`, insta's and syrupy's
# `snapshots`/`__snapshots__`, pytest-snapshot's `snapshots`.
SNAPSHOT_DIRS: Final = frozenset({"__snapshots__", "snapshots", "_snapshots", "__snapshot__"})
# Playwright's screenshots beside a spec: `example.spec.ts-snapshots/`.
SNAPSHOT_SUFFIX: Final = "-snapshots"
# Snapshot files: insta's and Jest's `.snap`, syrupy's `.ambr`, ApprovalTests'
# `.approved.*`.
SNAPSHOT_GLOBS: Final = (("*.snap", ".snap"), ("*.ambr", ".ambr"), ("*.approved.*", ".approved."))
# Golden files by extension.
GOLDEN_GLOBS: Final = (("*.golden", ".golden"), ("*.expected", ".expected"))
# Properties and oracles under a folder of tests (Hypothesis suites, reference models).
ORACLE_DIRS: Final = frozenset({"properties", "property", "property_tests", "oracles", "oracle"})
# Documentation folders at the top; a `data` or `examples` folder of code under one is
# what a documentation test runs (doctest roots, message examples).
DOC_DIRS: Final = frozenset(
    {"doc", "docs", "documentation", "website", "site", "book"}
    | {"changelog.d", "changes", "newsfragments", "news"}  # release notes in pieces
)
DOC_DATA_DIRS: Final = frozenset({"data", "examples", "example", "snippets", "code"})
# Top-level files that are documentation wherever they are.
DOC_FILES: Final = (
    "README*",
    "CHANGELOG*",
    "CHANGES*",
    "HISTORY*",
    "NEWS*",
    "LICENSE*",
    "LICENCE*",
    "COPYING*",
    "AUTHORS*",
    "CONTRIBUTORS*",
    "CONTRIBUTING*",
    "CODE_OF_CONDUCT*",
    "SECURITY*",
)
DOC_EXTENSIONS: Final = frozenset({"md", "rst", "adoc", "txt"})
# Build and dependency manifests: what the product is built from.
MANIFESTS: Final = frozenset(
    {
        "cargo.toml",
        "cargo.lock",
        "package.json",
        "package-lock.json",
        "yarn.lock",
        "pnpm-lock.yaml",
        "go.mod",
        "go.sum",
        "makefile",
        "cmakelists.txt",
        "meson.build",
        "setup.py",
        "manifest.in",
        "uv.lock",
        "poetry.lock",
        "pipfile",
        "pipfile.lock",
        "gemfile",
        "gemfile.lock",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "mix.exs",
        "composer.json",
        "composer.lock",
        "requirements.txt",
    }
)
# Lists of flaky or quarantined tests a project keeps.
FREEZE_WORDS: Final = ("freeze", "flaky", "flakes", "quarantine")
CODE_EXTENSIONS: Final = frozenset(
    {
        "py",
        "pyi",
        "pyx",
        "rs",
        "go",
        "c",
        "h",
        "cc",
        "cpp",
        "hpp",
        "cxx",
        "m",
        "mm",
        "java",
        "kt",
        "kts",
        "scala",
        "js",
        "jsx",
        "mjs",
        "cjs",
        "ts",
        "tsx",
        "rb",
        "php",
        "cs",
        "fs",
        "swift",
        "ex",
        "exs",
        "erl",
        "hs",
        "ml",
        "lua",
        "pl",
        "pm",
        "sh",
        "zig",
        "dart",
        "vue",
        "svelte",
        "clj",
        "vim",
        "el",
        "r",
        "jl",
    }
)
# File names of tests outside a test folder, with the glob that names them.
TEST_FILE_GLOBS: Final = (
    ("test_*.py", lambda n: n.startswith("test_") and n.endswith(".py")),
    ("*_test.py", lambda n: n.endswith("_test.py")),
    ("*_test.go", lambda n: n.endswith("_test.go")),
    ("*.test.*", lambda n: ".test." in n and _ext(n) in CODE_EXTENSIONS),
    ("*.spec.*", lambda n: ".spec." in n and _ext(n) in CODE_EXTENSIONS),
    ("*_spec.rb", lambda n: n.endswith("_spec.rb")),
    ("*Test.java", lambda n: n.endswith("test.java")),
    ("*Tests.cs", lambda n: n.endswith("tests.cs")),
)


def _ext(name: str) -> str:
    return name.rpartition(".")[2] if "." in name else ""


def extension(name: str) -> str:
    """The last extension of a file name, lower-cased, without the dot ('' for none)."""
    return _ext(name.lower())


def is_code(name: str) -> bool:
    return extension(name) in CODE_EXTENSIONS


def stem(name: str) -> str:
    """A file name before its first dot (`x.0.out` → `x`), lower-cased; a name that
    starts with a dot is its own stem."""
    low = name.lower()
    return low if low.startswith(".") else low.partition(".")[0]


def is_requirements(low: str) -> bool:
    """A pip requirements or constraints file (`requirements.txt`, `test-requirements.in`,
    `requirements-dev.txt`): dependencies, as the manifests are."""
    return ("requirements" in low or "constraints" in low) and extension(low) in ("txt", "in")


def is_test_dir(name: str) -> bool:
    low = name.lower()
    return low in TEST_DIRS or low.endswith(TEST_DIR_SUFFIXES)


def test_dir_glob(name: str) -> str:
    """The glob of a test folder's name at any depth: `**/tests/**`, or for a package
    named for its tests `**/*_tests/**`."""
    low = name.lower()
    if low in TEST_DIRS:
        return f"**/{low}/**"
    suffix = next(s for s in TEST_DIR_SUFFIXES if low.endswith(s))
    return f"**/*{suffix}/**"


def is_freeze_file(name: str) -> bool:
    low = name.lower()
    return not is_code(low) and any(word in low for word in FREEZE_WORDS)


def literal_component(name: str) -> str:
    """A folder's name as a glob component that matches it: a glob's special characters
    (`*`, `?`, `[`, `]`, a leading `!`, a backslash) become `?`, which matches any one."""
    out = "".join("?" if ch in "*?[]\\" else ch for ch in name)
    return "?" + out[1:] if out.startswith("!") else out
