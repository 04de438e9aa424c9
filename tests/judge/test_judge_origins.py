"""The code the judge tests is the workspace's, end to end: a real virtual environment
in which a second checkout of the project's package is installed in editable mode (as a
user who once ran ``setup.py develop`` in a clone of the project has it), and a property
whose command is that environment's Python. The judge tests the candidate's copy all the
same, and says where it came from; a property that imports the other copy nonetheless
makes the judgement undecidable."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from helpers.repos import Work, evidence, git

pytestmark = pytest.mark.slow  # builds a virtual environment and installs into it

CALC = "def add(a, b):\n    return a + b\n"
BROKEN = "def add(a, b):\n    return a - b\n"

FILES = {
    "pytest.ini": "[pytest]\n",
    "setup.py": (
        "from setuptools import setup\n\n"
        'setup(name="calc", version="0.1", package_dir={"": "src"}, packages=["calc"])\n'
    ),
    "src/calc/__init__.py": CALC,
    "tests/properties/test_calc.py": (
        "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5\n"
    ),
    "tests/fixtures/cases.json": "[[2, 3, 5]]\n",
}
# The plugin is installed where pytest runs, as a project's test environment has it
# (through outer.pth): loaded by its entry point, not asked for, it records where the
# workspace's packages were imported from.
AUTOLOAD = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": ""}


def policy(python: str) -> str:
    command = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/properties"]
    return (
        '[identities]\nevidence_writers = ["alice"]\n\n[judge]\nrepeat = 2\nseeds = 1\n\n'
        f'[[judge.property]]\nid = "suite"\ncommand = {json.dumps(command)}\n'
    )


class Project:
    """A repository on main, a virtual environment beside it, and in that environment
    an editable install of a second checkout of the repository (``venv/src/calc``,
    where pip keeps the checkouts it installs editable)."""

    def __init__(self, root: Path, program: str = "python") -> None:
        self.venv = root / "venv"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(self.venv)], check=True)
        self.site = Path(
            subprocess.run(
                [str(self.venv / "bin/python"), "-c", _PURELIB],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        )
        # pytest, setuptools and git_evidence from the environment these tests run in
        outer = sysconfig.get_paths()["purelib"]
        (self.site / "outer.pth").write_text(f"import site; site.addsitedir({outer!r})\n")
        self.repo = Work(root / "repo")
        git(root, "init", "-q", "-b", "main", str(self.repo.path))
        program_path = self.venv / "bin" / program
        self.repo.commit("seed", {**FILES, ".git-evidence.toml": policy(str(program_path))})
        self.other = self.venv / "src" / "calc"
        git(root, "clone", "-q", str(self.repo.path), str(self.other))
        installed = subprocess.run(
            [str(self.venv / "bin/python"), "setup.py", "-q", "develop", "--no-deps"],
            cwd=self.other,
            capture_output=True,
            text=True,
        )
        assert installed.returncode == 0, installed.stdout + installed.stderr
        self.repo.git("checkout", "-qb", "feat")

    def imports_calc_from(self, cwd: Path) -> str:
        """Where the environment's Python imports ``calc`` from, run plainly in ``cwd``."""
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        return subprocess.run(
            [str(self.venv / "bin/python"), "-c", "import calc; print(calc.__file__)"],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()

    def judge(self) -> tuple[subprocess.CompletedProcess[str], dict[str, object]]:
        result = evidence(
            self.repo.path, "judge", "--format", "json", "--base", "main", env=AUTOLOAD
        )
        assert result.stdout.strip(), result.stderr
        return result, json.loads(result.stdout)


_PURELIB = "import sysconfig; print(sysconfig.get_paths()['purelib'])"


def needs_setuptools() -> None:
    if importlib.util.find_spec("setuptools") is None:  # pragma: no cover
        pytest.skip("LOUD: setuptools is not importable here: no editable install to make")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    needs_setuptools()
    return Project(tmp_path)


def test_the_editable_install_of_the_other_checkout_is_what_the_environment_imports(
    project: Project,
) -> None:
    found = project.imports_calc_from(project.repo.path)
    assert found == str(project.other / "src/calc/__init__.py")


def test_a_patch_breaking_the_product_fails_though_the_other_checkout_is_correct(
    project: Project,
) -> None:
    project.repo.commit("break it", {"src/calc/__init__.py": BROKEN})
    result, doc = project.judge()
    assert doc["class"] == "property_fail" and result.returncode == 1, doc["reason"]
    assert doc["import_origins"] == {"suite": {"calc": "src/calc/__init__.py"}}
    assert "tests/properties/test_calc.py" not in str(doc["reason"])  # no JUnit: the exit code
    assert str(doc["reason"]).endswith("failed on every run: exit 1")


def test_the_correct_patch_is_accepted_though_the_other_checkout_is_broken(
    project: Project,
) -> None:
    (project.other / "src/calc/__init__.py").write_text(BROKEN)
    project.repo.commit("refactor", {"src/calc/__init__.py": CALC.replace("a + b", "b + a")})
    result, doc = project.judge()
    assert doc["class"] == "accept" and result.returncode == 0, doc["reason"]
    assert doc["import_origins"] == {"suite": {"calc": "src/calc/__init__.py"}}
    assert doc["pythonpath"] == ["src"]


def test_a_pth_putting_the_other_checkout_first_makes_the_judgement_undecidable(
    project: Project,
) -> None:
    other_src = project.other / "src"
    (project.site / "zz-first.pth").write_text(
        f"import sys; sys.path.insert(0, {str(other_src)!r})\n"
    )
    project.repo.commit("refactor", {"src/calc/__init__.py": CALC.replace("a + b", "b + a")})
    result, doc = project.judge()
    assert result.returncode == 2 and doc["class"] == "undecided", doc["reason"]
    where = os.path.realpath(other_src / "calc/__init__.py")
    assert f"tested code from outside the workspace: calc from {where}" in str(doc["reason"])


def test_a_property_setting_pythonpath_to_the_other_checkout_makes_the_judgement_undecidable(
    tmp_path: Path,
) -> None:
    needs_setuptools()
    venv = tmp_path / "venv"
    wrapper = venv / "bin" / "python-other"
    other_src = venv / "src" / "calc" / "src"
    venv.joinpath("bin").mkdir(parents=True)
    # the property's program: the environment's Python with PYTHONPATH set to the
    # other checkout, whatever the judge put there
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={other_src} exec {venv / "bin" / "python"} "$@"\n')
    wrapper.chmod(0o755)
    project = Project(tmp_path, program="python-other")
    project.repo.commit("refactor", {"src/calc/__init__.py": CALC.replace("a + b", "b + a")})
    result, doc = project.judge()
    assert result.returncode == 2 and doc["class"] == "undecided", doc["reason"]
    where = os.path.realpath(other_src / "calc/__init__.py")
    assert f"tested code from outside the workspace: calc from {where}" in str(doc["reason"])
