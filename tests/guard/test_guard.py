"""`git evidence guard` end to end: real repositories, real pre-tool-use events on
stdin, the policy read where the client hooks read it, and the hook Claude Code runs
from `.claude/settings.json`, started as it starts it (bash, the event on stdin)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.agent import hooks
from helpers.guard_cases import DENIED, PASSED
from helpers.repos import Work, evidence, evidence_process, git

from git_evidence.plumbing import policy_cache
from git_evidence.plumbing.context import policy_at
from git_evidence.plumbing.git import Git
from git_evidence.policy.parsing import parse_policy

READ_ONLY = "the evidence path is read-only for this session"


@pytest.fixture(autouse=True)
def outside_any_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite may itself run under an agent: its project is not the one judged."""
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("GEMINI_PROJECT_DIR", raising=False)


def event(tool: str, cwd: Path | str, **tool_input: object) -> bytes:
    """A PreToolUse event as Claude Code sends it."""
    return json.dumps(
        {
            "session_id": "0b6c7c5e",
            "transcript_path": "/home/agent/.claude/projects/p/0b6c7c5e.jsonl",
            "cwd": str(cwd),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": "toolu_01",
        }
    ).encode()


def guard(
    cwd: Path | str, data: bytes, *args: str, process: bool = False, **kw: object
) -> subprocess.CompletedProcess[str]:
    run = evidence_process if process else evidence
    return run(cwd, "guard", *args, input=data, **kw)  # type: ignore[arg-type]


def denied(result: subprocess.CompletedProcess[str], rule: str, path: str, klass: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    (line,) = result.stderr.splitlines()
    assert line.startswith(f"git-evidence: {rule}: {path}: class {klass}"), line
    assert READ_ONLY in line


def allowed(result: subprocess.CompletedProcess[str]) -> None:
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


# -- the file tools -------------------------------------------------------------------


def test_write_of_a_fixture_by_absolute_path_is_denied(work: Work) -> None:
    target = work.path / "tests" / "fixtures" / "a.json"
    result = guard(work.path, event("Write", work.path, file_path=str(target), content="{}"))
    denied(result, "evidence-untrusted", "tests/fixtures/a.json", "fixture")
    assert result.stderr == (
        "git-evidence: evidence-untrusted: tests/fixtures/a.json: class fixture (Write): "
        f"{READ_ONLY}; leave it as it is: an evidence writer changes evidence, in a commit "
        "of its own\n"
    )
    assert target.read_text() == '{"a": 1}\n'


def test_relative_path_is_taken_from_the_events_cwd(work: Work) -> None:
    (work.path / "src").mkdir(exist_ok=True)
    data = event("Edit", work.path / "src", file_path="../tests/goldens/out.txt")
    denied(guard(work.path, data), "evidence-untrusted", "tests/goldens/out.txt", "fixture")


def test_dot_dot_inside_the_path_is_normalised(work: Work) -> None:
    path = f"{work.path}/src/../docs/../tests/fixtures/./b.json"
    data = event("Write", work.path, file_path=path, content="x")
    denied(guard(work.path, data), "evidence-untrusted", "tests/fixtures/b.json", "fixture")


def test_symlinked_directory_into_the_fixtures_is_a_fixture_write(work: Work) -> None:
    os.symlink("tests/fixtures", work.path / "data")
    data = event("Write", work.path, file_path=str(work.path / "data" / "a.json"), content="x")
    denied(guard(work.path, data), "evidence-untrusted", "tests/fixtures/a.json", "fixture")


def test_symlinked_file_onto_a_golden_is_a_golden_write(work: Work) -> None:
    os.symlink("../tests/goldens/out.txt", work.path / "docs" / "notes.txt")
    data = event("Edit", work.path, file_path=str(work.path / "docs" / "notes.txt"))
    denied(guard(work.path, data), "evidence-untrusted", "tests/goldens/out.txt", "fixture")


def test_hard_link_to_a_fixture_is_a_fixture_write(work: Work) -> None:
    os.link(work.path / "tests" / "fixtures" / "a.json", work.path / "src" / "data.json")
    data = event("Write", work.path, file_path=str(work.path / "src" / "data.json"), content="x")
    denied(guard(work.path, data), "evidence-untrusted", "tests/fixtures/a.json", "fixture")
    shell = event("Bash", work.path, command="echo x > src/data.json")
    denied(guard(work.path, shell), "evidence-untrusted", "tests/fixtures/a.json", "fixture")


def test_a_file_with_two_product_names_is_allowed(work: Work) -> None:
    os.link(work.path / "src" / "app.py", work.path / "src" / "again.py")
    allowed(guard(work.path, event("Write", work.path, file_path="src/again.py", content="x")))


def test_symlink_out_of_the_repository_is_judged_where_it_leads(work: Work, tmp_path: Path) -> None:
    outside = tmp_path / "scratch"
    outside.mkdir()
    os.symlink(outside, work.path / "tests" / "fixtures" / "scratch")
    data = event("Write", work.path, file_path="tests/fixtures/scratch/x.json", content="x")
    allowed(guard(work.path, data))


def test_path_outside_the_repository_is_allowed_in_silence(work: Work, tmp_path: Path) -> None:
    data = event("Write", work.path, file_path=str(tmp_path / "tests/fixtures/a.json"))
    allowed(guard(work.path, data))


def test_case_folded_name_of_a_fixture_is_denied(work: Work) -> None:
    data = event("Write", work.path, file_path="Tests/FIXTURES/A.json", content="x")
    denied(guard(work.path, data), "evidence-untrusted", "Tests/FIXTURES/A.json", "fixture")


def test_multiedit_of_an_existing_test_is_denied(work: Work) -> None:
    data = event(
        "MultiEdit",
        work.path,
        file_path=str(work.path / "tests" / "test_app.py"),
        edits=[
            {"old_string": "pass", "new_string": "assert True"},
            {"old_string": "def", "new_string": "def", "replace_all": True},
        ],
    )
    denied(guard(work.path, data), "test-edit", "tests/test_app.py", "test")


def test_multiedit_of_product_code_is_allowed(work: Work) -> None:
    data = event(
        "MultiEdit",
        work.path,
        file_path=str(work.path / "src" / "app.py"),
        edits=[
            {"old_string": "hello", "new_string": "bye"},
            {"old_string": "(", "new_string": "("},
        ],
    )
    allowed(guard(work.path, data))


def test_notebook_edit_under_the_fixtures_is_denied(work: Work) -> None:
    data = event(
        "NotebookEdit",
        work.path,
        notebook_path=str(work.path / "tests" / "fixtures" / "analysis.ipynb"),
        cell_id="c1",
        new_source="print(1)",
        edit_mode="replace",
    )
    denied(guard(work.path, data), "evidence-untrusted", "tests/fixtures/analysis.ipynb", "fixture")


def test_notebook_edit_of_a_product_notebook_is_allowed(work: Work) -> None:
    data = event("NotebookEdit", work.path, notebook_path=str(work.path / "src" / "nb.ipynb"))
    allowed(guard(work.path, data))


def test_new_test_file_is_allowed_and_stays_editable(work: Work) -> None:
    path = str(work.path / "tests" / "test_new.py")
    allowed(guard(work.path, event("Write", work.path, file_path=path, content="def test(): 1")))
    work.write("tests/test_new.py", "def test(): 1\n")  # the agent wrote it
    allowed(guard(work.path, event("Edit", work.path, file_path=path)))


def test_test_file_committed_on_the_branch_is_existing_test_code(work: Work) -> None:
    work.commit("a new test", {"tests/test_new.py": "def test_new():\n    pass\n"})
    data = event("Edit", work.path, file_path="tests/test_new.py")
    denied(guard(work.path, data), "test-edit", "tests/test_new.py", "test")


def test_test_file_of_the_base_is_existing_test_code_even_when_head_dropped_it(
    work: Work,
) -> None:
    work.commit("drop the test", remove=("tests/test_app.py",))
    data = event("Write", work.path, file_path="tests/test_app.py", content="def test(): 1")
    denied(guard(work.path, data), "test-edit", "tests/test_app.py", "test")


@pytest.mark.parametrize(
    "path",
    ["conftest.py", "tests/conftest.py", "pyproject.toml", "src/sitecustomize.py", "tox.ini"],
)
def test_runner_configuration_is_denied(work: Work, path: str) -> None:
    data = event("Write", work.path, file_path=path, content="x")
    denied(guard(work.path, data), "other-path", path, "other")


@pytest.mark.parametrize("path", [".git-evidence.toml", ".gitattributes", "tests/freeze.jsonl"])
def test_policy_and_ledger_files_are_denied(work: Work, path: str) -> None:
    klass = "freeze_ledger" if path.endswith(".jsonl") else "policy"
    denied(
        guard(work.path, event("Edit", work.path, file_path=path)),
        "evidence-untrusted",
        path,
        klass,
    )


@pytest.mark.parametrize("path", ["src/app.py", "docs/guide.md", "README.md", "Makefile"])
def test_product_neutral_and_other_paths_are_allowed_in_silence(work: Work, path: str) -> None:
    allowed(guard(work.path, event("Write", work.path, file_path=path, content="x")))


def test_json_deny_is_claude_codes_answer_on_stdout_and_exit_0(work: Work) -> None:
    data = event("Write", work.path, file_path="tests/fixtures/a.json", content="x")
    result = guard(work.path, data, "--json")
    assert (result.returncode, result.stderr) == (0, "")
    doc = json.loads(result.stdout)
    reason = doc["hookSpecificOutput"].pop("permissionDecisionReason")
    assert doc == {
        "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny"}
    }
    assert reason.startswith("git-evidence: evidence-untrusted: tests/fixtures/a.json: class")
    assert guard(work.path, data, "--format", "json").stdout == result.stdout


def test_json_allow_prints_nothing(work: Work) -> None:
    allowed(guard(work.path, event("Write", work.path, file_path="src/a.py"), "--json"))


@pytest.mark.parametrize("tool", ["Read", "Glob", "Grep", "LS", "mcp__files__read_file", "Task"])
def test_tool_that_writes_no_file_is_allowed_whatever_it_names(work: Work, tool: str) -> None:
    data = event(tool, work.path, file_path="tests/fixtures/a.json", pattern="tests/**")
    allowed(guard(work.path, data))


# -- any agent: --path ----------------------------------------------------------------


def test_path_option_denies_as_the_event_would(work: Work) -> None:
    result = evidence(work.path, "guard", "--path", "src/app.py", "tests/fixtures/a.json")
    denied(result, "evidence-untrusted", "tests/fixtures/a.json", "fixture")
    assert "(--path)" in result.stderr


def test_path_option_is_relative_to_the_current_directory(work: Work) -> None:
    result = evidence(work.path / "tests", "guard", "--path", "test_app.py")
    denied(result, "test-edit", "tests/test_app.py", "test")
    allowed(evidence(work.path / "tests", "guard", "--path", "../src/app.py", "test_new.py"))


# -- bad input, no repository, no policy ------------------------------------------------


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"", "no hook event on stdin"),
        (b"not json", "the hook event on stdin is not JSON"),
        (b'["Write"]', "not a JSON object"),
        (b'{"tool_input": {}}', "names no tool"),
        (b'{"tool_name": "Write", "tool_input": {"content": "x"}}', "has no `file_path`"),
        (b'{"hook_event_name": "PostToolUse", "tool_name": "Write"}', "not one before a tool"),
    ],
)
def test_malformed_input_is_one_line_and_exit_2(work: Work, data: bytes, says: str) -> None:
    result = guard(work.path, data, process=True)
    assert result.returncode == 2
    (line,) = result.stderr.splitlines()
    assert line.startswith("git-evidence: usage-error: ") and says in line, line
    assert "Traceback" not in result.stderr


def test_malformed_input_with_json_is_still_exit_2_and_a_line_on_stderr(work: Work) -> None:
    result = guard(work.path, b"{", "--json")
    assert (result.returncode, result.stdout) == (2, "")
    (line,) = result.stderr.splitlines()
    assert line.startswith("git-evidence: usage-error: the hook event on stdin is not JSON")
    shaped = guard(work.path, b"{", "--format", "json")
    assert (shaped.returncode, shaped.stdout) == (2, "")
    assert json.loads(shaped.stderr)["error"]["rule"] == "usage-error"


def test_outside_any_repository_nothing_is_evidence(tmp_path: Path) -> None:
    loose = tmp_path / "scratch"
    (loose / "tests" / "fixtures").mkdir(parents=True)
    data = event("Write", loose, file_path="tests/fixtures/a.json", content="x")
    allowed(guard(loose, data))
    allowed(guard(loose, event("Bash", loose, command="rm -rf tests")))


def test_repository_without_a_policy_file_is_guarded_by_the_defaults(tmp_path: Path) -> None:
    repo = tmp_path / "plain"
    git(tmp_path, "init", "-q", str(repo))
    plain = Work(repo)
    plain.commit("seed", {"tests/fixtures/x.json": "{}\n", "tests/test_x.py": "def test(): 1\n"})
    denied(
        guard(repo, event("Edit", repo, file_path="tests/fixtures/x.json")),
        "evidence-untrusted",
        "tests/fixtures/x.json",
        "fixture",
    )
    denied(
        guard(repo, event("Edit", repo, file_path="tests/test_x.py")),
        "test-edit",
        "tests/test_x.py",
        "test",
    )


def test_repository_without_a_commit_is_guarded_by_the_defaults(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    git(tmp_path, "init", "-q", str(repo))
    data = event("Write", repo, file_path="testdata/x.bin", content="x")
    denied(guard(repo, data), "evidence-untrusted", "testdata/x.bin", "fixture")
    allowed(guard(repo, event("Write", repo, file_path="tests/test_first.py")))


def test_loosening_the_policy_in_the_working_tree_changes_nothing(work: Work) -> None:
    loose = (
        '[paths]\nfixture = []\ntest = []\n[rules]\ntest_edit = "allow"\n'
        'other_path = "allow"\n[lock]\nroots = ["nothing"]\n'
    )
    work.write(".git-evidence.toml", loose)
    data = event("Write", work.path, file_path="tests/fixtures/a.json", content="x")
    denied(guard(work.path, data), "evidence-untrusted", "tests/fixtures/a.json", "fixture")
    work.commit("loosen the policy on this branch", {".git-evidence.toml": loose})
    denied(guard(work.path, data), "evidence-untrusted", "tests/fixtures/a.json", "fixture")
    denied(
        guard(work.path, event("Edit", work.path, file_path="tests/test_app.py")),
        "test-edit",
        "tests/test_app.py",
        "test",
    )


def test_without_a_remote_the_local_main_policy_is_the_one_in_force(tmp_path: Path) -> None:
    repo = tmp_path / "local"
    git(tmp_path, "init", "-q", str(repo))
    local = Work(repo)
    local.commit("strict", {".git-evidence.toml": '[paths]\nfixture = ["data/**"]\n'})
    local.git("checkout", "-q", "-b", "agent")
    local.commit("loosen on the agent's branch", {".git-evidence.toml": "[paths]\nfixture = []\n"})
    data = event("Write", repo, file_path="data/x.csv", content="x")
    denied(guard(repo, data), "evidence-untrusted", "data/x.csv", "fixture")


def test_without_any_main_the_policy_of_head_is_the_one_in_force(tmp_path: Path) -> None:
    repo = tmp_path / "trunk"
    git(tmp_path, "init", "-q", "-b", "trunk", str(repo))
    Work(repo).commit("policy", {".git-evidence.toml": '[paths]\nfixture = ["data/**"]\n'})
    data = event("Write", repo, file_path="data/x.csv", content="x")
    denied(guard(repo, data), "evidence-untrusted", "data/x.csv", "fixture")


def test_a_base_that_names_another_base_branch_is_read_there(work: Work) -> None:
    work.git("checkout", "-q", "-b", "release")
    work.commit(
        "release policy",
        {
            ".git-evidence.toml": '[paths]\nfixture = ["data/**"]\n'
            '[rules]\nbase = "refs/heads/release"\n'
            'protected = ["refs/heads/main", "refs/heads/release"]\n'
        },
    )
    work.git("checkout", "-q", "main")
    work.commit(
        "main names release",
        {
            ".git-evidence.toml": '[rules]\nbase = "refs/heads/release"\n'
            'protected = ["refs/heads/main", "refs/heads/release"]\n'
        },
    )
    work.git("update-ref", "refs/remotes/origin/main", "HEAD")
    data = event("Write", work.path, file_path="data/x.csv", content="x")
    denied(guard(work.path, data), "evidence-untrusted", "data/x.csv", "fixture")


def test_a_sealed_policy_is_the_one_in_force(work: Work, tmp_path: Path) -> None:
    sealed = tmp_path / "sealed.toml"
    sealed.write_text('[paths]\nfixture = ["data/**"]\n')
    work.git("config", "evidence.policyFile", str(sealed))
    denied(
        guard(work.path, event("Write", work.path, file_path="data/x.csv")),
        "evidence-untrusted",
        "data/x.csv",
        "fixture",
    )


def test_a_base_policy_that_does_not_parse_denies_every_write(work: Work, server: Path) -> None:
    work.commit("break the policy", {".git-evidence.toml": "[paths\n"})
    work.git("update-ref", "refs/remotes/origin/main", "HEAD")
    result = guard(work.path, event("Write", work.path, file_path="src/app.py"))
    assert result.returncode == 2
    assert result.stderr.startswith("git-evidence: policy-error: base:.git-evidence.toml:1:")
    allowed(guard(work.path, event("Read", work.path, file_path="src/app.py")))


def test_the_project_claude_names_is_guarded_whatever_the_agents_cwd(
    work: Work, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = str(work.path / "tests" / "fixtures" / "a.json")
    data = event("Write", elsewhere, file_path=target, content="x")
    allowed(guard(elsewhere, data))  # outside any repository: nothing to guard
    result = guard(elsewhere, data, env={"CLAUDE_PROJECT_DIR": str(work.path)})
    denied(result, "evidence-untrusted", "tests/fixtures/a.json", "fixture")
    assert guard(elsewhere, data, "--repo", str(work.path)).returncode == 2


def test_a_gemini_cli_event_is_judged_in_the_project_gemini_names(
    work: Work, tmp_path: Path
) -> None:
    data = json.dumps(
        {
            "session_id": "g",
            "transcript_path": "/t.json",
            "cwd": str(tmp_path),
            "hook_event_name": "BeforeTool",
            "timestamp": "2026-01-01T00:00:00.000Z",
            "tool_name": "replace",
            "tool_input": {
                "file_path": str(work.path / "tests" / "goldens" / "out.txt"),
                "old_string": "golden",
                "new_string": "whatever the code prints",
            },
        }
    ).encode()
    result = guard(tmp_path, data, env={"GEMINI_PROJECT_DIR": str(work.path)})
    denied(result, "evidence-untrusted", "tests/goldens/out.txt", "fixture")
    shell = json.dumps(
        {
            "hook_event_name": "BeforeTool",
            "cwd": str(work.path),
            "tool_name": "run_shell_command",
            "tool_input": {"command": "rm a.json", "dir_path": "tests/fixtures"},
        }
    ).encode()
    denied(guard(work.path, shell), "evidence-untrusted", "tests/fixtures/a.json", "fixture")


# -- the shell ------------------------------------------------------------------------


@pytest.fixture
def shell_work(work: Work) -> Work:
    work.write("new.txt", "new\n")
    (work.path / "tmp-unused").mkdir()
    return work


@pytest.mark.parametrize(("command", "path"), DENIED, ids=[c for c, _ in DENIED])
def test_bash_command_writing_evidence_is_denied(shell_work: Work, command: str, path: str) -> None:
    result = guard(shell_work.path, event("Bash", shell_work.path, command=command))
    assert result.returncode == 2, (command, result.stderr)
    (line,) = result.stderr.splitlines()
    assert line.startswith("git-evidence: "), line
    assert f": {path or '.'}: class " in line and READ_ONLY in line, line


@pytest.mark.parametrize("command", PASSED)
def test_bash_command_reading_evidence_passes(shell_work: Work, command: str) -> None:
    allowed(guard(shell_work.path, event("Bash", shell_work.path, command=command)))


def test_bash_glob_is_expanded_as_the_shell_would(work: Work) -> None:
    result = guard(work.path, event("Bash", work.path, command="rm tests/*/a.json"))
    denied(result, "evidence-untrusted", "tests/fixtures/a.json", "fixture")
    allowed(guard(work.path, event("Bash", work.path, command="rm docs/*.md src/*.nothing")))


def test_bash_cd_then_relative_write_lands_in_the_fixtures(work: Work) -> None:
    command = "cd tests/fixtures && sed -i 's/1/2/' a.json"
    denied(
        guard(work.path / "docs", event("Bash", work.path, command=command)),
        "evidence-untrusted",
        "tests/fixtures/a.json",
        "fixture",
    )


def test_bash_from_a_subdirectory_is_read_from_it(work: Work) -> None:
    data = event("Bash", work.path / "tests", command="echo x > fixtures/a.json")
    denied(guard(work.path, data), "evidence-untrusted", "tests/fixtures/a.json", "fixture")
    allowed(guard(work.path, event("Bash", work.path / "tests", command="echo x > ../src/b.py")))


# -- installed as Claude Code installs it ---------------------------------------------


def _agent_env() -> dict[str, str]:
    """Claude Code's environment for a hook: git evidence on the PATH (the console
    script next to this interpreter)."""
    bin_dir = os.path.dirname(sys.executable)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


@pytest.mark.skipif(shutil.which("bash") is None, reason="Claude Code runs its hooks with bash")
def test_the_installed_hook_denies_as_claude_code_runs_it(work: Work) -> None:
    assert evidence(work.path, "install", "--agent", "claude").returncode == 0
    env = _agent_env()
    deny = event("Bash", work.path, command="sed -i 's/1/2/' tests/fixtures/a.json")
    (run,) = hooks(work, deny, env)
    assert run.returncode == 2
    assert run.stderr.startswith("git-evidence: evidence-untrusted: tests/fixtures/a.json")
    (run,) = hooks(work, event("Edit", work.path, file_path=str(work.path / "src/app.py")), env)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")
    assert hooks(work, event("Read", work.path, file_path="tests/fixtures/a.json"), env) == []


@pytest.mark.skipif(shutil.which("bash") is None, reason="Claude Code runs its hooks with bash")
def test_the_installed_hook_fails_closed_when_git_evidence_is_missing(
    work: Work, tmp_path: Path
) -> None:
    assert evidence(work.path, "install", "--agent", "claude").returncode == 0
    bare_path = tmp_path / "bin"
    bare_path.mkdir()
    os.symlink(shutil.which("git") or "git", bare_path / "git")  # git, and no git-evidence
    data = event("Edit", work.path, file_path=str(work.path / "src/app.py"))
    (run,) = hooks(work, data, {"PATH": str(bare_path)})
    assert run.returncode == 2
    assert "evidence" in run.stderr


# -- install --agent claude -----------------------------------------------------------


def test_install_agent_twice_adds_nothing_the_second_time(work: Work) -> None:
    settings = work.path / ".claude" / "settings.json"
    settings.parent.mkdir()
    own = {
        "permissions": {"allow": ["Bash(pytest:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}]
        },
    }
    settings.write_text(json.dumps(own))
    first = evidence(work.path, "install", "--agent", "claude")
    assert first.returncode == 0, first.stderr
    assert "runs `git evidence guard` before each tool call" in first.stdout
    after_first = settings.read_bytes()
    second = evidence(work.path, "install", "--agent", "claude")
    assert second.returncode == 0
    assert "runs the guard already; nothing changed" in second.stdout
    assert settings.read_bytes() == after_first
    doc = json.loads(after_first)
    assert doc["permissions"] == own["permissions"]
    assert doc["hooks"]["PreToolUse"][0] == own["hooks"]["PreToolUse"][0]  # type: ignore[index]
    assert doc["hooks"]["PreToolUse"][1]["matcher"] == "Write|Edit|MultiEdit|NotebookEdit|Bash"


def test_install_agent_dry_run_prints_the_merged_file_and_writes_nothing(work: Work) -> None:
    result = evidence(work.path, "install", "--agent", "claude", "--dry-run")
    assert result.returncode == 0, result.stderr
    (hook,) = json.loads(result.stdout)["hooks"]["PreToolUse"][0]["hooks"]
    assert hook["type"] == "command"
    digest = "sha256:[0-9a-f]{64}"
    pinned = rf"git evidence guard --pinned={digest},{digest} \|\| exit 2"
    assert re.fullmatch(pinned, hook["command"]), hook["command"]
    assert not (work.path / ".claude").exists()
    assert not (work.path / ".git" / "git-evidence" / "guard-policy.toml").exists()
    doc = json.loads(
        evidence(work.path, "install", "--agent", "claude", "--dry-run", "--format", "json").stdout
    )
    assert doc == {
        "agent": "claude",
        "settings": str(work.path / ".claude" / "settings.json"),
        "changed": True,
        "written": False,
        "dry_run": True,
    }


def test_install_agent_into_malformed_settings_names_the_file_and_writes_nothing(
    work: Work,
) -> None:
    settings = work.path / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{"hooks": {"PreToolUse": [}')
    result = evidence(work.path, "install", "--agent", "claude")
    assert result.returncode == 2
    assert result.stderr.startswith(f"git-evidence: usage-error: {settings}: not valid JSON")
    assert "nothing was written" in result.stderr
    assert settings.read_text() == '{"hooks": {"PreToolUse": [}'


def test_install_agent_writes_no_git_hook(work: Work) -> None:
    assert evidence(work.path, "install", "--agent", "claude").returncode == 0
    assert not (work.path / ".git" / "hooks" / "pre-commit").exists()


def test_install_agent_with_server_is_a_usage_error(work: Work) -> None:
    result = evidence(work.path, "install", "--agent", "claude", "--server")
    assert result.returncode == 2
    assert "--agent guards an agent's session in a work tree" in result.stderr


# -- what it costs ----------------------------------------------------------------------


def _counting_git(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A PATH whose `git` logs each start, then runs the real git."""
    real = shutil.which("git")
    assert real
    shim_dir = tmp_path / "count-bin"
    shim_dir.mkdir()
    log = tmp_path / "git-starts.log"
    shim = shim_dir / "git"
    shim.write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    shim.chmod(0o755)
    return {"PATH": f"{shim_dir}{os.pathsep}{os.environ['PATH']}"}, log


def _git_starts(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def test_a_call_that_writes_nothing_starts_no_git(work: Work, tmp_path: Path) -> None:
    env, log = _counting_git(tmp_path)
    allowed(guard(work.path, event("Bash", work.path, command="pytest tests/ -q"), env=env))
    allowed(guard(work.path, event("Read", work.path, file_path="tests/fixtures/a.json"), env=env))
    assert _git_starts(log) == []


def test_a_file_write_starts_three_gits_and_a_test_path_one_more(
    work: Work, tmp_path: Path
) -> None:
    env, log = _counting_git(tmp_path)
    allowed(guard(work.path, event("Write", work.path, file_path="src/new.py"), env=env))
    assert len(_git_starts(log)) <= 3, _git_starts(log)
    log.unlink()
    denied(
        guard(work.path, event("Edit", work.path, file_path="tests/test_app.py"), env=env),
        "test-edit",
        "tests/test_app.py",
        "test",
    )
    assert len(_git_starts(log)) <= 4, _git_starts(log)


def test_started_by_hand_on_a_terminal_it_says_how_to_name_paths(work: Work) -> None:
    import pty

    controller, terminal = pty.openpty()
    try:
        result = subprocess.run(
            [sys.executable, "-m", "git_evidence", "guard"],
            cwd=work.path,
            stdin=terminal,
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
    finally:
        os.close(controller)
        os.close(terminal)
    assert result.returncode == 2
    assert result.stderr.startswith(
        "git-evidence: usage-error: guard reads one hook event on stdin"
    )
    assert "git evidence guard --path" in result.stderr


def test_install_agent_writes_through_a_settings_file_that_is_a_link(
    work: Work, tmp_path: Path
) -> None:
    shared = tmp_path / "shared-settings.json"
    shared.write_text('{"model": "opus"}\n')
    (work.path / ".claude").mkdir()
    os.symlink(shared, work.path / ".claude" / "settings.json")
    assert evidence(work.path, "install", "--agent", "claude").returncode == 0
    assert (work.path / ".claude" / "settings.json").is_symlink()
    assert json.loads(shared.read_text())["model"] == "opus"
    assert "PreToolUse" in json.loads(shared.read_text())["hooks"]


def test_install_dry_run_without_agent_installs_nothing(work: Work) -> None:
    result = evidence(work.path, "install", "--dry-run")
    assert result.returncode == 0, result.stderr  # it says what it would write
    assert not (work.path / ".git" / "hooks" / "pre-commit").exists()


# -- the policy cache: never the guard's ------------------------------------------------
# The guard never takes the policy from the cache in the git directory: the agent it
# judges can write there (a shell command, a script), and a planted entry naming the
# policy's blob would otherwise turn the guard's policy into one of the agent's.

# Everything is product, nothing is locked: a fixture write would be allowed under it.
PERMISSIVE = b'[paths]\nproduct = ["**"]\nfixture = []\n\n[lock]\nroots = []\n'


def _plant(work: Work) -> str:
    """A cache entry that today's parser would write, with the agent's policy in it,
    under the blob id of the policy the guard reads (origin's main)."""
    rev = work.git("rev-parse", "refs/remotes/origin/main").stdout.strip()
    blob = work.git("rev-parse", f"{rev}:.git-evidence.toml").stdout.strip()
    planted = parse_policy(PERMISSIVE, "base:.git-evidence.toml")
    entry = work.path / ".git" / "git-evidence" / policy_cache.CACHE_DIR / blob
    entry.parent.mkdir(parents=True, exist_ok=True)
    data = policy_cache.entry_bytes(planted)
    assert data is not None
    entry.write_bytes(data)
    return rev


def test_a_planted_policy_cache_entry_does_not_open_the_fixtures_to_the_guard(
    work: Work,
) -> None:
    target = work.path / "tests" / "fixtures" / "a.json"
    write = event("Write", work.path, file_path=str(target), content="{}")
    denied(guard(work.path, write), "evidence-untrusted", "tests/fixtures/a.json", "fixture")
    rev = _plant(work)
    # the entry is one a cached reader takes: the attack is real for it...
    assert policy_at(Git(cwd=str(work.path)), rev).lock_roots == ()
    # ...and the guard reads the committed file instead
    denied(guard(work.path, write), "evidence-untrusted", "tests/fixtures/a.json", "fixture")


def test_the_guard_writes_no_policy_cache_entry(work: Work) -> None:
    guard(work.path, event("Write", work.path, file_path="src/new.py", content="x"))
    assert not (work.path / ".git" / "git-evidence" / policy_cache.CACHE_DIR).exists()
