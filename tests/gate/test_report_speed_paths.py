"""Reports of large pushes, paths classified by their raw bytes, and the time budget
over the whole run: real pushes into a bare repository with the hooks installed."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import pytest
from helpers.repos import Work, evidence, git, protected_clone

AGENT = "agent-bot"


def remote_lines(result: subprocess.CompletedProcess[str]) -> list[str]:
    """What the hook said, one relayed line each, `remote: ` and git's padding off."""
    return [
        line[len("remote: ") :].rstrip()
        for line in result.stderr.splitlines()
        if line.startswith("remote: ")
    ]


def joined(lines: list[str]) -> str:
    """Lines with their wrapped continuations (4 spaces, no class label) joined."""
    out: list[str] = []
    for line in lines:
        if line.startswith("    ") and out and not re.match(r"\s+[a-z_]+: ", line):
            out[-1] += " " + line.strip()
        else:
            out.append(line)
    return "\n".join(out)


def columns(text: str) -> int:
    return sum(
        0
        if unicodedata.combining(c) or unicodedata.category(c) == "Cf"
        else 2
        if unicodedata.east_asian_width(c) in ("W", "F")
        else 1
        for c in text
    )


def fast_commits(work: Work, ref: str, commits: list[dict[bytes, bytes]]) -> str:
    """One commit per mapping (raw path → bytes) on top of ``ref``'s tip, written by
    one `git fast-import` (thousands of commits in a second); the tip."""
    parent = work.head(ref)
    stream = [b"reset %s\nfrom %s\n" % (ref.encode(), parent.encode())]
    for n, files in enumerate(commits):
        message = b"change %d" % n
        stream.append(
            b"commit %s\ncommitter T <t@example.com> %d +0000\ndata %d\n%s\n"
            % (ref.encode(), 1_767_225_600 + n, len(message), message)
        )
        for path, data in files.items():
            stream.append(b"M 100644 inline %s\ndata %d\n%s\n" % (path, len(data), data))
    work.git("fast-import", "--quiet", input=b"".join(stream))
    return work.head(ref)


def mixed(count: int, start: int = 0) -> list[dict[bytes, bytes]]:
    """``count`` commits that each change a fixture and product in one."""
    return [
        {b"src/app.py": b"v%d\n" % n, b"tests/fixtures/a.json": b'{"v": %d}\n' % n}
        for n in range(start, start + count)
    ]


def carry(work: Work, server: Path) -> None:
    """Put the clone's objects into the server without a push (no hook runs), for a
    hook started by hand."""
    git(server, "fetch", "-q", str(work.path), "main:refs/incoming/main")


def push(work: Work, *, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return work.push("origin", "main", pusher=AGENT, env=env)


# -- the text report: the first findings in full, the rest counted ------------------


def test_a_large_refusal_shows_twenty_findings_then_counts_the_rest(work: Work) -> None:
    base = work.head()
    tip = fast_commits(work, "refs/heads/main", mixed(25))
    result = push(work)
    assert result.returncode == 1
    lines = remote_lines(result)
    assert sum(line.startswith("mixed-commit: ") for line in lines) == 20
    said = joined(lines)
    assert "  ... and 5 more mixed-commit findings" in said
    assert (
        "To list them all (or --format json): "
        f"git evidence check {base[:12]}..{tip[:12]} --max-findings 0"
    ) in said
    assert "git-evidence: refused: 1 of 1 ref update not allowed" in said


def test_the_listing_command_lists_every_finding(work: Work) -> None:
    base = work.head()
    tip = fast_commits(work, "refs/heads/main", mixed(25))
    listed = evidence(work.path, "check", f"{base[:12]}..{tip[:12]}", "--max-findings", "0")
    assert listed.returncode == 1
    assert listed.stdout.count("\nmixed-commit: ") == 25
    assert "more mixed-commit" not in listed.stdout


def test_json_lists_every_finding_whatever_the_limit(work: Work) -> None:
    base = work.head()
    tip = fast_commits(work, "refs/heads/main", mixed(25))
    result = evidence(
        work.path, "check", f"{base}..{tip}", "--format", "json", "--max-findings", "2"
    )
    doc = json.loads(result.stdout)
    rules = [f["rule"] for u in doc["updates"] for f in u["findings"]]
    assert rules.count("mixed-commit") == 25


def test_max_findings_option_limits_the_text_report(work: Work) -> None:
    base = work.head()
    tip = fast_commits(work, "refs/heads/main", mixed(6))
    result = evidence(work.path, "check", f"{base[:12]}..{tip[:12]}", "--max-findings", "2")
    assert result.stdout.count("\nmixed-commit: ") == 2
    assert "... and 4 more mixed-commit findings" in result.stdout


def test_the_server_limit_comes_from_git_config(work: Work, server: Path) -> None:
    git(server, "config", "evidence.maxFindings", "3")
    fast_commits(work, "refs/heads/main", mixed(7))
    lines = remote_lines(push(work))
    assert sum(line.startswith("mixed-commit: ") for line in lines) == 3
    assert "  ... and 4 more mixed-commit findings" in lines


def test_server_config_zero_shows_every_finding(work: Work, server: Path) -> None:
    git(server, "config", "evidence.maxFindings", "0")
    fast_commits(work, "refs/heads/main", mixed(23))
    lines = remote_lines(push(work))
    assert sum(line.startswith("mixed-commit: ") for line in lines) == 23
    assert not any("more mixed-commit" in line for line in lines)


def test_a_bad_server_limit_is_named_and_the_default_used(work: Work, server: Path) -> None:
    git(server, "config", "evidence.maxFindings", "lots")
    fast_commits(work, "refs/heads/main", mixed(22))
    lines = remote_lines(push(work))
    assert sum(line.startswith("mixed-commit: ") for line in lines) == 20
    said = joined(lines)
    assert "git config evidence.maxFindings is 'lots', not a number" in " ".join(said.split())


def test_pre_receive_takes_max_findings(work: Work, server: Path) -> None:
    base = work.head()
    tip = fast_commits(work, "refs/heads/main", mixed(5))
    carry(work, server)
    result = evidence(
        server,
        "pre-receive",
        "--max-findings",
        "1",
        input=f"{base} {tip} refs/heads/main\n".encode(),
        env={"GIT_EVIDENCE_PUSHER": AGENT},
    )
    assert result.returncode == 1
    assert ("\n" + result.stderr).count("\nmixed-commit: ") == 1
    assert "... and 4 more mixed-commit findings" in result.stderr


def test_a_bad_max_findings_option_is_a_usage_error(work: Work) -> None:
    result = evidence(work.path, "check", "--max-findings", "-1")
    assert result.returncode == 2
    assert "expected a number of findings" in result.stderr


# -- lines fit 80 columns under the host's prefixes ----------------------------------


def long_mixed_push(work: Work, branch: str, *, env: dict[str, str] | None = None) -> list[str]:
    """A mixed commit pushed to ``branch``, whose name makes the messages long."""
    work.git("checkout", "-qb", branch)
    work.commit("mixed", {"src/app.py": "bug\n", "tests/fixtures/a.json": "{}\n"})
    result = work.push("origin", branch, pusher=AGENT, env=env)
    assert result.returncode == 1, result.stderr
    return [line for line in result.stderr.splitlines() if line.startswith("remote: ")]


def assert_fits(lines: list[str]) -> None:
    for line in lines:
        # A path is never broken (it is listed whole, to be copied); all else fits.
        if re.match(r"remote: (GL-HOOK-ERR: )?    [a-z_]+: ", line):
            continue
        assert columns(line.rstrip()) <= 80, line


def test_remote_lines_fit_80_columns(work: Work) -> None:
    lines = long_mixed_push(work, "feature/a-rather-long-branch-name-that-pushes-words")
    assert lines
    assert_fits(lines)


def test_remote_lines_fit_80_columns_under_gitlabs_prefix(work: Work) -> None:
    lines = long_mixed_push(
        work, "feature/a-long-branch-name", env={"GL_ID": "user-7", "GL_USERNAME": AGENT}
    )
    assert lines and all(line.startswith("remote: GL-HOOK-ERR: ") for line in lines)
    assert_fits(lines)


def test_wide_characters_count_two_columns_when_lines_are_wrapped(work: Work) -> None:
    # 21 wide characters: the ref takes 58 columns in 35 characters.
    lines = long_mixed_push(work, "機能/証拠と製品を一つのコミットで変えるブランチ")
    assert any("機能/" in line for line in lines)
    assert_fits(lines)


# -- paths classified once, by their raw bytes ----------------------------------------


def test_a_test_file_added_then_edited_is_held_as_added_and_as_edited(work: Work) -> None:
    """The cache of a path's class must not carry a row's status."""
    fast_commits(
        work,
        "refs/heads/main",
        [{b"tests/test_new.py": b"def test(): pass\n"}, {b"tests/test_new.py": b"# edit\n"}],
    )
    result = evidence(work.path, "check", "origin/main..main", "--format", "json")
    found = {
        f["rule"]: f["paths"] for u in json.loads(result.stdout)["updates"] for f in u["findings"]
    }
    assert found["added-test"] == {"test": ["tests/test_new.py"]}
    assert found["test-edit"] == {"test": ["tests/test_new.py"]}


def test_a_non_utf8_fixture_path_is_evidence_in_every_commit_naming_it(work: Work) -> None:
    path = b"tests/fixtures/caf\xe9.json"
    fast_commits(
        work,
        "refs/heads/main",
        [{path: b"1\n"}, {path: b"2\n", b"src/app.py": b"v2\n"}, {path: b"3\n"}],
    )
    result = push(work)
    said = joined(remote_lines(result))
    assert said.count("mixed-commit: ") == 1
    assert 'fixture: "tests/fixtures/caf\\udce9.json"' in said
    assert "evidence-untrusted: " in said


def test_a_case_variant_of_a_fixture_path_is_evidence(work: Work) -> None:
    fast_commits(
        work,
        "refs/heads/main",
        [
            {b"tests/fixtures/a.json": b"1\n"},
            {b"Tests/Fixtures/a.json": b"2\n", b"src/x.py": b"x\n"},
        ],
    )
    said = joined(remote_lines(push(work)))
    assert "mixed-commit: " in said
    assert "fixture: Tests/Fixtures/a.json" in said


def test_rows_past_the_first_read_are_all_classified(work: Work) -> None:
    """One commit whose raw diff is far larger than one 64 KiB read of the stream."""
    files = {b"tests/fixtures/%04d-%s.json" % (n, b"x" * 90): b"%d\n" % n for n in range(1500)}
    files[b"src/app.py"] = b"changed\n"
    base = work.head()
    tip = fast_commits(work, "refs/heads/main", [files])
    result = evidence(work.path, "check", f"{base}..{tip}", "--format", "json")
    (finding,) = [
        f
        for u in json.loads(result.stdout)["updates"]
        for f in u["findings"]
        if f["rule"] == "mixed-commit"
    ]
    assert len(finding["paths"]["fixture"]) == 1500
    assert finding["paths"]["product"] == ["src/app.py"]


def test_a_link_into_fixtures_beside_plain_rows_is_evidence(work: Work) -> None:
    (work.path / "src" / "other.py").write_text("plain\n")
    work.commit_link("product and a link", "src/data.json", "../tests/fixtures/a.json")
    said = joined(remote_lines(push(work)))
    assert "mixed-commit: " in said
    assert "fixture: src/data.json" in said
    assert "product: src/other.py" in said


def test_a_gitlink_at_a_fixture_path_beside_product_is_a_mixed_commit(work: Work) -> None:
    work.write("src/app.py", "v2\n")
    work.git("add", "src/app.py")
    work.git("update-index", "--add", "--cacheinfo", f"160000,{work.head()},tests/fixtures/sub")
    work.git("commit", "-qm", "gitlink and product")
    said = joined(remote_lines(push(work)))
    assert "mixed-commit: " in said
    assert "fixture: tests/fixtures/sub" in said


# -- the time budget bounds the whole run ------------------------------------------------


def budget_server(tmp_path: Path, seconds: float) -> tuple[Work, Path]:
    policy = f'[rules]\ntime_budget_s = {seconds}\n[identities]\nevidence_writers = ["alice"]\n'
    work = protected_clone(tmp_path, {".git-evidence.toml": policy})
    return work, Path(work.git("remote", "get-url", "origin").stdout.strip())


def test_a_tiny_time_budget_refuses_and_exits_within_it(tmp_path: Path) -> None:
    work, server = budget_server(tmp_path, 0.05)
    base = work.head()
    tip = fast_commits(work, "refs/heads/main", mixed(200))
    pushed = push(work)
    assert pushed.returncode != 0
    assert any(line.startswith("time-budget: ") for line in remote_lines(pushed))
    # The hook itself, timed from its start: it counts from there, not from its imports.
    carry(work, server)
    started = time.monotonic()
    hook = evidence(
        server,
        "pre-receive",
        input=f"{base} {tip} refs/heads/main\n".encode(),
        env={"GIT_EVIDENCE_PUSHER": AGENT},
    )
    elapsed = time.monotonic() - started
    assert hook.returncode == 2
    assert "\ntime-budget: " in "\n" + hook.stderr
    assert elapsed < 0.05 + 1.0, elapsed


def test_the_time_budget_refusal_names_the_pusher_and_the_commits_judged(tmp_path: Path) -> None:
    work, _ = budget_server(tmp_path, 0.05)
    fast_commits(work, "refs/heads/main", mixed(30))
    said = joined(remote_lines(push(work)))
    assert "judging stopped at the time budget of 0.05 s" in said
    assert re.search(r"[\d,]+( of the range's [\d,]+)? commits judged; pushed by agent-bot", said)
    assert f"could not decide, refusing ({AGENT};" in said


@pytest.mark.slow  # waits on the clock
def test_the_time_budget_also_bounds_writing_the_report(tmp_path: Path) -> None:
    """A report that cannot be written in time (nobody reads the hook's stderr) ends in
    a time-budget refusal, not in an allowed or a late refusal."""
    budget = 6.0  # ample for judging 300 commits on a busy machine
    work, server = budget_server(tmp_path, budget)
    base = work.head()
    tip = fast_commits(work, "refs/heads/main", mixed(300))
    carry(work, server)
    hook = subprocess.Popen(
        [sys.executable, "-m", "git_evidence", "pre-receive", "--max-findings", "0"],
        cwd=server,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "GIT_EVIDENCE_PUSHER": AGENT},
    )
    assert hook.stdin is not None
    hook.stdin.write(f"{base} {tip} refs/heads/main\n".encode())
    hook.stdin.close()
    time.sleep(budget + 1.0)  # the report (> 64 KiB) fills the pipe; nobody reads it
    assert hook.stderr is not None
    said = hook.stderr.read().decode("utf-8", "replace")
    hook.wait(timeout=60)
    assert hook.returncode == 2, said[-2000:]
    assert "\ntime-budget: " in said
    assert "writing the report" in said
