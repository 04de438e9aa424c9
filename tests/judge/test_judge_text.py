"""What ``git evidence judge`` says, end to end on the small project of test_judge.py:
a property failure names the failing tests (or the exit code), its reproduce command
runs as printed in an export of the candidate and fails the same way, test ids are
pytest's node ids (a hostile JUnit classname leads the judge nowhere outside the
workspace), a changed fixture is one file, and a draft policy is tried with
``--policy FILE``."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.judge_repos import APP, FAST, POLICY, Repo, flaky_on_main
from helpers.repos import evidence

from git_evidence.ledger.fingerprint import fingerprint
from git_evidence.policy.parsing import parse_policy
from git_evidence.sandbox.outcomes import read_junit

NODE = "tests/properties/test_prop.py::test_seeded_property"
FAILS_ON_SEED_1 = APP.replace("return True", "return seed != 1")


def export(repo: Repo, rev: str, where: Path) -> Path:
    """The tree of ``rev`` as plain files, no git directory: what a user reproduces in."""
    where.mkdir()
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev], cwd=repo.path, capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    return where


def reproduce_command(doc: dict[str, object]) -> str:
    marker = "run at the root of an export of the candidate: "
    assert marker in str(doc["next"]), doc["next"]
    return str(doc["next"]).split(marker, 1)[1]


# -- the failing tests are named ---------------------------------------------------------


def test_a_junit_property_failure_names_the_test_that_failed_on_every_run(repo: Repo) -> None:
    repo.product(FAILS_ON_SEED_1)
    result, doc = repo.judge("--property", "junit", "--seeds", "2")
    assert doc["class"] == "property_fail" and result.returncode == 1, doc["reason"]
    assert doc["reason"] == f"property junit: seed 1 failed on every run: {NODE}"
    assert doc["details"] == [f"junit: seed 1 failed on every run: {NODE}"]
    assert doc["failing"] == [{"property": "junit", "seed": 1, "tests": [NODE], "codes": [1]}]
    text = evidence(repo.path, "judge", "--property", "junit", "--seeds", "2", env=FAST)
    assert f"  why: property junit: seed 1 failed on every run: {NODE}\n" in text.stdout


# slow: the class and the failing seed of a plain property are test_judge.py's
# test_a_seed_that_always_fails_is_a_property_failure_naming_it, in the default run
@pytest.mark.slow
def test_a_property_failure_without_junit_names_the_exit_code(repo: Repo) -> None:
    repo.product(FAILS_ON_SEED_1)
    _, doc = repo.judge("--property", "suite", "--seeds", "2")
    assert doc["class"] == "property_fail", doc["reason"]
    assert doc["reason"] == "property suite: seed 1 failed on every run: exit 1"
    assert doc["failing"] == [{"property": "suite", "seed": 1, "tests": [], "codes": [1]}]


# slow (two runs that wait out their timeout): a timed-out property's class and codes are
# test_judge.py's test_a_hanging_command_times_out_and_its_processes_are_killed
@pytest.mark.slow
def test_a_timed_out_property_names_the_timeout(repo: Repo) -> None:
    repo.product(APP)
    _, doc = repo.judge("--property", "hang")
    assert doc["class"] == "property_fail", doc["reason"]
    assert doc["reason"] == "property hang: seed 0 failed on every run: exit timeout"


# -- the reproduce command runs as printed ----------------------------------------------


def test_the_reproduce_command_of_a_junit_property_runs_as_printed_and_fails_the_same_way(
    repo: Repo, tmp_path: Path
) -> None:
    candidate = repo.product(FAILS_ON_SEED_1)
    _, doc, kept = repo.judge_kept("--property", "junit", "--seeds", "2")
    assert doc["class"] == "property_fail", doc["reason"]
    command = reproduce_command(doc)
    assert "{junitxml}" not in command and "--junitxml=junit.xml" in command
    assert command.startswith("PYTHONPATH=src EVIDENCE_SEED=1 EVIDENCE_RUN=1 PYTHONHASHSEED=1 ")
    assert "--policy" not in command  # a test command takes no option of the judge's
    where = export(repo, candidate, tmp_path / "export")
    ran = subprocess.run(["sh", "-c", command], cwd=where, capture_output=True, text=True)
    assert ran.returncode == 1, ran.stdout + ran.stderr  # the code of every judged run
    tests, problem = read_junit(str(where / "junit.xml"), str(where))
    assert problem is None and tests is not None
    assert sorted(t for t, case in tests.items() if case.outcome == "failed") == [NODE]
    # the same failure as the judge's runs of seed 1: the same fingerprint
    judged = []
    for xml in sorted(kept.glob("scratch/run-*/run.xml")):
        runs, _ = read_junit(str(xml), str(kept / "ws-1"))
        if runs and runs[NODE].outcome == "failed":
            judged.append(fingerprint(NODE, "failed", runs[NODE].type, runs[NODE].message))
    case = tests[NODE]
    assert judged == [fingerprint(NODE, "failed", case.type, case.message)] * 2


def test_the_reproduce_command_of_a_plain_property_runs_as_printed(
    repo: Repo, tmp_path: Path
) -> None:
    candidate = repo.product(FAILS_ON_SEED_1)
    _, doc = repo.judge("--property", "suite", "--seeds", "2")
    command = reproduce_command(doc)
    where = export(repo, candidate, tmp_path / "export")
    ran = subprocess.run(["sh", "-c", command], cwd=where, capture_output=True, text=True)
    assert ran.returncode == 1 and "1 failed" in ran.stdout, ran.stdout + ran.stderr
    seed_0 = command.replace("EVIDENCE_SEED=1", "EVIDENCE_SEED=0")
    passed = subprocess.run(["sh", "-c", seed_0], cwd=where, capture_output=True, text=True)
    assert passed.returncode == 0, passed.stdout + passed.stderr  # the seed is what fails


def test_the_freeze_line_keeps_its_junit_placeholder(repo: Repo) -> None:
    flaky_on_main(repo)
    _, doc = repo.judge("--property", "junit")
    assert doc["class"] == "flake_candidate", doc["reason"]
    assert "'--junitxml={junitxml}'" in doc["freeze_line"]  # freeze add reads JUnit there


# -- one spelling of a test id ------------------------------------------------------------


def test_every_test_id_of_a_verdict_is_a_pytest_node_id(repo: Repo) -> None:
    repo.product(FAILS_ON_SEED_1)
    _, doc = repo.judge("--property", "junit", "--seeds", "2")
    assert doc["failed_tests"] == [NODE]
    assert doc["passed_tests"] == []  # seed 0 passed it, seed 1 failed it: failed
    repo.product(APP)
    _, doc = repo.judge("--property", "junit")
    assert doc["class"] == "accept" and doc["passed_tests"] == [NODE], doc["reason"]


HOSTILE_JUNIT = """\
import os, sys
outside = sys.argv[2]
os.makedirs("tests/deep/er", exist_ok=True)
open("tests/deep/er/test_mod.py", "w").write("")
if not os.path.lexists("linked"):  # the second run finds the first one's
    os.symlink(outside, "linked")  # a folder of the workspace that is a link out of it
    os.symlink(outside + "/test_out.py", "test_alias.py")  # a module that is a link
names = [
    "tests.deep.er.test_mod.TestA.TestB",  # a real module: a node id
    "tests.deep",                          # no such module: kept
    "....etc.passwd",                      # empty parts: never looked at
    "linked.test_out",                     # through a link: never followed
    "test_alias",                          # a module that is a link: not a module
    "tests.deep.er.test_mod/../../..",     # a part that is no identifier
    "a" * 300 + ".b",                      # a name too long for the file system
]
cases = "".join(f'<testcase classname="{n}" name="test_x"/>' for n in names)
open(sys.argv[1], "w").write(f"<testsuite>{cases}</testsuite>")
"""


def test_a_hostile_junit_classname_leads_the_judge_nowhere_outside_the_workspace(
    repo: Repo, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "test_out.py").write_text("")
    repo.product(APP)
    result, doc = repo.judge(
        "--repeat", "2", "--", sys.executable, "-c", HOSTILE_JUNIT, "{junitxml}", str(outside)
    )
    assert doc["class"] == "accept", result.stdout + result.stderr
    assert doc["passed_tests"] == sorted(
        [
            "tests/deep/er/test_mod.py::TestA::TestB::test_x",
            "tests.deep::test_x",
            "....etc.passwd::test_x",
            "linked.test_out::test_x",
            "test_alias::test_x",
            "tests.deep.er.test_mod/../../..::test_x",
            "a" * 300 + ".b::test_x",
        ]
    )


# -- a changed fixture is one file ------------------------------------------------------


def test_a_candidate_changing_one_fixture_is_one_file_of_breach(repo: Repo) -> None:
    repo.commit("edit a fixture", {"tests/fixtures/a.json": '{"a": 1, "b": 2}\n'})
    result, doc = repo.judge()
    assert doc["class"] == "fixture_breach" and result.returncode == 1, doc["reason"]
    assert doc["reason"].endswith("(before any run): 1 file(s)"), doc["reason"]
    [line] = doc["details"]
    assert line.startswith("fixture changed by the candidate: tests/fixtures/a.json: modified (")
    assert [d["path"] for d in doc["drift"]["before"]] == ["tests/fixtures/a.json"]


# -- a draft policy ---------------------------------------------------------------------

DRAFT = (
    POLICY
    + """
[[judge.property]]
id = "drafted"
command = ["sh", "-c", "test $EVIDENCE_SEED -ne 1"]
seeds = 2

[[judge.property]]
id = "wobbly"
command = ["sh", "-c", "test $EVIDENCE_RUN -ne 2"]
"""
)


def test_judge_policy_file_runs_the_drafts_properties_and_says_it_is_a_draft(
    repo: Repo, tmp_path: Path
) -> None:
    draft = tmp_path / "draft.toml"
    draft.write_text(DRAFT)
    repo.product(APP)
    result, doc = repo.judge("--property", "drafted")  # the base's policy has no such one
    assert result.returncode == 2 and "no property drafted" in result.stdout
    result, doc = repo.judge("--policy", str(draft), "--property", "drafted")
    assert doc["class"] == "property_fail" and result.returncode == 1, doc["reason"]
    assert doc["policy"] == {
        "source": f"draft policy {draft} (not in force)",
        "digest": parse_policy(DRAFT.encode(), str(draft)).digest,
    }
    assert doc["reason"] == "property drafted: seed 1 failed on every run: exit 1"
    assert "--policy" not in doc["next"]  # the reproduce command is the property's own
    text = evidence(
        repo.path, "judge", "--policy", str(draft), "--property", "drafted", env=FAST
    ).stdout
    assert f"\n  policy: draft policy {draft} (not in force)\n" in text


def test_a_draft_policys_freeze_line_carries_no_policy_option(repo: Repo, tmp_path: Path) -> None:
    draft = tmp_path / "draft.toml"
    draft.write_text(DRAFT)
    repo.product(APP)
    _, doc = repo.judge("--policy", str(draft), "--property", "wobbly")
    assert doc["class"] == "flake_candidate", doc["reason"]
    line = doc["freeze_line"]  # the base flakes too: the line is printed
    assert line is not None and line in doc["next"]
    assert shlex.split(line)[:5] == ["git", "evidence", "freeze", "add", "--ci"]
    assert "--policy" not in line  # freeze add takes no --policy


def test_a_verdict_under_a_draft_policy_is_never_noted(repo: Repo, tmp_path: Path) -> None:
    draft = tmp_path / "draft.toml"
    draft.write_text(DRAFT)
    candidate = repo.product(APP)
    result = evidence(
        repo.path, "judge", "--policy", str(draft), "--property", "drafted", "--note", env=FAST
    )
    assert result.returncode == 2 and "a draft (not in force)" in result.stderr, result.stderr
    notes = repo.git("notes", "--ref=refs/notes/evidence-verdicts", "list", check=False)
    assert candidate not in notes.stdout


def test_a_draft_policy_that_does_not_parse_is_exit_2_naming_the_file(
    repo: Repo, tmp_path: Path
) -> None:
    draft = tmp_path / "draft.toml"
    draft.write_text("[judge]\nrepeat = 1\n")
    repo.product(APP)
    result = evidence(repo.path, "judge", "--policy", str(draft), env=FAST)
    assert result.returncode == 2
    assert str(draft) in result.stderr and "judge.repeat" in result.stderr, result.stderr


def test_the_parts_of_a_draft_judgement_merge_but_are_never_noted(
    repo: Repo, tmp_path: Path
) -> None:
    draft = tmp_path / "draft.toml"
    draft.write_text(DRAFT)
    repo.product(APP)
    part = tmp_path / "part.json"
    shard = evidence(
        repo.path,
        "judge",
        "--policy",
        str(draft),
        "--property",
        "drafted",
        "--shard",
        "1/1",
        "--out",
        str(part),
        env=FAST,
    )
    assert shard.returncode == 1, shard.stdout + shard.stderr
    merged = evidence(repo.path, "judge", "--merge", str(part), "--format", "json", env=FAST)
    assert merged.returncode == 1, merged.stdout + merged.stderr
    doc = json.loads(merged.stdout)
    assert doc["policy"]["source"] == f"draft policy {draft} (not in force)"
    assert doc["reason"] == "property drafted: seed 1 failed on every run: exit 1"
    noted = evidence(repo.path, "judge", "--merge", str(part), "--note", env=FAST)
    assert noted.returncode == 2, noted.stdout + noted.stderr
    assert f"judged under the draft policy {draft} (not in force)" in noted.stderr
