"""The pure parts of what guards the session, in process: the pinned policy read back
(policy/pinned.py), what is always protected (guard/control.py), the git commands
that change the guard's control (guard/shell_git.py), and a settings change judged
(agent_settings.config_change). The end-to-end attacks are test_guard_pinned.py's."""

from __future__ import annotations

import json

import pytest

from git_evidence.core.errors import PolicyError
from git_evidence.guard import agent_settings, control
from git_evidence.guard.shell_writes import written_paths
from git_evidence.guard.tool_calls import Target
from git_evidence.policy import pinned

POLICY = b'[paths]\nfixture = ["data/**"]\n'
COMMIT = "a" * 40


def _pin(data: bytes) -> pinned.Pin:
    return pinned.Pin("/r/.git/git-evidence/guard-policy.toml", pinned.digest(data))


def test_a_pinned_policy_reads_back_with_where_it_was_read() -> None:
    data = pinned.pin_bytes(POLICY, f"refs/remotes/origin/main at {COMMIT}")
    policy = pinned.parse_pinned(data, _pin(data))
    assert policy.origin == "pinned" and policy.paths["fixture"] == ("data/**",)
    assert policy.source == "pinned:/r/.git/git-evidence/guard-policy.toml"
    assert pinned.pinned_commit(data) == ("refs/remotes/origin/main", COMMIT)


def test_a_pinned_policy_changed_by_one_byte_fails_closed_naming_the_repair() -> None:
    data = pinned.pin_bytes(POLICY, "no commit")
    with pytest.raises(PolicyError) as raised:
        pinned.parse_pinned(data.replace(b"data", b"date"), _pin(data))
    assert "not the one its hook names" in raised.value.message
    assert "git evidence install --agent claude" in raised.value.fix


def test_a_missing_pinned_policy_fails_closed() -> None:
    with pytest.raises(PolicyError) as raised:
        pinned.parse_pinned(None, _pin(b""), "No such file or directory")
    assert "cannot be read (No such file or directory)" in raised.value.message


def test_the_digest_is_sha256() -> None:
    import hashlib

    assert pinned.digest(b"x") == "sha256:" + hashlib.sha256(b"x").hexdigest()


def test_a_flag_names_the_pin_and_its_values() -> None:
    pin = pinned.from_flag("/g/git-evidence", "sha256:aa,sha256:bb")
    assert pin == pinned.Pin("/g/git-evidence/guard-policy.toml", "sha256:aa", "sha256:bb")


GUARDED = control.protected("/w", ["/w/.git"], "/home/a", {}, "hooks")


@pytest.mark.parametrize(
    ("path", "what"),
    [
        ("/w/.claude/settings.json", control.SETTINGS),
        ("/w/.claude", control.SETTINGS),  # a directory holding one
        ("/w/.git/config", control.GIT_CONTROL),
        ("/w/.git/git-evidence/guard-policy.toml", control.GIT_CONTROL),
        ("/w/hooks/pre-commit", control.HOOKS_DIR),
        ("/home/a/.claude/settings.json", control.SETTINGS),
        ("/home/a/.gitconfig", control.GIT_CONFIG),
        ("/etc/claude-code/managed-settings.json", control.SETTINGS),
        ("/etc/gemini-cli/system-defaults.json", control.SETTINGS),
    ],
)
def test_what_guards_the_session_is_denied(path: str, what: str) -> None:
    (denial,) = control.denials([(Target(path, "Write"), path)], GUARDED, {}, {})
    assert (denial.rule, denial.what) == ("guard-control", what)


@pytest.mark.parametrize("path", ["/w/src/app.py", "/w/.claude-notes", "/home/a/notes.txt"])
def test_other_paths_are_not_the_guards_business(path: str) -> None:
    assert control.denials([(Target(path, "Write"), path)], GUARDED, {}, {}) == []


def test_a_settings_file_that_is_a_link_is_protected_where_it_leads() -> None:
    real = {"/w/.claude/settings.json": "/shared/settings.json"}
    written = [(Target(".claude/settings.json", "Write"), "/shared/settings.json")]
    assert control.denials(written, GUARDED, real, {})


def test_hooks_path_is_read_from_the_config_text() -> None:
    config = b'[core]\n\tbare = false\n\thooksPath = "githooks"\n'
    assert control.hooks_path(config) == "githooks"
    assert control.hooks_path(b"[core]\n\tbare = false\n") is None


@pytest.mark.parametrize(
    ("command", "how"),
    [
        ("git config evidence.policyFile /tmp/x", "git config evidence.policyFile"),
        ("git config --global include.path /tmp/x", "git config include.path"),
        ("git config --add includeIf.onbranch:x.path /x", "git config includeIf.onbranch:x.path"),
        ("git config set core.hooksPath /dev/null", "git config core.hooksPath"),
        ("git config --edit", "git config --edit"),
        ("git update-ref refs/remotes/origin/main HEAD", "git update-ref"),
        ("git symbolic-ref HEAD refs/heads/other", "git symbolic-ref"),
        ("git -C /w evidence install --agent claude", "git evidence install"),
    ],
)
def test_git_commands_that_change_the_guards_control(command: str, how: str) -> None:
    (written,) = written_paths(command)
    assert written.control and written.how == how


@pytest.mark.parametrize(
    "command",
    [
        "git config --get evidence.policyFile",
        "git config -l",
        "git config user.name agent",
        "git symbolic-ref HEAD",
        "git evidence check",
        "git notes show HEAD",
        "git notes --ref=evidence list",
        "git evidence freeze list",
        "git evidence show-lock",
    ],
)
def test_git_commands_that_only_read_the_control(command: str) -> None:
    assert written_paths(command) == []


COMMAND = agent_settings.pinned_command("sha256:aa,sha256:bb")
WITH_GUARD = json.dumps({"hooks": {"PreToolUse": [agent_settings.guard_entry(COMMAND)]}})


@pytest.mark.parametrize(
    ("source", "text", "holds", "says"),
    [
        ("local_settings", '{"disableAllHooks": true}', False, "disableAllHooks"),
        ("user_settings", '{"allowManagedHooksOnly": true}', False, "allowManagedHooksOnly"),
        ("project_settings", "{", False, "not JSON"),
        ("project_settings", None, False, "cannot be read"),
        ("project_settings", '{"hooks": {}}', True, "removes or alters"),
        ("project_settings", WITH_GUARD.replace("bb", "cc"), True, "removes or alters"),
    ],
)
def test_a_settings_change_that_switches_the_guard_off_is_refused(
    source: str, text: str | None, holds: bool, says: str
) -> None:
    assert says in agent_settings.config_change(source, text, holds, COMMAND)


@pytest.mark.parametrize(
    ("source", "text", "holds"),
    [
        ("local_settings", '{"permissions": {"allow": ["Bash(ls)"]}}', False),
        ("project_settings", WITH_GUARD, True),
        ("policy_settings", '{"disableAllHooks": true}', False),  # managed settings win
    ],
)
def test_a_settings_change_that_keeps_the_guard_is_taken(
    source: str, text: str, holds: bool
) -> None:
    assert agent_settings.config_change(source, text, holds, COMMAND) == ""


def test_install_refreshes_the_guards_command_instead_of_adding_one() -> None:
    first, _ = agent_settings.merge_claude_settings(None, "s", COMMAND, config_change=True)
    newer = agent_settings.pinned_command("sha256:cc,sha256:dd")
    second, changed = agent_settings.merge_claude_settings(first, "s", newer, config_change=True)
    doc = json.loads(second)
    assert changed
    assert [e["hooks"][0]["command"] for e in doc["hooks"]["PreToolUse"]] == [newer]
    assert [e["hooks"][0]["command"] for e in doc["hooks"]["ConfigChange"]] == [newer]
