"""Trying a policy before it is in force: `--policy FILE` on the commands that read
one, `git -c evidence.policyFile=F`, `policy` naming where it read and warning when
HEAD's file is not the one in force, TOML that pastes back, and a lock that would pin
nothing saying so. A real clone of a protected server, as a newcomer adopts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.repos import POLICY, Work, clone_of, evidence, git, make_server

from git_evidence.policy.parsing import parse_policy

# black's layout: goldens under tests/data, code under src/
DRAFT = POLICY + '[paths]\nfixture = ["tests/data/**"]\n\n[lock]\nroots = ["tests/data"]\n'
GOLDEN = "tests/data/cases/comments.py"


@pytest.fixture
def newcomer(tmp_path: Path) -> Work:
    """A clone whose main has the seed policy, with a golden under tests/data and a
    draft policy for it committed on a branch (not in force: policies come from main)."""
    server = make_server(tmp_path, {GOLDEN: "# comment\n"})
    work = clone_of(tmp_path, server, "newcomer")
    work.git("checkout", "-qb", "adopt")
    work.commit("policy draft", {".git-evidence.toml": DRAFT})
    (work.path / "draft.toml").write_text(DRAFT)
    return work


def test_classify_reads_the_policy_in_force_and_warns_of_the_committed_one(
    newcomer: Work,
) -> None:
    result = evidence(newcomer.path, "classify", GOLDEN)
    assert result.stdout == f"{GOLDEN}\ttest\tglob tests/**\n"
    said = " ".join(result.stderr.split())
    assert "HEAD's .git-evidence.toml differs from the policy in force" in said
    assert "not in force until it reaches refs/heads/main" in said
    assert "--policy .git-evidence.toml" in said


def test_classify_with_a_draft_policy_classifies_by_it(newcomer: Work) -> None:
    result = evidence(newcomer.path, "classify", "--policy", "draft.toml", GOLDEN)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{GOLDEN}\tfixture\tglob tests/data/**\n"
    assert "draft policy draft.toml (not in force)" in result.stderr
    doc = json.loads(
        evidence(
            newcomer.path, "classify", "--policy", "draft.toml", "--format", "json", GOLDEN
        ).stdout
    )
    assert doc["policy"]["source"] == "draft policy draft.toml (not in force)"


def test_a_draft_path_is_relative_to_the_current_directory(newcomer: Work) -> None:
    result = evidence(newcomer.path / "tests", "classify", "--policy", "../draft.toml", "data/x")
    assert result.stdout.startswith("tests/data/x\tfixture\t")


def test_a_draft_that_does_not_parse_names_its_file_and_line(newcomer: Work) -> None:
    (newcomer.path / "bad.toml").write_text('[rules]\nother_path = "maybe"\n')
    result = evidence(newcomer.path, "classify", "--policy", "bad.toml", "x")
    assert result.returncode == 2
    assert "policy-error: bad.toml:2: rules.other_path: expected one of" in result.stderr


def test_a_missing_draft_is_a_usage_error(newcomer: Work) -> None:
    result = evidence(newcomer.path, "policy", "--policy", "nope.toml")
    assert result.returncode == 2
    assert "usage-error: cannot read the draft policy nope.toml" in result.stderr


def test_git_c_policy_file_is_honoured_like_the_config_file(newcomer: Work) -> None:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    draft = str(newcomer.path / "draft.toml")
    result = subprocess.run(
        ["git", "-c", f"evidence.policyFile={draft}", "evidence", "policy"],
        cwd=newcomer.path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"source: sealed:{draft}\n")
    classified = subprocess.run(
        ["git", "-c", f"evidence.policyFile={draft}", "evidence", "classify", GOLDEN],
        cwd=newcomer.path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert classified.stdout.startswith(f"{GOLDEN}\tfixture\t")


def test_git_c_does_not_reach_the_plumbing(newcomer: Work) -> None:
    """Only our own settings are read from `git -c`: a diff driver given there would
    change what the gate reads."""
    from git_evidence.plumbing.git import Git

    env = {**os.environ, "GIT_CONFIG_PARAMETERS": "'diff.noprefix'='true' 'evidence.x'='1'"}
    git_ = Git(cwd=str(newcomer.path), env=env)
    assert "GIT_CONFIG_PARAMETERS" not in git_.env
    assert git_.config_get("evidence.x") == "1"
    assert git_.config_get("diff.noprefix") == "true"  # read as config, not applied


def test_policy_names_the_ref_and_commit_it_read_and_warns(newcomer: Work) -> None:
    main = newcomer.git("rev-parse", "origin/main").stdout.strip()
    result = evidence(newcomer.path, "policy")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "source: base:.git-evidence.toml"
    assert lines[1] == f"read from: refs/remotes/origin/main at {main[:12]}"
    assert "not in force until it reaches refs/heads/main" in " ".join(result.stderr.split())
    doc = json.loads(evidence(newcomer.path, "policy", "--format", "json").stdout)
    assert doc["read_from"] == {"ref": "refs/remotes/origin/main", "commit": main}
    assert doc["warnings"] and "not in force" in doc["warnings"][0]


def test_policy_without_a_file_at_the_base_names_where_it_looked(tmp_path: Path) -> None:
    work = Work(tmp_path / "fresh")
    git(tmp_path, "init", "-q", str(work.path))
    head = work.commit("product", {"src/app.py": "x\n"})
    result = evidence(work.path, "policy")
    assert result.stdout.startswith(
        f"source: built-in defaults (no .git-evidence.toml at {head[:12]})\n"
        f"read from: refs/heads/main at {head[:12]}\n"
    )


def test_policy_agrees_with_head_says_nothing_more(tmp_path: Path) -> None:
    work = clone_of(tmp_path, make_server(tmp_path))
    result = evidence(work.path, "policy")
    assert result.stderr == ""


def test_policy_with_a_draft_shows_the_draft(newcomer: Work) -> None:
    result = evidence(newcomer.path, "policy", "--policy", "draft.toml")
    assert result.stdout.startswith("source: draft policy draft.toml (not in force)\n")
    assert "read from" not in result.stdout
    assert result.stderr == ""


PROPERTIES = POLICY + (
    "[judge]\nrepeat = 4\n\n"
    '[[judge.property]]\nid = "sorting"\n'
    'command = ["python", "-m", "pytest", "-q", "--junitxml={junitxml}"]\n'
    "junit = true\nseed = 5\nseeds = 2\nmin_hits = 3\n"
    'must_fail = ["tests/fixtures/a.json"]\n\n'
    '[[judge.property]]\nid = "fuzz"\ncommand = ["./fuzz"]\nseed_list = [3, 17]\ntimeout_s = 9\n\n'
    "[rules]\nproposals = false\n"
).replace(
    "[identities]\nevidence_writers",
    '[identities]\nreviewers = ["bob"]\nverdict_writers = ["ci-bot"]\nevidence_writers',
)


def toml_of(output: str) -> str:
    return output.split("\n\n", 1)[1]


def test_policy_prints_toml_that_parses_back_to_the_same_policy(tmp_path: Path) -> None:
    work = clone_of(tmp_path, make_server(tmp_path, {".git-evidence.toml": PROPERTIES}))
    result = evidence(work.path, "policy")
    assert result.returncode == 0, result.stderr
    text = toml_of(result.stdout)
    assert "[[judge.property]]" in text and "properties = " not in text
    digest = result.stdout.splitlines()[2].removeprefix("digest: ")
    again = parse_policy(text.encode(), "pasted")
    assert again.digest == digest
    assert [p.seeds for p in again.judge.properties] == [(5, 6), (3, 17)]
    (work.path / "pasted.toml").write_text(text)
    pasted = evidence(work.path, "policy", "--policy", "pasted.toml")
    assert pasted.stdout.splitlines()[1] == f"digest: {digest}"


def test_the_defaults_print_as_toml_that_parses_back(tmp_path: Path) -> None:
    work = Work(tmp_path / "fresh")
    git(tmp_path, "init", "-q", str(work.path))
    work.commit("product", {"src/app.py": "x\n"})
    result = evidence(work.path, "policy")
    digest = result.stdout.splitlines()[2].removeprefix("digest: ")
    assert parse_policy(toml_of(result.stdout).encode(), "pasted").digest == digest
    assert "proposals = true" in result.stdout
    assert "# reviewers: the evidence writers (unless listed)" in result.stdout


@pytest.mark.parametrize("command", ["check", "verify", "lock", "split"])
def test_every_policy_reading_command_says_draft(newcomer: Work, command: str) -> None:
    result = evidence(newcomer.path, command, "--policy", "draft.toml")
    said = " ".join((result.stdout + result.stderr).split())
    assert "draft policy draft.toml (not in force)" in said, said


@pytest.mark.parametrize("hook", ["pre-commit", "pre-push", "pre-receive", "post-receive"])
def test_no_hook_takes_a_draft_policy(newcomer: Work, hook: str) -> None:
    result = evidence(newcomer.path, hook, "--policy", "draft.toml")
    assert result.returncode == 2
    assert "unrecognized arguments: --policy" in result.stderr


def test_check_with_a_draft_judges_by_it(newcomer: Work) -> None:
    newcomer.commit("fix and golden", {"src/app.py": "fixed\n", GOLDEN: "# moved\n"})
    in_force = evidence(newcomer.path, "check", "origin/main..HEAD", "--as", "agent-bot")
    assert "mixed-commit" not in in_force.stdout  # tests/data is test code under the seed
    drafted = evidence(
        newcomer.path, "check", "origin/main..HEAD", "--as", "agent-bot", "--policy", "draft.toml"
    )
    assert drafted.returncode == 1
    assert "mixed-commit: " in drafted.stdout


# -- a lock of roots that hold nothing ----------------------------------------------------


def test_lock_of_a_tree_with_nothing_under_its_roots_warns_and_names_them(
    tmp_path: Path,
) -> None:
    work = Work(tmp_path / "black")
    git(tmp_path, "init", "-q", str(work.path))
    work.commit("layout", {"src/black.py": "x\n", GOLDEN: "# comment\n"})
    result = evidence(work.path, "lock")
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stderr.split())
    assert "warning: the lock pins no file: nothing is under its roots (tests/fixtures, " in said
    assert "set [lock].roots" in said
    verified = evidence(work.path, "verify", "--base", "HEAD")
    assert "warning: the lock pins no file" in " ".join(verified.stdout.split())
    doc = json.loads(evidence(work.path, "lock", "--format", "json").stdout)
    assert doc["files"] == 0 and doc["warnings"]


def test_lock_names_a_root_that_does_not_exist(tmp_path: Path) -> None:
    work = Work(tmp_path / "w")
    git(tmp_path, "init", "-q", str(work.path))
    work.commit("layout", {"tests/fixtures/a.json": "{}\n"})
    result = evidence(work.path, "lock")
    said = " ".join(result.stderr.split())
    assert "lock root(s) tests/goldens, testdata, tests/properties do not exist" in said


def test_lock_with_a_draft_pins_the_draft_roots(newcomer: Work) -> None:
    result = evidence(newcomer.path, "lock", "--policy", "draft.toml")
    assert result.returncode == 0, result.stderr
    assert "(1 files under tests/data)" in result.stdout
    assert "warning" not in result.stderr
