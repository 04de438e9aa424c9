"""The fixtures of the forge tests: a clean CI environment and a forge per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.forge_jobs import Forge


@pytest.fixture(autouse=True)
def _no_outer_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    """The job's variables are the test's alone, also when the suite runs in CI."""
    import os

    for name in list(os.environ):
        if name.startswith(("GITHUB_", "GITLAB_", "CI_")) or name == "CI":
            monkeypatch.delenv(name)


@pytest.fixture
def forge(tmp_path: Path) -> Iterator[Forge]:
    yield Forge(tmp_path)
