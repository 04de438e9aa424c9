"""`Git.config_get` and `Git.config_bool` read the whole `evidence.*` section with one
git process, and answer as `git config --get` / `--type=bool --get` would: every
spelling of a boolean, a key without `=`, the last of several values, `git -c`, a
value git refuses, and a setting written meanwhile."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.repos import git

from git_evidence.core.errors import EvidenceError
from git_evidence.plumbing import process
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.process import COMMAND_LINE_CONFIG


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    process.SETTINGS.clear()
    git(tmp_path, "init", "-q")
    return tmp_path


def settings(repo: Path, text: str) -> Git:
    """A fresh read of ``text`` appended to the repository's config."""
    with (repo / ".git" / "config").open("a") as handle:
        handle.write(text)
    process.SETTINGS.clear()
    return Git(cwd=str(repo))


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("true", True),
        ("YES", True),
        ("On", True),
        ("1", True),
        ("2k", True),
        ("false", False),
        ("no", False),
        ("OFF", False),
        ("0", False),
        ("", False),
    ],
)
def test_every_spelling_of_a_boolean_reads_as_git_reads_it(
    repo: Path, written: str, expected: bool
) -> None:
    ours = settings(repo, f"[evidence]\n\ttrusted = {written}\n").config_bool("evidence.trusted")
    theirs = git(repo, "config", "--type=bool", "--get", "evidence.trusted").stdout.strip()
    assert ours is expected
    assert theirs == ("true" if expected else "false")


def test_a_key_without_equals_is_true(repo: Path) -> None:
    assert settings(repo, "[evidence]\n\ttrusted\n").config_bool("evidence.trusted") is True


def test_a_missing_key_is_false_and_none(repo: Path) -> None:
    ours = settings(repo, "[evidence]\n\tverbose = true\n")
    assert ours.config_bool("evidence.trusted") is False
    assert ours.config_get("evidence.policyFile") is None


def test_the_last_of_several_values_wins_and_names_ignore_case(repo: Path) -> None:
    ours = settings(
        repo, "[evidence]\n\tpolicyFile = first.toml\n[Evidence]\n\tPOLICYFILE = last.toml\n"
    )
    assert ours.config_get("evidence.policyFile") == "last.toml"
    assert git(repo, "config", "--get", "evidence.policyFile").stdout.strip() == "last.toml"


def test_a_value_git_refuses_as_a_boolean_is_still_refused(repo: Path) -> None:
    ours = settings(repo, "[evidence]\n\ttrusted = maybe\n")
    with pytest.raises(EvidenceError):
        ours.config_bool("evidence.trusted")


def test_git_dash_c_overrides_the_file(repo: Path) -> None:
    settings(repo, "[evidence]\n\ttrusted = false\n")
    env = {**os.environ, COMMAND_LINE_CONFIG: "'evidence.trusted'='true'"}
    assert Git(cwd=str(repo), env=env).config_bool("evidence.trusted") is True
    assert Git(cwd=str(repo)).config_bool("evidence.trusted") is False


def test_one_git_process_answers_every_setting(repo: Path) -> None:
    ours = settings(repo, "[evidence]\n\ttrusted = true\n\tpolicyFile = p.toml\n")
    ours.config_bool("evidence.trusted")
    counted = Git(cwd=str(repo))
    calls: list[tuple[str, ...]] = []
    real = counted.run

    def run(*args: str, **kwargs: object) -> tuple[int, bytes]:
        calls.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    counted.run = run  # type: ignore[method-assign]
    assert counted.config_bool("evidence.trusted") is True
    assert counted.config_get("evidence.policyFile") == "p.toml"
    assert counted.config_bool("evidence.verbose") is False
    assert calls == []  # read once already, by the first Git of this repository


def test_a_setting_written_through_git_is_read_again(repo: Path) -> None:
    ours = settings(repo, "[evidence]\n\ttrusted = false\n")
    assert ours.config_get("evidence.policyFile") is None
    ours.run("config", "evidence.policyFile", "sealed.toml")
    assert ours.config_get("evidence.policyFile") == "sealed.toml"
