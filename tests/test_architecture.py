"""The lines the package never crosses, read from its source with ``ast`` (no import
runs): no command imports another command; the pure modules import nothing that runs
git or any other process; no import circle. And the hooks never load GitPython, nor
what would slow every push: argparse (git starts them with their usual arguments) and
dataclasses (~14 ms, see slots.py)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.repos import PROJECT, Work, clone_of, git, make_server

PACKAGE = PROJECT / "git_evidence"

# Decide from bytes and documents only: they never run git, nor import what does.
PURE = (
    "rules.table",
    "rules.findings",
    "rules.summaries",
    "rules.commits",
    "rules.range_rules",
    "rules.files",
    "rules.decide",
    "core.facts",
    "gate.walk",
    "core.paths",
    "core.path_globs",
    "core.globs",
    "core.links",
    "policy.schema",
    "policy.parsing",
    "ledger.entries",
    "judge.classes",
    "judge.signals",
    "judge.text",
    "judge.record",
    "judge.verdict",
    "judge.request",
    "judge.scorecard",
    "ledger.fingerprint",
    "core.records",
    "policy.labels",
    "ledger.quota",
    "core.oids",
    "core.slots",
    "core.runner_files",
    "split.outcome",
    "init.shapes",
    "init.draft",
    "init.render",
    "init.roots",
    "sandbox.repo_state",
    "policy.render",
    "forge.event",
    "forge.formats",
    "forge.sarif",
    "forge.rule_texts",
    "forge.job_summary",
    "judge.shards",
    "plugin.retries",
    "guard.tool_calls",
    "guard.shell_words",
    "guard.shell_writes",
    "guard.agent_settings",
    "guard.control",
    "guard.shell_args",
    "guard.shell_git",
    "policy.pinned",
    "core.errors",
    "policy.identity",
    "policy.properties",
    "lock.record",
    "lock.scan",
)
# The modules that run git themselves (stream.py and batch.py through the ``Git`` they
# are given); everything that imports them runs git too.
RUN_GIT = (
    "git_evidence.plumbing.process",
    "git_evidence.plumbing.git",
    "git_evidence.plumbing.objects",
    "git_evidence.plumbing.stream",
    "git_evidence.plumbing.batch",
)


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PROJECT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


class Import:
    def __init__(self, target: str, line: int, typing_only: bool) -> None:
        self.target, self.line, self.typing_only = target, line, typing_only


def _imports(name: str, path: Path) -> list[Import]:
    """Every import of the module: at its top, under ``if TYPE_CHECKING:`` (typing_only)
    and inside functions (run when called: they count)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: list[Import] = []

    def resolve(node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
        return f"{base}.{node.module}" if node.module else base

    def walk(node: ast.AST, typing_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in child.body:
                    walk(ast.Module(body=[stmt], type_ignores=[]), True)
                for stmt in child.orelse:
                    walk(ast.Module(body=[stmt], type_ignores=[]), typing_only)
            elif isinstance(child, ast.Import):
                found.extend(Import(a.name, child.lineno, typing_only) for a in child.names)
            elif isinstance(child, ast.ImportFrom):
                module = resolve(child)
                for alias in child.names:
                    sub = f"{module}.{alias.name}"
                    found.append(
                        Import(sub if sub in MODULES else module, child.lineno, typing_only)
                    )
            else:
                walk(child, typing_only)

    walk(ast.parse(path.read_bytes(), str(path)), False)
    return found


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}


def _runtime_graph() -> dict[str, set[str]]:
    """Module → what importing (or calling into) it loads, inside the package or not."""
    return {name: {i.target for i in found if not i.typing_only} for name, found in IMPORTS.items()}


def _closure(start: str, graph: dict[str, set[str]]) -> dict[str, str]:
    """Every module ``start`` loads, each with the module that imports it."""
    seen: dict[str, str] = {}
    todo = [start]
    while todo:
        current = todo.pop()
        for target in sorted(graph.get(current, ())):
            if target not in seen and target != start:
                seen[target] = current
                todo.append(target)
    return seen


def _chain(start: str, target: str, via: dict[str, str]) -> str:
    steps = [target]
    while steps[-1] in via and via[steps[-1]] != start:
        steps.append(via[steps[-1]])
    return " -> ".join([start, *reversed(steps)])


def _runs_git() -> set[str]:
    graph = _runtime_graph()
    return {
        name
        for name in MODULES
        if name in RUN_GIT or any(t in RUN_GIT for t in _closure(name, graph))
    }


def test_the_module_graph_is_read_from_the_source() -> None:
    # guards the tests below: an empty or unresolved graph would make them pass vacuously
    assert any(i.target == "git_evidence.plumbing.git" for i in IMPORTS["git_evidence.gate.ranges"])
    assert any(i.target == "subprocess" for i in IMPORTS["git_evidence.plumbing.git"])
    assert {
        "git_evidence.gate.pipeline",
        "git_evidence.lock.store",
        "git_evidence.commands.judge",
    } <= _runs_git()
    assert "git_evidence.rules.table" not in _runs_git()


def test_no_command_imports_another_command() -> None:
    crossings = [
        f"{MODULES[name].relative_to(PROJECT)}:{i.line}: imports {i.target}"
        for name, found in IMPORTS.items()
        if name.startswith("git_evidence.commands.")
        for i in found
        if i.target.startswith("git_evidence.commands.") and i.target != name
    ]
    assert not crossings, "a command imports another; move the shared part out:\n" + "\n".join(
        crossings
    )


def test_only_plumbing_and_sandbox_start_processes() -> None:
    """git is started in ``plumbing/``; every other program (bubblewrap, the
    candidate's tests, the project's own pytest) in ``sandbox/``: no other package
    imports ``subprocess``."""
    starters = sorted(
        f"{MODULES[name].relative_to(PROJECT)}:{i.line}"
        for name, found in IMPORTS.items()
        if _package(name) not in ("plumbing", "sandbox")
        for i in found
        if i.target == "subprocess" or i.target.startswith("subprocess.")
    )
    assert not starters, "start processes in plumbing/ or sandbox/ only:\n" + "\n".join(starters)


@pytest.mark.parametrize("pure", PURE)
def test_pure_module_runs_neither_git_nor_a_process(pure: str) -> None:
    name = f"git_evidence.{pure}"
    graph = _runtime_graph()
    loads = _closure(name, graph)
    runs_git = _runs_git()
    wrong = [
        _chain(name, target, loads)
        for target in sorted(loads)
        if target in runs_git or target == "subprocess" or target.startswith("subprocess.")
    ]
    assert not wrong, f"{pure}.py must stay pure, but it loads:\n" + "\n".join(wrong)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (or a self-import)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_cycle_finder_finds_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_no_import_circle_even_for_types() -> None:
    # TYPE_CHECKING imports count: a circle for the type checker is a circle in the design
    graph = {
        name: {i.target for i in found if i.target in MODULES and i.target != name}
        for name, found in IMPORTS.items()
    }
    circles = _cycles(graph)
    assert not circles, "import circles (move the shared data type out):\n" + "\n".join(
        " <-> ".join(c) for c in circles
    )


# --- findings are built by the rules package only --------------------------------------

RULES_PACKAGE = "git_evidence.rules"
# The deciders the one decide pass (rules/decide.py) calls: nothing outside the rules
# package imports them, so every entry point's findings come from that one pass.
DECIDERS = (
    "git_evidence.rules.commits",
    "git_evidence.rules.range_rules",
    "git_evidence.rules.files",
)
# An error that stopped a command is reported as the one finding of its JSON document
# (`error`): cli/main.py, the one place errors are caught, makes it with the rules'
# `error_finding`. No rule decides there, and no other module may.
ERROR_FINDING = {"git_evidence.cli.main"}


def _private_builders() -> set[str]:
    """The rules' private finding builders: findings.py's module-level ``_`` functions."""
    tree = ast.parse(MODULES["git_evidence.rules.findings"].read_bytes())
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and node.name.startswith("_")
    }


def _finding_crossings(name: str, path: Path, private: set[str]) -> list[str]:
    where = path.relative_to(PROJECT) if path.is_relative_to(PROJECT) else path
    wrong = [
        f"{where}:{i.line}: imports the deciders of {i.target}"
        for i in IMPORTS[name]
        if i.target in DECIDERS
    ]
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(RULES_PACKAGE):
            wrong += [
                f"{where}:{node.lineno}: imports {alias.name} from {node.module}"
                for alias in node.names
                if alias.name.startswith("_")
            ]
        # imported by name: refused above; through a rules module: `findings._finding`
        if isinstance(node, ast.Attribute) and node.attr in private:
            wrong.append(f"{where}:{node.lineno}: uses the rules' private {node.attr}")
        if isinstance(node, ast.Call):
            func = node.func
            called = (
                func.id
                if isinstance(func, ast.Name)
                else func.attr
                if isinstance(func, ast.Attribute)
                else ""
            )
            if called == "Finding":
                wrong.append(f"{where}:{node.lineno}: builds a Finding")
            if called == "error_finding" and name not in ERROR_FINDING:
                wrong.append(f"{where}:{node.lineno}: turns an error into a finding")
    return wrong


def test_findings_are_built_only_by_the_rules_package() -> None:
    private = _private_builders()
    assert {"_finding", "_range"} <= private  # guards the test: the builders were found
    wrong = [
        crossing
        for name, path in MODULES.items()
        if not name.startswith(f"{RULES_PACKAGE}.")
        for crossing in _finding_crossings(name, path, private)
    ]
    assert not wrong, "findings are the rules' to build (rules/decide.py):\n" + "\n".join(wrong)


def test_the_finding_check_notices_a_finding_built_elsewhere(tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text(
        "from git_evidence.rules.findings import Finding, _finding\n"
        "from git_evidence.rules import files, findings\n"
        "Finding('mixed-commit', 'reject', 'r', None, {}, 'm', 'h')\n"
        "_finding('mixed-commit', 'r', message='m')\n"
        "findings._range\n"
        "files.decide_lock\n"
        "error_finding('usage-error', 'm', 'h')\n"
    )
    IMPORTS["stray"] = _imports("git_evidence.stray", stray)
    try:
        said = " ".join(_finding_crossings("stray", stray, _private_builders()))
    finally:
        del IMPORTS["stray"]
    for what in (
        "builds a Finding",
        "imports _finding",
        "private _range",
        "deciders of git_evidence.rules.files",
        "turns an error into a finding",
    ):
        assert what in said, said


def test_only_the_one_decide_pass_is_called_by_the_gate() -> None:
    """The gate's decision step calls ``rules.decide.decide``; the pipeline asks it only
    which ranges it judges (to read no more for a ref refused by itself); no command
    imports it (a command that decides goes through the gate)."""
    decision = {i.target for i in IMPORTS["git_evidence.gate.decision"]}
    assert "git_evidence.rules.decide" in decision
    callers = sorted(
        name
        for name, found in IMPORTS.items()
        if any(i.target == "git_evidence.rules.decide" for i in found)
    )
    assert callers == ["git_evidence.gate.decision", "git_evidence.gate.pipeline"], callers
    tree = ast.parse(MODULES["git_evidence.gate.pipeline"].read_bytes())
    asked = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "git_evidence.rules.decide"
        for alias in node.names
    }
    assert asked == {"judges_range"}, asked


# --- the hook path never loads GitPython, argparse or dataclasses -------------------

# What the hook loaded: the watched modules that appear in sys.modules while it runs,
# and those that its own code (or the wrapper's) imports, even when something loaded
# them before it started (coverage's subprocess support loads dataclasses first).
WRAPPER = """\
import builtins, sys
WATCHED = {{"git", "argparse", "dataclasses"}}
before = set(sys.modules)
asked = set()
real_import = builtins.__import__

def spy(name, globals=None, locals=None, fromlist=(), level=0):
    importer = str((globals or {{}}).get("__name__", ""))
    top = name.partition(".")[0]
    if level == 0 and top in WATCHED and importer.startswith(("git_evidence", "__main__")):
        asked.add(top)
    return real_import(name, globals, locals, fromlist, level)

builtins.__import__ = spy
{first}
from git_evidence.cli.main import main

try:
    code = main(sys.argv[1:])
finally:
    loaded = sorted(WATCHED & ((set(sys.modules) - before) | asked))
    sys.stderr.write("\\nLOADED=%s\\n" % ",".join(loaded))
sys.exit(code)
"""


def _hook(
    cwd: Path, wrapper: Path, args: list[str], stdin: str
) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """Run a hook; which of GitPython (``git``), ``argparse`` and ``dataclasses`` it
    loaded."""
    proc = subprocess.run(
        [sys.executable, str(wrapper), *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    marks = [line for line in proc.stderr.splitlines() if line.startswith("LOADED=")]
    assert len(marks) == 1, proc.stderr
    return proc, set(filter(None, marks[0].removeprefix("LOADED=").split(",")))


@pytest.fixture
def wrapper(tmp_path: Path) -> Path:
    path = tmp_path / "run_hook.py"
    path.write_text(WRAPPER.format(first=""))
    return path


@pytest.fixture
def pushed(tmp_path: Path) -> Iterator[tuple[Path, Work, str, str]]:
    """A protected server, a clone with a product commit on top of main, and that
    commit already in the server under a feature branch (so pre-receive can be fed
    the fast-forward of main to it)."""
    bare = make_server(tmp_path)
    work = clone_of(tmp_path, bare)
    old = work.head()
    new = work.commit("product only", {"src/app.py": "print('bye')\n"})
    work.git("push", "-q", "origin", "HEAD:refs/heads/feature")
    yield bare, work, old, new


def test_wrapper_notices_gitpython_argparse_and_dataclasses_when_loaded(
    tmp_path: Path, pushed: tuple[Path, Work, str, str]
) -> None:
    bare, _work, old, new = pushed
    loud = tmp_path / "loud.py"
    loud.write_text(WRAPPER.format(first="import git, argparse, dataclasses  # git: GitPython"))
    _proc, loaded = _hook(bare, loud, ["pre-receive"], f"{old} {new} refs/heads/main\n")
    assert loaded == {"git", "argparse", "dataclasses"}


def test_pre_receive_loads_no_gitpython_argparse_or_dataclasses(
    wrapper: Path, pushed: tuple[Path, Work, str, str]
) -> None:
    bare, _work, old, new = pushed
    proc, loaded = _hook(bare, wrapper, ["pre-receive"], f"{old} {new} refs/heads/main\n")
    assert proc.returncode == 0, proc.stderr
    assert not loaded, loaded


def test_post_receive_loads_no_gitpython_argparse_or_dataclasses(
    wrapper: Path, pushed: tuple[Path, Work, str, str]
) -> None:
    bare, _work, old, new = pushed
    git(bare, "update-ref", "refs/heads/main", new, old)
    proc, loaded = _hook(bare, wrapper, ["post-receive"], f"{old} {new} refs/heads/main\n")
    assert proc.returncode == 0, proc.stderr
    assert not loaded, loaded


def test_pre_push_loads_no_gitpython_argparse_or_dataclasses(
    wrapper: Path, pushed: tuple[Path, Work, str, str]
) -> None:
    bare, work, old, new = pushed
    line = f"refs/heads/main {new} refs/heads/main {old}\n"
    proc, loaded = _hook(work.path, wrapper, ["pre-push", "origin", str(bare)], line)
    assert proc.returncode == 0, proc.stderr
    assert not loaded, loaded


def test_pre_commit_loads_no_gitpython_argparse_or_dataclasses(
    wrapper: Path, pushed: tuple[Path, Work, str, str]
) -> None:
    _bare, work, _old, _new = pushed
    work.write("src/app.py", "print('again')\n")
    work.git("add", "src/app.py")
    proc, loaded = _hook(work.path, wrapper, ["pre-commit"], "")
    assert proc.returncode == 0, proc.stderr
    assert not loaded, loaded


def test_guard_loads_no_gitpython_argparse_or_dataclasses(wrapper: Path, work: Work) -> None:
    import json

    for tool_input in ({"file_path": "tests/test_app.py"}, {"file_path": "src/app.py"}):
        stdin = json.dumps({"tool_name": "Edit", "tool_input": tool_input, "cwd": str(work.path)})
        proc, loaded = _hook(work.path, wrapper, ["guard"], stdin)
        assert proc.returncode in (0, 2), proc.stderr
        assert not loaded, loaded
    bash = json.dumps({"tool_name": "Bash", "tool_input": {"command": "rm tests/fixtures/a.json"}})
    proc, loaded = _hook(work.path, wrapper, ["guard", "--json"], bash)
    assert '"permissionDecision": "deny"' in proc.stdout, proc.stderr
    assert not loaded, loaded


# --- a decision and its report are built once ---------------------------------------

# The records a judgement ends in: each ``Frozen`` (core/slots.py), its fields written
# once as annotations, what it lists a tuple; rendering options are no field of theirs.
BUILT_ONCE = {
    "git_evidence.rules.findings": ("UpdateDecision", ("findings",)),
    "git_evidence.gate.report": ("Report", ("decisions", "notes")),
}
# The calls that change a list in place.
IN_PLACE = frozenset({"append", "extend", "insert", "remove", "pop", "clear", "sort", "reverse"})


def _built_once_fields() -> dict[str, dict[str, str]]:
    """Each record of ``BUILT_ONCE``: its fields and their annotations, read from the
    source; the record must be a ``Frozen`` that writes no ``__slots__`` or
    ``__init__`` of its own."""
    fields: dict[str, dict[str, str]] = {}
    for module, (name, _) in BUILT_ONCE.items():
        tree = ast.parse(MODULES[module].read_bytes())
        (record,) = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name]
        assert [ast.unparse(base) for base in record.bases] == ["Frozen"], name
        own = {
            target.id
            for node in record.body
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        } | {node.name for node in record.body if isinstance(node, ast.FunctionDef)}
        assert not own & {"__slots__", "__init__", "__setattr__"}, (name, own)
        fields[name] = {
            node.target.id: ast.unparse(node.annotation)
            for node in record.body
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
        }
    return fields


def _amendments(path: Path, fields: frozenset[str]) -> list[int]:
    """The lines where ``path`` changes one of ``fields`` of something other than
    ``self``: assigns it (``report.notes += …``, ``outcome.findings = …``, a slice of
    it), deletes it, or changes it in place (``report.notes.append(…)``)."""

    def amended(node: ast.expr) -> bool:
        while isinstance(node, ast.Subscript):
            node = node.value
        return (
            isinstance(node, ast.Attribute)
            and node.attr in fields
            and not (isinstance(node.value, ast.Name) and node.value.id == "self")
        )

    lines = []
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        targets: list[ast.expr] = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in IN_PLACE
        ):
            targets = [node.func.value]
        if any(amended(target) for target in targets):
            assert isinstance(node, (ast.stmt, ast.expr))
            lines.append(node.lineno)
    return sorted(lines)


def test_a_decision_and_its_report_are_built_once() -> None:
    """``UpdateDecision`` and ``Report`` are ``Frozen`` records whose lists are tuples:
    a decider that adds a finding builds a new decision, a caller's notes go to the
    builder, and how a report is shown (``--max-findings``, the options a printed
    command carries) is a ``Rendering`` handed to the renderers."""
    fields = _built_once_fields()
    for name, listed in BUILT_ONCE.values():
        for field in listed:
            assert fields[name][field].startswith("tuple["), (name, field, fields[name][field])
    assert not {"max_findings", "options"} & set(fields["Report"]), fields["Report"]


def test_no_module_amends_a_decision_or_a_report() -> None:
    fields = frozenset(field for found in _built_once_fields().values() for field in found)
    assert {"decisions", "notes", "findings"} <= fields  # guards the test: fields were read
    wrong = [
        f"{path.relative_to(PROJECT)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in _amendments(path, fields)
    ]
    assert not wrong, "compute first, then build the record once:\n" + "\n".join(wrong)


def test_the_amendment_check_notices_a_report_changed_after_it_is_built(tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text(
        "def f(report, outcome, more):\n"
        "    report.notes += more\n"
        "    report.notes.append('x')\n"
        "    report.decisions[:0] = more\n"
        "    outcome.findings = []\n"
        "    del report.error\n"
        "    notes = [*report.notes, *more]\n"
        "    self.notes = notes\n"
    )
    assert _amendments(stray, frozenset({"notes", "decisions", "findings", "error"})) == [
        2,
        3,
        4,
        5,
        6,
    ]


def _source_prefix_tests(path: Path) -> list[int]:
    """The lines where ``path`` asks a ``source`` text how it begins."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_bytes(), str(path)))
        if isinstance(node, ast.Attribute)
        and node.attr == "startswith"
        and (
            (isinstance(node.value, ast.Name) and node.value.id == "source")
            or (isinstance(node.value, ast.Attribute) and node.value.attr == "source")
        )
    ]


def test_no_module_asks_a_policy_source_how_it_begins() -> None:
    """Where a policy came from is its ``origin`` (plumbing/in_force.py), a closed set:
    no module tells a draft from a sealed file by the words of its ``source``."""
    wrong = [
        f"{path.relative_to(PROJECT)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in _source_prefix_tests(path)
    ]
    assert not wrong, "ask the policy's origin instead:\n" + "\n".join(wrong)


def test_the_source_check_notices_a_prefix_test(tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text(
        "def f(policy, source):\n"
        "    return policy.source.startswith('sealed:') or source.startswith('draft ')\n"
    )
    assert _source_prefix_tests(stray) == [2, 2]


# The methods that run a git command given by its spelling (plumbing/process.py).
RAW_METHODS = frozenset({"run", "out", "text", "attempt", "popen"})


def _raw_git_calls(path: Path) -> list[int]:
    """The lines where ``path`` runs a git command by its spelling: ``X.run("verb", …)``
    (or ``out``, ``text``, ``attempt``, ``popen``) on anything but ``subprocess``."""
    return [
        node.lineno
        for node in ast.walk(ast.parse(path.read_bytes(), str(path)))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in RAW_METHODS
        and ast.unparse(node.func.value) != "subprocess"
        and bool(node.args)
        and (
            isinstance(node.args[0], ast.Starred)
            or (isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str))
        )
    ]


def test_git_is_asked_by_name_outside_plumbing() -> None:
    """Outside ``plumbing/``, git is asked through ``Git``'s named questions
    (``toplevel()``, ``head_branch()``, ``diff_trees()``, …), never by spelling a
    command: one place knows each command's options and how its failure reads."""
    outside = {
        name: path
        for name, path in MODULES.items()
        if not name.startswith("git_evidence.plumbing.")
    }
    assert len(outside) > 100  # guards the test: the modules outside plumbing/ were found
    stray = [
        f"{path.relative_to(PROJECT)}:{line}"
        for path in outside.values()
        for line in _raw_git_calls(path)
    ]
    assert not stray, "ask git by name (a method of plumbing/git.py's Git):\n" + "\n".join(stray)


def test_the_raw_git_check_notices_a_spelled_command(tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text(
        "import subprocess\n"
        "def f(git, args):\n"
        "    subprocess.run(['ls'])\n"
        "    top = git.text('rev-parse', '--show-toplevel')\n"
        "    return git.out(*args), self.git.run('log'), found.text(), git.toplevel()\n"
    )
    assert _raw_git_calls(stray) == [4, 5, 5]


def _asks_for_the_top(path: Path) -> bool:
    """Whether ``path`` spells the question of the work tree's top, in any form git
    takes it (``--show-toplevel``, ``--show-cdup``)."""
    source = path.read_bytes()
    return b"--show-toplevel" in source or b"--show-cdup" in source


def test_one_module_asks_for_the_top_level() -> None:
    """``Git.toplevel`` alone spells ``rev-parse --show-toplevel``: one answer for a
    bare repository (None), one error for any other failure, one git process for each
    ``Git`` (the answer is kept)."""
    asking = {name for name, path in MODULES.items() if _asks_for_the_top(path)}
    assert asking == {"git_evidence.plumbing.git"}, sorted(asking)


def test_the_top_level_check_notices_another_asker(tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text("def top(git):\n    return git.toplevel() or git.text(*CDUP)\n")
    assert not _asks_for_the_top(stray)
    stray.write_text("CDUP = ('rev-parse', '--show-cdup')\n")
    assert _asks_for_the_top(stray)


def test_design_notes_list_every_module_once() -> None:
    rows = [
        line.split("`")[1]
        for line in (PROJECT / "docs" / "design.md").read_text(encoding="utf-8").splitlines()
        if line.startswith("| `")
    ]
    modules = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        if path.name != "__init__.py" and path.parent.name != "commands"
    )
    assert sorted(r for r in rows if r != "commands/*.py") == modules
    assert rows.count("commands/*.py") == 1


# Files the design notes name that are no module of the project: what an interpreter
# or a test runner loads unasked (core/runner_files.py's examples).
NOT_MODULES = frozenset({"conftest.py", "sitecustomize.py"})
# A path the notes give from the project's top; any other is under git_evidence/.
TOP_FOLDERS = ("tests/", "bench/", "docs/", "hooks/", "man/", ".ci/")


def _missing_modules(text: str) -> list[str]:
    """Each ``.py`` the text names that is not there: a path (``plumbing/git.py``,
    ``tests/core/test_closed_sets*.py``, globs allowed) must match a file; a bare name
    (``ranges.py``) must be a module of a library package or a benchmark (a command's
    module of the same name does not count: ``policy.py`` is no ``policy/`` module)."""
    missing = []
    for name in sorted(set(re.findall(r"(?<![\w/.-])([\w*./-]*[\w*]\.py)\b", text))):
        if name in NOT_MODULES:
            continue
        if "/" in name:
            root = PROJECT if name.startswith(TOP_FOLDERS) else PACKAGE
            found = any(root.glob(name))
        else:
            found = (PROJECT / "bench" / name).exists() or any(
                path.parent.name != "commands" for path in PACKAGE.rglob(name)
            )
        if not found:
            missing.append(name)
    return missing


def test_every_module_the_design_notes_name_exists() -> None:
    text = (PROJECT / "docs" / "design.md").read_text(encoding="utf-8")
    assert _missing_modules(text) == []


def test_the_design_check_notices_a_module_that_is_gone() -> None:
    stale = (
        "`Decision` lives in policy.py; rules.py imports it (`tests/test_closed_sets*.py`),"
        " rows read only in `gate/raw.py`; `plumbing/git.py` and ranges.py stay"
    )
    assert _missing_modules(stale) == [
        "gate/raw.py",
        "policy.py",
        "rules.py",
        "tests/test_closed_sets*.py",
    ]


# --- the dependencies: declared <=> imported --------------------------------------


def _top_level_imports(name: str) -> set[str]:
    """The top-level names of the module's absolute imports (``git`` for ``git.repo``)."""
    found: set[str] = set()
    path = MODULES[name]
    for node in ast.walk(ast.parse(path.read_bytes(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.partition(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module.partition(".")[0])
    return found


def _declared() -> dict[str, set[str]]:
    """Each runtime dependency of pyproject's ``[project].dependencies`` with the names
    it is imported by (from its installed metadata; else its normalized name)."""
    import importlib.metadata
    import re

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]

    project = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))
    provides: dict[str, set[str]] = {}
    for module, dists in importlib.metadata.packages_distributions().items():
        for dist in dists:
            provides.setdefault(re.sub(r"[-_.]+", "-", dist).lower(), set()).add(module)
    declared = {}
    for spec in project["project"]["dependencies"]:
        match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", spec)
        assert match, spec
        dist = re.sub(r"[-_.]+", "-", match.group()).lower()
        declared[match.group()] = provides.get(dist, {dist.replace("-", "_")})
    return declared


def test_every_declared_dependency_is_imported_by_the_package() -> None:
    imported = set().union(*map(_top_level_imports, MODULES))
    unused = {dist: names for dist, names in _declared().items() if not names & imported}
    assert not unused, f"declared in pyproject.toml, imported nowhere in git_evidence/: {unused}"


def test_every_package_imported_outside_the_plugin_is_declared() -> None:
    # The plugin runs inside pytest, which loads it: what it imports of pytest (and of
    # Hypothesis, when a session has it) is its host's, not a dependency.
    # tomllib is standard from 3.11 on, where the package imports it; 3.10 reads TOML
    # with the declared tomli instead.
    standard = {*sys.stdlib_module_names, "tomllib"}
    known = {"git_evidence", *standard, *set().union(*_declared().values())}
    undeclared = {
        f"{name}: {sorted(_top_level_imports(name) - known)}"
        for name in MODULES
        if not name.startswith("git_evidence.plugin.") and _top_level_imports(name) - known
    }
    assert not undeclared, "imported, not declared in pyproject.toml:\n" + "\n".join(undeclared)


# -- the packages ------------------------------------------------------------------------

MAX_LINES = 400
# What each package may import besides itself, lowest first: a package never imports
# one above it, so the tree reads from the bottom up. `commands` may import any package
# but `cli` (and no other command); `cli` is the top, the one that runs a command.
PACKAGE_IMPORTS: dict[str, frozenset[str]] = {
    "core": frozenset(),
    "policy": frozenset({"core"}),
    "terminal": frozenset({"core"}),
    "rules": frozenset({"core", "policy"}),
    "guard": frozenset({"core", "policy", "plumbing"}),
    "sandbox": frozenset({"core", "policy"}),
    "install": frozenset({"core", "policy", "plumbing", "guard", "lock", "gate"}),
    "plumbing": frozenset({"core", "policy"}),
    "lock": frozenset({"core", "policy", "plumbing"}),
    "ledger": frozenset({"core", "policy", "plumbing"}),
    "plugin": frozenset({"core", "policy", "plumbing", "ledger"}),
    "judge": frozenset(
        {"core", "policy", "plumbing", "ledger", "lock", "sandbox", "plugin", "terminal"}
    ),
    "gate": frozenset({"core", "policy", "plumbing", "ledger", "lock", "rules", "judge"}),
    "split": frozenset({"core", "policy", "plumbing", "rules", "gate"}),
    "init": frozenset({"core", "policy", "plumbing", "rules", "gate"}),
    "forge": frozenset({"core", "policy", "plumbing", "ledger", "rules", "judge", "gate"}),
    "cli": frozenset(
        {"core", "policy", "plumbing", "terminal", "rules", "gate", "forge", "commands"}
    ),
}
# Packages whose every module decides from bytes and documents only.
PURE_PACKAGES = ("core", "policy", "rules")


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 2 else ""


def test_every_package_is_drawn() -> None:
    found = {_package(name) for name in MODULES} - {"", "commands"}
    assert found == set(PACKAGE_IMPORTS)


def test_each_package_imports_only_the_packages_below_it() -> None:
    wrong = []
    for name, path in MODULES.items():
        source = _package(name)
        if source in ("", "commands"):
            continue
        for imp in _imports(name, path):
            target = _package(imp.target) if imp.target.startswith("git_evidence.") else ""
            if target and target != source and target not in PACKAGE_IMPORTS[source]:
                wrong.append(f"{name} imports {imp.target} (line {imp.line})")
    assert not wrong, "\n".join(wrong)


def test_package_imports_form_no_circle() -> None:
    graph = {pkg: set(allowed) & set(PACKAGE_IMPORTS) for pkg, allowed in PACKAGE_IMPORTS.items()}
    assert not _cycles(graph)


@pytest.mark.parametrize("package", PURE_PACKAGES)
def test_every_module_of_a_pure_package_is_listed_pure(package: str) -> None:
    inside = sorted(
        name.removeprefix("git_evidence.") for name in MODULES if _package(name) == package
    )
    assert inside and set(inside) <= set(PURE)


def test_no_module_is_over_400_lines() -> None:
    long = {
        name: count
        for name, path in MODULES.items()
        if (count := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, long


def test_package_init_files_are_empty() -> None:
    # A hook pays for every line a package's __init__ runs.
    full = [
        str(init.relative_to(PROJECT))
        for init in PACKAGE.rglob("__init__.py")
        if init.parent != PACKAGE and init.read_text(encoding="utf-8").strip()
    ]
    assert not full, full


def test_no_command_imports_the_command_line() -> None:
    wrong = [
        f"{name} imports {imp.target} (line {imp.line})"
        for name, path in MODULES.items()
        if _package(name) == "commands"
        for imp in _imports(name, path)
        if imp.target.startswith("git_evidence.cli")
    ]
    assert not wrong, "\n".join(wrong)


# -- what a hook's start costs -----------------------------------------------------------

# Every module outside the package that a hook loads, by top-level name: the standard
# library's that the gate cannot do without (`tomli` stands for `tomllib` on 3.10). A
# hook that starts loading another (`inspect`, `email`, `argparse`…) pays for it on
# every commit and push: add it here only with the figure that says it is worth it.
HOOK_STDLIB = frozenset(
    [
        "_blake2",
        "_datetime",
        "_hashlib",
        "_json",
        "_locale",
        "_posixsubprocess",
        "_string",
        "_typing",
        "_weakrefset",
        "collections",
        "datetime",
        "fcntl",
        "gc",
        "hashlib",
        "json",
        "locale",
        "math",
        "select",
        "selectors",
        "shlex",
        "signal",
        "string",
        "subprocess",
        "threading",
        "tomllib",
        "tomli",
        "typing",
        "unicodedata",
        "_bisect",
        "bisect",
    ]
)
# What a product-only commit or push never loads (pre-commit, pre-receive): json (the
# note and ledger readers; the validated-note cache is marshal), the hashes and dates
# (a lock or ledger written, a digest printed), the TOML reader (the parsed policy is
# cached), shlex (a refusal's hint). Each was measured on the everyday commit and push.
EVERYDAY_SPARED = frozenset(
    [
        "_blake2",
        "_datetime",
        "_hashlib",
        "_json",
        "_string",
        "datetime",
        "hashlib",
        "json",
        "shlex",
        "string",
        "tomli",
        "tomllib",
    ]
)
# What an interpreter's own start (`site`: `os` and its paths) and `re` load, counted
# too since the hooks are counted from a bare interpreter (`-S`), whatever the
# environment's `.pth` files would have loaded first (3.10 spells `re` in `sre_*`).
HOOK_STDLIB |= frozenset(
    [
        "__future__",
        "_collections",
        "_collections_abc",
        "_functools",
        "_operator",
        "_sre",
        "_stat",
        "contextlib",
        "copyreg",
        "enum",
        "errno",
        "functools",
        "genericpath",
        "importlib",
        "itertools",
        "keyword",
        "operator",
        "os",
        "posixpath",
        "re",
        "reprlib",
        "sre_compile",
        "sre_constants",
        "sre_parse",
        "stat",
        "types",
        "warnings",
    ]
)
COUNTING = """\
import sys
before = set(sys.modules)
from git_evidence.cli.main import main

try:
    code = main(sys.argv[1:])
finally:
    new = set(sys.modules) - before
    outside = sorted({m.partition(".")[0] for m in new if not m.startswith("git_evidence")})
    sys.stderr.write("\\nOUTSIDE=%s\\n" % ",".join(outside))
sys.exit(code)
"""


def _outside(cwd: Path, wrapper: Path, args: list[str], stdin: str) -> set[str]:
    """The modules outside the package that the command loads, counted from a bare
    interpreter: `-S` keeps `site` from running the `.pth` files of the environment
    (an editable install's finder, coverage's start-up hook), which load modules of
    their own and would hide them from the count; the package and the environment's
    packages are reached through PYTHONPATH instead."""
    paths = [str(PROJECT), sysconfig.get_paths()["purelib"], os.environ.get("PYTHONPATH", "")]
    proc = subprocess.run(
        [sys.executable, "-S", str(wrapper), *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))},
    )
    assert proc.returncode == 0, proc.stderr
    marks = [line for line in proc.stderr.splitlines() if line.startswith("OUTSIDE=")]
    assert len(marks) == 1, proc.stderr
    return set(filter(None, marks[0].removeprefix("OUTSIDE=").split(",")))


def test_the_hooks_load_no_standard_module_beyond_their_budget(
    tmp_path: Path, pushed: tuple[Path, Work, str, str]
) -> None:
    bare, work, old, new = pushed
    counting = tmp_path / "count.py"
    counting.write_text(COUNTING)
    line = f"{old} {new} refs/heads/main\n"
    loaded = {"pre-receive": _outside(bare, counting, ["pre-receive"], line)}
    git(bare, "update-ref", "refs/heads/main", new, old)
    loaded["post-receive"] = _outside(bare, counting, ["post-receive"], line)
    git(bare, "update-ref", "refs/heads/main", old, new)
    push = f"refs/heads/main {new} refs/heads/main {old}\n"
    loaded["pre-push"] = _outside(work.path, counting, ["pre-push", "origin", str(bare)], push)
    work.write("src/app.py", "print('again')\n")
    work.git("add", "src/app.py")
    loaded["pre-commit"] = _outside(work.path, counting, ["pre-commit"], "")
    assert all(loaded.values()), loaded  # the count saw the modules the hooks need
    over = {hook: sorted(found - HOOK_STDLIB) for hook, found in loaded.items()}
    assert not any(over.values()), over
    # A product-only change, its lock's validated note cached: no note, ledger or
    # policy file to read, no digest to print, no refusal's hint to quote.
    spared = {
        hook: sorted(loaded[hook] & EVERYDAY_SPARED) for hook in ("pre-receive", "pre-commit")
    }
    assert not any(spared.values()), spared


def test_the_hook_budget_notices_a_heavier_start(
    tmp_path: Path, pushed: tuple[Path, Work, str, str]
) -> None:
    bare, _work, old, new = pushed
    heavier = tmp_path / "heavier.py"
    heavier.write_text(
        COUNTING.replace(
            "from git_evidence.cli.main import main\n",
            "from git_evidence.cli.main import main\nimport wave\n",  # nothing loads it before
        )
    )
    found = _outside(bare, heavier, ["pre-receive"], f"{old} {new} refs/heads/main\n")
    assert "wave" in found - HOOK_STDLIB
