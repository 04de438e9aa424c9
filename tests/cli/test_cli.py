"""The command line as users run it: classify, policy, check, JSON, bad input."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from helpers.repos import Work, evidence, evidence_process, git


def test_classify_prints_class_and_glob(work: Work) -> None:
    result = evidence(work.path, "classify", "src/a.py", "Tests/Fixtures/x", "Makefile")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "src/a.py\tproduct\tglob src/**"
    assert lines[1] == "Tests/Fixtures/x\tfixture\tglob tests/fixtures/**"
    assert lines[2] == "Makefile\tother\tno glob"


def test_classify_json(work: Work) -> None:
    doc = json.loads(evidence(work.path, "classify", "--format", "json", "tests").stdout)
    assert doc["paths"][0]["evidence"] is True
    assert "above evidence root" in doc["paths"][0]["reason"]


def test_policy_prints_source_and_digest(work: Work) -> None:
    result = evidence(work.path, "policy", "--format", "json")
    doc = json.loads(result.stdout)
    assert doc["source"] == "base:.git-evidence.toml"
    assert doc["digest"].startswith("sha256:")
    assert doc["identities"]["evidence_writers"] == ["alice"]


def test_policy_server_side_reads_the_default_branch(server: Path) -> None:
    result = evidence(server, "policy", "--server")
    assert "source: base:.git-evidence.toml" in result.stdout


def test_check_json_matches_the_documented_shape(work: Work) -> None:
    work.commit("product", {"src/app.py": "x\n"})
    work.commit("fixture", {"tests/fixtures/a.json": "{}\n"})
    result = evidence(work.path, "check", "--as", "agent-bot", "--format", "json")
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["decision"] == "reject"
    assert doc["pusher"] == "agent-bot"
    assert doc["policy"]["source"] == "base:.git-evidence.toml"
    update = doc["updates"][0]
    assert update["commits"] == 2
    rules = {f["rule"] for f in update["findings"]}
    assert {"mixed-range", "evidence-untrusted"} <= rules
    mixed = next(f for f in update["findings"] if f["rule"] == "mixed-range")
    assert mixed["commit"] is None
    assert mixed["paths"] == {"fixture": ["tests/fixtures/a.json"], "product": ["src/app.py"]}


def test_check_explicit_range_and_clean_range(work: Work) -> None:
    base = work.head()
    work.commit("product", {"src/app.py": "x\n"})
    ok = evidence(work.path, "check", f"{base}..HEAD")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "allowed 1 ref update" in ok.stdout
    work.commit("mix", {"src/app.py": "y\n", "tests/goldens/out.txt": "z\n"})
    bad = evidence(work.path, "check", f"{base}..HEAD", "--as", "alice")
    assert bad.returncode == 1
    assert "mixed-commit:" in bad.stdout


def test_check_of_an_unknown_revision_exits_2(work: Work) -> None:
    result = evidence(work.path, "check", "nope..HEAD")
    assert result.returncode == 2
    assert "'nope' does not name a commit" in result.stderr


def test_pre_receive_with_garbage_input_refuses(server: Path) -> None:
    result = evidence(server, "pre-receive", input=b"this is not a ref update\n")
    assert result.returncode == 2
    assert "hook input line 1" in result.stderr
    assert "Traceback" not in result.stderr


def test_pre_receive_with_a_missing_object_refuses(server: Path) -> None:
    main = git(server, "rev-parse", "main").stdout.strip()
    missing = "1" * 40
    result = evidence(server, "pre-receive", input=f"{main} {missing} refs/heads/main\n".encode())
    assert result.returncode == 1
    assert "not-a-commit: refs/heads/main" in result.stderr


def test_pre_receive_json_goes_to_stderr(server: Path) -> None:
    main = git(server, "rev-parse", "main").stdout.strip()
    result = evidence(
        server, "pre-receive", "--format", "json", input=f"{main} {main} refs/heads/main\n".encode()
    )
    assert result.returncode == 0
    assert json.loads(result.stderr)["decision"] == "allow"
    assert result.stdout == ""


def test_pre_receive_outside_a_repository_fails_closed(tmp_path: Path) -> None:
    result = evidence(
        tmp_path, "pre-receive", input=f"{'0' * 40} {'1' * 40} refs/heads/x\n".encode()
    )
    assert result.returncode == 2
    assert "git-error" in result.stderr


def test_rules_lists_every_rule_with_its_fix() -> None:
    from typing import get_args

    from git_evidence.core.errors import ERROR_RULES
    from git_evidence.rules.table import RuleId

    result = evidence(".", "rules")
    assert {"mixed-commit", "policy-error", "git-error"} <= {*get_args(RuleId), *ERROR_RULES}
    for rule in (*get_args(RuleId), *sorted(ERROR_RULES)):
        assert f"\n{rule} (" in "\n" + result.stdout


def test_every_rule_is_documented_in_the_rules_page_and_man_page() -> None:
    root = Path(__file__).resolve().parents[2]
    readme = (root / "docs" / "rules.md").read_text()
    man = (root / "man" / "git-evidence.1").read_text()
    from typing import get_args

    from git_evidence.core.errors import INTERNAL_ERROR, UsageError
    from git_evidence.rules.table import RULES, RuleId

    assert set(get_args(RuleId)) == set(RULES)
    for rule in (*RULES, *get_args(RuleId)):
        assert f"`{rule}`" in readme, rule
        assert rule.replace("-", "\\-") in man, rule
    # The reference sections name exactly the rule ids and the command line's own errors.
    documented = {*get_args(RuleId), UsageError.rule, INTERNAL_ERROR}
    table = readme.split("\n## The rules, one by one\n", 1)[1].split("\n## ", 1)[0]
    assert set(re.findall(r"^\| `([a-z-]+)` \|", table, re.M)) == documented
    section = man.split("\n.SH RULES\n", 1)[1].split("\n.SH ", 1)[0]
    named = re.findall(r"^\.B (\S+)$", section, re.M)
    assert {name.replace("\\-", "-") for name in named} == documented


def test_git_evidence_help_opens_the_man_page(tmp_path: Path) -> None:
    import shutil
    import subprocess
    import sys

    page = Path(sys.prefix) / "share" / "man" / "man1" / "git-evidence.1"
    if shutil.which("man") is None or not page.exists():
        pytest.skip(f"LOUD: no `man` or no installed page at {page} (editable install?)")
    bindir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "PATH": bindir + os.pathsep + os.environ["PATH"],
        "MANPAGER": "cat",
        "PAGER": "cat",
        "MANWIDTH": "80",
    }
    env.pop("MANPATH", None)
    result = subprocess.run(
        ["git", "evidence", "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "GIT-EVIDENCE(1)" in result.stdout
    assert "mixed-commit" in result.stdout.replace("\u2010", "-")


@pytest.mark.parametrize(
    "args",
    [
        ("classify", "src/a.py", "tests/fixtures/x", "Makefile"),
        ("rules", "--format", "json"),
        ("check", "no-such-revision"),
        ("check", "--format", "json", "HEAD~1..HEAD"),
        ("show-lock",),
        ("freeze", "list"),
        ("no-such-command",),
    ],
    ids=" ".join,
)
def test_a_command_run_in_the_test_process_answers_as_its_own_process(
    work: Work, args: tuple[str, ...]
) -> None:
    """The helper runs commands inside the test process to spare an interpreter's
    start; what it returns must be what the command line gives as a process."""
    work.write("src/b.py")
    work.write("tests/fixtures/b.json")
    work.commit("mixed")
    inside = evidence(work.path, *args)
    outside = evidence_process(work.path, *args)
    assert (inside.returncode, inside.stdout, inside.stderr) == (
        outside.returncode,
        outside.stdout,
        outside.stderr,
    )


def test_a_command_run_in_the_test_process_leaves_the_test_as_it_was(work: Work) -> None:
    work.write("src/b.py")
    work.write("tests/fixtures/b.json")
    work.commit("mixed")
    before = (os.getcwd(), dict(os.environ), [os.fstat(fd).st_ino for fd in (0, 1, 2)])
    result = evidence(work.path, "check", env={"EVIDENCE_SOMETHING": "1"}, input=b"ignored")
    assert result.returncode == 1, result.stderr  # the mixed commit of the clone is refused
    after = (os.getcwd(), dict(os.environ), [os.fstat(fd).st_ino for fd in (0, 1, 2)])
    assert after == before


def test_each_command_starts_with_nothing_judged(work: Work) -> None:
    from git_evidence.gate import time_budget

    time_budget.PROGRESS.commits, time_budget.PROGRESS.stage = (
        7,
        "judging a previous command's range",
    )
    assert evidence(work.path, "rules").returncode == 0
    assert (time_budget.PROGRESS.commits, time_budget.PROGRESS.stage) == (0, "starting")
