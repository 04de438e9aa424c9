"""Hostile runs after the secrets a CI job keeps outside HOME: GitLab's file-type
variables in ``<clone>.tmp`` beside the clone, the other projects' clones under a shared
runner's ``$CI_BUILDS_DIR``, GitHub's ``$RUNNER_TEMP``, its event
payload and its step command files. A run prints what it read and fails: its output
tail would carry the secret into the verdict record, the CI log and the pushed note.
Each test asserts the secret reached none of them."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from helpers.judge_attacks import armed
from helpers.judge_repos import CI, POLICY, Repo
from helpers.repos import evidence

LEAK = """
for path in {paths!r}:
    try:
        print(open(path).read())
    except OSError as exc:
        print("unreadable", exc)
raise SystemExit(1)
"""


def _secret(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")
    return path


def _assert_not_leaked(repo: Repo, secrets: dict[Path, str], env: dict[str, str]) -> None:
    code = LEAK.format(paths=[str(p) for p in secrets])
    result, doc = armed(repo).judge("--", sys.executable, "-c", code, env=env)
    assert doc["sandbox"] == {"kind": "bwrap", "network": False}, doc
    assert doc["class"] == "property_fail", doc["reason"]
    record = json.dumps(doc)
    assert "unreadable" in record  # the run's output tail is in the record
    for path, text in secrets.items():
        assert text not in record and text not in result.stdout and text not in result.stderr
        assert path.read_text() == text + "\n"


def test_a_run_cannot_read_gitlab_file_variables_beside_the_clone(
    repo: Repo, outside: Path
) -> None:
    text = "gitlab-file-variable-beside-the-clone"
    clone = Repo(Path(shutil.move(repo.path, outside / "proj")))
    key = _secret(outside / "proj.tmp" / "KEY", text)
    _assert_not_leaked(clone, {key: text}, {})


def test_a_run_cannot_read_the_ci_project_dir_tmp_sibling(repo: Repo, outside: Path) -> None:
    text = "gitlab-file-variable-of-ci-project-dir"
    project = outside / "builds" / "group" / "project"
    key = _secret(project.parent / "project.tmp" / "DEPLOY_KEY", text)
    _assert_not_leaked(repo, {key: text}, {"CI_PROJECT_DIR": str(project)})


def test_a_run_cannot_read_another_projects_clone_under_ci_builds_dir(
    repo: Repo, outside: Path
) -> None:
    """A shared GitLab runner keeps every project's clone (and its ``.tmp`` of file
    variables) under ``$CI_BUILDS_DIR``: the judged project's neighbours are not its
    runs' to read."""
    builds = outside / "builds"
    clone = Repo(Path(shutil.move(repo.path, builds / "group" / "proj")))
    text = "another-projects-deploy-key"
    key = _secret(builds / "other" / "app.tmp" / "DEPLOY_KEY", text)
    config = "another-projects-config"
    conf = _secret(builds / "other" / "app" / "config" / "secrets.yml", config)
    env = {"CI_BUILDS_DIR": str(builds), "CI_PROJECT_DIR": str(clone.path)}
    _assert_not_leaked(clone, {key: text, conf: config}, env)


def test_a_run_cannot_read_runner_temp(repo: Repo, outside: Path) -> None:
    text = "github-runner-temp-secret"
    temp = outside / "runner" / "_temp"
    key = _secret(temp / "credentials.json", text)
    _assert_not_leaked(repo, {key: text}, {"RUNNER_TEMP": str(temp)})


def test_a_run_cannot_read_the_event_payload(repo: Repo, outside: Path) -> None:
    text = "github-event-payload-secret"
    event = _secret(outside / "workflow" / "event.json", text)
    _assert_not_leaked(repo, {event: text}, {"GITHUB_EVENT_PATH": str(event)})


def test_a_run_cannot_read_the_step_command_files(repo: Repo, outside: Path) -> None:
    names = ("GITHUB_ENV", "GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY", "GITHUB_PATH", "GITHUB_STATE")
    files = {n: _secret(outside / "commands" / n.lower(), f"{n.lower()}-secret") for n in names}
    env = {n: str(p) for n, p in files.items()}
    _assert_not_leaked(repo, {p: f"{n.lower()}-secret" for n, p in files.items()}, env)


def test_freeze_add_runs_cannot_read_runner_temp(repo: Repo, outside: Path) -> None:
    """``freeze add`` holds its runs in the same sandbox: a run that can read the
    secret fails every time (a product failure); one that cannot passes every time."""
    secret = _secret(outside / "_temp" / "_runner_file_commands" / "set_output_1", "freeze-leak")
    probe = f"import sys\ntry:\n    open({str(secret)!r})\nexcept OSError:\n    sys.exit(0)\n"
    env = {"RUNNER_TEMP": str(outside / "_temp"), "GIT_EVIDENCE_PUSHER": CI}
    result = evidence(
        repo.path,
        "freeze",
        "add",
        "--test",
        "tests/test_app.py::test_app",
        "--runs",
        "2",
        "--seeds",
        "1",
        "--",
        sys.executable,
        "-c",
        probe + f"print(open({str(secret)!r}).read())\nsys.exit(1)\n",
        env=env,
    )
    assert "passed every run: nothing to freeze" in result.stdout, result.stdout + result.stderr
    assert "freeze-leak" not in result.stdout + result.stderr


def test_a_run_cannot_read_the_paths_judge_hide_names(repo: Repo, outside: Path) -> None:
    """``[judge].hide``: a folder by a ``$NAME`` of the judge's environment, a file by
    its path."""
    folder = _secret(outside / "vault" / "token", "policy-hidden-folder")
    single = _secret(outside / "keys" / "deploy.pem", "policy-hidden-file")
    policy = outside / "policy.toml"
    hide = f'hide = ["${{VAULT_DIR}}", "{single}", "$UNSET_HERE/x"]\n'
    policy.write_text(POLICY.replace("[judge]\n", "[judge]\n" + hide, 1))
    code = LEAK.format(paths=[str(folder), str(single)])
    env = {"VAULT_DIR": str(folder.parent)}
    result, doc = armed(repo).judge(
        "--policy", str(policy), "--", sys.executable, "-c", code, env=env
    )
    assert doc["class"] == "property_fail", doc["reason"]
    record = json.dumps(doc)
    assert "unreadable" in record
    assert "policy-hidden" not in record + result.stdout + result.stderr
