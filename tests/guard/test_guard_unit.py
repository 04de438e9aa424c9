"""The agent's hook as data: events → paths → denials, the shell commands it reads, the
settings it merges. No git here (tests/guard/test_guard.py drives the command end to end)."""

from __future__ import annotations

import contextlib
import json
import posixpath
import shlex
from collections.abc import Callable

import pytest
from helpers.examples import examples
from helpers.guard_cases import DENIED, PASSED
from hypothesis import given, settings
from hypothesis import strategies as st

from git_evidence.core.errors import UsageError
from git_evidence.guard import agent_settings, tool_calls
from git_evidence.guard.shell_writes import written_paths
from git_evidence.guard.tool_calls import Target
from git_evidence.policy.parsing import parse_policy
from git_evidence.policy.schema import Policy

TOP = "/repo"
EXISTING_TESTS = {"tests/test_app.py"}


def _resolve(path: str) -> str:
    """A file system without links: the lexical path."""
    return posixpath.normpath(path)


def denials(event: tool_calls.Event, policy: Policy | None = None) -> list[tool_calls.Denial]:
    cwd = event.cwd or TOP
    found = [(t, tool_calls.resolve(t, cwd, TOP, _resolve)) for t in tool_calls.targets(event)]
    inside = [(t, p) for t, p in found if p is not None]
    return tool_calls.judge(inside, policy or Policy(), lambda ps: set(ps) & EXISTING_TESTS)


def bash(command: str, cwd: str = TOP) -> tool_calls.Event:
    return tool_calls.Event("Bash", {"command": command}, cwd)


def write(path: str, cwd: str = TOP, tool: str = "Write") -> tool_calls.Event:
    return tool_calls.Event(tool, {"file_path": path, "content": "x"}, cwd)


@pytest.mark.parametrize(("command", "path"), DENIED, ids=[c for c, _ in DENIED])
def test_shell_command_writing_evidence_is_denied(command: str, path: str) -> None:
    found = denials(bash(command))
    assert found, command
    assert found[0].path == path


@pytest.mark.parametrize("command", PASSED)
def test_shell_command_reading_evidence_or_writing_elsewhere_passes(command: str) -> None:
    assert denials(bash(command)) == []


# -- events ---------------------------------------------------------------------------


def event_bytes(**fields: object) -> bytes:
    return json.dumps({"hook_event_name": "PreToolUse", **fields}).encode()


def test_a_claude_code_pretooluse_event_is_read() -> None:
    data = event_bytes(
        session_id="s",
        transcript_path="/t.jsonl",
        cwd="/repo",
        permission_mode="default",
        tool_name="Write",
        tool_input={"file_path": "/repo/src/a.py", "content": "x"},
        tool_use_id="toolu_1",
    )
    event = tool_calls.parse_event(data)
    assert event == tool_calls.Event(
        "Write", {"file_path": "/repo/src/a.py", "content": "x"}, "/repo"
    )
    assert tool_calls.targets(event) == [Target("/repo/src/a.py", "Write")]


@pytest.mark.parametrize(
    ("data", "says"),
    [
        (b"", "no hook event on stdin"),
        (b"  \n", "no hook event on stdin"),
        (b"{not json", "is not JSON"),
        (b'{"a": "\xff"}', "not UTF-8 JSON"),
        (b"[1, 2]", "is not a JSON object"),
        (b'"Write"', "is not a JSON object"),
        (b"{}", "names no tool"),
        (b'{"tool_name": 3}', "names no tool"),
        (b'{"tool_name": "Write"}', "has no `tool_input` object"),
        (b'{"tool_name": "Bash", "tool_input": "rm x"}', "has no `tool_input` object"),
        (b'{"tool_name": "Read", "cwd": 7}', "`cwd` is not a string"),
        (b'{"hook_event_name": "PostToolUse", "tool_name": "Write"}', "not one before a tool"),
    ],
)
def test_malformed_event_is_a_one_line_error(data: bytes, says: str) -> None:
    with pytest.raises(UsageError) as raised:
        tool_calls.parse_event(data)
    assert says in raised.value.message
    assert "\n" not in raised.value.message


@pytest.mark.parametrize(
    ("tool", "tool_input"),
    [
        ("Write", {"content": "x"}),
        ("Write", {"file_path": ""}),
        ("Edit", {"file_path": 3}),
        ("NotebookEdit", {"file_path": "a.ipynb"}),
        ("Bash", {"description": "no command"}),
    ],
)
def test_writing_tool_without_its_path_is_an_error(
    tool: str, tool_input: dict[str, object]
) -> None:
    event = tool_calls.parse_event(event_bytes(tool_name=tool, tool_input=tool_input))
    with pytest.raises(UsageError, match="has no `"):
        tool_calls.targets(event)


@pytest.mark.parametrize("tool", ["Read", "Glob", "Grep", "WebFetch", "mcp__fs__read", "Task"])
def test_tool_that_writes_no_file_has_nothing_to_judge(tool: str) -> None:
    event = tool_calls.parse_event(
        event_bytes(tool_name=tool, tool_input={"file_path": "tests/fixtures/a.json"})
    )
    assert tool_calls.targets(event) == []


def test_multiedit_names_its_file_once_and_any_other_file_of_its_edits() -> None:
    event = tool_calls.Event(
        "MultiEdit",
        {
            "file_path": "/repo/src/a.py",
            "edits": [
                {"old_string": "a", "new_string": "b"},
                {"old_string": "c", "new_string": "d", "replace_all": True},
                {"file_path": "/repo/tests/fixtures/a.json", "old_string": "1"},
            ],
        },
        "/repo",
    )
    assert [t.given for t in tool_calls.targets(event)] == [
        "/repo/src/a.py",
        "/repo/tests/fixtures/a.json",
    ]
    assert [d.path for d in denials(event)] == ["tests/fixtures/a.json"]


def test_notebook_edit_is_judged_by_its_notebook_path() -> None:
    event = tool_calls.Event(
        "NotebookEdit",
        {"notebook_path": "/repo/tests/fixtures/nb.ipynb", "new_source": "1", "cell_id": "c"},
        "/repo",
    )
    assert [(d.rule, d.path, d.klass) for d in denials(event)] == [
        ("evidence-untrusted", "tests/fixtures/nb.ipynb", "fixture")
    ]


def test_gemini_cli_tools_are_read_like_claude_codes() -> None:
    assert denials(tool_calls.Event("write_file", {"file_path": "/repo/testdata/x"}, "/repo"))
    assert denials(
        tool_calls.Event("replace", {"file_path": "/repo/tests/fixtures/a.json"}, "/repo")
    )
    shell = tool_calls.Event(
        "run_shell_command", {"command": "rm a.json", "dir_path": "tests/fixtures"}, "/repo"
    )
    assert [d.path for d in denials(shell)] == ["tests/fixtures/a.json"]


# -- paths ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "cwd", "expected"),
    [
        ("/repo/tests/fixtures/a.json", "/repo", "tests/fixtures/a.json"),
        ("tests/fixtures/a.json", "/repo", "tests/fixtures/a.json"),
        ("../tests/fixtures/a.json", "/repo/src", "tests/fixtures/a.json"),
        ("src/../tests/./fixtures//a.json", "/repo", "tests/fixtures/a.json"),
        ("/repo", "/elsewhere", ""),
        ("/elsewhere/tests/fixtures/a.json", "/repo", None),
        ("../outside/tests/fixtures/a.json", "/repo", None),
        ("/repository-sibling/a", "/repo", None),
        ("", "/repo", None),
        ("a\0b", "/repo", None),
    ],
)
def test_paths_are_judged_as_the_repository_path_they_write(
    given: str, cwd: str, expected: str | None
) -> None:
    assert tool_calls.resolve(Target(given, "Write"), cwd, TOP, _resolve) == expected


def test_a_link_is_followed_before_the_repository_path_is_taken() -> None:
    links = {
        "/repo/data": "/repo/tests/fixtures",
        "/repo/alias.json": "/repo/tests/goldens/out.txt",
    }

    def real(path: str) -> str:
        for link, target in links.items():
            if path == link or path.startswith(link + "/"):
                return target + path[len(link) :]
        return posixpath.normpath(path)

    assert (
        tool_calls.resolve(Target("data/a.json", "Write"), TOP, TOP, real)
        == "tests/fixtures/a.json"
    )
    assert (
        tool_calls.resolve(Target("alias.json", "Edit"), TOP, TOP, real) == "tests/goldens/out.txt"
    )


components = st.lists(st.sampled_from(["a", "b", "tests", "fixtures", "..", "."]), max_size=6)


@given(components, components)
def test_a_lexical_path_is_inside_exactly_when_it_does_not_climb_out(
    cwd_parts: list[str], path_parts: list[str]
) -> None:
    cwd = posixpath.normpath(posixpath.join(TOP, *cwd_parts)) if cwd_parts else TOP
    given = "/".join(path_parts) or "."
    full = posixpath.normpath(posixpath.join(cwd, given))
    inside = full == TOP or full.startswith(TOP + "/")
    got = tool_calls.resolve(Target(given, "Write"), cwd, TOP, _resolve)
    assert (got is not None) == inside
    if got is not None:
        assert posixpath.join(TOP, got).rstrip("/") == full


@given(st.binary(max_size=200))
@settings(max_examples=examples(300))
def test_any_bytes_on_stdin_are_an_event_or_a_usage_error(data: bytes) -> None:
    try:
        event = tool_calls.parse_event(data)
    except UsageError:
        return
    with contextlib.suppress(UsageError):  # a writing tool without its path
        tool_calls.targets(event)


# -- decisions ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "rule", "klass"),
    [
        ("tests/fixtures/a.json", "evidence-untrusted", "fixture"),
        ("tests/goldens/x.txt", "evidence-untrusted", "fixture"),
        ("tests/properties/test_p.py", "evidence-untrusted", "oracle"),
        ("src/ui/__snapshots__/a.snap", "evidence-untrusted", "oracle"),
        ("tests/freeze.jsonl", "evidence-untrusted", "freeze_ledger"),
        (".git-evidence.toml", "evidence-untrusted", "policy"),
        ("sub/.gitattributes", "evidence-untrusted", "policy"),
        ("tests/evidence-labels.tsv", "evidence-untrusted", "policy"),
        ("conftest.py", "other-path", "other"),
        ("tests/conftest.py", "other-path", "other"),
        ("src/sitecustomize.py", "other-path", "other"),
        ("lib/site-packages/evil.pth", "other-path", "other"),
        ("pyproject.toml", "other-path", "other"),
        ("tox.ini", "other-path", "other"),
        ("tests/test_app.py", "test-edit", "test"),
        ("TESTS/FIXTURES/A.JSON", "evidence-untrusted", "fixture"),
        ("tests/fixtures\u200c/a.json", "evidence-untrusted", "fixture"),
    ],
)
def test_what_the_fence_refuses_or_holds_is_denied(path: str, rule: str, klass: str) -> None:
    (found,) = denials(write(path))
    assert (found.rule, found.path, found.klass) == (rule, path, klass)


@pytest.mark.parametrize(
    "path",
    [
        "src/app.py",
        "docs/guide.md",
        "README.md",
        "Makefile",
        "tests/test_new.py",
        "tests/helpers.py",
    ],
)
def test_product_neutral_other_and_added_tests_are_allowed(path: str) -> None:
    assert denials(write(path)) == []


def test_the_policy_file_is_denied_whatever_the_policy_says() -> None:
    loose = parse_policy(
        b'[paths]\npolicy = []\nfixture = []\ntest = []\n[rules]\ntest_edit = "allow"\n'
        b'other_path = "allow"\n[lock]\nroots = ["vendor/locked"]\n',
        "base:.git-evidence.toml",
    )
    assert [d.klass for d in denials(write(".git-evidence.toml"), loose)] == ["policy"]
    assert denials(write("tests/fixtures/a.json"), loose) == []


def test_a_policy_that_allows_test_edits_and_other_paths_lets_them_through() -> None:
    allowing = parse_policy(
        b'[rules]\ntest_edit = "allow"\nother_path = "allow"\n', "base:.git-evidence.toml"
    )
    assert denials(write("tests/test_app.py"), allowing) == []
    assert denials(write("conftest.py"), allowing) == []
    assert denials(write("tests/fixtures/a.json"), allowing)


def test_existence_is_asked_once_and_only_for_test_paths() -> None:
    asked: list[list[str]] = []

    def existing(paths: list[str]) -> set[str]:
        asked.append(paths)
        return set()

    pairs = [
        (Target(p, "Write"), p)
        for p in ("src/a.py", "tests/t1.py", "tests/fixtures/x", "tests/t2.py")
    ]
    tool_calls.judge(pairs, Policy(), existing)
    tool_calls.judge([(Target("src/a.py", "Write"), "src/a.py")], Policy(), existing)
    assert asked == [["tests/t1.py", "tests/t2.py"]]


@given(st.sampled_from(["tests/fixtures/a.json", "testdata/x/y", "tests/goldens/g.txt"]), st.data())
def test_a_path_is_denied_however_its_letters_are_cased(path: str, data: st.DataObject) -> None:
    cased = "".join(c.upper() if data.draw(st.booleans()) else c for c in path)
    assert [d.klass for d in denials(write(cased))] == ["fixture"]


def test_the_deny_line_names_rule_path_class_and_that_evidence_is_read_only() -> None:
    found = denials(bash("rm tests/fixtures/a.json tests/fixtures/b.json"))
    line = tool_calls.deny_line(found)
    assert line == (
        "git-evidence: evidence-untrusted: tests/fixtures/a.json: class fixture (rm): "
        "the evidence path is read-only for this session; leave it as it is: an evidence "
        "writer changes evidence, in a commit of its own (and 1 more)"
    )
    structural = tool_calls.deny_line(denials(bash("rm -rf tests")))
    assert structural.startswith(
        "git-evidence: evidence-untrusted: tests: class policy, above evidence root "
        "tests/evidence-labels.tsv (rm): the evidence path is read-only for this session"
    )


def test_the_deny_json_is_claude_codes_pretooluse_answer() -> None:
    doc = json.loads(tool_calls.deny_json("why"))
    assert doc == {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": "why",
        }
    }


def test_a_path_that_is_not_printable_is_shown_quoted() -> None:
    assert tool_calls.show("tests/fixtures/a\nb") == '"tests/fixtures/a\\nb"'
    assert tool_calls.show("") == "."


def test_a_disk_that_folds_case_is_spelled_as_its_directories_list_it() -> None:
    tree = {"/repo": ["src", "tests"], "/repo/tests": ["test_app.py", "fixtures"]}

    def listdir(path: str) -> list[str]:
        if path not in tree:
            raise FileNotFoundError(path)
        return tree[path]

    assert tool_calls.disk_spelling(TOP, "Tests/TEST_App.py", listdir) == "tests/test_app.py"
    assert tool_calls.disk_spelling(TOP, "tests/test_app.py", listdir) == "tests/test_app.py"
    assert tool_calls.disk_spelling(TOP, "tests/missing.py", listdir) is None
    assert tool_calls.disk_spelling(TOP, "src/deeper/x.py", listdir) is None


# -- the shell, as words --------------------------------------------------------------

plain_word = st.text(
    st.characters(blacklist_categories=("Cs", "Cc")), min_size=1, max_size=12
).filter(lambda w: w.strip() == w and not w.startswith(("-", "~")) and "{" not in w)


@given(st.lists(plain_word, min_size=1, max_size=4))
def test_words_quoted_as_the_shell_quotes_them_are_read_back_whole(words: list[str]) -> None:
    command = "rm -f -- " + " ".join(shlex.quote(w) for w in words)
    assert [w.path for w in written_paths(command)] == words


@given(plain_word, plain_word)
def test_a_quoted_operator_is_an_argument_not_a_redirection(text: str, path: str) -> None:
    command = f"grep {shlex.quote(text + ' > ' + path)} {shlex.quote(path)}"
    assert written_paths(command) == []
    assert [w.path for w in written_paths(f"cat {shlex.quote(text)} > {shlex.quote(path)}")] == [
        path
    ]


def test_a_cd_in_a_subshell_ends_with_it() -> None:
    found = written_paths("(cd tests && rm a); rm b; cd docs; rm c")
    assert [(w.path, w.cwd) for w in found] == [("a", "tests"), ("b", ""), ("c", "docs")]


def test_a_descriptor_number_is_not_a_path() -> None:
    assert [w.path for w in written_paths("cmd 2>&1 >out 3>&- 2>err")] == ["out", "err"]


def test_nested_shells_are_read_to_a_bounded_depth() -> None:
    command = "rm x"
    for _ in range(10):
        escaped = command.replace("\\", "\\\\").replace('"', '\\"')
        command = f'bash -c "{escaped}"'
    assert written_paths(command) == []
    assert [w.path for w in written_paths("bash -c \"bash -c 'rm x'\"")] == ["x"]


# -- the agent's settings -------------------------------------------------------------

SOURCE = "/w/.claude/settings.json"
Merge = Callable[[str | None], tuple[str, bool]]


def merge(text: str | None) -> tuple[str, bool]:
    return agent_settings.merge_claude_settings(text, SOURCE)


def test_settings_without_a_file_get_the_guard_alone() -> None:
    text, changed = merge(None)
    assert changed
    assert json.loads(text) == {
        "hooks": {
            "PreToolUse": [
                {
                    "matcher": "Write|Edit|MultiEdit|NotebookEdit|Bash",
                    "hooks": [{"type": "command", "command": "git evidence guard || exit 2"}],
                }
            ]
        }
    }


def test_merging_keeps_every_entry_and_key_in_its_order() -> None:
    before = {
        "model": "opus",
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "PostToolUse": [{"matcher": "Edit", "hooks": [{"type": "command", "command": "fmt"}]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "audit"}]}],
        },
    }
    text, changed = merge(json.dumps(before))
    after = json.loads(text)
    assert changed
    assert list(after) == ["model", "permissions", "hooks"]
    assert after["hooks"]["PostToolUse"] == before["hooks"]["PostToolUse"]  # type: ignore[index]
    assert after["hooks"]["PreToolUse"][:1] == before["hooks"]["PreToolUse"]  # type: ignore[index]
    assert after["hooks"]["PreToolUse"][1] == agent_settings.guard_entry()


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=10,
)


@given(st.dictionaries(st.text(max_size=8).filter(lambda k: k != "hooks"), json_values, max_size=4))
def test_merging_twice_adds_nothing_the_second_time(settings_doc: dict[str, object]) -> None:
    once, changed = merge(json.dumps(settings_doc))
    twice, changed_again = merge(once)
    assert changed and not changed_again
    assert twice == once
    assert {k: v for k, v in json.loads(once).items() if k != "hooks"} == settings_doc


def test_an_entry_of_ones_own_that_runs_the_guard_is_kept_and_the_guard_added_once() -> None:
    own = {"matcher": "Write", "hooks": [{"type": "command", "command": "git evidence guard"}]}
    text, changed = merge(json.dumps({"hooks": {"PreToolUse": [own]}}))
    assert changed
    entries = json.loads(text)["hooks"]["PreToolUse"]
    assert entries == [own, agent_settings.guard_entry()]
    assert merge(text) == (text, False)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "not valid JSON"),
        ("// a comment\n{}", "not valid JSON"),
        ("[]", "the top level is not a JSON object"),
        ('{"hooks": []}', "`hooks` is not an object"),
        ('{"hooks": {"PreToolUse": {}}}', "`hooks.PreToolUse` is not a list"),
        ('{"hooks": {"PreToolUse": ["x"]}}', "`hooks.PreToolUse[0]` is not an object"),
        ('{"hooks": {"PreToolUse": [{"hooks": 1}]}}', "`hooks.PreToolUse[0]` is not an object"),
    ],
)
def test_settings_that_do_not_parse_are_an_error_naming_the_file(text: str, says: str) -> None:
    with pytest.raises(UsageError) as raised:
        merge(text)
    assert raised.value.message.startswith(f"{SOURCE}: ")
    assert says in raised.value.message
    assert raised.value.message.endswith("nothing was written")


# -- attacks: an output option hidden at the end of a cluster of short flags -----------


@pytest.mark.parametrize(
    "command",
    [
        "curl -sSLo tests/fixtures/a.json https://example.com/a",
        "curl -fsSLotests/fixtures/a.json https://example.com/a",
        "wget -qO tests/fixtures/a.json https://example.com/a",
        "sort -uo tests/fixtures/a.json /tmp/x",
    ],
)
def test_output_option_clustered_after_short_flags_is_denied(command: str) -> None:
    found = denials(bash(command))
    assert [d.path for d in found] == ["tests/fixtures/a.json"], command


def test_clustered_output_option_to_elsewhere_passes() -> None:
    assert denials(bash("curl -sSLo /tmp/a.json https://example.com/a")) == []
    assert denials(bash("wget -qO- https://example.com/a")) == []


# -- attacks: shell forms that hid a claimed write ------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "mv -ttests/fixtures src/app.py",
        "cp -ttests/fixtures src/app.py",
        "cp -rt tests/fixtures src/app.py",
        "ln -st tests/fixtures /tmp/x",
    ],
)
def test_target_directory_attached_or_clustered_is_denied(command: str) -> None:
    assert [d.path for d in denials(bash(command))] == ["tests/fixtures"], command


def test_rsync_dash_t_keeps_times_and_its_destination_is_still_judged() -> None:
    found = denials(bash("rsync -t /tmp/x tests/fixtures/a.json"))
    assert [d.path for d in found] == ["tests/fixtures/a.json"]


def test_tee_past_a_process_substitution_is_denied() -> None:
    found = denials(bash("echo x | tee >(cat) tests/fixtures/a.json"))
    assert [d.path for d in found] == ["tests/fixtures/a.json"]


def test_a_process_substitutions_own_command_is_read() -> None:
    found = denials(bash("diff <(rm tests/fixtures/a.json) /dev/null"))
    assert [d.path for d in found] == ["tests/fixtures/a.json"]


@pytest.mark.parametrize(
    "command",
    [
        "env -S 'rm tests/fixtures/a.json'",
        "env --split-string='rm tests/fixtures/a.json'",
        "env -S'rm -f' tests/fixtures/a.json",
    ],
)
def test_env_split_string_running_a_write_is_denied(command: str) -> None:
    assert [d.path for d in denials(bash(command))] == ["tests/fixtures/a.json"], command


@pytest.mark.parametrize(
    "command",
    [
        "python3 -Bc \"open('tests/fixtures/a.json','w')\"",
        "python3 -Ic\"open('tests/fixtures/a.json','w')\"",
        "python3 -W ignore -c \"open('tests/fixtures/a.json','w')\"",
        "python3 -X dev -c \"open('tests/fixtures/a.json','w')\"",
        "node -r fs -e \"require('fs').writeFileSync('tests/fixtures/a.json','x')\"",
    ],
)
def test_inline_code_after_the_interpreters_own_options_is_read(command: str) -> None:
    assert [d.path for d in denials(bash(command))] == ["tests/fixtures/a.json"], command


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c \"__import__('os').remove('tests/fixtures/a.json')\"",
        "python3 -c \"import importlib; importlib.import_module('os').remove("
        "'tests/fixtures/a.json')\"",
        "perl -MFile::Path -e 'rmtree(\"tests/fixtures/a.json\")'",
    ],
)
def test_inline_code_reaching_a_writing_call_indirectly_is_denied(command: str) -> None:
    assert [d.path for d in denials(bash(command))] == ["tests/fixtures/a.json"], command


@pytest.mark.parametrize(
    "command",
    [
        "python3 -m pytest tests/",
        "python3 -W ignore -c \"print(open('tests/fixtures/a.json').read())\"",
        "diff <(cat tests/fixtures/a.json) /dev/null",
        "env -S 'cat tests/fixtures/a.json'",
    ],
)
def test_reading_through_the_same_forms_passes(command: str) -> None:
    assert denials(bash(command)) == [], command


@pytest.mark.parametrize(
    "command",
    [
        "ln tests/fixtures/a.json src/data.json",
        "ln -f tests/fixtures/a.json src/",
        "ln -t src tests/fixtures/a.json",
    ],
)
def test_hard_link_making_a_fixture_writable_elsewhere_is_denied(command: str) -> None:
    assert "tests/fixtures/a.json" in [d.path for d in denials(bash(command))], command


def test_symbolic_link_to_a_fixture_reads_it_and_passes() -> None:
    assert denials(bash("ln -s ../tests/fixtures/a.json src/view.json")) == []


# -- attacks: a `cd` that comes back, or that never moved the command after it ---------


@pytest.mark.parametrize(
    "command",
    [
        "cd /tmp && cd - && rm tests/fixtures/a.json",
        "cd /tmp; cd ~-; rm tests/fixtures/a.json",
        'cd /tmp && cd "$OLDPWD" && rm tests/fixtures/a.json',
        "pushd /tmp && popd && rm tests/fixtures/a.json",
        'cd /tmp && cd "$(git rev-parse --show-toplevel)" && rm tests/fixtures/a.json',
        "cd /tmp || rm tests/fixtures/a.json",
        "cd /tmp | rm tests/fixtures/a.json",
        "cd /tmp & rm tests/fixtures/a.json",
    ],
)
def test_a_cd_that_leaves_the_command_in_the_project_is_followed(command: str) -> None:
    assert [d.path for d in denials(bash(command))] == ["tests/fixtures/a.json"], command


def test_a_cd_that_moves_the_command_out_still_passes() -> None:
    assert denials(bash("cd /tmp && rm tests/fixtures/a.json")) == []
    assert denials(bash("cd /tmp && cd - && cd /tmp && rm tests/fixtures/a.json")) == []
