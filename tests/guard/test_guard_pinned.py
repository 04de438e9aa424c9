"""The installed guard holds against an agent that moves where the guard reads its
policy, or switches the guard off: each attack driven as the agent drives it, one
PreToolUse event after another on stdin to the hook `install --agent claude` wrote,
run as Claude Code runs it. Where the attack is a sequence, the loosening step is
tried through the guard (denied), then done behind its back, and the write that
would profit from it is tried (still denied)."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from helpers.agent import agent_env, bash, decide, event, hooks, install
from helpers.guard_cases import PASSED
from helpers.repos import Work, git

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="the hook runs in bash")

LOOSE = '[paths]\nproduct = ["**"]\nfixture = []\n\n[lock]\nroots = []\n'
PIN = Path(".git") / "git-evidence" / "guard-policy.toml"


@pytest.fixture(autouse=True)
def outside_any_agent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    monkeypatch.delenv("GEMINI_PROJECT_DIR", raising=False)


@pytest.fixture
def guarded(work: Work) -> Work:
    install(work)
    return work


def fixture_write(work: Work) -> bytes:
    target = work.path / "tests" / "fixtures" / "a.json"
    return event("Write", work.path, file_path=str(target), content="{}")


def denied(work: Work, data: bytes, says: str = "", env: dict[str, str] | None = None) -> str:
    run = decide(work, data, env)
    assert run.returncode == 2, (data, run.stdout, run.stderr)
    assert run.stderr.startswith("git-evidence: "), run.stderr
    assert says in run.stderr, run.stderr
    return run.stderr


def allowed(work: Work, data: bytes, env: dict[str, str] | None = None) -> None:
    run = decide(work, data, env)
    assert (run.returncode, run.stdout, run.stderr) == (0, "", ""), data


# -- a policy the agent cannot move ------------------------------------------------


def test_git_config_policy_file_then_fixture_write_stays_denied(
    guarded: Work, tmp_path: Path
) -> None:
    loose = tmp_path / "loose.toml"
    loose.write_text(LOOSE)
    denied(guarded, bash(guarded, f"git config evidence.policyFile {loose}"), "guard-control")
    guarded.git("config", "evidence.policyFile", str(loose))  # done behind the guard's back
    denied(guarded, fixture_write(guarded), "evidence-untrusted: tests/fixtures/a.json")


def test_include_path_in_git_config_then_fixture_write_stays_denied(
    guarded: Work, tmp_path: Path
) -> None:
    included = tmp_path / "loose.cfg"
    included.write_text(f"[evidence]\n\tpolicyFile = {tmp_path / 'loose.toml'}\n")
    (tmp_path / "loose.toml").write_text(LOOSE)
    denied(guarded, bash(guarded, f"git config --add include.path {included}"), "guard-control")
    append = f"printf '[include]\\n\\tpath = {included}\\n' >> .git/config"
    denied(guarded, bash(guarded, append), ".git/config")
    denied(guarded, event("Edit", guarded.path, file_path=".git/config"), ".git/config")
    guarded.git("config", "--add", "include.path", str(included))
    denied(guarded, fixture_write(guarded), "evidence-untrusted: tests/fixtures/a.json")


def test_committed_loose_policy_and_moved_remote_ref_leave_the_fixtures_closed(
    guarded: Work,
) -> None:
    steps = [
        "git hash-object -w /tmp/loose.toml",
        "git update-index --cacheinfo 100644,0123,.git-evidence.toml",
        "git commit -m loosen",
    ]
    for step in steps:  # each is allowed: none writes a file the guard reads
        allowed(guarded, bash(guarded, step))
    denied(guarded, bash(guarded, "git update-ref refs/remotes/origin/main HEAD"), "update-ref")
    guarded.commit("loosen", {".git-evidence.toml": LOOSE})  # behind the guard's back
    guarded.git("update-ref", "refs/remotes/origin/main", "HEAD")
    guarded.git("update-ref", "refs/heads/main", "HEAD")
    denied(guarded, fixture_write(guarded), "evidence-untrusted: tests/fixtures/a.json")


@pytest.mark.parametrize(
    "command",
    [
        "git evidence install --agent claude",
        "git-evidence install --agent claude",
        "python -m git_evidence install --agent claude",
        'cd /tmp && git -C "$CLAUDE_PROJECT_DIR" evidence install --agent claude',
    ],
)
def test_the_agent_refreshing_its_own_pin_is_denied(guarded: Work, command: str) -> None:
    denied(guarded, bash(guarded, command), "git evidence install")


@pytest.mark.parametrize(
    ("command", "how"),
    [
        ("git notes --ref=evidence add -f -m forged HEAD", "git notes"),
        ("GIT_NOTES_REF=refs/notes/evidence git notes remove HEAD", "git notes"),
        ("git evidence lock HEAD", "git evidence lock"),
        ("git evidence freeze add --test tests/test_app.py::test_app --runs 3", "freeze add"),
    ],
)
def test_the_agent_writing_the_lock_note_or_a_freeze_is_denied(
    guarded: Work, command: str, how: str
) -> None:
    denied(guarded, bash(guarded, command), how)


def test_a_deleted_pinned_policy_fails_closed(guarded: Work, tmp_path: Path) -> None:
    (guarded.path / PIN).unlink()
    said = denied(guarded, event("Write", guarded.path, file_path="src/new.py"), "policy-error")
    assert "cannot be read" in said and "git evidence install --agent claude" in said
    allowed(guarded, bash(guarded, "cat tests/fixtures/a.json"))  # reads need no policy
    allowed(guarded, event("Write", guarded.path, file_path=str(tmp_path / "scratch.txt")))


def test_a_corrupted_pinned_policy_fails_closed(guarded: Work) -> None:
    pin = guarded.path / PIN
    pin.write_bytes(pin.read_bytes().split(b"\n# read from:")[0] + b"\n" + LOOSE.encode())
    said = denied(guarded, fixture_write(guarded), "policy-error")
    assert "not the one its hook names" in said and "git evidence install --agent claude" in said
    denied(guarded, event("Write", guarded.path, file_path="src/new.py"), "policy-error")


def test_a_person_reinstalling_takes_the_policy_in_force_now(guarded: Work) -> None:
    allowed(guarded, event("Write", guarded.path, file_path="data/x.csv", content="x"))
    guarded.commit("data is evidence", {".git-evidence.toml": '[paths]\nfixture = ["data/**"]\n'})
    guarded.git("update-ref", "refs/remotes/origin/main", "HEAD")
    allowed(guarded, event("Write", guarded.path, file_path="data/x.csv", content="x"))
    install(guarded)  # a person, outside the session
    denied(guarded, event("Write", guarded.path, file_path="data/x.csv"), "class fixture")
    settings = json.loads((guarded.path / ".claude" / "settings.json").read_text())
    assert len(settings["hooks"]["PreToolUse"]) == 1  # the command refreshed, not added


def test_the_pinned_guard_starts_no_git_unless_a_test_path_decides(
    guarded: Work, tmp_path: Path
) -> None:
    real = shutil.which("git")
    assert real
    shim = tmp_path / "count-bin"
    shim.mkdir()
    log = tmp_path / "git-starts.log"
    (shim / "git").write_text(f'#!/bin/sh\necho "$*" >> "{log}"\nexec "{real}" "$@"\n')
    (shim / "git").chmod(0o755)
    # the console script, not `git evidence`: the wrapper's own git start is not ours
    script = Path(sys.executable).with_name("git-evidence")
    env = {**agent_env(), "PATH": f"{shim}{os.pathsep}{agent_env()['PATH']}"}
    settings = guarded.path / ".claude" / "settings.json"
    settings.write_text(settings.read_text().replace("git evidence guard", f"{script} guard"))
    allowed(guarded, event("Write", guarded.path, file_path="src/new.py"), env)
    denied(guarded, fixture_write(guarded), "evidence-untrusted", env)
    assert not log.exists(), log.read_text()
    denied(guarded, event("Edit", guarded.path, file_path="tests/test_app.py"), "test-edit", env)
    assert len(log.read_text().splitlines()) == 1


# -- always protected, whatever the policy says -----------------------------------


@pytest.mark.parametrize(
    ("tool", "path"),
    [
        ("Write", ".claude/settings.json"),
        ("Edit", ".claude/settings.local.json"),
        ("Write", ".gemini/settings.json"),
        ("Write", ".git/config"),
        ("Write", ".git/hooks/pre-commit"),
        ("Write", str(PIN)),
    ],
)
def test_a_file_tool_write_to_what_guards_the_session_is_denied(
    guarded: Work, tool: str, path: str
) -> None:
    denied(guarded, event(tool, guarded.path, file_path=path, content="{}"), "guard-control")


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf .claude",
        "echo '{\"disableAllHooks\": true}' > .claude/settings.local.json",
        "mv .claude/settings.json /tmp/s.json",
        "cp /tmp/x.json .gemini/settings.json",
        "echo x > .git/git-evidence/guard-policy.toml",
        "sed -i s/guard/true/ .claude/settings.json",
        "git config core.hooksPath /dev/null",
        "git config evidence.trusted true",
    ],
)
def test_a_shell_write_to_what_guards_the_session_is_denied(guarded: Work, command: str) -> None:
    denied(guarded, bash(guarded, command), "guard-control")


def test_the_users_and_managed_settings_are_denied(guarded: Work, tmp_path: Path) -> None:
    home = tmp_path / "agent-home"
    home.mkdir()
    env = agent_env(home)
    user = str(home / ".claude" / "settings.json")
    denied(guarded, event("Write", guarded.path, file_path=user), "guard-control", env)
    denied(guarded, bash(guarded, "rm -rf ~/.claude"), "guard-control", env)
    denied(guarded, bash(guarded, "echo '{}' > $HOME/.gemini/settings.json"), "", env)
    managed = "/etc/claude-code/managed-settings.json"
    denied(guarded, event("Write", guarded.path, file_path=managed), "guard-control", env)
    allowed(guarded, event("Write", guarded.path, file_path=str(home / "notes.txt")), env)


def test_a_hooks_path_directory_is_protected(guarded: Work) -> None:
    guarded.git("config", "core.hooksPath", "githooks")
    denied(guarded, event("Write", guarded.path, file_path="githooks/pre-commit"), "core.hooksPath")


# -- the settings changed during the session ----------------------------------------


def _changed(work: Work, text: str, name: str = "settings.local.json") -> bytes:
    path = work.path / ".claude" / name
    path.write_text(text)
    doc = {"hook_event_name": "ConfigChange", "source": "local_settings", "file_path": str(path)}
    return json.dumps({**doc, "cwd": str(work.path)}).encode()


def test_a_settings_change_that_disables_all_hooks_is_not_taken(guarded: Work) -> None:
    (run,) = hooks(guarded, _changed(guarded, '{"disableAllHooks": true}'))
    assert run.returncode == 2 and "disableAllHooks" in run.stderr


def test_a_settings_change_removing_the_guard_is_not_taken(guarded: Work) -> None:
    settings = guarded.path / ".claude" / "settings.json"
    loaded = json.loads(settings.read_text())  # what the session started with
    data = _changed(guarded, '{"hooks": {}}', "settings.json")
    (run,) = hooks(guarded, data.replace(b"local_settings", b"project_settings"), loaded=loaded)
    assert run.returncode == 2 and "removes or alters the hook" in run.stderr


def test_a_settings_change_that_keeps_the_guard_is_taken(guarded: Work) -> None:
    (run,) = hooks(guarded, _changed(guarded, '{"permissions": {"allow": ["Bash(ls)"]}}'))
    assert (run.returncode, run.stderr) == (0, "")


# -- what still passes -----------------------------------------------------------------


# The installed guard reads a command with the same reader as the guard run in the test
# process, which test_guard.py's test_bash_command_reading_evidence_passes holds to every
# one of PASSED in the default run: here, the default run starts the installed hook on
# one command of each kind (a read, git, a copy out, a product write, a new test) and
# `-m slow` on the others.
INSTALLED_PASSED = (
    "cat tests/fixtures/a.json",
    "git status",
    "cp tests/fixtures/a.json /tmp/copy.json",
    "echo x > src/app.py",
    "echo x > tests/test_new.py",
)


@pytest.mark.parametrize(
    "command",
    [c if c in INSTALLED_PASSED else pytest.param(c, marks=pytest.mark.slow) for c in PASSED],
)
def test_reading_commands_pass_the_installed_guard(guarded: Work, command: str) -> None:
    guarded.write("new.txt", "new\n")
    allowed(guarded, bash(guarded, command))


def test_the_pinned_guard_allows_a_new_test_and_product_code(guarded: Work) -> None:
    allowed(guarded, event("Write", guarded.path, file_path="tests/test_new.py", content="x"))
    allowed(guarded, event("Edit", guarded.path, file_path=str(guarded.path / "src" / "app.py")))
    git(guarded.path, "status")  # the repository is untouched by the guard


# -- shell forms the installed guard reads ------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        'cd "$CLAUDE_PROJECT_DIR" && rm tests/fixtures/a.json',
        "rm $CLAUDE_PROJECT_DIR/tests/fixtures/a.json",
        'cd "${CLAUDE_PROJECT_DIR}/tests" && echo x > fixtures/a.json',
    ],
)
def test_the_project_variable_is_read_as_the_project(
    guarded: Work, tmp_path: Path, command: str
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    data = event("Bash", elsewhere, command=command)
    denied(guarded, data, "evidence-untrusted: tests/fixtures/a.json")


def test_a_fixture_spelled_with_a_dotted_capital_i_is_denied(guarded: Work) -> None:
    data = event("Write", guarded.path, file_path="tests/f\u0130xtures/a.json", content="{}")
    denied(guarded, data, "class fixture")
    denied(guarded, bash(guarded, "rm TESTS/F\u0130XTURES/A.json"), "class fixture")


def test_a_git_evidence_planted_ahead_on_the_path_is_denied(guarded: Work, tmp_path: Path) -> None:
    bin_dir = tmp_path / "agent-bin"
    bin_dir.mkdir()
    env = {**agent_env(), "PATH": f"{bin_dir}{os.pathsep}{agent_env()['PATH']}"}
    fake = str(bin_dir / "git-evidence")
    denied(
        guarded,
        event("Write", guarded.path, file_path=fake, content="exit 0"),
        "guard-control",
        env,
    )
    denied(guarded, bash(guarded, f"printf 'exit 0' > {bin_dir}/git"), "guard-control", env)
    allowed(guarded, event("Write", guarded.path, file_path=str(bin_dir / "tool")), env)
