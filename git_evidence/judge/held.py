"""How the judge holds its runs: the sandbox of one judgement (what is hidden, what is
bound back, the lock roots read-only), the workspace's import roots first on
PYTHONPATH, and where the tested code was imported from, as the pytest plugin saw it."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from git_evidence.core.errors import EvidenceError
from git_evidence.judge import workspace
from git_evidence.judge.signals import PropertyRuns
from git_evidence.plumbing.git import Git
from git_evidence.policy.properties import JudgeProperty
from git_evidence.policy.schema import Policy
from git_evidence.sandbox import bwrap, repo_state, runner
from git_evidence.sandbox import preflight as checks


def hold(
    git: Git,
    policy: Policy,
    props: Sequence[JudgeProperty],
    space: str,
    *,
    top: str | None,
    outputs: Sequence[str],
    extra_ro: Sequence[str],
    env: dict[str, str],
) -> runner.Held:
    """How every run is held: the sandbox the policy asks for (the repository, the
    output files, HOME, the runtime directory and a CI job's secrets hidden, what the
    runs need to start bound back; the lock roots read-only), and the workspace's
    import roots."""
    hidden = [p for p in (top, os.environ.get("HOME"), os.environ.get("XDG_RUNTIME_DIR")) if p]
    ci_folders, ci_files = ci_secrets(top, os.environ)
    for path in policy_hidden(policy.judge.hide, os.environ):
        (ci_folders if os.path.isdir(path) else ci_files).append(path)
    box = bwrap.prepare(
        policy.judge.sandbox,
        network=policy.judge.network,
        hidden=[*hidden, *ci_folders],
        sealed=repository_dirs(git),
        hidden_files=[*outputs, *ci_files],
        repository=[p for p in (top,) if p],
        commands=[p.command for p in props],
        readonly=[r.strip("/") for r in policy.lock_roots],
        extra_ro=extra_ro,
        env=env,
    )
    if box.on:
        box = box._replace(masked=tuple(plugin_paths(space)))
    return runner.Held(box, import_roots(policy, space))


# the files GitHub Actions gives each step to write its workflow commands to
CI_STEP_FILES = (
    "GITHUB_ENV",
    "GITHUB_OUTPUT",
    "GITHUB_STEP_SUMMARY",
    "GITHUB_PATH",
    "GITHUB_STATE",
)


def ci_secrets(top: str | None, environ: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """What a CI job keeps beside the clone, outside HOME, that no run may read:
    folders (``<clone>.tmp``, where GitLab's runner writes file-type variables and its
    other per-job files, for the repository's top and ``$CI_PROJECT_DIR``; GitLab's
    ``$CI_BUILDS_DIR``, where a shared runner keeps every project's clone and its
    ``.tmp`` beside it; GitHub's ``$RUNNER_TEMP`` and the folder of
    ``$GITHUB_EVENT_PATH``) and files (GitHub's step command files, wherever they are).
    What the runs need from under them (a ``.venv`` in the clone) is bound back by the
    sandbox; paths that do not exist are left out; the root directory is never one."""
    folders: list[str] = []
    if environ.get("CI_BUILDS_DIR"):
        folders.append(environ["CI_BUILDS_DIR"])
    for project in (top, environ.get("CI_PROJECT_DIR")):
        if project:
            for form in (os.path.abspath(project), os.path.realpath(project)):
                folders.append(form.rstrip("/") + ".tmp")
    if environ.get("RUNNER_TEMP"):
        folders.append(environ["RUNNER_TEMP"])
    if environ.get("GITHUB_EVENT_PATH"):
        folders.append(os.path.dirname(os.path.abspath(environ["GITHUB_EVENT_PATH"])))
    files = [environ[name] for name in CI_STEP_FILES if environ.get(name)]
    keep = [f for f in folders if os.path.realpath(os.path.abspath(f)) != "/"]
    return list(dict.fromkeys(keep)), list(dict.fromkeys(files))


def policy_hidden(paths: Sequence[str], environ: Mapping[str, str]) -> list[str]:
    """``[judge].hide``, each ``$NAME`` expanded from the judge's environment; a path
    that names an unset variable, or is not absolute once expanded, or is the root
    directory, is left out."""
    out = []
    for path in paths:
        expanded = _expand(path, environ)
        if expanded is not None and os.path.isabs(expanded) and expanded.strip("/"):
            out.append(os.path.normpath(expanded))
    return out


_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


def _expand(path: str, environ: Mapping[str, str]) -> str | None:
    missing = False

    def value(match: re.Match[str]) -> str:
        nonlocal missing
        name = match.group(1) or match.group(2)
        if not environ.get(name):
            missing = True
            return ""
        return environ[name]

    expanded = _VARIABLE.sub(value, path)
    return None if missing else expanded


def plugin_paths(space: str) -> list[str]:
    """What no run may load from the workspace, workspace-relative: each
    ``*.dist-info`` and ``*.egg-info`` folder (a distribution's entry points: pytest
    autoloads a ``pytest11`` one from any folder on the path) and each ``*.pth`` file.
    The sandbox covers them with an empty read-only folder or file."""
    found: list[str] = []
    for directory, subdirs, files in os.walk(space):
        subdirs.sort()
        rel_dir = os.path.relpath(directory, space)
        for name in list(subdirs):
            if name.lower().endswith((".dist-info", ".egg-info")):
                found.append(os.path.normpath(os.path.join(rel_dir, name)))
                subdirs.remove(name)
        for name in files:
            if name.lower().endswith(".pth"):
                found.append(os.path.normpath(os.path.join(rel_dir, name)))
    return found


def preflight(
    props: Sequence[JudgeProperty],
    space: str,
    area: workspace.Area,
    env: dict[str, str],
    held: runner.Held,
) -> tuple[str, ...]:
    """Before the first counted run: CannotStart (exit 2) when a property's command
    cannot start inside the sandbox; else the held lines of the runner modules the
    workspace would provide (none: the runs may start)."""
    found = checks.preflight([(p.id, p.command) for p in props], space, area.scratch, env, held)
    static = checks.shadowing_files(space, held.pythonpath)
    return tuple(dict.fromkeys((*found.shadowed, *static)))


def never_started(results: Sequence[PropertyRuns]) -> None:
    """CannotStart when a counted run ended as a command that never started ends."""
    runs = [(r.prop.id, run) for r in results for runs in r.seeds.values() for run in runs]
    runs += [(r.prop.id, f.run) for r in results for f in r.fixtures if f.run is not None]
    checks.never_started(runs)


def repository_dirs(git: Git) -> list[str]:
    """The repository's git directory and common directory (they differ in a linked
    worktree)."""
    return git.git_dirs()


def import_roots(policy: Policy, space: str) -> tuple[str, ...]:
    """``[judge].pythonpath``; by default ``src`` when the workspace has one, else the
    workspace's root."""
    if policy.judge.pythonpath is not None:
        return policy.judge.pythonpath
    return ("src",) if os.path.isdir(os.path.join(space, "src")) else (".",)


def top_packages(space: str, roots: Sequence[str]) -> list[str]:
    """The workspace's top-level packages and modules under its import roots: the names
    whose import must resolve inside the workspace."""
    names: set[str] = set()
    for root in roots:
        folder = os.path.normpath(os.path.join(space, root))
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            full = os.path.join(folder, entry)
            if entry.endswith(".py") and entry[:-3].isidentifier() and os.path.isfile(full):
                names.add(entry[:-3])
            elif entry.isidentifier() and os.path.isfile(os.path.join(full, "__init__.py")):
                names.add(entry)
    return sorted(names)


MAX_MODULE = 200  # characters of a dotted module name the record takes
MAX_ORIGINS = 1000  # modules a property's record lists
MAX_PATH = 4096
_MODULE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*")


def import_origins(
    results: Sequence[PropertyRuns], spaces: Sequence[str], packages: Sequence[str]
) -> dict[str, Any]:
    """Per property, where the workspace's packages were imported from, as the plugin
    saw it (a path inside a workspace is given relative to it); every module imported
    from outside, ``(property, module, file)``; and how many lines were dropped. The
    run wrote the file: a line is kept only when its module is one of the workspace's
    own ``packages`` (a dotted name, bounded) and its file is inside a workspace, or
    an existing file outside it; anything else is dropped and counted, never copied."""
    inside = [os.path.realpath(s).rstrip("/") + "/" for s in spaces]
    own = set(packages)
    per_property: dict[str, dict[str, str]] = {}
    outside: list[tuple[str, str, str]] = []
    dropped = 0
    for result in results:
        seen = per_property.setdefault(result.prop.id, {})
        runs = [r for runs in result.seeds.values() for r in runs]
        runs += [f.run for f in result.fixtures if f.run is not None]
        for run in runs:
            for module, path in _origin_lines(run.origins):
                if (
                    len(module) > MAX_MODULE
                    or not _MODULE.fullmatch(module)
                    or module.split(".")[0] not in own
                    or not path
                    or len(path) > MAX_PATH
                    or "\0" in path
                ):
                    dropped += 1
                    continue
                real = os.path.realpath(path)
                where = next((real[len(s) :] for s in inside if real.startswith(s)), None)
                if where is None:
                    if not os.path.isfile(real):
                        dropped += 1
                        continue
                    # the package alone: a submodule's name is the run's text
                    outside.append((result.prop.id, module.split(".")[0], real))
                    where = real
                if "." not in module:
                    if module not in seen and len(seen) >= MAX_ORIGINS:
                        dropped += 1
                        continue
                    seen.setdefault(module, where)
    return {"origins": per_property, "outside": outside, "dropped": dropped}


def _origin_lines(data: bytes | None) -> list[tuple[str, str]]:
    """The plugin's origins lines: one JSON object a session, module → file."""
    out: list[tuple[str, str]] = []
    for line in (data or b"").splitlines():
        try:
            item = json.loads(line)
        except ValueError:
            continue
        modules = item.get("modules") if isinstance(item, dict) else None
        if isinstance(modules, dict):
            out += [(k, v) for k, v in modules.items() if isinstance(v, str)]
    return out


def outside_error(outside: Sequence[tuple[str, str, str]]) -> EvidenceError:
    prop, module, path = outside[0]
    more = f" (and {len(outside) - 1} more)" if len(outside) > 1 else ""
    return EvidenceError(
        f"tested code from outside the workspace: {module} from {path}, in property {prop}{more}",
        fix="the property's environment imports another copy of the package (an editable "
        "install of another checkout, site-packages): uninstall it there, or set "
        "[judge].pythonpath to the workspace's import roots",
    )


def runner_config_files(space: str) -> dict[str, str]:
    """Every runner configuration file in a workspace (``conftest.py``,
    ``sitecustomize.py``, ``*.pth``, …), path → sha256 (a link: its text). A run that
    writes one changes what every later run in that workspace loads."""
    from git_evidence.core.runner_files import RUNNER_CONFIG

    found: dict[str, str] = {}
    for directory, subdirs, files in os.walk(space):
        subdirs.sort()
        for name in files + [d for d in subdirs if os.path.islink(os.path.join(directory, d))]:
            full = os.path.join(directory, name)
            rel = os.path.relpath(full, space)
            if RUNNER_CONFIG.fullmatch(rel.lower()) is None:
                continue
            found[rel] = repo_state.file_state(full) or "missing"
    return found


def runner_config_written(before: dict[str, str], spaces: Sequence[str]) -> list[str]:
    """What the runs added to, changed in or removed from the workspaces' runner
    configuration, one line a path."""
    out: list[str] = []
    for space in spaces:
        after = runner_config_files(space)
        for rel in sorted(set(before) | set(after)):
            if before.get(rel) != after.get(rel):
                what = (
                    "added" if rel not in before else "removed" if rel not in after else "changed"
                )
                line = f"runner configuration {what} during the run: {rel}"
                if line not in out:
                    out.append(line)
    return out
