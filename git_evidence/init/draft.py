"""A draft policy from a repository's tracked paths (``git evidence init``): which
folders hold tests, test data, goldens, snapshots and properties, which are the
product and the documentation, and why each glob was chosen. Pure: paths in, a
``Draft`` out; plumbing/layout.py lists the paths, render.py writes the TOML.

It looks for shapes, not for projects (shapes.py names them):

* a data folder under a folder of tests (`tests/data`, `src/test/resources`), and
  test-data folders wherever they stand (`testdata`, `test-data`, `fixtures`);
* goldens beside their inputs: in a folder of tests, files of another extension named
  like an input beside them (`x.py` and `x.txt`), counted per folder and extension,
  and folders of expected outputs named after inputs elsewhere in the same tests;
* snapshot folders and extensions of the common snapshot libraries, and golden
  extensions; properties and oracles under a folder of tests;
* code examples kept under the documentation (what documentation tests run);
* files that list flaky or frozen tests; the rest: tests, product, documentation.

Folders that differ in one name (one per crate or package) are merged into one glob
with `*` in that place; each glob says how many files it covers and one of them."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import NamedTuple

from git_evidence.core import paths as classes
from git_evidence.core.path_globs import glob_problem
from git_evidence.core.paths import PathClass, is_runner_config
from git_evidence.core.runner_files import RUNNER_CONFIG_NAMES
from git_evidence.init import shapes
from git_evidence.init.roots import Entry, Roots, Seen, lock_roots, root_entries
from git_evidence.init.shapes import extension, is_code, is_test_dir, literal_component, stem

MIN_COMPANIONS = 3  # goldens beside inputs: at least this many pairs in a folder…
COMPANION_SHARE = 0.5  # …and this share of the folder's files of that extension
PARALLEL_SHARE = 1 / 3  # a folder of outputs: this share named after inputs elsewhere
MIN_TEST_FILES = 5  # test files beside code: fewer may be helpers named so
CODE = shapes.CODE_EXTENSIONS
RUNNER_NAMES = frozenset(n for n in RUNNER_CONFIG_NAMES if not n.startswith("*"))
FREEZE_EXTENSIONS = frozenset({"json", "jsonl", "txt", "yml", "yaml", "toml", "csv", ""})


class Draft(NamedTuple):
    paths: dict[PathClass, list[Entry]]
    lock_roots: list[str]
    test_root: str  # where the ledger, labels and quota files go
    base: str  # the default branch, as a ref
    runner_config: list[str]  # runner configuration found (class other)


def draft(paths: Sequence[str], base: str) -> Draft:
    """The draft for a tree whose tracked files are ``paths`` (git's spelling,
    `/`-separated, relative to the top), for the default branch ``base``."""
    fixture_roots: Roots = {}
    oracle_roots: Roots = {}
    snapshot_dirs: dict[str, Seen] = defaultdict(Seen)
    by_extension: dict[tuple[PathClass, str, str], Seen] = defaultdict(Seen)
    test_dirs: dict[str, Seen] = defaultdict(Seen)
    docs: dict[str, Seen] = defaultdict(Seen)
    test_files: dict[str, Seen] = defaultdict(Seen)
    top_dirs: dict[str, Seen] = defaultdict(Seen)
    top_files: list[str] = []
    manifests: dict[str, Seen] = defaultdict(Seen)
    freezes: list[str] = []
    runner: list[str] = []
    # Goldens: the files of each test folder (not test data already), by folder.
    folders: dict[tuple[str, ...], list[str]] = defaultdict(list)
    code_stems: dict[tuple[str, ...], dict[str, str]] = defaultdict(dict)
    with_files: set[tuple[str, ...]] = set()  # folders that hold files of their own

    facts: dict[str, _Folder] = {}
    for path in paths:
        where, _, name = path.rpartition("/")
        low = name.lower()
        folder = facts.get(where)
        if folder is None:
            folder = facts[where] = _folder(where)
            with_files.add(folder.dirs)
        ext = low.rpartition(".")[2] if "." in low else ""
        dirs, t, root, code = folder.dirs, folder.test, folder.root, ext in CODE
        if (low in RUNNER_NAMES or ext == "pth") and is_runner_config(path):
            runner.append(path)
        if root is not None:
            fixture_roots.setdefault(dirs[: root + 1], Seen(folder.why)).add(path)
        if t is not None:
            if code:  # an input is a module, or its package
                stems = code_stems[dirs[: t + 1]]
                stems.setdefault(stem(low), path)
                stems.setdefault(dirs[-1].lower(), path)
            test_dirs[folder.test_glob].add(path)
            if folder.oracle is not None:
                why = "properties or oracles under tests"
                oracle_roots.setdefault(dirs[: folder.oracle + 1], Seen(why)).add(path)
            elif root is None:
                folders[dirs].append(name)
        elif "test" in low or "spec" in low:
            for glob, matches in shapes.TEST_FILE_GLOBS:
                if matches(low):
                    test_files[glob].add(path)
                    break
        if folder.snapshots:
            seen = snapshot_dirs[folder.snapshots]
            seen.add(path)
            seen.extra += not code
        if ext:
            for glob, part in shapes.SNAPSHOT_GLOBS:
                if (part in low) if part.endswith(".") else low.endswith(part):
                    by_extension[(classes.ORACLE, glob, "snapshot files")].add(path)
            for glob, part in shapes.GOLDEN_GLOBS:
                if low.endswith(part):
                    by_extension[(classes.FIXTURE, glob, "golden files")].add(path)
        manifest = low in shapes.MANIFESTS or shapes.is_requirements(low)
        if manifest and not folder.documentation and t is None and root is None:
            manifests[name].add(path)
        if ext in FREEZE_EXTENSIONS and shapes.is_freeze_file(low):
            freezes.append(path)
        if not dirs:
            top_files.append(name)
        elif folder.documentation:
            docs[dirs[0]].add(path)
        elif code and t is None:
            top_dirs[dirs[0]].add(path)
    nested_tests = {f.test_glob for f in facts.values() if f.test}
    test_index = {f.dirs: f.test for f in facts.values() if f.test is not None}

    _goldens(folders, test_index, code_stems, fixture_roots, by_extension)
    out: dict[PathClass, list[Entry]] = {k: [] for k in classes.PRECEDENCE}
    out[classes.LEDGER] = [
        Entry("/" + "/".join(map(literal_component, f.split("/"))), "a list of flaky tests", 1, f)
        for f in freezes
    ]
    for name, seen in sorted(snapshot_dirs.items()):
        if name == "__snapshots__" or seen.extra * 2 >= seen.count:
            out[classes.ORACLE].append(
                Entry(f"**/{name}/**", "snapshot folder", seen.count, seen.example)
            )
    out[classes.ORACLE] += root_entries(oracle_roots, with_files)
    out[classes.FIXTURE] += root_entries(fixture_roots, with_files)
    for (klass, glob, why), seen in sorted(by_extension.items()):
        out[klass].append(Entry(glob, why, seen.count, seen.example))
    tests = _tests(test_dirs, nested_tests, test_files)
    out[classes.TEST] = tests
    out[classes.PRODUCT] = _product(top_dirs, top_files, manifests, tests, nested_tests)
    out[classes.NEUTRAL] = _neutral(docs, top_files)
    out = {k: [e for e in v if glob_problem(e.glob, negation=True) is None] for k, v in out.items()}
    top_tests = [(s.count, g) for g, s in test_dirs.items() if g not in nested_tests]
    test_root = max(top_tests)[1].split("/")[1] if top_tests else "tests"
    runner.sort(key=lambda p: (p.count("/"), p))
    return Draft(out, lock_roots(fixture_roots), test_root, base, runner)


class _Folder(NamedTuple):
    """What a folder's path says of the files directly in it."""

    dirs: tuple[str, ...]
    documentation: bool  # under a documentation folder at the top
    test: int | None  # the index of its first test folder
    test_glob: str
    root: int | None  # the index of the folder that makes its files test data
    why: str
    oracle: int | None  # the index of a properties or oracle folder under its tests
    snapshots: str | None  # the name of the snapshot folder it is in


def _folder(where: str) -> _Folder:
    dirs = tuple(where.split("/")) if where else ()
    lows = [d.lower() for d in dirs]
    documentation = bool(dirs) and lows[0] in shapes.DOC_DIRS
    t = None if documentation else next((i for i, d in enumerate(dirs) if is_test_dir(d)), None)
    root, why = _data_root(dirs, t)
    oracle = None
    if t is not None:
        oracle = next((i for i in range(t + 1, len(dirs)) if lows[i] in shapes.ORACLE_DIRS), None)
    snapshots = next(
        (
            d if d in shapes.SNAPSHOT_DIRS else "*" + shapes.SNAPSHOT_SUFFIX
            for d in lows
            if d in shapes.SNAPSHOT_DIRS or d.endswith(shapes.SNAPSHOT_SUFFIX)
        ),
        None,
    )
    glob = shapes.test_dir_glob(dirs[t]) if t is not None else ""
    return _Folder(dirs, documentation, t, glob, root, why, oracle, snapshots)


def _data_root(dirs: tuple[str, ...], t: int | None) -> tuple[int | None, str]:
    """The index of the folder that makes a file test data, and why."""
    if t is not None:
        for i in range(t):  # `resources/test/…`: a package's resources, for its tests
            if dirs[i].lower() == "resources":
                return i, "resources folder that holds test data"
        for i in range(t + 1, len(dirs)):
            if dirs[i].lower() in shapes.DATA_DIRS:
                return i, "data folder under tests"
    for i, d in enumerate(dirs):
        if d.lower() in shapes.STRONG_DATA_DIRS:
            return i, "test data folder"
    documentation = len(dirs) >= 2 and dirs[0].lower() in shapes.DOC_DIRS
    if documentation and dirs[1].lower() in shapes.DOC_DATA_DIRS:
        return 1, "code examples kept as data under the documentation (doc tests)"
    return None, ""


def _goldens(
    folders: dict[tuple[str, ...], list[str]],
    test_index: dict[tuple[str, ...], int],
    code_stems: dict[tuple[str, ...], dict[str, str]],
    fixture_roots: Roots,
    by_extension: dict[tuple[PathClass, str, str], Seen],
) -> None:
    """Goldens beside their inputs, per test folder and extension; folders of expected
    outputs named after inputs elsewhere in the same tests."""
    pairs: dict[tuple[tuple[str, ...], str], Seen] = defaultdict(Seen)
    totals: dict[tuple[tuple[str, ...], str], int] = defaultdict(int)
    for dirs, names in folders.items():
        t = test_index[dirs]
        group = dirs[: t + 2]
        exts: dict[str, set[str]] = defaultdict(set)
        for name in names:
            exts[stem(name)].add(extension(name))
        for name in names:
            ext = extension(name)
            if not ext or ext in shapes.CODE_EXTENSIONS or is_runner_config(name):
                continue
            totals[(group, ext)] += 1
            if len(exts[stem(name)]) > 1:
                pairs[(group, ext)].add("/".join((*dirs, name)))
        parent = folders.get(dirs[:-1])
        module = f"{dirs[-1].lower()}.py"
        data_only = not any(is_code(n) for n in names)
        if parent and data_only and module in {n.lower() for n in parent}:
            seen = Seen("data folder named after its test module (pytest-datadir)")
            seen.count, seen.example = len(names), "/".join((*dirs, names[0]))
            fixture_roots[dirs] = seen
            continue
        if len(names) >= MIN_COMPANIONS and not any(is_code(n) for n in names):
            elsewhere = code_stems.get(dirs[: t + 1], {})
            named = [elsewhere[stem(n)] for n in names if stem(n) in elsewhere]
            if len(named) >= PARALLEL_SHARE * len(names):
                input_dir = named[0].rpartition("/")[0]
                seen = Seen(f"expected outputs named after the inputs in {input_dir}")
                seen.count, seen.example = len(names), "/".join((*dirs, names[0]))
                fixture_roots[dirs] = seen
    for (group, ext), seen in sorted(pairs.items()):
        if seen.count >= MIN_COMPANIONS and seen.count >= COMPANION_SHARE * totals[(group, ext)]:
            glob = "/".join(map(literal_component, group)) + f"/**/*.{ext}"
            why = f"goldens beside their inputs (a .{ext} named like a file beside it)"
            by_extension[(classes.FIXTURE, glob, why)] = seen


def _tests(tests: dict[str, Seen], nested: set[str], files: dict[str, Seen]) -> list[Entry]:
    out = []
    for glob, seen in sorted(tests.items(), key=lambda kv: -kv[1].count):
        shown = glob if glob in nested else glob.removeprefix("**/")
        out.append(Entry(shown, "folder of tests", seen.count, seen.example))
    for glob, seen in files.items():
        if seen.count < MIN_TEST_FILES:
            continue
        out.append(Entry(glob, "test files beside the code they test", seen.count, seen.example))
    return out


def _product(
    top_dirs: dict[str, Seen],
    top_files: list[str],
    manifests: dict[str, Seen],
    tests: list[Entry],
    nested: set[str],
) -> list[Entry]:
    out = []
    for name, seen in sorted(top_dirs.items()):
        low = name.lower()
        if name.startswith(".") or low in shapes.DOC_DIRS or low in shapes.STRONG_DATA_DIRS:
            continue
        glob = literal_component(name) + "/**"
        out.append(Entry(glob, "a top folder of code", seen.count, seen.example))
    exts: dict[str, list[str]] = defaultdict(list)
    for name in top_files:
        if is_code(name) and not is_runner_config(name) and not name.startswith("."):
            exts[extension(name)].append(name)
    for ext, names in sorted(exts.items()):
        out.append(Entry(f"/*.{ext}", "code at the top", len(names), names[0]))
    for name, seen in sorted(manifests.items()):
        glob = name if "/" in seen.example or seen.count > 1 else "/" + name
        out.append(Entry(glob, "build or dependency manifest", seen.count, seen.example))
    for entry in tests:
        if entry.glob in nested or "/" not in entry.glob:
            why = "tests inside code folders are tests, not product"
            out.append(Entry("!" + entry.glob, why, entry.files, entry.example))
    return out


def _neutral(docs: dict[str, Seen], top_files: list[str]) -> list[Entry]:
    out = []
    for name, seen in sorted(docs.items()):
        glob = literal_component(name) + "/**"
        out.append(Entry(glob, "documentation folder", seen.count, seen.example))
    taken: set[str] = set()
    for pattern in shapes.DOC_FILES:
        prefix = pattern[:-1].lower()
        found = [n for n in top_files if n.lower().startswith(prefix)]
        if found:
            out.append(Entry(pattern, "documentation", len(found), found[0]))
            taken.update(found)
    exts: dict[str, list[str]] = defaultdict(list)
    for name in top_files:
        ext = extension(name)
        plain = not name.startswith(".") and not shapes.is_requirements(name.lower())
        if name not in taken and plain and ext in shapes.DOC_EXTENSIONS:
            exts[extension(name)].append(name)
    for ext, names in sorted(exts.items()):
        out.append(Entry(f"/*.{ext}", "documentation at the top", len(names), names[0]))
    return out
