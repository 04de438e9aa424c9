"""What a run needs to start, wherever it lives: the paths the sandbox binds back
read-only even under a hidden folder (HOME, the repository, the folder that holds
``--out``). Read from the file system only (``#!`` lines, ``pyvenv.cfg``): nothing is
run here.

* every program the command line names: its first word (found on the run's PATH),
  the program ``env`` is asked to start (``env A=B /venv/bin/python …``), and every
  word, or word of a ``sh -c`` string, that is an absolute path to an executable file;
* for each, the interpreter of its ``#!`` line, the virtual environment it belongs to
  and the Python installation that environment names (``pyvenv.cfg``'s ``home``);
* the judge's own interpreter, its environment and installation (``sys.prefix``,
  ``sys.base_prefix``), and the folder the git evidence package is imported from
  (site-packages, an editable checkout, a source tree): the plugin the runs load;
* each folder on the run's PATH that is a virtual environment's or a Python
  installation's ``bin``, with that environment or installation;
* what those environments add to ``sys.path`` from elsewhere: the folders their
  ``.pth`` files name and their editable finders map to (a dependency installed
  editable from a checkout under HOME), never inside the repository.

A program's folder is bound back only when it is such a ``bin``; otherwise the file
alone is (a script in ``/tmp`` does not bring the rest of ``/tmp`` with it)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from collections.abc import Iterable, Mapping, Sequence

import git_evidence

PACKAGE_DIR = os.path.dirname(os.path.abspath(git_evidence.__file__))
_ENV_OPTIONS_WITH_VALUE = ("-u", "--unset", "-C", "--chdir", "-S", "--split-string")


def runner_needs() -> list[str]:
    """The judge's own interpreter and installation, and the git evidence package."""
    out = [sys.executable, os.path.realpath(sys.executable), PACKAGE_DIR]
    for prefix in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        out += [prefix, os.path.realpath(prefix)]
    return out


def command_needs(argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """The paths a command needs to start (see the module's text)."""
    out: list[str] = []
    for program in programs(argv, env):
        out += program_needs(program, env)
    return out


def programs(argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """The absolute paths of the programs a command line names: its first word, the
    program ``env`` starts, and every absolute path to an executable file among its
    words (and among the words of each word, for ``sh -c '…'``)."""
    if not argv:
        return []
    path = env.get("PATH") or os.defpath
    found: list[str] = []
    first = locate(argv[0], path)
    if first:
        found.append(first)
    started = env_program(argv)
    if started is not None:
        program, assigned = started
        where = locate(program, assigned.get("PATH", path))
        if where:
            found.append(where)
    for word in argv[1:]:
        for token in _tokens(word):
            value = token.partition("=")[2] if "=" in token and token[0] != "/" else token
            if os.path.isabs(value) and _executable(value):
                found.append(value)
    return list(dict.fromkeys(found))


def env_program(argv: Sequence[str]) -> tuple[str, dict[str, str]] | None:
    """When the command is ``env [OPTION…] [NAME=VALUE…] PROGRAM …``: the program and
    the variables ``env`` sets."""
    if not argv or os.path.basename(argv[0]) != "env":
        return None
    assigned: dict[str, str] = {}
    words = iter(argv[1:])
    for word in words:
        if word == "--":
            continue
        if word in _ENV_OPTIONS_WITH_VALUE:
            next(words, None)
            continue
        if word.startswith("-"):
            continue
        if "=" in word and not word.startswith("/"):
            name, _, value = word.partition("=")
            assigned[name] = value
            continue
        return word, assigned
    return None


def locate(program: str, path: str) -> str | None:
    """Where ``program`` is: itself when it names a path (None when relative: it is
    the workspace's), else the first match on ``path``."""
    if "/" in program:
        return program if os.path.isabs(program) else None
    return shutil.which(program, path=path)


def _tokens(word: str) -> list[str]:
    if " " not in word and "\t" not in word and "\n" not in word:
        return [word]
    try:
        return shlex.split(word)
    except ValueError:
        return word.split()


def _executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def program_needs(program: str, env: Mapping[str, str]) -> list[str]:
    """A program's file (and the file it links to), its ``#!`` interpreter, and for
    each the virtual environment and installation it belongs to."""
    files = [program, os.path.realpath(program)]
    interpreter = shebang(files[-1], env)
    if interpreter:
        files += [interpreter, os.path.realpath(interpreter)]
    out: list[str] = [os.path.abspath(f) for f in files]
    for path in files:
        out += folder_needs(os.path.dirname(os.path.abspath(path)), whole=False)
    return out


def path_needs(env: Mapping[str, str]) -> list[str]:
    """What the programs on the run's PATH need: each PATH folder that is a virtual
    environment's or a Python installation's ``bin``, with that environment or
    installation. A command that starts ``python`` itself (``sh -c``, ``make``,
    ``tox``) finds it as an activated environment would."""
    out: list[str] = []
    for entry in (env.get("PATH") or "").split(os.pathsep):
        if os.path.isabs(entry) and os.path.isdir(entry):
            out += folder_needs(entry, whole=False)
    return out


def folder_needs(folder: str, *, whole: bool) -> list[str]:
    """For a folder that is a virtual environment's or a Python installation's ``bin``:
    that environment (and the installation its ``pyvenv.cfg`` names) or that
    installation's prefix. Nothing for any other folder unless ``whole``."""
    out = [folder] if whole else []
    venvs = venvs_above(folder)
    if _installation_bin(folder) or venvs:
        out += [folder, os.path.dirname(folder)]
    for venv in venvs:
        out.append(venv)
        home = venv_home(venv)
        if home:
            for real in (home, os.path.realpath(home)):
                out += [real, os.path.dirname(real)]
    return out


def _installation_bin(folder: str) -> bool:
    """A ``bin`` beside a ``lib/python3…``: a Python installation's."""
    if os.path.basename(folder) != "bin":
        return False
    try:
        names = os.listdir(os.path.join(os.path.dirname(folder), "lib"))
    except OSError:
        return False
    return any(n.startswith("python3") for n in names)


def shebang(path: str, env: Mapping[str, str]) -> str | None:
    """The interpreter a ``#!`` line names (``#!/usr/bin/env python3``: found on PATH)."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(256)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    words = head[2:].split(b"\n", 1)[0].split()
    if not words:
        return None
    first = os.fsdecode(words[0])
    if os.path.basename(first) == "env" and len(words) > 1:
        return shutil.which(os.fsdecode(words[-1]), path=env.get("PATH") or os.defpath)
    return first


def venvs_above(folder: str) -> list[str]:
    """Each folder at or above ``folder`` that holds a ``pyvenv.cfg``."""
    out = []
    current = folder
    while current != os.path.dirname(current):
        if os.path.isfile(os.path.join(current, "pyvenv.cfg")):
            out.append(current)
        current = os.path.dirname(current)
    return out


def venv_home(venv: str) -> str | None:
    try:
        with open(os.path.join(venv, "pyvenv.cfg"), encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition("=")
                if key.strip() == "home" and value.strip():
                    return value.strip()
    except OSError:
        return None
    return None


_FINDER_MAPPING = re.compile(r"^MAPPING\s*(?::[^=\n]*)?=\s*(\{.*?\})\s*$", re.M | re.S)


def site_needs(roots: Iterable[str]) -> list[str]:
    """What the environments under ``roots`` (a virtual environment, an installation)
    add to ``sys.path`` from elsewhere: each absolute folder a ``.pth`` file of their
    site-packages names (an editable install from a checkout), and each folder a
    setuptools editable finder maps a package to."""
    out: list[str] = []
    for root in dict.fromkeys(roots):
        for site in _site_dirs(root):
            for name in _listdir(site):
                path = os.path.join(site, name)
                if name.endswith(".pth"):
                    out += _pth_folders(path)
                elif name.startswith("__editable__") and name.endswith("_finder.py"):
                    out += _finder_folders(path)
    return out


def _site_dirs(root: str) -> list[str]:
    found = []
    for lib in ("lib", "lib64"):
        for version in _listdir(os.path.join(root, lib)):
            if version.startswith("python3"):
                for leaf in ("site-packages", "dist-packages"):
                    site = os.path.join(root, lib, version, leaf)
                    if os.path.isdir(site):
                        found.append(site)
    return found


def _listdir(folder: str) -> list[str]:
    try:
        return sorted(os.listdir(folder))
    except OSError:
        return []


def _pth_folders(path: str) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read(1 << 16).splitlines()
    except OSError:
        return []
    return [
        line.strip()
        for line in lines
        if line.strip().startswith("/") and os.path.isdir(line.strip())
    ]


def _finder_folders(path: str) -> list[str]:
    import ast

    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(1 << 20)
        found = _FINDER_MAPPING.search(text)
        mapping = ast.literal_eval(found.group(1)) if found else {}
    except (OSError, ValueError, SyntaxError):
        return []
    if not isinstance(mapping, dict):
        return []
    return [v for v in mapping.values() if isinstance(v, str) and os.path.isabs(v)]


def python_of(argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """The Python interpreter a command starts, when one can be told: the program
    itself, the program ``env`` starts, or the ``#!`` interpreter of either (a console
    script such as ``pytest``)."""
    path = env.get("PATH") or os.defpath
    candidates = []
    first = locate(argv[0], path) if argv else None
    started = env_program(argv)
    if started is not None:
        where = locate(started[0], started[1].get("PATH", path))
        candidates.append(where)
    candidates.append(first)
    for program in candidates:
        if not program:
            continue
        if _is_python(program):
            return program
        interpreter = shebang(os.path.realpath(program), env)
        if interpreter and _is_python(interpreter):
            return interpreter
    return None


def _is_python(path: str) -> bool:
    name = os.path.basename(path)
    return name.startswith(("python", "pypy")) and not name.endswith((".py", "-config"))


def unique_real(paths: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(os.path.abspath(p) for p in paths if p))
