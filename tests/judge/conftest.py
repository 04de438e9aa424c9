"""The fixtures the tests of this folder share."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.judge_repos import FILES, KEPT, Repo, pinned_repo
from helpers.repos import PROJECT, evidence, git


@pytest.fixture(autouse=True)
def _remove_kept() -> Any:
    yield
    while KEPT:
        shutil.rmtree(KEPT.pop(), ignore_errors=True)


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """main with FILES, pinned: built once, in the environment sealed_env gives each
    test (its own HOME and git config, fixed names and dates)."""
    root = tmp_path_factory.mktemp("judge-template")
    home = root / "home"
    home.mkdir()
    (home / ".gitconfig").write_text("[init]\n\tdefaultBranch = main\n[core]\n\tautocrlf = false\n")
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test Author",
        "GIT_AUTHOR_EMAIL": "author@example.com",
        "GIT_COMMITTER_NAME": "Test Committer",
        "GIT_COMMITTER_EMAIL": "committer@example.com",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
        "PYTHONPATH": str(PROJECT),
    }
    path = root / "repo"
    git(root, "init", "-q", str(path), env=env)
    for rel, content in FILES.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(content)
    git(path, "add", "-A", env=env)
    git(path, "commit", "-qm", "seed", env=env)
    pinned = evidence(path, "lock", env=env)
    assert pinned.returncode == 0, pinned.stderr
    return path


@pytest.fixture
def repo(tmp_path: Path, template: Path) -> Repo:
    return pinned_repo(tmp_path, template)


# what every run gets fresh and empty anyway: a secret there proves nothing
FRESH = ("/tmp/", "/var/tmp/", "/run/", "/var/run/", "/dev/shm/")


@pytest.fixture
def outside(request: pytest.FixtureRequest) -> Iterator[Path]:
    """A folder where a CI job's secrets could be, outside HOME and outside every
    folder a run gets fresh (the test's own temporary folders are in one): in the
    project's pytest cache, or, when the checkout itself is in such a folder (a CI
    clone under /tmp), under /var/cache where the machine lets the tests write."""
    cache = getattr(request.config, "cache", None)
    places = [cache.mkdir("judge-attacks-ci")] if cache is not None else []
    if os.access("/var/cache", os.W_OK):
        places.append(Path("/var/cache/git-evidence-tests"))
    for place in places:
        if not str(place.resolve()).startswith(FRESH):
            place.mkdir(parents=True, exist_ok=True)
            folder = Path(tempfile.mkdtemp(prefix="ci-secrets-", dir=place))
            break
    else:  # pragma: no cover
        pytest.skip(f"LOUD: no folder outside those every run gets fresh: {places}")
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
