"""Attacks on what judges the candidate: a runner, a plugin, a path hook or startup code
the candidate ships in its own tree. Each is a failing product that would be
``accept`` if the workspace's copy ran; the judge holds it for a person instead, naming
the file, and nothing from the workspace loads."""

from __future__ import annotations

import sys

from helpers.judge_repos import APP, Repo

BROKEN = APP.replace("return True", "return False")
# a module that reports success whatever the tests say
FAKE_PYTEST = "import sys\nprint('1 passed')\nsys.exit(0)\n"


def _held(doc: dict[str, object], *files: str) -> None:
    assert doc["class"] == "held" and doc["exit"] == 1, doc["reason"]
    said = "\n".join([str(doc["reason"]), *map(str, doc["details"])])  # type: ignore[call-overload]
    for name in files:
        assert name in said, said


def test_a_src_pytest_py_shadowing_the_runner_is_held(repo: Repo) -> None:
    repo.commit("faster tests", {"src/app.py": BROKEN, "src/pytest.py": FAKE_PYTEST})
    _, doc = repo.judge("--property", "suite")
    _held(doc, "runner module from the workspace: pytest from src/pytest.py")
    assert doc["properties"] == [], "nothing ran"


def test_a_src_pluggy_package_shadowing_what_pytest_loads_is_held(repo: Repo) -> None:
    repo.commit(
        "vendored",
        {"src/app.py": BROKEN, "src/pluggy/__init__.py": "raise SystemExit(0)\n"},
    )
    _, doc = repo.judge("--property", "suite")
    _held(doc, "pluggy from src/pluggy/__init__.py")


def test_a_shadowed_plugin_is_held_whatever_the_command(repo: Repo) -> None:
    """A command whose interpreter the preflight cannot tell (``sh -c``): the tree is
    read for the runner's modules all the same."""
    repo.commit("ours", {"src/app.py": BROKEN, "src/git_evidence/__init__.py": ""})
    _, doc = repo.judge("--", "sh", "-c", f"{sys.executable} -m pytest -q tests/properties")
    _held(doc, "git_evidence from src/git_evidence/__init__.py")
