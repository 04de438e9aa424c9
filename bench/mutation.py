"""Mutation testing of the pure modules: does some fast test fail for each plausible
one-line bug?

Each mutant changes one token of one line of a module (a comparison flipped, `and`
for `or`, a `not` dropped, a constant changed, `+` for `-`, `break` for `continue`),
then the fast unit tests run against it (`pytest -x`, in a private copy of the
project). A mutant is *killed* when some test fails, *survived* when every test
passes. A survivor is a missing test, unless it is listed in EQUIVALENT below with
the reason it cannot change behaviour.

    python bench/mutation.py                      # every pure module, 2 workers
    python bench/mutation.py core/globs -j 1       # some modules
    python bench/mutation.py --list rules/table   # the mutants, without running
    python bench/mutation.py --json out.json      # every result, for --survivors-of

Not run by CI: a full run takes minutes (see the summary it prints).
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tokenize
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
MODULES = (
    "rules/table",
    "rules/findings",
    "rules/summaries",
    "rules/commits",
    "rules/range_rules",
    "rules/files",
    "rules/decide",
    "core/paths",
    "core/path_globs",
    "core/globs",
    "ledger/entries",
    "policy/schema",
    "policy/parsing",
)
# Fast and pure: no git runs in these (ordered fastest first, since -x stops early).
TESTS = (
    "tests/core/test_closed_sets.py",  # the Literals' values: nothing else reads them at run time
    "tests/rules/test_decide.py",
    "tests/rules/test_range_rules.py",
    "tests/rules/test_rules_table.py",
    "tests/core/test_paths_table.py",
    "tests/policy/test_policy_table.py",
    "tests/ledger/test_ledger_table.py",
    "tests/plumbing/test_raw_diff_table.py",
    "tests/rules/test_rules_parts.py",
    "tests/policy/test_policy.py",
    "tests/core/test_paths.py",
    "tests/core/test_roots_property.py",
)

SWAPS = {
    "==": ("!=",),
    "!=": ("==",),
    "<": ("<=", ">"),
    "<=": ("<", ">="),
    ">": (">=", "<"),
    ">=": (">", "<="),
    "and": ("or",),
    "or": ("and",),
    "is": ("is not",),
    "in": ("not in",),
    "+": ("-",),
    "-": ("+",),
    "True": ("False",),
    "False": ("True",),
    "break": ("continue",),
    "continue": ("break",),
}

# Mutants that cannot change what the module does, keyed by ("module:function", the
# line as written, stripped, and the mutation as printed, with its column when the
# token is on the line twice); the value says why.
PLAIN_ROW = (
    "a plain row is classified by its path alone: classify_change reads the status, "
    "modes and ids of links only"
)
EQUIVALENT: dict[tuple[str, str, str], str] = {
    (
        "rules/table",
        "SEVERITY: dict[Decision, int] = {ALLOW: 0, HOLD: 1, REJECT: 2}",
        "'2' -> '3'",
    ): "only the order of the severities is read (max); reject stays the worst",
    (
        "rules/summaries:summarize",
        'def summarize(commit: CommitDiff, classifier: Classifier, ledger_path: str = "") '
        "-> CommitSummary:",
        """'""' -> '"x§"'""",
    ): "the callers that pass no ledger path (split, pre-commit) never read the ledger rows",
    (
        "rules/findings:_finding",
        'hint.format(ref=ref, commit=(commit or "")[:12], **fields),',
        """'""' -> '"x§"'""",
    ): "only mixed-commit's fix names {commit}, and a mixed-commit finding has its commit",
    (
        "core/path_globs:glob_problem",
        'if any(part in ("", ".", "..") for part in parts):',
        """'"."' -> '".§"'""",
    ): "no component folds to `.`: folding drops trailing dots and spaces",
    (
        "core/path_globs:glob_problem",
        'if any(part in ("", ".", "..") for part in parts):',
        """'".."' -> '"..§"'""",
    ): "no component folds to `..`: folding drops trailing dots and spaces",
    (
        "core/path_globs:glob_regex",
        'return body if parts[-1] == "**" else f"{body}(?:/{ANY})?"',
        """'"**"' -> '"**§"'""",
    ): "a body that ends in `**` matches anything below already: the optional tail adds nothing",
    (
        "core/paths:object_ids",
        "if self.old_oid or self.new_oid or not self.raw_meta:",
        "'or' -> 'and' at 24",
    ): "a row carries both object ids or neither (ranges._change)",
    ("core/paths", "_CACHE_LIMIT = 1 << 18", "'1' -> '0' at 15"): "a cache's size",
    ("core/paths", "_CACHE_LIMIT = 1 << 18", "'1' -> '2' at 15"): "a cache's size",
    ("core/paths", "_CACHE_LIMIT = 1 << 18", "'18' -> '19'"): "a cache's size",
    ("core/paths:classify", "if len(self._cache) < _CACHE_LIMIT:", "'<' -> '<='"): "a cache's size",
    ("core/paths:classify", "if len(self._cache) < _CACHE_LIMIT:", "'<' -> '>'"): (
        "no cache: the cached function is pure"
    ),
    (
        "core/paths:classify_change",
        "if len(self._change_cache) < _CACHE_LIMIT:",
        "'<' -> '<='",
    ): "a cache's size",
    ("core/paths:classify_change", "if len(self._change_cache) < _CACHE_LIMIT:", "'<' -> '>'"): (
        "no cache: the cached function is pure"
    ),
    (
        "core/paths:_compile_roots",
        "for k in range(1, len(parts) + 1):",
        "'1' -> '0' at 31",
    ): "k = 0 adds a pattern for the empty path, which _root_relation answers before them",
    (
        "core/paths:_compile_roots",
        "for k in range(1, len(parts) + 1):",
        "'1' -> '2' at 47",
    ): "k = len + 1 repeats the pattern of k = len, and setdefault keeps the first",
    ("core/paths:_taken_back", "for i in range(index + 1, len(self._entries)):", "'1' -> '0'"): (
        "entry `index` is the negation itself, skipped as negated"
    ),
    ("core/paths:_taken_back", "break", "'break' -> 'continue'"): (
        "a class's entries are contiguous: scanning past them finds nothing of the class"
    ),
    (
        "ledger/entries:parse_time",
        'text = value[:-1] + "+00:00" if value.endswith("Z") else value',
        """'"Z"' -> '"Z§"'""",
    ): "on Python >= 3.11 fromisoformat reads a trailing Z itself (3.10 needs this line)",
    ("ledger/entries:parse_ledger", "break", "'break' -> 'continue'"): (
        "the empty chunk after the final newline is the last one"
    ),
    ("policy/parsing:parse_policy", "if sys.version_info >= (3, 11):", "'>=' -> '>'"): (
        "a 3.11 version tuple is longer than (3, 11), so greater than it"
    ),
    (
        "policy/parsing:parse_policy",
        "line = int(found.group(1)) if found else max(1, len(text.splitlines()))",
        "'1' -> '0' at 53",
    ): "max(0, n) differs only for a text of no lines, and an empty text is valid TOML",
    ("policy/parsing:line_of", 'current = ""', """'""' -> '"x§"'"""): (
        "no table is named either: a key before the first header matches no table"
    ),
    (
        "rules/summaries:value_pairs",
        "return frozenset(zip(flat[0::2], flat[1::2], strict=True))",
        "'True' -> 'False'",
    ): "a summary keeps its evidence values as (path, value) pairs: the halves are as long",
    (
        "rules/summaries:summarize",
        'commit: CommitDiff, classifier: Classifier, ledger_path: str = "", quota_path: str = ""',
        """'""' -> '"x§"' at 67""",
    ): "the default names no file: no caller that omits it reads the ledger rows",
    (
        "rules/summaries:summarize",
        'commit: CommitDiff, classifier: Classifier, ledger_path: str = "", quota_path: str = ""',
        """'""' -> '"x§"' at 89""",
    ): "the default names no file: no caller that omits it reads the quota rows",
    (
        "rules/summaries:summarize",
        "for meta, raw in zip(rows, rows, strict=True):",
        "'True' -> 'False'",
    ): "the parser hands on rows in (meta, path) pairs: the lengths always agree",
    (
        "rules/range_rules:_listed_classes",
        "if evidence and not mixed and not who.evidence_writer(policy):",
        "'and' -> 'or' at 16",
    ): "only widens which classes' paths are collected; mixed-range, the one finding that "
    "lists every class, fires only where the written condition holds",
    (
        "rules/range_rules:_listed_classes",
        "if evidence and not mixed and not who.evidence_writer(policy):",
        "'and' -> 'or' at 30",
    ): "only widens which classes' paths are collected; mixed-range, the one finding that "
    "lists every class, fires only where the written condition holds",
    ("policy/schema", "@lru_cache(maxsize=16)", "'16' -> '17'"): "a cache's size",
    (
        "core/paths:classify_plain",
        "if len(self.plain_classes) < _CACHE_LIMIT:",
        "'<' -> '<='",
    ): "a cache's size",
    (
        "core/paths:classify_plain",
        "if len(self.plain_classes) < _CACHE_LIMIT:",
        "'<' -> '>'",
    ): "no cache: the cached function is pure",
    (
        "rules/summaries:summarize",
        "status = letters[:1]",
        "'1' -> '2'",
    ): "diff-tree runs with --no-renames: a plain row's status is one letter",
    (
        "rules/decide:decide",
        "for outcome, bundle in zip(decisions, push.updates, strict=True)",
        "'True' -> 'False'",
    ): "the decisions are made one per update, from push.updates: the lengths always agree",
    (
        "core/paths:_runner_config",
        'name = folded.rsplit("/", 1)[-1]',
        "'1' -> '2' at 30",
    ): "the last component is the same however many others are split off",
}
# A plain row's Change: its status, modes and ids, each mutated, classify the same.
PLAIN_LINE = 'hit = (path, self.classify_change(Change("M", "", "", "", "", path)).klass)'
EQUIVALENT.update(
    {
        ("core/paths:classify_plain", PLAIN_LINE, what): PLAIN_ROW
        for what in (
            """'"M"' -> '"M§"'""",
            *(f"""'""' -> '"x§"' at {col}""" for col in (54, 58, 62, 66)),
        )
    }
)


@dataclass(frozen=True)
class Mutant:
    module: str
    line: int
    col: int
    old: str
    new: str
    source: str  # the whole mutated module
    text: str  # the original line, stripped
    scope: str  # the function (or class) it is in; "" at module level

    @property
    def what(self) -> str:
        return f"{self.old!r} -> {self.new!r}"

    @property
    def key(self) -> tuple[str, str, str]:
        """Stable across edits elsewhere in the module: the line as written, and where
        on it the token stands when the same change fits it twice."""
        twice = self.text.count(self.old) > 1
        what = f"{self.what} at {self.col}" if twice else self.what
        return (f"{self.module}:{self.scope}" if self.scope else self.module, self.text, what)


def _replace(lines: list[str], tok: tokenize.TokenInfo, new: str) -> str:
    (row, col), (end_row, end_col) = tok.start, tok.end
    assert row == end_row
    line = lines[row - 1]
    mutated = line[:col] + new + line[end_col:]
    return "".join(lines[: row - 1]) + mutated + "".join(lines[row:])


def _type_checking_lines(source: str) -> set[int]:
    """Lines under ``if TYPE_CHECKING:``: they never run."""
    out: set[int] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING":
            out.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return out


def _options(tok: tokenize.TokenInfo, prev: str, nxt: str) -> tuple[str, ...]:
    """The replacements tried for one token."""
    if tok.type in (tokenize.OP, tokenize.NAME):
        if tok.string == "not":
            return ("",)  # `not x` -> `x`, `not in` -> `in`, `is not` -> `is`
        if (tok.string == "in" and prev == "not") or (tok.string == "is" and nxt == "not"):
            return ()  # the `not` of the pair is dropped instead
        if tok.string == "-" and prev in ("(", "[", ",", "=", ":", "return"):
            return ("",)  # a unary minus
        return SWAPS.get(tok.string, ())
    if tok.type == tokenize.NUMBER and tok.string.isdigit():
        value = int(tok.string)
        return ("0", "2") if value == 1 else (str(value + 1),)
    if tok.type == tokenize.STRING and tok.string[0] in "\"'":
        quote = tok.string[-1]
        inner = tok.string[1:-1]
        if inner == "\\n":
            return (quote * 2,)
        if len(inner) <= 2:  # short strings are data ("/", "!", "A"); long ones are text
            return (f"{quote}{inner or 'x'}\u00a7{quote}",)
        if "[^/]" in inner:  # a wildcard that may cross `/`
            return (tok.string.replace("[^/]", "."),)
    return ()


def _scopes(source: str) -> dict[int, str]:
    """Line → the innermost function or class around it."""
    out: dict[int, str] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                # ast.walk is breadth first: inner definitions come later and win.
                out[line] = node.name
    return out


def mutants(module: str) -> Iterator[Mutant]:
    path = PROJECT / "git_evidence" / f"{module}.py"
    source = path.read_text()
    lines = source.splitlines(keepends=True)
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    skipped = _type_checking_lines(source)
    scopes = _scopes(source)
    for i, tok in enumerate(tokens):
        if tok.start[0] in skipped or tok.start[0] > len(lines):
            continue
        prev = tokens[i - 1].string if i else ""
        nxt = tokens[i + 1].string if i + 1 < len(tokens) else ""
        for new in _options(tok, prev, nxt):
            mutated = _replace(lines, tok, new)
            try:
                compile(mutated, str(path), "exec")
            except SyntaxError:
                continue
            text = lines[tok.start[0] - 1].strip()
            scope = scopes.get(tok.start[0], "")
            yield Mutant(module, tok.start[0], tok.start[1], tok.string, new, mutated, text, scope)


PYTEST = ("-m", "pytest", "-x", "-q", "-n", "0", "-p", "no:cacheprovider")
# An installed git_evidence's pytest plugin would import the package from elsewhere:
# only the mutated copy may run.
NO_PLUGIN = ("-p", "no:git_evidence")


def run_tests(copy: Path, tests: tuple[str, ...], timeout: float) -> tuple[str, str]:
    """("survived", "") when every test passed; ("killed", the first failure) when a
    test failed or the module no longer imports (pytest's exit 1 or 2); ("error",
    what) when pytest itself could not run (exit 3, 4) or ran too long."""
    # every property test draws its full count of examples (tests/helpers/examples.py)
    env = {
        **os.environ,
        "PYTHONPATH": str(copy),
        "PYTHONDONTWRITEBYTECODE": "1",
        "HYPOTHESIS_PROFILE": "full",
    }
    try:
        proc = subprocess.run(
            [sys.executable, *PYTEST, *NO_PLUGIN, *tests],
            cwd=copy,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return "killed", f"timeout after {timeout:.0f} s (a loop that no longer ends)"
    out = proc.stdout.strip().splitlines()
    failed = next((ln for ln in out if ln.startswith(("FAILED", "ERROR"))), out[-1] if out else "")
    if proc.returncode == 0:
        return "survived", ""
    if proc.returncode in (1, 2):
        return "killed", failed
    return "error", f"pytest exit {proc.returncode}: {(proc.stderr or failed).strip()[-300:]}"


def make_copy(root: Path, name: str) -> Path:
    copy = root / name
    shutil.copytree(
        PROJECT / "git_evidence",
        copy / "git_evidence",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    shutil.copytree(PROJECT / "tests", copy / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PROJECT / "pyproject.toml", copy / "pyproject.toml")
    return copy


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", default=list(MODULES))
    parser.add_argument("-j", "--jobs", type=int, default=2)
    parser.add_argument("--list", action="store_true", help="print the mutants and stop")
    parser.add_argument("--json", help="write every result to this file")
    parser.add_argument("--timeout", type=float, default=90.0)
    parser.add_argument(
        "--survivors-of",
        metavar="JSON",
        help="run only the mutants that survived in this earlier --json output",
    )
    args = parser.parse_args()
    todo = [m for module in args.modules for m in mutants(module)]
    if args.survivors_of:
        earlier = json.loads(Path(args.survivors_of).read_text())
        survived = [row for row in earlier if row["status"] == "survived"]
        again = {tuple(row["key"]) for row in survived if "key" in row}
        where = {(row["module"], row["line"], row["mutation"]) for row in survived}
        todo = [m for m in todo if m.key in again or (m.module, m.line, m.what) in where]
    if args.list:
        for m in todo:
            print(f"{m.module}.py:{m.line}: {m.what}\t{m.text}")
        print(f"{len(todo)} mutants")
        return 0
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mutation-") as tmp:
        copies = [make_copy(Path(tmp), f"w{i}") for i in range(args.jobs)]
        status, why = run_tests(copies[0], TESTS, args.timeout)
        if status != "survived":
            print(f"the unmutated tests do not pass: {why}", file=sys.stderr)
            return 2
        free = list(copies)

        def one(m: Mutant) -> tuple[Mutant, str, str]:
            copy = free.pop()
            target = copy / "git_evidence" / f"{m.module}.py"
            original = target.read_text()
            try:
                target.write_text(m.source)
                status, why = run_tests(copy, TESTS, args.timeout)
            finally:
                target.write_text(original)
                free.append(copy)
            print(f"{status.upper():8} {m.module}.py:{m.line}: {m.what}\t{m.text}", flush=True)
            return m, status, why

        with ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(one, todo))
        # The copies must still pass unmutated: otherwise every "killed" is suspect.
        for copy in copies:
            status, why = run_tests(copy, TESTS, args.timeout)
            if status != "survived":
                print(f"the unmutated tests no longer pass: {why}", file=sys.stderr)
                return 2
    elapsed = time.monotonic() - started
    print()
    counts = {"killed": 0, "survived": 0, "error": 0, "equivalent": 0}
    for module in args.modules:
        mine = [r for r in results if r[0].module == module]
        killed = [m for m, status, _ in mine if status == "killed"]
        survivors = [m for m, status, _ in mine if status == "survived"]
        errors = [(m, why) for m, status, why in mine if status == "error"]
        equivalent = [m for m in survivors if m.key in EQUIVALENT]
        counts["killed"] += len(killed)
        counts["survived"] += len(survivors)
        counts["error"] += len(errors)
        counts["equivalent"] += len(equivalent)
        print(
            f"{module}.py: {len(mine)} mutants, {len(killed)} killed, {len(survivors)} "
            f"survived ({len(equivalent)} of them equivalent), {len(errors)} errors"
        )
        for m in survivors:
            reason = EQUIVALENT.get(m.key)
            note = f"  [equivalent: {reason}]" if reason else ""
            print(f"  {module}.py:{m.line}: {m.what}\t{m.text}{note}")
        for m, why in errors:
            print(f"  ERROR {module}.py:{m.line}: {m.what}\t{why}")
    live = len(results) - counts["equivalent"] - counts["error"]
    score = 100.0 * counts["killed"] / live if live else 100.0
    print(
        f"\n{len(results)} mutants: {counts['killed']} killed, {counts['survived']} survived "
        f"({counts['equivalent']} equivalent), {counts['error']} errors; score "
        f"{score:.1f}% of the non-equivalent mutants, in {elapsed:.0f} s"
    )
    if args.json:
        rows = [
            {
                "module": m.module,
                "key": list(m.key),
                "line": m.line,
                "mutation": m.what,
                "text": m.text,
                "status": status,
                "equivalent": EQUIVALENT.get(m.key),
                "why": why,
            }
            for m, status, why in results
        ]
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if counts["killed"] == live else 1


if __name__ == "__main__":
    sys.exit(main())
