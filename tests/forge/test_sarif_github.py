"""SARIF that GitHub code scanning accepts, from ``git evidence ci`` on real pull
requests: a fixture breach, a 1,500-file mixed commit, a rename and a deletion. Each
log is checked against the published SARIF 2.1.0 schema, against what code scanning
asks (one test per rule of SARIF Multitool's GitHub set that can apply: GH1001
locations, GH1003 regions, GH1004 at most 1,000 locations a result, GH1005 relative
URIs, GH1007 plain messages, GH2012 rule descriptions, the category), and, where
SARIF Multitool is installed (``.ci/run`` installs it), by its own ``validate`` with
the GitHub rules: zero errors."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.forge_jobs import Forge, branch
from helpers.locks import pin_main
from helpers.repos import PROJECT
from helpers.sarif_schema import sarif_errors

from git_evidence.forge import sarif

FIXTURE = "tests/fixtures/a.json"


def ci_sarif(forge: Forge, head: str) -> dict[str, Any]:
    result = forge.pull_request(head, args=("--format", "sarif"))
    assert result.returncode == 1, result.stdout + result.stderr
    log: dict[str, Any] = json.loads(result.stdout)
    return log


INSTALLED = PROJECT / ".ci" / "tools" / "node_modules" / "@microsoft"
PLATFORM_BINARY = INSTALLED / "sarif-multitool-linux" / "Sarif.Multitool"


def multitool() -> str | None:
    """The platform binary (the npm package's node wrapper runs it through a shell,
    which splits `Gh;Sarif`): $SARIF_MULTITOOL, else where .ci/run installs it."""
    found = os.environ.get("SARIF_MULTITOOL") or str(PLATFORM_BINARY)
    return found if os.access(found, os.X_OK) else None


def github_rule_errors(log: dict[str, Any]) -> list[str]:
    """What code scanning would refuse or misplace, rule by rule."""
    problems = []
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    if not driver.get("informationUri"):
        problems.append("SARIF2005: no tool informationUri")
    for rule in driver["rules"]:
        for key in ("shortDescription", "fullDescription", "help"):
            if not (rule.get(key) or {}).get("text"):
                problems.append(f"GH2012: rule {rule['id']} has no {key}")
        if not rule.get("helpUri", "").startswith("https://"):
            problems.append(f"rule {rule['id']} has no helpUri")
    if not run.get("automationDetails", {}).get("id", "").endswith("/"):
        problems.append("no automationDetails.id category")
    for index, result in enumerate(run["results"]):
        where = f"results[{index}]"
        locations = result.get("locations") or []
        if not locations:
            problems.append(f"GH1001: {where} has no location")
        if len(locations) > 1000:
            problems.append(f"GH1004: {where} has {len(locations)} locations")
        for location in locations:
            physical = location.get("physicalLocation") or {}
            uri = (physical.get("artifactLocation") or {}).get("uri", "")
            if not uri or "://" in uri or uri.startswith("/"):
                problems.append(f"GH1005: {where} location {uri!r} is not a relative path")
            if (physical.get("region") or {}).get("startLine") != 1:
                problems.append(f"GH1003: {where} has no region startLine")
        message = result.get("message") or {}
        if not message.get("text") or "arguments" in message or "id" in message:
            problems.append(f"GH1007: {where} message is not plain text")
        if not result.get("partialFingerprints"):
            problems.append(f"{where} has no partialFingerprints")
    return problems


def multitool_errors(log: dict[str, Any], tmp_path: Path) -> list[str]:
    tool = multitool()
    if tool is None:
        message = (
            "LOUD SKIP: SARIF Multitool is not installed (npm install "
            "@microsoft/sarif-multitool; .ci/run does and sets SARIF_MULTITOOL)"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    given = tmp_path / "log.sarif"
    given.write_text(json.dumps(log))
    out = tmp_path / "validation.sarif"
    done = subprocess.run(
        [tool, "validate", "--rule-kind", "Gh;Sarif", "--output", str(out), str(given)],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert out.is_file(), done.stdout + done.stderr
    report = json.loads(out.read_text())
    return [
        f"{r['ruleId']}: {r['message'].get('text', r['message'])}"
        for run in report["runs"]
        for r in run.get("results", ())
        if r.get("level", "warning") == "error"
    ]


def accepted(log: dict[str, Any], tmp_path: Path) -> None:
    assert sarif_errors(log) == []
    assert github_rule_errors(log) == []
    assert multitool_errors(log, tmp_path) == []


def uris(log: dict[str, Any], rule: str) -> list[str]:
    return [
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in log["runs"][0]["results"]
        if r["ruleId"] == rule
    ]


def texts(log: dict[str, Any], rule: str) -> list[str]:
    return [r["message"]["text"] for r in log["runs"][0]["results"] if r["ruleId"] == rule]


def test_a_fixture_breach_is_located_at_the_fixtures_real_path(
    forge: Forge, tmp_path: Path
) -> None:
    pin_main(forge.work)
    head = branch(forge.work, {FIXTURE: '{"a": 3}\n'})
    log = ci_sarif(forge, head)
    accepted(log, tmp_path)
    assert uris(log, "fixture-breach") == [FIXTURE]
    (text,) = texts(log, "fixture-breach")
    assert text.startswith(f"{FIXTURE} (modified, (") and " -> " in text


def test_a_1500_file_mixed_commit_gives_one_result_per_path(forge: Forge, tmp_path: Path) -> None:
    files = {f"src/gen/m{i:04}.py": f"x = {i}\n" for i in range(1500)}
    head = branch(forge.work, {**files, FIXTURE: "{}\n"})
    log = ci_sarif(forge, head)
    accepted(log, tmp_path)
    located = uris(log, "mixed-commit")
    assert len(located) == 1501 and len(set(located)) == 1501
    assert all(len(r["locations"]) == 1 for r in log["runs"][0]["results"])


def test_a_renamed_fixture_names_both_real_paths_and_says_the_old_one_is_gone(
    forge: Forge, tmp_path: Path
) -> None:
    forge.work.git("checkout", "-q", "-B", "topic", "origin/main")
    forge.work.git("mv", FIXTURE, "tests/fixtures/renamed.json")
    head = forge.work.commit("rename", {"src/app.py": "y = 1\n"})
    log = ci_sarif(forge, head)
    accepted(log, tmp_path)
    located = uris(log, "mixed-commit")
    assert {"tests/fixtures/renamed.json", FIXTURE} <= set(located)
    old = texts(log, "mixed-commit")[located.index(FIXTURE)]
    assert old.startswith(f"{FIXTURE} (fixture, deleted: named by the path it had)")


def test_a_deleted_fixture_is_located_at_its_old_path_and_said_deleted(
    forge: Forge, tmp_path: Path
) -> None:
    forge.work.git("checkout", "-q", "-B", "topic", "origin/main")
    forge.work.git("rm", "-q", FIXTURE)
    head = forge.work.commit("delete", {"src/app.py": "z = 1\n"})
    log = ci_sarif(forge, head)
    accepted(log, tmp_path)
    assert FIXTURE in uris(log, "mixed-commit")
    assert any("deleted: named by the path it had" in t for t in texts(log, "mixed-commit"))
    codequality = forge.pull_request(head, args=("--format", "codequality"))
    issues = json.loads(codequality.stdout)
    paths = {i["location"]["path"] for i in issues}
    assert FIXTURE in paths and all(" (" not in p for p in paths)


def test_the_fence_and_the_judge_upload_under_different_categories() -> None:
    categories = {sarif.FENCE, sarif.JUDGE}
    assert len(categories) == 2
    assert sarif.FENCE.endswith("/") and sarif.JUDGE.endswith("/")


def test_fingerprints_stay_when_the_same_change_is_judged_again(forge: Forge) -> None:
    head = branch(forge.work, {"src/app.py": "w = 1\n", FIXTURE: "{}\n"})
    first = ci_sarif(forge, head)
    second = ci_sarif(forge, head)

    def prints(log: dict[str, Any]) -> list[str]:
        return [r["partialFingerprints"]["gitEvidence/v1"] for r in log["runs"][0]["results"]]

    assert prints(first) == prints(second)
    assert len(set(prints(first))) == len(prints(first))


def test_every_rule_and_judge_class_has_a_full_description() -> None:
    from typing import get_args

    from git_evidence.core.errors import ErrorRule
    from git_evidence.forge.rule_texts import DESCRIPTIONS
    from git_evidence.judge.classes import CLASSES, UNDECIDED
    from git_evidence.rules.table import RuleId

    named = {*get_args(RuleId), *get_args(ErrorRule), *CLASSES, UNDECIDED}
    assert named <= set(DESCRIPTIONS), sorted(named - set(DESCRIPTIONS))


def test_a_judges_sarif_is_accepted_under_its_own_category(tmp_path: Path) -> None:
    import sys

    from helpers.repos import evidence
    from helpers.sarif_schema import property_repo

    work = property_repo(tmp_path, [sys.executable, "-c", "import sys; sys.exit(1)"])
    result = evidence(work.path, "judge", "--base", "HEAD", "--format", "sarif")
    assert result.returncode == 1, result.stderr
    log = json.loads(result.stdout)
    accepted(log, tmp_path)
    assert log["runs"][0]["automationDetails"] == {"id": "git-evidence/judge/"}
