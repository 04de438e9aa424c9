"""What the release workflow builds: an sdist and a wheel that ``twine check`` passes,
each installing into a fresh virtual environment where ``git evidence --version``
answers with the project's version."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.repos import PROJECT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the oldest Python supported
    import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]

VERSION = tomllib.loads((PROJECT / "pyproject.toml").read_text())["project"]["version"]


def clean_env() -> dict[str, str]:
    """This environment without what points Python at the project (the suite's own
    import paths, coverage): a fresh virtual environment sees only what it installed."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PYTHON", "COV_CORE", "COVERAGE", "VIRTUAL_ENV"))
    }


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        args, cwd=cwd, capture_output=True, text=True, check=False, env=clean_env()
    )
    assert done.returncode == 0, " ".join(args) + "\n" + done.stdout + done.stderr
    return done


@pytest.mark.slow
def test_the_release_builds_an_sdist_and_a_wheel_that_install_and_run(tmp_path: Path) -> None:
    pytest.importorskip("build")
    pytest.importorskip("twine")
    source = tmp_path / "source"
    # the tree as committed, as the release checks it out
    run("git", "-C", str(PROJECT), "worktree", "add", "--detach", "-q", str(source), "HEAD")
    try:
        dist = tmp_path / "dist"
        run(sys.executable, "-m", "build", "--sdist", "--wheel", "--outdir", str(dist), str(source))
    finally:
        run("git", "-C", str(PROJECT), "worktree", "remove", "--force", str(source))
    built = sorted(p.name for p in dist.iterdir())
    assert built == [f"git_evidence-{VERSION}-py3-none-any.whl", f"git_evidence-{VERSION}.tar.gz"]
    run(sys.executable, "-m", "twine", "check", "--strict", *map(str, dist.iterdir()))
    for package in dist.iterdir():
        venv = tmp_path / f"venv-{package.suffix.strip('.')}"
        run(sys.executable, "-m", "venv", str(venv))
        run(str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(package))
        answer = run(str(venv / "bin" / "git-evidence"), "--version").stdout
        assert VERSION in answer
        env_path = f"{venv / 'bin'}:/usr/bin:/bin"
        through_git = subprocess.run(
            ["git", "evidence", "--version"],
            capture_output=True,
            text=True,
            check=False,
            env={"PATH": env_path, "HOME": str(tmp_path)},
        )
        assert through_git.returncode == 0 and VERSION in through_git.stdout, through_git.stderr
