"""What the plumbing tests share: a small repository with names that need care."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.repos import git


@pytest.fixture
def small_repo(tmp_path: Path) -> Path:
    """One commit: ``a b/c`` (a directory with a space) and ``plain``."""
    git(tmp_path, "init", "-q")
    (tmp_path / "a b").mkdir()
    (tmp_path / "a b" / "c").write_text("x\n")
    (tmp_path / "plain").write_text("y\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "one")
    return tmp_path
