"""The judge is right wherever its runner lives: a virtual environment in the same
folder as ``--out`` and ``--log`` (as the GitHub action lays out ``$RUNNER_TEMP``), a
``.venv`` inside the clone with ``--out verdict.json``, git evidence installed editable
from a checkout under HOME, a property that names its interpreter as an argument of
``env``, and a system interpreter. In each: an honest candidate is ``accept``, a broken
one ``property_fail``, and a runner that cannot start is undecided (exit 2), never a
class that blames the candidate."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from helpers import layouts
from helpers.repos import Work, evidence


def _classes(repo: Work, **kw: object) -> None:
    """honest → accept, broken → property_fail, each judged as ``kw`` says."""
    layouts.honest(repo)
    result, doc = layouts.judge(repo, **kw)  # type: ignore[arg-type]
    assert (doc["class"], result.returncode) == ("accept", 0), (doc["reason"], doc["next"])
    layouts.broken(repo)
    result, doc = layouts.judge(repo, **kw)  # type: ignore[arg-type]
    assert (doc["class"], result.returncode) == ("property_fail", 1), doc["reason"]


# -- the venv, --out and --log in one folder (fast: the default suite has one) ------------


@pytest.fixture
def runner_temp(tmp_path: Path) -> tuple[Path, Path, Work]:
    temp = tmp_path / "runner-temp"
    python = layouts.make_venv(temp / "venv")
    repo = layouts.make_repo(tmp_path / "work" / "repo", layouts.pytest_command(python))
    return temp, python, repo


def test_venv_out_and_log_in_one_folder_accept_then_property_fail(
    runner_temp: tuple[Path, Path, Work],
) -> None:
    temp, python, repo = runner_temp
    out, log = str(temp / "verdict.json"), str(temp / "verdict.log")
    _classes(repo, python=python, env={"PYTHONPATH": ""}, unset=("PYTHONPATH",))
    # and with the outputs there, written before (a second judgement) and after
    for _ in range(2):
        result, doc = layouts.judge(repo, "--out", out, "--log", log, python=python)
        assert doc["class"] == "property_fail", doc["reason"]
        assert "failed on every run" in doc["reason"]
    layouts.honest(repo)
    result, doc = layouts.judge(repo, "--out", out, "--log", log, python=python)
    assert (doc["class"], result.returncode) == ("accept", 0), doc["reason"]


def test_venv_and_a_secret_under_runner_temp_accept_and_the_secret_stays_unreadable(
    tmp_path: Path, outside: Path
) -> None:
    """As the GitHub action lays it out: the judge's venv and ``--out`` under
    ``$RUNNER_TEMP``, which is hidden (the job's step command files are there); the
    venv is bound back, and the workspaces, in ``$TMPDIR`` there, are the runs'."""
    temp = outside / "_temp"
    python = layouts.make_venv(temp / "git-evidence-venv")
    secret = temp / "_runner_file_commands" / "set_env_1"
    secret.parent.mkdir()
    secret.write_text("TOKEN=runner-temp-secret\n")
    (temp / "tmp").mkdir()  # the judge's workspaces there too
    env = {"RUNNER_TEMP": str(temp), "GITHUB_ENV": str(secret), "TMPDIR": str(temp / "tmp")}
    repo = layouts.make_repo(tmp_path / "work" / "repo", layouts.pytest_command(python))
    layouts.honest(repo)
    out = str(temp / "verdict.json")
    result, doc = layouts.judge(repo, "--out", out, python=python, env=env)
    assert (doc["class"], result.returncode) == ("accept", 0), (doc["reason"], doc["next"])
    probe = f"import sys\ntry:\n    open({str(secret)!r})\nexcept OSError:\n    sys.exit(0)\n"
    result, doc = layouts.judge_draft(
        repo, [str(python), "-c", probe + "sys.exit(1)"], python=python, env=env
    )
    assert (doc["class"], result.returncode) == ("accept", 0), doc["reason"]
    assert "runner-temp-secret" not in result.stdout + result.stderr


def test_venv_without_the_runner_is_undecided_never_property_fail(
    runner_temp: tuple[Path, Path, Work], tmp_path: Path
) -> None:
    temp, _, repo = runner_temp
    bare = layouts.make_venv(temp / "bare", outer=False, evidence=False)
    layouts.honest(repo)
    result, doc = layouts.judge_draft(repo, layouts.pytest_command(bare), "--out", str(temp / "v"))
    layouts.assert_undecided(result, doc, "the module pytest cannot be imported", str(bare))


def test_a_missing_interpreter_is_undecided(runner_temp: tuple[Path, Path, Work]) -> None:
    temp, _, repo = runner_temp
    gone = temp / "venv" / "bin" / "python3.99"
    result, doc = layouts.judge_draft(repo, layouts.pytest_command(gone))
    layouts.assert_undecided(result, doc, f"cannot start {gone}: not an executable file")


def test_a_plugin_pytest_cannot_load_is_undecided(runner_temp: tuple[Path, Path, Work]) -> None:
    _, python, repo = runner_temp
    command = [*layouts.pytest_command(python), "-p", "no_such_plugin_here"]
    result, doc = layouts.judge_draft(repo, command, python=python)
    layouts.assert_undecided(
        result, doc, 'pytest could not load a plugin (ERROR: Error importing plugin "no_such'
    )


def test_a_run_that_exits_127_is_undecided(runner_temp: tuple[Path, Path, Work]) -> None:
    _, _, repo = runner_temp
    result, doc = layouts.judge_draft(repo, ["sh", "-c", "exec /nowhere/python -m pytest"])
    layouts.assert_undecided(result, doc, "exited 127, as a command that cannot start does")


@pytest.mark.slow
def test_venv_inside_the_clone_with_out_in_the_clone(tmp_path: Path) -> None:
    repo_path = tmp_path / "repo"
    repo_path.mkdir()
    python = layouts.make_venv(repo_path / ".venv")
    (repo_path / ".gitignore").write_text(".venv/\nverdict.json\n")
    repo = layouts.make_repo(repo_path, layouts.pytest_command(python))
    _classes(repo, python=python)
    _, doc = layouts.judge(repo, "--out", "verdict.json", python=python)
    assert doc["class"] == "property_fail", doc["reason"]
    assert (repo_path / "verdict.json").exists()
    (repo_path / ".venv" / "bin" / "python").unlink()
    result, doc = layouts.judge(repo, "--out", "verdict.json")
    layouts.assert_undecided(result, doc, ".venv/bin/python: not an executable file")


@pytest.mark.slow
def test_venv_inside_a_clone_under_ci_builds_dir_accept_then_property_fail(
    tmp_path: Path,
) -> None:
    """As a GitLab shell runner lays it out: the clone under ``$CI_BUILDS_DIR`` (hidden:
    the other projects' clones are there) with its ``.venv`` inside, bound back."""
    builds = tmp_path / "builds"
    repo_path = builds / "group" / "project"
    repo_path.mkdir(parents=True)
    python = layouts.make_venv(repo_path / ".venv")
    (repo_path / ".gitignore").write_text(".venv/\n")
    repo = layouts.make_repo(repo_path, layouts.pytest_command(python))
    env = {"CI_BUILDS_DIR": str(builds), "CI_PROJECT_DIR": str(repo_path)}
    _classes(repo, python=python, env=env)


@pytest.mark.slow
def test_editable_install_from_a_checkout_under_home(tmp_path: Path) -> None:
    home = tmp_path / "user-home"
    checkout = home / "src" / "git-evidence"
    layouts.copy_package(checkout)
    venv = home / ".venvs" / "judge"
    python = layouts.make_venv(venv, evidence=False)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "zz-git-evidence-editable.pth").write_text(str(checkout) + "\n")
    labels = "tests/properties/test_calc.py::test_add\tinvariant\n"
    repo = layouts.make_repo(home / "work" / "repo", layouts.pytest_command(python))
    repo.git("checkout", "-q", "main")
    repo.commit("labels", {"tests/evidence-labels.tsv": labels})
    repo.git("checkout", "-q", "feat")
    repo.git("rebase", "-q", "main")
    env = {"HOME": str(home), "PYTHONPATH": "", "PYTEST_DISABLE_PLUGIN_AUTOLOAD": ""}
    layouts.honest(repo)
    result, doc = layouts.judge(repo, python=python, env=env)
    assert (doc["class"], result.returncode) == ("accept", 0), doc["reason"]
    # the plugin ran in every run: the scorecard's properties vote saw its sessions
    assert doc["scorecard"]["votes"]["properties"]["vote"] == "pass", doc["scorecard"]
    layouts.broken(repo)
    result, doc = layouts.judge(repo, python=python, env=env)
    assert (doc["class"], result.returncode) == ("property_fail", 1), doc["reason"]
    # the plugin gone from the interpreter's environment: nothing can be decided
    (site / "zz-git-evidence-editable.pth").unlink()
    result, doc = layouts.judge(repo, env={**env, "PYTHONPATH": ""})
    layouts.assert_undecided(result, doc, "the evidence plugin cannot be imported", str(python))


@pytest.mark.slow
def test_interpreter_named_as_an_argument_of_env(tmp_path: Path) -> None:
    home = tmp_path / "user-home"
    python = layouts.make_venv(home / "venv")
    command = ["env", "PYTHONPATH=src", *layouts.pytest_command(python)]
    repo = layouts.make_repo(tmp_path / "repo", command)
    _classes(repo, env={"HOME": str(home)})
    gone = ["env", "PYTHONPATH=src", *layouts.pytest_command(home / "gone" / "python")]
    result, doc = layouts.judge_draft(repo, gone, env={"HOME": str(home)})
    layouts.assert_undecided(result, doc, f"cannot start {home}/gone/python: not an executable")


@pytest.mark.slow
def test_a_system_interpreter(tmp_path: Path) -> None:
    system = shutil.which("python3", path="/usr/bin:/bin")
    if system is None:  # pragma: no cover
        pytest.skip("LOUD: no system python3 in /usr/bin")
    command = [
        system,
        "-c",
        "import sys; sys.path[:0] = ['src']; import calc; "
        "sys.exit(0 if calc.add(2, 3) == 5 else 1)",
    ]
    repo = layouts.make_repo(tmp_path / "repo", command)
    _classes(repo, python=sys.executable)
    result, doc = layouts.judge_draft(repo, [system, "-m", "no_such_runner"])
    layouts.assert_undecided(result, doc, "the module no_such_runner cannot be imported")


# -- GitHub's ubuntu-latest: AppArmor restricts unprivileged user namespaces ----------


def test_apparmor_restricted_user_namespaces_are_exit_2_with_the_remedy(
    repo: Work, tmp_path: Path
) -> None:
    """bwrap as it fails on Ubuntu 24.04 (GitHub's ubuntu-latest runners)."""
    fake = tmp_path / "bin"
    fake.mkdir()
    bwrap = fake / "bwrap"
    bwrap.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
    bwrap.chmod(0o755)
    path = f"{fake}:{os.environ['PATH']}"
    result = evidence(repo.path, "judge", "--format", "json", "--", "true", env={"PATH": path})
    doc = json.loads(result.stdout)
    assert (doc["class"], result.returncode) == ("undecided", 2), doc["reason"]
    assert "AppArmor restricts unprivileged user namespaces" in doc["reason"]
    assert f"profile bwrap {bwrap} flags=(unconfined)" in doc["next"], doc["next"]
    assert "sudo apparmor_parser -r /etc/apparmor.d/bwrap" in doc["next"]
    assert "kernel.apparmor_restrict_unprivileged_userns=0" in doc["next"]


@pytest.mark.slow
def test_a_dependency_installed_editable_from_a_checkout_under_home(tmp_path: Path) -> None:
    home = tmp_path / "user-home"
    dep = home / "src" / "helper-checkout"
    (dep / "helper").mkdir(parents=True)
    (dep / "helper" / "__init__.py").write_text("FIVE = 5\n")
    python = layouts.make_venv(home / ".venvs" / "project")
    site = next((home / ".venvs" / "project" / "lib").glob("python3*/site-packages"))
    (site / "helper-editable.pth").write_text(f"{dep}\n")
    repo = layouts.make_repo(tmp_path / "repo", layouts.pytest_command(python))
    repo.git("checkout", "-q", "main")
    test = (
        "import calc\nimport helper\n\n\n"
        "def test_add():\n    assert calc.add(2, 3) == helper.FIVE\n"
    )
    repo.commit("use the helper", {"tests/properties/test_calc.py": test})
    repo.git("checkout", "-q", "feat")
    repo.git("rebase", "-q", "main")
    _classes(repo, env={"HOME": str(home)})
