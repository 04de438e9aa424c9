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
RUNNER_CONFIG = re.compile(
    r"(?:.*/)?(?:"
    + "|".join(
        "[^/]*" + re.escape(n[1:]) if n.startswith("*") else re.escape(n)
        for n in RUNNER_CONFIG_NAMES
    )
    + r")",
    re.DOTALL,  # a path may hold a newline
)
