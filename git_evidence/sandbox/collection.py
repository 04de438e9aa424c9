"""The project's own test collection, run with the project's interpreter (not this
tool's: git evidence may be installed where the project's tests are not): the Python
that imports pytest, and the node ids ``pytest --collect-only -q`` prints. For
``labels check|init``, which compare the sealed labels with what the suite collects."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence

from git_evidence.core.errors import UsageError

# The names a project's interpreter goes by on PATH, in the order they are tried.
PYTHON_NAMES = ("python", "python3")
HAS_PYTEST = "import pytest"


def project_python(given: str | None) -> str:
    """The Python of the project's test environment, which runs its pytest: ``--python
    PATH``, else the first ``python`` on PATH that imports pytest. Not this tool's own
    interpreter: git evidence may be installed where the project's tests are not."""
    if given:
        if _imports_pytest(given):
            return given
        raise UsageError(
            f"{given} cannot import pytest",
            fix=f"install pytest into that environment (`{given} -m pip install pytest`), or "
            "pass the --python of the environment the project's tests run in",
        )
    tried: list[str] = []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        for name in PYTHON_NAMES:
            candidate = os.path.join(folder or ".", name)
            if candidate in tried or not os.access(candidate, os.X_OK):
                continue
            tried.append(candidate)
            if _imports_pytest(candidate):
                return candidate
    where = f" (tried {', '.join(tried)})" if tried else " (none is on PATH)"
    raise UsageError(
        f"no python on PATH imports pytest{where}: labels are read from the project's "
        "own pytest collection",
        fix="activate the project's test environment (its virtualenv) or pass "
        "--python PATH to its interpreter; install pytest there if it lacks it",
    )


def _imports_pytest(python: str) -> bool:
    try:
        proc = subprocess.run(
            [python, "-c", HAS_PYTEST], capture_output=True, check=False, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def collect(top: str, extra: Sequence[str], python: str = sys.executable) -> list[str]:
    """The node ids ``pytest --collect-only -q`` prints, run in the repository's top
    directory with the project's interpreter."""
    command = [python, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider"]
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    try:
        proc = subprocess.run(
            [*command, *extra], cwd=top, env=env, capture_output=True, check=False
        )
    except OSError as exc:
        raise UsageError(f"cannot run {python}: {exc.strerror}", fix="pass --python PATH") from None
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode not in (0, 5):  # 5: no tests collected
        tail = "\n".join((out + proc.stderr.decode("utf-8", "replace")).strip().splitlines()[-15:])
        raise UsageError(
            f"`{python} -m {' '.join(command[2:])}` exited {proc.returncode}:\n{tail}",
            fix="make the suite collect cleanly (`python -m pytest --collect-only`), then retry",
        )
    ids = []
    for line in out.splitlines():
        if not line.strip():
            break
        ids.append(line)
    return [] if proc.returncode == 5 else ids
