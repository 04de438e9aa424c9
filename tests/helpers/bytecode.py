"""The compiled modules of every Python the tests start: the hooks, the commands and the
pytest sessions the judge runs. A user's interpreter reads its standard library and its
packages from the bytecode their install compiled; the tests' interpreters read theirs
from one folder (``PYTHONPYCACHEPREFIX``), filled once and kept between sessions.

The folder is in the source tree (beside pytest's cache of the test modules, ignored by
git), not under the temporary directory: the judge's sandbox puts an empty ``/tmp`` and
``/dev`` over the real ones, and a run that finds no bytecode compiles pytest and the
standard library again, most of its cost. The sandbox shows the source tree read-only,
so a judged run reads the folder and writes nothing to it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

from helpers.repos import PROJECT

BYTECODE = PROJECT / "tests" / "__pycache__" / "bytecode"


def warm(prefix: Path, scratch: Path) -> None:
    """Fill ``prefix`` with what a pytest session started by the tests loads (pytest,
    its plugins, the standard library) by running one in ``scratch``: a quarter of a
    second when it is full already."""
    (scratch / "test_warm.py").write_text("def test_warm():\n    pass\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(
        PYTHONPYCACHEPREFIX=str(prefix),
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        PYTHONPATH=str(PROJECT),
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_warm.py"],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def forget(prefix: Path, temporary: Iterable[Path]) -> None:
    """Drop what ``prefix`` holds for modules under the ``temporary`` directories (the
    tests' repositories and workspaces): they are gone when the session ends."""
    for folder in temporary:
        shutil.rmtree(prefix / folder.resolve().relative_to("/"), ignore_errors=True)
