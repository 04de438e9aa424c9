"""Runner configuration: files an interpreter or a test runner loads without being
named. Pure: names and one regex over folded paths."""

from __future__ import annotations

import re
from typing import Final

# Files an interpreter or a test runner loads without being named (Python's site hook,
# pytest's, tox's, nox's, coverage's configuration): whatever the globs say, they are
# runner configuration, class `other`, unless a glob makes them evidence (evidence
# always wins). A `src/sitecustomize.py` is not product: it runs at every interpreter
# start and can deselect the very test that would catch the bug.
RUNNER_CONFIG_NAMES: Final = (
    "sitecustomize.py",
    "usercustomize.py",
    "*.pth",
    "conftest.py",
    "pytest.ini",
    "tox.ini",
    "setup.cfg",
    "noxfile.py",
    "pyproject.toml",
    ".coveragerc",
)
# Folders whose files an interpreter or a test runner loads without being named: a
# distribution's metadata (its entry points: a ``pytest11`` one is a pytest plugin that
# autoloads), whatever file of it a path names.
RUNNER_CONFIG_FOLDERS: Final = ("*.dist-info", "*.egg-info")


def _name(pattern: str) -> str:
    return "[^/]*" + re.escape(pattern[1:]) if pattern.startswith("*") else re.escape(pattern)


RUNNER_CONFIG = re.compile(
    r"(?:.*/)?(?:"
    + "|".join(
        [
            *(_name(n) for n in RUNNER_CONFIG_NAMES),
            *(_name(f) + "(?:/.*)?" for f in RUNNER_CONFIG_FOLDERS),
        ]
    )
    + r")",
    re.DOTALL,  # a path may hold a newline
)
