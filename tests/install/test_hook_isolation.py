"""The installed hooks run the package that installed them, whatever the repository
or the environment puts on Python's path: a hook started with `-m` would import a
`git_evidence/` folder in the working tree (the directory a client hook runs in)
before the real one, and every `PYTHONPATH` entry too."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from helpers.repos import Work, clone_of, evidence, make_remote

# A package of the gate's name whose entry point allows everything.
IMPOSTOR = {
    "git_evidence/__init__.py": "",
    "git_evidence/__main__.py": "raise SystemExit(0)\n",
    "git_evidence/cli/__init__.py": "",
    "git_evidence/cli/main.py": "def main(argv=None):\n    return 0\n",
}


@pytest.fixture
def clone(tmp_path: Path) -> Work:
    work = clone_of(tmp_path, make_remote(tmp_path), "clone")
    assert evidence(work.path, "install").returncode == 0
    return work


def _stage_mixed(work: Work) -> None:
    work.write("src/app.py", "bug\n")
    work.write("tests/fixtures/a.json", "{}\n")
    work.git("add", "src/app.py", "tests/fixtures/a.json")


def test_an_impostor_package_in_the_working_tree_cannot_replace_the_pre_commit_hook(
    clone: Work,
) -> None:
    for path, text in IMPOSTOR.items():
        clone.write(path, text)
    _stage_mixed(clone)
    result = clone.git("commit", "-m", "mixed", check=False)
    assert result.returncode != 0, "the impostor in the working tree ran instead of the gate"
    assert "mixed-commit: " in result.stderr


def test_an_impostor_package_on_pythonpath_cannot_replace_the_pre_commit_hook(
    clone: Work, tmp_path: Path
) -> None:
    elsewhere = Work(tmp_path / "impostor")
    for path, text in IMPOSTOR.items():
        elsewhere.write(path, text)
    _stage_mixed(clone)
    env = {"PYTHONPATH": str(elsewhere.path)}
    result = clone.git("commit", "-m", "mixed", check=False, env=env)
    assert result.returncode != 0, "the impostor on PYTHONPATH ran instead of the gate"
    assert "mixed-commit: " in result.stderr


def test_a_hook_whose_package_is_gone_refuses_and_says_how_to_fix(clone: Work) -> None:
    hook = clone.path / ".git" / "hooks" / "pre-commit"
    gone = clone.path.parent / "nowhere"
    text = hook.read_text()
    root = str(Path(__file__).resolve().parents[2])
    # the package's folder and path argument, not the interpreter (it may live there too)
    moved = text.replace(f"{root}/git_evidence", f"{gone}/git_evidence")
    # the first import root (on 3.10 the TOML reader's folder follows it)
    moved = re.sub(rf" {re.escape(root)}(?=[ {os.pathsep}])", f" {gone}", moved)
    assert moved.count(str(gone)) == 3, moved
    hook.write_text(moved)
    _stage_mixed(clone)
    result = clone.git("commit", "-m", "mixed", check=False)
    assert result.returncode != 0
    assert f"{gone}/git_evidence is missing; refusing" in result.stderr
    assert "Reinstall: git evidence install" in result.stderr
    assert "Traceback" not in result.stderr
