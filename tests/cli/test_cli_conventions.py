"""The conventions every command keeps: -q and -v, --format json with one
error shape, a closed pipe, outside a repository, a bad revision, paths relative to
the current directory, progress only on a terminal, per-user crash logs, the GitLab
prefix, --help for every argument, and a man page that agrees with the parser."""

from __future__ import annotations

import argparse
import io
import json
import os
import pty
import re
import select
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.repos import PROJECT, Work, evidence, git

from git_evidence.cli import options
from git_evidence.cli.arguments import build_parser
from git_evidence.terminal import progress

MAN = PROJECT / "man" / "git-evidence.1"
COMMON = {"-q", "--quiet", "-v", "--verbose", "--format", "-h", "--help"}
ERROR_KEYS = {"rule", "message", "hint"}


def run_raw(
    cwd: Path | str,
    *args: str,
    stdout: int | None = subprocess.PIPE,
    stderr: int | None = subprocess.PIPE,
    env: dict[str, str] | None = None,
    prelude: str = "",
    input: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """The command line in a real interpreter; ``prelude`` runs first (to plant a
    command that crashes)."""
    code = f"{prelude}\nfrom git_evidence.cli.main import main\nraise SystemExit(main())"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        stdout=stdout,
        stderr=stderr,
        input=input,
        env={**os.environ, **(env or {})},
        check=False,
    )


def into_closed_pipe(cwd: Path | str, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run with stdout a pipe whose reader has already gone, as `| head -1` leaves
    it once head has its line: every write fails with EPIPE."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "git_evidence", *args],
            cwd=cwd,
            stdout=write,
            stderr=subprocess.PIPE,
            check=False,
        )
    finally:
        os.close(write)


def lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def error_doc(text: str) -> dict[str, object]:
    doc: dict[str, Any] = json.loads(text)
    assert doc["decision"] == "error", doc
    assert set(doc["error"]) == ERROR_KEYS, doc
    assert all(doc["error"][key] for key in ERROR_KEYS), doc
    return doc


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory in no repository (git stops looking above tmp_path)."""
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    path = tmp_path / "nowhere"
    path.mkdir()
    return path


# -- a reader that stops reading ------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("policy",), 141),  # as if ended by SIGPIPE: never "allowed"
        (("rules",), 141),
        (("classify", "src/app.py", "tests/fixtures/a.json"), 141),
        (("check", "--format", "json"), 141),
        (("show-lock", "--help"), 0),  # argparse itself drops a help it cannot write
    ],
    ids=lambda value: " ".join(value) if isinstance(value, tuple) else str(value),
)
def test_output_into_a_closed_pipe_ends_quietly(
    work: Work, args: tuple[str, ...], code: int
) -> None:
    result = into_closed_pipe(work.path, *args)
    assert result.stderr == b""
    assert result.returncode == code


def test_policy_piped_into_head_shows_its_first_line_and_nothing_else(work: Work) -> None:
    shell = f"{sys.executable} -m git_evidence policy | head -1"
    result = subprocess.run(
        ["sh", "-c", shell], cwd=work.path, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0
    assert result.stdout.startswith("source: ")
    assert len(result.stdout.splitlines()) == 1
    assert result.stderr == ""


def test_hook_whose_stderr_reader_went_away_does_not_allow(server: Path) -> None:
    main = git(server, "rev-parse", "main").stdout.strip()
    read, write = os.pipe()
    os.close(read)
    try:
        result = subprocess.run(  # -v: an allow has a line to write
            [sys.executable, "-m", "git_evidence", "pre-receive", "-v"],
            cwd=server,
            input=f"{main} {main} refs/heads/main\n".encode(),
            stdout=subprocess.PIPE,
            stderr=write,
            check=False,
        )
    finally:
        os.close(write)
    assert result.returncode == 141


# -- outside a repository, a bad revision ----------------------------------------------

OUTSIDE_COMMANDS = [
    ("check",),
    ("check", "HEAD~1..HEAD"),
    ("verify",),
    ("classify", "src/app.py"),
    ("policy",),
    ("lock",),
    ("show-lock",),
    ("doctor",),
    ("install",),
    ("freeze", "list"),
    ("freeze", "status", "tests/test_app.py::test_app"),
    ("show-verdict",),
]


@pytest.mark.parametrize("args", OUTSIDE_COMMANDS, ids=" ".join)
def test_outside_a_repository_is_one_line(outside: Path, args: tuple[str, ...]) -> None:
    result = evidence(outside, *args)
    assert result.returncode == 2
    assert result.stdout == ""
    assert lines(result.stderr) == [
        f"git-evidence: usage-error: {outside} is not a git repository "
        "(nor is any parent directory)"
    ]


@pytest.mark.parametrize("args", OUTSIDE_COMMANDS, ids=" ".join)
def test_outside_a_repository_as_json_is_the_error_shape(
    outside: Path, args: tuple[str, ...]
) -> None:
    result = evidence(outside, *args, "--format", "json")
    assert result.returncode == 2
    doc = error_doc(result.stdout)
    assert doc["error"]["rule"] == "usage-error"  # type: ignore[index]
    assert "is not a git repository" in doc["error"]["message"]  # type: ignore[index]


def test_doctor_of_a_missing_directory_is_one_line(tmp_path: Path) -> None:
    result = evidence(tmp_path, "doctor", "--repo", str(tmp_path / "gone"))
    assert result.returncode == 2
    assert lines(result.stderr) == [
        f"git-evidence: usage-error: {tmp_path / 'gone'} is not a git repository "
        "(nor is any parent directory)"
    ]


@pytest.mark.parametrize(
    "args",
    [
        ("lock", "no-such-rev"),
        ("show-lock", "no-such-rev"),
        ("verify", "no-such-rev"),
        ("check", "no-such-rev..HEAD"),
        ("check", "no-such-rev"),
        ("policy", "--base", "no-such-rev"),
        ("classify", "--base", "no-such-rev", "src/app.py"),
        ("show-verdict", "no-such-rev"),
    ],
    ids=" ".join,
)
def test_bad_revision_is_one_line_naming_it(work: Work, args: tuple[str, ...]) -> None:
    result = evidence(work.path, *args)
    assert result.returncode == 2
    said = lines(result.stderr)
    assert len(said) == 1, result.stderr
    assert said[0].startswith("git-evidence: usage-error: 'no-such-rev' does not name a commit")
    assert "Traceback" not in result.stderr


# -- one error shape under --format json ----------------------------------------------


@pytest.mark.parametrize(
    ("args", "rule"),
    [
        (("check", "no-such-rev..HEAD"), "usage-error"),
        (("verify", "no-such-rev"), "usage-error"),
        (("lock", "no-such-rev"), "usage-error"),
        (("show-lock", "no-such-rev"), "usage-error"),
        (("policy", "--base", "no-such-rev"), "usage-error"),
        (("classify", "../../elsewhere"), "usage-error"),
        (("install", "--policy", "p.toml"), "usage-error"),
        (("freeze", "add", "--test", "t", "--runs", "2"), "usage-error"),
        (("freeze", "status", "t", "--no-such-option"), "usage-error"),
        (("rules", "--no-such-option"), "usage-error"),
        (("split", "no-such-rev"), "usage-error"),
        (("show-verdict", "no-such-rev"), "usage-error"),
        (("doctor", "--repo", "gone"), "usage-error"),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, tuple) else value,
)
def test_errors_as_json_have_one_shape_and_exit_2(
    work: Work, args: tuple[str, ...], rule: str
) -> None:
    result = evidence(work.path, *args, "--format", "json")
    assert result.returncode == 2, result.stdout + result.stderr
    doc = error_doc(result.stdout)
    assert doc["error"]["rule"] == rule  # type: ignore[index]


@pytest.mark.parametrize(
    "args",
    [("no-such-command", "--format=json"), ("--format", "json", "no-such-command"), ()],
    ids=" ".join,
)
def test_json_error_before_the_command_is_known(work: Work, args: tuple[str, ...]) -> None:
    result = evidence(work.path, *args, *(() if args else ("--format", "json")))
    assert result.returncode == 2
    assert error_doc(result.stdout)["error"]["rule"] == "usage-error"  # type: ignore[index]


def test_policy_error_of_a_judgement_as_json_is_the_error_shape_naming_the_pusher(
    work: Work,
) -> None:
    work.commit("broken policy", {".git-evidence.toml": "[rules\n"})
    result = evidence(
        work.path, "check", "--base", "HEAD", "HEAD", "--as", "bob", "--format", "json"
    )
    assert result.returncode == 2
    doc = error_doc(result.stdout)
    assert doc["error"]["rule"] == "policy-error"  # type: ignore[index]
    assert doc["pusher"] == "bob"


def test_text_usage_error_shows_the_usage(work: Work) -> None:
    result = evidence(work.path, "lock", "--no-such-option")
    assert result.returncode == 2
    assert result.stderr.startswith("usage: git evidence lock")
    assert "git-evidence: usage-error: unrecognized arguments: --no-such-option" in result.stderr


# -- --format json on every command ---------------------------------------------------


def json_of(work: Path, *args: str, code: int = 0) -> dict[str, object]:
    result = evidence(work, *args, "--format", "json")
    assert result.returncode == code, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    assert isinstance(doc, dict)
    return doc


def test_rules_as_json_lists_usage_error(work: Work) -> None:
    doc = json_of(work.path, "rules")
    rows = {row["rule"]: row for row in doc["rules"]}  # type: ignore[attr-defined]
    assert rows["usage-error"]["decision"] == "error, exit 2"
    assert rows["internal-error"]["decision"] == "error, exit 2"
    assert rows["git-error"]["decision"] == "error, exit 2"
    assert rows["other-path"]["decision"] == "per [rules].other_path, default hold"
    assert rows["mixed-commit"]["decision"] == "reject"
    assert set(doc["fields"]) >= {"COMMIT", "BASE"}  # type: ignore[call-overload]


def test_rules_text_fills_or_explains_every_field(work: Work) -> None:
    result = evidence(work.path, "rules")
    assert result.returncode == 0
    assert "{" not in result.stdout and "}" not in result.stdout
    assert "\nusage-error (error, exit 2): " in result.stdout
    listing, _, legend = result.stdout.partition("\nIn the hints:\n")
    assert "<base>" not in listing
    for field in set(re.findall(r"\b[A-Z]{3,}\b", listing)) - {"HEAD"}:
        assert f"  {field}: " in legend, field


def test_lock_show_lock_install_doctor_freeze_status_as_json(work: Work, server: Path) -> None:
    locked = json_of(work.path, "lock")
    assert locked["written"] is True and locked["published"] is None
    assert str(locked["digest"]).startswith("sha256:")
    shown = json_of(work.path, "show-lock")
    assert shown["digest"] == locked["digest"]
    installed = json_of(work.path, "install")
    assert [row["hook"] for row in installed["installed"]] == ["pre-commit", "pre-push"]  # type: ignore[attr-defined]
    assert installed["fetches_locks"] == ["origin"]
    again = json_of(work.path, "install")
    assert again["fetches_locks"] == []
    result = evidence(server, "doctor", "--format", "json")
    doctor = json.loads(result.stdout)
    assert {check["state"] for check in doctor["checks"]} <= {"ok", "warning", "missing"}
    assert doctor["missing"] == sum(c["state"] == "missing" for c in doctor["checks"])
    assert result.returncode == (1 if doctor["missing"] else 0)
    assert any("pre-receive hook installed" in c["text"] for c in doctor["checks"])
    status = json_of(work.path, "freeze", "status", "tests/test_app.py::test_app", code=1)
    assert status["frozen"] is False and status["freeze"] is None


def test_show_lock_without_a_lock_as_json(work: Work) -> None:
    doc = json_of(work.path, "show-lock", code=1)
    assert doc["lock"] is None and "no lock in force" in str(doc["message"])


def test_a_command_that_renders_only_text_is_wrapped_in_json(server: Path) -> None:
    main = git(server, "rev-parse", "main").stdout.strip()
    result = evidence(
        server, "post-receive", "--format", "json", input=f"{main} {main} refs/tags/t\n".encode()
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"exit": 0, "output": []}


# -- -q and -v ------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_check_prints_nothing_when_allowed(work: Work, where: str) -> None:
    base = work.head()
    work.commit("product", {"src/app.py": "x\n"})
    args = ["check", f"{base}..HEAD"]
    args = ["-q", *args] if where == "before" else [*args, "-q"]
    result = evidence(work.path, *args)
    assert result.returncode == 0
    assert (result.stdout, result.stderr) == ("", "")


def test_quiet_check_shows_everything_when_refused(work: Work) -> None:
    base = work.head()
    work.commit("mix", {"src/app.py": "y\n", "tests/goldens/out.txt": "z\n"})
    loud = evidence(work.path, "check", f"{base}..HEAD")
    quiet = evidence(work.path, "-q", "check", f"{base}..HEAD")
    assert quiet.returncode == loud.returncode == 1
    assert "mixed-commit:" in quiet.stdout
    assert quiet.stdout == loud.stdout


def test_quiet_hook_says_nothing_on_allow(server: Path) -> None:
    main = git(server, "rev-parse", "main").stdout.strip()
    line = f"{main} {main} refs/heads/main\n".encode()
    loud = evidence(server, "pre-receive", "-v", input=line)
    assert loud.returncode == 0 and "allowed" in loud.stderr
    quiet = evidence(server, "pre-receive", "-q", input=line)
    assert quiet.returncode == 0
    assert (quiet.stdout, quiet.stderr) == ("", "")


@pytest.mark.parametrize(
    "args",
    [("rules",), ("policy",), ("classify", "src/app.py"), ("lock",), ("install",)],
    ids=" ".join,
)
def test_quiet_commands_print_nothing_on_success(work: Work, args: tuple[str, ...]) -> None:
    result = evidence(work.path, "-q", *args)
    assert result.returncode == 0
    assert (result.stdout, result.stderr) == ("", "")


def test_quiet_error_still_says_why(work: Work) -> None:
    result = evidence(work.path, "-q", "lock", "no-such-rev")
    assert result.returncode == 2
    assert "'no-such-rev' does not name a commit" in result.stderr


def test_verbose_classify_names_the_policy(work: Work) -> None:
    result = evidence(work.path, "classify", "-v", "src/app.py")
    assert result.returncode == 0
    assert result.stderr.startswith("policy: base:.git-evidence.toml sha256:")
    assert "policy:" not in evidence(work.path, "classify", "src/app.py").stderr


def test_verbose_show_lock_lists_every_pinned_file(work: Work) -> None:
    assert evidence(work.path, "lock").returncode == 0
    plain = evidence(work.path, "show-lock")
    verbose = evidence(work.path, "-v", "show-lock")
    assert "tests/fixtures/a.json" not in plain.stdout
    assert re.search(r"100644 9 [0-9a-f]{64}\ttests/fixtures/a\.json", verbose.stdout)


# -- paths relative to the current directory ------------------------------------------


def classified(work: Work, cwd: Path, *paths: str) -> list[tuple[str, str]]:
    result = evidence(cwd, "classify", "--format", "json", *paths)
    assert result.returncode == 0, result.stderr
    return [(row["path"], row["class"]) for row in json.loads(result.stdout)["paths"]]


def test_classify_from_a_subdirectory_reads_paths_as_git_does(work: Work) -> None:
    src = work.path / "src"
    assert classified(work, src, "app.py") == [("src/app.py", "product")]
    assert classified(work, src, "../tests/fixtures/a.json") == [
        ("tests/fixtures/a.json", "fixture")
    ]
    assert classified(work, src, ":/tests/goldens/out.txt") == [
        ("tests/goldens/out.txt", "fixture")
    ]
    assert classified(work, src, str(work.path / "tests" / "fixtures" / "new.json")) == [
        ("tests/fixtures/new.json", "fixture")
    ]
    text = evidence(src, "classify", "./app.py")
    assert text.stdout.startswith("src/app.py\tproduct\t")


def test_classify_of_a_fixture_named_from_its_own_directory(work: Work) -> None:
    where = work.path / "tests" / "fixtures"
    assert classified(work, where, "a.json", "sub/ð.json") == [
        ("tests/fixtures/a.json", "fixture"),
        ("tests/fixtures/sub/ð.json", "fixture"),
    ]


@pytest.mark.parametrize("path", ["../../elsewhere", "..", "/"])
def test_classify_of_a_path_outside_the_repository_is_an_error(work: Work, path: str) -> None:
    result = evidence(work.path / "src", "classify", path)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"git-evidence: usage-error: {path}: ")


# -- progress -------------------------------------------------------------------------


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_progress_says_nothing_in_the_first_second() -> None:
    screen, clock = Terminal(), Clock()
    with progress.Progress("locking", stream=screen, clock=clock) as shown:
        clock.now = 0.9
        shown.count(1, 10)
        assert screen.getvalue() == ""
        clock.now = 1.2
        shown.count(2, 10)
        assert screen.getvalue() == "\r\033[Klocking: 2/10"
    assert screen.getvalue().endswith("\r\033[K")  # erased at the end


def test_progress_says_nothing_when_stderr_is_no_terminal() -> None:
    log, clock = io.StringIO(), Clock()
    with progress.Progress("locking", stream=log, clock=clock) as shown:
        clock.now = 5.0
        shown("far along")
    assert log.getvalue() == ""


def test_progress_watching_a_shared_counter_ticks_only_on_a_terminal() -> None:
    screen, log = Terminal(), io.StringIO()
    for stream in (screen, log):
        with progress.watching("judging", lambda: "3 of 9 commits", stream=stream, delay=0):
            time.sleep(0.35)
    assert "judging: 3 of 9 commits" in screen.getvalue()
    assert log.getvalue() == ""


def freeze_add(work: Work, stderr: int) -> subprocess.CompletedProcess[bytes]:
    assert evidence(work.path, "lock").returncode == 0
    slow = "sleep 0.6; exit 0"
    return run_raw(
        work.path,
        *("freeze", "add", "--test", "tests/test_app.py::test_app", "--runs", "3"),
        *("--ci", "--writer", "ci-bot"),
        *("--", "sh", "-c", slow),
        stderr=stderr,
    )


@pytest.mark.slow  # waits on the clock
def test_freeze_add_shows_progress_on_a_terminal_after_a_second(work: Work) -> None:
    controller, terminal = pty.openpty()
    try:
        result = freeze_add(work, terminal)
        os.close(terminal)
        terminal = -1
        said = b""
        while select.select([controller], [], [], 0.5)[0]:
            try:
                chunk = os.read(controller, 4096)
            except OSError:  # the other side is closed
                break
            if not chunk:
                break
            said += chunk
    finally:
        if terminal >= 0:
            os.close(terminal)
        os.close(controller)
    assert result.returncode == 1  # passed every run: nothing to freeze
    assert b"freezing tests/test_app.py::test_app: " in said
    assert b"run 3/3" in said  # the third run starts after a second; the first did not show
    assert b"run 1/3" not in said


@pytest.mark.slow  # waits on the clock
def test_freeze_add_shows_no_progress_when_stderr_is_a_pipe(work: Work) -> None:
    result = freeze_add(work, subprocess.PIPE)
    assert result.returncode == 1
    assert b"\r" not in result.stderr
    assert b"seed 0: 3 passed, 0 failed" in result.stderr


# -- crashes --------------------------------------------------------------------------

CRASH = """
import sys, types
planted = types.ModuleType("git_evidence.commands.policy")
def run(args):
    raise RuntimeError("boom\\nsecond line")
planted.run = run
sys.modules["git_evidence.commands.policy"] = planted
"""


def crash(
    work: Work, env: dict[str, str], *args: str
) -> tuple[subprocess.CompletedProcess[bytes], list[str]]:
    result = run_raw(work.path, "policy", *args, env=env, prelude=CRASH)
    assert result.returncode == 2
    said = result.stderr.decode()
    assert "Traceback" not in said or "-v" in args
    found = re.findall(r"full trace in (\S+\.log)\)", said)
    return result, found


def read_trace(path: str) -> str:
    text = Path(path).read_text()
    assert "RuntimeError: boom" in text
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    return text


def test_crash_trace_goes_to_the_users_state_directory(work: Work, tmp_path: Path) -> None:
    home = tmp_path / "home"
    result, found = crash(work, {"HOME": str(home), "XDG_STATE_HOME": ""})
    (path,) = found
    assert Path(path).parent == home / ".local" / "state" / "git-evidence"
    read_trace(path)
    said = lines(result.stderr.decode())
    assert said == [
        f"git-evidence: internal error, refusing: RuntimeError: boom second line "
        f"(full trace in {path})"
    ]


def test_crash_trace_honours_xdg_state_home(work: Work, tmp_path: Path) -> None:
    state = tmp_path / "state"
    _, (path,) = crash(work, {"XDG_STATE_HOME": str(state)})
    assert Path(path).parent == state / "git-evidence"
    assert stat.S_IMODE(os.stat(state / "git-evidence").st_mode) == 0o700
    read_trace(path)


def test_crash_trace_falls_back_to_a_private_per_user_temp_directory(
    work: Work, tmp_path: Path
) -> None:
    unusable = tmp_path / "a-file"
    unusable.write_text("not a directory\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {"HOME": str(unusable / "home"), "XDG_STATE_HOME": "", "TMPDIR": str(temp)}
    _, (path,) = crash(work, env)
    mine = temp / f"git-evidence-{os.getuid()}"
    assert Path(path).parent == mine
    assert stat.S_IMODE(os.stat(mine).st_mode) == 0o700
    read_trace(path)


def test_crash_trace_never_goes_into_a_temp_directory_another_user_planted(
    work: Work, tmp_path: Path
) -> None:
    unusable = tmp_path / "a-file"
    unusable.write_text("not a directory\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (temp / f"git-evidence-{os.getuid()}").symlink_to(theirs)
    env = {"HOME": str(unusable / "home"), "XDG_STATE_HOME": "", "TMPDIR": str(temp)}
    _, (path,) = crash(work, env)
    assert list(theirs.iterdir()) == []
    assert Path(path).parent.parent == temp
    assert Path(path).parent.name.startswith(f"git-evidence-{os.getuid()}-")
    read_trace(path)


def test_crash_in_a_gitlab_hook_prefixes_the_line(work: Work, tmp_path: Path) -> None:
    result, found = crash(work, {"GL_USERNAME": "bob", "GL_ID": ""})
    assert found
    assert lines(result.stderr.decode())[0].startswith(
        "GL-HOOK-ERR: git-evidence: internal error, refusing: RuntimeError: boom"
    )


def test_crash_as_json_is_the_error_shape(work: Work) -> None:
    result = run_raw(work.path, "policy", "--format", "json", prelude=CRASH)
    assert result.returncode == 2
    doc = error_doc(result.stdout.decode())
    assert doc["error"]["rule"] == "internal-error"  # type: ignore[index]
    assert "full trace in " in doc["error"]["message"]  # type: ignore[index]


def test_verbose_crash_shows_the_trace(work: Work) -> None:
    result, found = crash(work, {}, "-v")
    assert found
    said = result.stderr.decode()
    assert "Traceback (most recent call last)" in said
    assert 'File "<string>"' in said  # the planted command, where it raised


# -- --help and the man page ------------------------------------------------------------


def leaves(
    parser: argparse.ArgumentParser, prefix: str = ""
) -> list[tuple[str, argparse.ArgumentParser]]:
    """Every command that runs, by its full name (``freeze add``)."""
    found: list[tuple[str, argparse.ArgumentParser]] = []
    for name, _help, child in options.subcommands(parser):
        full = f"{prefix}{name}"
        below = leaves(child, full + " ")
        found += below or [(full, child)]
    return found


COMMANDS = leaves(build_parser())


def own_actions(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [
        a
        for a in parser._actions
        if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
        and not set(a.option_strings) & COMMON
    ]


@pytest.mark.parametrize(("name", "parser"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_every_command_has_a_description_and_help_for_every_argument(
    name: str, parser: argparse.ArgumentParser
) -> None:
    assert parser.description, name
    for action in parser._actions:
        assert action.help and action.help != argparse.SUPPRESS, (name, action.dest)
    for option in ("-q", "--quiet", "-v", "--verbose", "--format"):
        assert option in parser._option_string_actions, (name, option)


def test_subcommand_help_prints_the_description(tmp_path: Path) -> None:
    for name, parser in COMMANDS:
        result = evidence(tmp_path, *name.split(), "--help")
        assert result.returncode == 0, name
        assert " ".join(str(parser.description).split()[:4]) in " ".join(result.stdout.split())
        assert "--format" in result.stdout and "--quiet" in result.stdout


def test_a_command_added_later_gets_the_conventions() -> None:
    parser = options.Parser(prog="git evidence")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("demo", help="do a thing")
    options.apply_conventions(parser)
    ((_, _, demo),) = options.subcommands(parser)
    assert demo.description == "Do a thing."
    args = parser.parse_args(["-q", "demo", "--format", "json"])
    assert (args.quiet, args.verbose, args.format, args.text_only) == (True, False, "json", True)
    args = parser.parse_args(["demo", "-v"])
    assert (args.quiet, args.verbose, args.format) == (False, True, "text")


def man_text(troff: str) -> str:
    return troff.replace("\\-", "-").replace("\\fB", "").replace("\\fI", "").replace("\\fR", "")


def man_section(name: str) -> str:
    page = MAN.read_text(encoding="utf-8")
    match = re.search(rf"^\.SH {name}\n(.*?)(?=^\.SH |\Z)", page, re.M | re.S)
    assert match, name
    return match.group(1)


def synopsis_blocks() -> dict[str, str]:
    """Command name → its synopsis text (the `.B git evidence NAME` line up to `.br`)."""
    names = {name for name, _ in COMMANDS}
    blocks: dict[str, str] = {}
    for block in man_section("SYNOPSIS").split(".br\n"):
        text = man_text(block)
        head = re.match(r"\.B git evidence(.*)", text)
        assert head, block
        words = head.group(1).split()
        name = ""
        for word in words:
            longer = f"{name} {word}".strip()
            if any(n == longer or n.startswith(longer + " ") for n in names):
                name = longer
            else:
                break
        blocks[name] = text
    return blocks


def test_man_page_synopsis_lists_exactly_the_parsers_commands() -> None:
    blocks = synopsis_blocks()
    assert set(blocks) - {""} == {name for name, _ in COMMANDS}


@pytest.mark.parametrize(("name", "parser"), COMMANDS, ids=[n for n, _ in COMMANDS])
def test_man_page_synopsis_shows_exactly_each_commands_arguments(
    name: str, parser: argparse.ArgumentParser
) -> None:
    block = synopsis_blocks()[name]
    in_man = set(re.findall(r"(?<![\w-])--?[A-Za-z][\w-]*", block))
    in_parser: set[str] = set()
    for action in own_actions(parser):
        if action.option_strings:
            assert set(action.option_strings) & in_man, (name, action.option_strings)
            in_parser |= set(action.option_strings)
        else:
            metavar = str(action.metavar or action.dest.upper())
            for word in re.findall(r"[A-Z][A-Z_]+", metavar):
                assert re.search(rf"\b{word}\b", block), (name, word)
    assert in_man - COMMON <= in_parser, (name, in_man - in_parser)


def test_man_page_describes_every_command_and_no_other() -> None:
    described = set(re.findall(r"^\.TP\n\.B (.+)$", man_text(man_section("COMMANDS")), re.M))
    assert described == {name for name, _ in COMMANDS}


def test_man_page_documents_the_common_options() -> None:
    text = man_text(man_section("OPTIONS"))
    parser = build_parser()
    top = {s for a in parser._actions for s in a.option_strings}
    for option in top | {"--format"}:
        assert re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", text), option
    assert '{"decision": "error", "error": {"rule": ..., "message": ..., "hint": ...}}' in text


def test_man_page_and_rules_page_document_the_command_line_rules() -> None:
    man = man_text(man_section("RULES"))
    readme = (PROJECT / "docs" / "rules.md").read_text(encoding="utf-8")
    for rule in ("usage-error", "internal-error"):
        assert f"\n.B {rule}\n" in man, rule
        assert f"`{rule}`" in readme, rule
