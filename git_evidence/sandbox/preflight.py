"""Before the first counted run: can the property's command line start, inside the
very sandbox its runs will have, and does its runner come from outside the workspace?

One sandbox start and one interpreter start for each distinct interpreter the
properties name (the interpreter of the command line, or the judge's own when the
command names none it can tell): the probe looks, from inside, for every program the
command line names, for the module ``python -m`` is asked to run, and for where the
modules the runner and the plugin load resolve (``pytest``, ``_pytest``, ``pluggy``,
``hypothesis``, ``git_evidence``; with labels, ``git_evidence.plugin.entry`` and
``pytest`` must resolve at all). Nothing is imported but the packages above those
modules: the probe costs an interpreter's start, not pytest's.

What it finds is either a start-up failure (``CannotStart``: exit 2, undecided,
naming what was missing and where it was looked for) or a runner the workspace shadows
(``shadowed``: the files, for the class ``held``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from git_evidence.sandbox import bwrap, needs
from git_evidence.sandbox.runner import CannotStart, Held, compose_env

# The modules the runner and the plugin load: resolved from the workspace, the
# candidate's copy would judge the candidate.
RUNNER_MODULES = ("pytest", "_pytest", "pluggy", "hypothesis", "git_evidence")
PLUGIN_MODULE = "git_evidence.plugin.entry"
PROBE = r"""
import importlib.util, json, os, sys
ask = json.loads(sys.argv[1])
out = {"missing": [], "modules": {}, "errors": {}, "path": sys.path}
for program in ask["programs"]:
    if not (os.path.isfile(program) and os.access(program, os.X_OK)):
        out["missing"].append(program)
for name in ask["modules"]:
    try:
        spec = importlib.util.find_spec(name)
    except BaseException as exc:
        out["errors"][name] = type(exc).__name__ + ": " + str(exc)
        continue
    if spec is None:
        out["modules"][name] = None
    else:
        out["modules"][name] = [spec.origin if spec.has_location else None,
                                list(spec.submodule_search_locations or [])]
sys.stdout.write(json.dumps(out))
"""


class Found(NamedTuple):
    """What the preflight found that is not a start-up failure."""

    shadowed: tuple[str, ...] = ()  # held lines: a runner module from the workspace


class _Ask(NamedTuple):
    interpreter: str
    own: bool  # the judge's interpreter, standing in for a command that names none
    programs: list[str]
    modules: list[str]  # must resolve
    props: list[str]


def preflight(
    commands: Sequence[tuple[str, Sequence[str]]],
    space: str,
    scratch: str,
    env: Mapping[str, str],
    held: Held,
) -> Found:
    """Probe each property's command line (``(id, argv)``) in ``space``, held as its
    runs are. Raises CannotStart for what could never start."""
    run_env = compose_env(env, space, held)
    plugin = "git_evidence" in run_env.get("PYTEST_PLUGINS", "")
    asks: dict[str, _Ask] = {}
    for prop_id, argv in commands:
        python = needs.python_of(argv, run_env)
        named = needs.programs(argv, run_env)
        if argv and "/" not in argv[0] and not named:
            raise CannotStart(
                f"property {prop_id}: cannot start {argv[0]!r}: it is not on the run's PATH "
                f"({run_env.get('PATH') or os.defpath})",
                fix="name the program by its path, or put its folder on PATH",
            )
        if argv and "/" in argv[0] and not os.path.isabs(argv[0]):
            named.append(os.path.join(space, argv[0]))
        ask = asks.setdefault(
            python or sys.executable,
            _Ask(python or sys.executable, python is None, [], [], []),
        )
        ask.programs.extend(p for p in named if p not in ask.programs)
        ask.props.append(prop_id)
        if python is not None:
            module = _dash_m(argv, python, run_env)
            if module:
                ask.modules.append(module)
            if plugin:
                ask.modules.extend(("pytest", PLUGIN_MODULE))
    shadowed: list[str] = []
    for ask in asks.values():
        report = _probe(ask, space, scratch, run_env, held)
        _fail_on_missing(ask, report, run_env)
        if not ask.own:
            shadowed += _shadowed(report, space)
    return Found(tuple(dict.fromkeys(shadowed)))


def _dash_m(argv: Sequence[str], python: str, env: Mapping[str, str]) -> str | None:
    """The module of ``python -m MODULE`` in the command line, if any."""
    words = list(argv)
    for index, word in enumerate(words[:-1]):
        if word == "-m" and index > 0:
            return words[index + 1]
    return None


def _probe(
    ask: _Ask, space: str, scratch: str, env: Mapping[str, str], held: Held
) -> dict[str, Any]:
    if not (os.path.isfile(ask.interpreter) and os.access(ask.interpreter, os.X_OK)):
        raise CannotStart(
            f"property {', '.join(ask.props)}: cannot start {ask.interpreter}: not an "
            "executable file, inside the sandbox or out",
            fix="check the path in the property's command (a program the runs need must "
            "exist where the command names it)",
        )
    modules = list(dict.fromkeys([*RUNNER_MODULES, *ask.modules])) if not ask.own else []
    question = json.dumps({"programs": ask.programs, "modules": modules})
    command = [ask.interpreter, "-c", PROBE, question]
    folder = os.path.join(scratch, "preflight")
    os.makedirs(folder, exist_ok=True)
    fds: tuple[int, ...] = ()
    full_env = dict(env)
    if held.box.on:
        fds = (bwrap.open_args(bwrap.wrap(held.box, space, folder)),)
        full_env = bwrap.env_for(held.box, full_env)
        command = [held.box.bwrap, "--args", str(fds[0]), "--", *command]
    try:
        done = subprocess.run(
            command,
            cwd=space,
            env=full_env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            pass_fds=fds,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CannotStart(
            f"property {', '.join(ask.props)}: cannot start {ask.interpreter}: {exc}",
            fix="check the property's command",
        ) from None
    finally:
        for fd in fds:
            os.close(fd)
    try:
        report = json.loads(done.stdout)
        if isinstance(report, dict):
            return report
    except ValueError:
        pass
    said = done.stderr.decode("utf-8", "replace").strip().splitlines()
    where = "inside the sandbox" if held.box.on else "here"
    raise CannotStart(
        f"property {', '.join(ask.props)}: the interpreter {ask.interpreter} does not start "
        f"{where} (exit {done.returncode}" + (f": {said[-1][:300]}" if said else "") + ")",
        fix="check that the interpreter and its environment exist and run; a virtual "
        "environment's Python needs the installation its pyvenv.cfg names",
    )


def _fail_on_missing(ask: _Ask, report: Mapping[str, Any], env: Mapping[str, str]) -> None:
    props = ", ".join(ask.props)
    missing = [str(p) for p in report.get("missing", [])]
    if missing:
        raise CannotStart(
            f"property {props}: cannot start {missing[0]}: not an executable file inside "
            "the sandbox" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""),
            fix="check the path in the property's command (a program the runs need must "
            "exist where the command names it)",
        )
    modules = report.get("modules") or {}
    errors = report.get("errors") or {}
    for name in ask.modules:
        if modules.get(name) is None:
            why = errors.get(name, "not found")
            path = [str(p) for p in report.get("path", [])]
            what = "the evidence plugin" if name == PLUGIN_MODULE else f"the module {name}"
            raise CannotStart(
                f"property {props}: {what} cannot be imported by {ask.interpreter} ({why}; "
                f"looked for on {os.pathsep.join(path)[:600]})",
                fix=f"install {'git evidence' if name == PLUGIN_MODULE else name} in the "
                "environment of the property's interpreter",
            )


def _shadowed(report: Mapping[str, Any], space: str) -> list[str]:
    """A held line for each runner module the workspace provides."""
    top = os.path.realpath(space).rstrip("/") + "/"
    out = []
    for name, found in (report.get("modules") or {}).items():
        if name not in RUNNER_MODULES or not isinstance(found, list):
            continue
        origin, locations = found[0], found[1] if len(found) > 1 else []
        for path in [origin, *locations]:
            if isinstance(path, str) and os.path.realpath(path).startswith(top):
                rel = os.path.relpath(os.path.realpath(path), top)
                out.append(f"runner module from the workspace: {name} from {rel}")
                break
    return out


def shadowing_files(space: str, roots: Sequence[str]) -> list[str]:
    """Held lines for the runner modules the workspace's import roots (and its root,
    the working directory of every run) would provide, read from the tree alone: for
    a command whose interpreter the preflight cannot tell."""
    out = []
    for root in dict.fromkeys([*roots, "."]):
        for name in RUNNER_MODULES:
            for rel in (f"{name}.py", f"{name}/__init__.py"):
                path = os.path.normpath(os.path.join(root, rel))
                if os.path.isfile(os.path.join(space, path)):
                    out.append(f"runner module from the workspace: {name} from {path}")
    return out


# How a command that never started ends: the shell's "cannot execute" and "not found";
# and pytest's usage error when a plugin it is asked to load does not import.
START_FAILURES = (126, 127)
PYTEST_USAGE = 4
PLUGIN_MISSING = 'Error importing plugin "'


def never_started(runs: Sequence[tuple[str, Any]]) -> None:
    """CannotStart when a counted run (``(property, Run)``) ended as a start-up failure
    ends: exit 126 or 127, the code of a program that was not found or could not run,
    which says nothing about the candidate."""
    for prop_id, run in runs:
        said = run.tail or ""
        if run.code == PYTEST_USAGE and PLUGIN_MISSING in said:
            line = next(x for x in said.splitlines() if PLUGIN_MISSING in x)
            raise CannotStart(
                f"property {prop_id}: seed {run.seed} run {run.run}: pytest could not load a "
                f"plugin ({line.strip()[:300]})",
                fix="install the plugin in the environment of the property's interpreter "
                "(git evidence's own, with labels)",
            )
        if run.code in START_FAILURES:
            raise CannotStart(
                f"property {prop_id}: seed {run.seed} run {run.run} exited {run.code}, as a "
                "command that cannot start does (a program or interpreter not found or "
                "not executable inside the sandbox)",
                fix="run `git evidence judge -v` to see what the run printed, and check the "
                "property's command; a test that means to fail exits with another code",
            )
