"""The workflow files, the action and the GitLab template as the forges' own validators
read them: check-jsonschema's vendored schemas (GitHub workflows, GitHub actions,
GitLab CI; offline), zizmor (GitHub Actions security audits, offline: no finding, or
each one ignored in a comment zizmor reads that says why) and actionlint; and every
action they use pinned by a full commit id with its version in a comment."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.repos import PROJECT

WORKFLOWS = [
    PROJECT / "docs" / "github-evidence-fence.yml",
    PROJECT / "docs" / "github-evidence-judge.yml",
    *sorted((PROJECT / ".github" / "workflows").glob("*.yml")),
]
ACTION = PROJECT / "action.yml"
GITLAB = PROJECT / "docs" / "gitlab-ci-evidence.yml"
USES = re.compile(r"^\s*(?:-\s+)?uses:\s*(\S+)(.*)$", re.MULTILINE)
# The commits the files pin, each checked against its release (the version comment).
KNOWN = {
    "actions/checkout": ("08c6903cd8c0fde910a37f88322edcfb5dd907a8", "v5.0.0"),
    "actions/setup-python": ("e797f83bcb11b83ae66e0230d6156d7c80228e7c", "v6.0.0"),
    "actions/upload-artifact": ("330a01c490aca151604b8cf639adc76d48f6c5d4", "v5.0.0"),
    "actions/download-artifact": ("634f93cb2916e3fdff6788551b99b062d0335ce0", "v5.0.0"),
    "pypa/gh-action-pypi-publish": ("ba38be9e461d3875417946c167d0b5f3d385a247", "v1.14.1"),
    "github/codeql-action/upload-sarif": ("5d4e8d1aca955e8d8589aabd499c5cae939e33c7", "v4.31.9"),
    # this project: a commit of this repository that holds the action (a release's
    # copies carry the tagged commit instead)
    "git-evidence/git-evidence": ("136467abc100896317f43356dd656ec3523136a9", "v0.1.0"),
}


def tool(name: str) -> str:
    found = shutil.which(name, path=os.path.dirname(sys.executable)) or shutil.which(name)
    if found is None:
        message = f"LOUD SKIP: {name} is not installed (pip install -e '.[test]' installs it)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, check=False, timeout=300)


@pytest.mark.parametrize(
    ("schema", "files"),
    [
        ("vendor.github-workflows", WORKFLOWS),
        ("vendor.github-actions", [ACTION]),
        ("vendor.gitlab-ci", [GITLAB]),
    ],
)
def test_the_files_pass_the_forges_schemas(schema: str, files: list[Path]) -> None:
    done = run(tool("check-jsonschema"), "--builtin-schema", schema, *map(str, files))
    assert done.returncode == 0, done.stdout + done.stderr


def test_zizmor_finds_nothing_unjustified() -> None:
    done = run(tool("zizmor"), "--offline", "--format", "json", str(ACTION), *map(str, WORKFLOWS))
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout) == []


def test_actionlint_finds_nothing() -> None:
    done = run(tool("actionlint"), "-no-color", *map(str, WORKFLOWS))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("path", [*WORKFLOWS, ACTION], ids=lambda p: p.name)
def test_every_action_is_pinned_by_a_full_commit_with_its_version(path: Path) -> None:
    for name, rest in USES.findall(path.read_text(encoding="utf-8")):
        if name.startswith("./"):
            continue
        action, _, ref = name.rpartition("@")
        assert re.fullmatch(r"[0-9a-f]{40}", ref), f"{path.name}: {name} is not pinned"
        known = KNOWN.get(action) or KNOWN.get(action.rsplit("/", 1)[0])
        assert known is not None, f"{path.name}: {action} is not in the table of pins"
        assert (ref, f"# {known[1]}") == (known[0], rest.strip()[: len(known[1]) + 2])


def test_the_projects_own_pin_is_a_commit_of_this_repository_holding_the_action() -> None:
    commit = KNOWN["git-evidence/git-evidence"][0]
    if not (PROJECT / ".git").exists():
        pytest.skip("LOUD SKIP: not a clone of the repository: its commits cannot be read")
    found = subprocess.run(
        ["git", "-C", str(PROJECT), "cat-file", "-t", f"{commit}:action.yml"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert found.stdout.strip() == "blob", f"{commit} holds no action.yml: {found.stderr}"
    gitlab = GITLAB.read_text(encoding="utf-8")
    assert f'GIT_EVIDENCE_COMMIT: "{commit}" # v0.1.0' in gitlab


def test_the_gitlab_template_installs_a_pinned_commit_not_an_index_name() -> None:
    text = GITLAB.read_text(encoding="utf-8")
    assert "git-evidence==" not in text
    assert re.search(r'GIT_EVIDENCE_COMMIT: "[0-9a-f]{40}" # v\d', text)
    assert "git+https://github.com/git-evidence/git-evidence@$GIT_EVIDENCE_COMMIT" in text
