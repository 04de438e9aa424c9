"""The pytest plugin in real sessions: pytester runs pytest in a subprocess
on a small generated suite, with the labels from a file, from a git base, or sealed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest
from helpers.plugin_runs import (
    ENV_NAMES,
    LABELS_FILE,
    QUOTA_FILE,
    commit_all,
    flaky,
    run,
    write_labels,
    write_quota,
)
from helpers.repos import PROJECT, evidence, git

# Sessions started here load every installed plugin (the entry points), as a user's do.
pytestmark = pytest.mark.installed_plugins

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def quiet_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)


def runs_of(pytester: pytest.Pytester, name: str) -> int:
    path = pytester.path / f"{name}.runs"
    return int(path.read_text()) if path.exists() else 0


def junit_cases(path: Path) -> dict[str, ElementTree.Element]:
    root = ElementTree.parse(path).getroot()
    return {case.get("name", ""): case for case in root.iter("testcase")}


def props(case: ElementTree.Element) -> dict[str, str]:
    return {p.get("name", ""): p.get("value", "") for p in case.iter("property")}


# -- labels must cover the collection ----------------------------------------------


def test_an_unlabelled_test_is_a_collection_error_and_nothing_runs(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_a="def test_known(): pass\ndef test_new(): raise SystemExit(9)\n")
    write_labels(pytester, {"test_a.py::test_known": "invariant"})
    write_quota(pytester, 0)
    result = run(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting labels.tsv*",
            "evidence: 1 collected test(s) have no row in file:labels.tsv:",
            "  test_a.py::test_new",
            "To fix: an evidence writer adds or corrects the rows*",
            "*Interrupted: 1 error during collection*",
        ]
    )
    assert "test_known" not in result.stdout.str().split("no row in")[1].split("To fix")[0]


def test_a_disagreeing_marker_is_an_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_a="""
import pytest
@pytest.mark.evidence("nondeterministic")
def test_loose(): pass
@pytest.mark.evidence("invariant")
def test_agrees(): pass
"""
    )
    write_labels(
        pytester, {"test_a.py::test_loose": "invariant", "test_a.py::test_agrees": "invariant"}
    )
    write_quota(pytester, 5)
    result = run(pytester, "--strict-markers")
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "evidence: 1 evidence marker(s) disagree with file:labels.tsv:",
            "  test_a.py::test_loose: marked 'nondeterministic', sealed label 'invariant'",
        ]
    )


def test_an_agreeing_marker_runs_under_strict_markers(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_a="import pytest\n@pytest.mark.evidence('invariant')\ndef test_x(): pass\n"
    )
    write_labels(pytester, {"test_a.py::test_x": "invariant"})
    write_quota(pytester, 0)
    result = run(pytester, "--strict-markers")
    result.assert_outcomes(passed=1)


def test_a_broken_labels_file_names_file_and_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_a="def test_x(): pass\n")
    (pytester.path / LABELS_FILE).write_text(
        "test_a.py::test_x\tinvariant\ntest_a.py::test_x\tnondeterministic\n"
    )
    write_quota(pytester, 0)
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*evidence: file:labels.tsv:2: duplicate node id*"])


# -- retries ---------------------------------------------------------------------------


def test_a_nondeterministic_test_passes_on_a_retry_and_spends_quota(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_net=flaky("net"))
    write_labels(pytester, {"test_net.py::test_net": "nondeterministic"})
    write_quota(pytester, 3)
    result = run(pytester, "--junitxml=junit.xml", "--evidence-seed", "7")
    assert result.ret == 0
    assert result.parseoutcomes() == {"passed": 1, "rerun": 1}
    result.stdout.fnmatch_lines(
        [
            "evidence: seed 7, labels from file:labels.tsv (sha256:*)",
            "*git evidence*",
            "seed 7; retries used: 1 of 3 left in file:quota.jsonl",
            "passed on a retry (nondeterministic): test_net.py::test_net (2 attempts)",
        ]
    )
    case = junit_cases(pytester.path / "junit.xml")["test_net"]
    assert props(case) == {
        "test_id": "test_net.py::test_net",
        "seed": "7",
        "label": "nondeterministic",
        "attempts": "2",
        "evidence": "flaky",
    }
    flaky_failures = case.findall("flakyFailure")
    assert len(flaky_failures) == 1 and case.find("failure") is None
    assert "fails its first 1 run(s)" in (flaky_failures[0].findtext("stackTrace") or "")
    assert len(list(ElementTree.parse(pytester.path / "junit.xml").iter("testcase"))) == 1


def test_a_nondeterministic_test_with_the_quota_at_zero_fails(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_net=flaky("net"))
    write_labels(pytester, {"test_net.py::test_net": "nondeterministic"})
    write_quota(pytester, 0)
    result = run(pytester, "--junitxml=junit.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert runs_of(pytester, "net") == 1
    result.stdout.fnmatch_lines(
        [
            "*evidence: retry refused*",
            "no retry was ever granted (file:quota.jsonl)*",
            "not retried: no retry was ever granted: test_net.py::test_net (1 attempt)",
        ]
    )
    assert props(junit_cases(pytester.path / "junit.xml")["test_net"])["evidence"] == "quota"


def test_the_quota_is_shared_by_the_session(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_a=flaky("one"), test_b=flaky("two"))
    write_labels(
        pytester,
        {"test_a.py::test_one": "nondeterministic", "test_b.py::test_two": "nondeterministic"},
    )
    write_quota(pytester, 1)
    result = run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.parseoutcomes() == {"passed": 1, "failed": 1, "rerun": 1}
    assert runs_of(pytester, "one") + runs_of(pytester, "two") == 3


def test_retries_stop_at_the_policy_limit(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_net=flaky("net", fails=5))
    write_labels(pytester, {"test_net.py::test_net": "nondeterministic"})
    write_quota(pytester, 10)
    monkeypatch.setenv("EVIDENCE_RETRIES", "2")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert runs_of(pytester, "net") == 3
    result.stdout.fnmatch_lines(
        ["failed every retry (nondeterministic): test_net.py::test_net (3 attempts)"]
    )


def test_a_retry_keeps_module_fixtures_and_renews_function_fixtures(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(
        test_a="""
import pathlib, pytest
LOG = pathlib.Path(__file__).with_name("log")
def note(text):
    with LOG.open("a") as out:
        out.write(text + "\\n")
@pytest.fixture(scope="module")
def shared():
    note("module up")
    yield
    note("module down")
@pytest.fixture
def fresh():
    note("function up")
    yield
    note("function down")
"""
        + "def test_before(shared):\n    note('before')\n"
        # the retried test is the module's last: its retry must keep the module fixture
        # although the next test is in another module
        + flaky("net").replace("def test_net():", "def test_net(shared, fresh):"),
        test_b="def test_b():\n    pass\n",
    )
    write_labels(
        pytester,
        {
            "test_a.py::test_net": "nondeterministic",
            "test_a.py::test_before": "invariant",
            "test_b.py::test_b": "invariant",
        },
    )
    write_quota(pytester, 1)
    result = run(pytester)
    assert result.ret == 0
    assert result.parseoutcomes() == {"passed": 3, "rerun": 1}
    assert (pytester.path / "log").read_text().splitlines() == [
        "module up",
        "before",
        "function up",
        "function down",
        "function up",
        "function down",
        "module down",
    ]


def test_outside_a_repository_without_labels_says_what_to_pass(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_a="def test_x(): pass\n")
    result = run(pytester, files=False)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*is not in a git repository: there is no base to read the labels from*",
            "*--evidence-labels PATH*",
        ]
    )


def test_retries_under_xdist_share_one_quota_and_one_seed(pytester: pytest.Pytester) -> None:
    seen = """
import os, pathlib, random
def test_{0}():
    with open(pathlib.Path(__file__).with_name("seen"), "a") as out:
        out.write(f"{{os.environ['PYTEST_XDIST_WORKER']}} {{random.random()}}\\n")
"""
    pytester.makepyfile(
        test_a=flaky("one") + seen.format("sa"), test_b=flaky("two") + seen.format("sb")
    )
    write_labels(
        pytester,
        {
            "test_a.py::test_one": "nondeterministic",
            "test_a.py::test_sa": "invariant",
            "test_b.py::test_two": "nondeterministic",
            "test_b.py::test_sb": "invariant",
        },
    )
    write_quota(pytester, 1)
    result = run(pytester, "-n", "2", "--dist", "loadfile", "--junitxml=junit.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.parseoutcomes() == {"passed": 3, "failed": 1, "rerun": 1}
    assert runs_of(pytester, "one") + runs_of(pytester, "two") == 3
    result.stdout.fnmatch_lines(["seed *; retries used: 1 of 1 left in file:quota.jsonl"])
    seen_lines = (pytester.path / "seen").read_text().splitlines()
    workers = {line.split()[0] for line in seen_lines}
    values = {line.split()[1] for line in seen_lines}
    assert len(seen_lines) == 2 and len(workers) == 2 and len(values) == 1
    cases = junit_cases(pytester.path / "junit.xml")
    assert sum(int(props(c)["attempts"]) for c in cases.values()) == 5
    notes = sorted(props(c).get("evidence", "") for c in cases.values())
    assert notes == ["", "", "flaky", "quota"]
    assert sum(len(c.findall("flakyFailure")) for c in cases.values()) == 1


def test_an_unlabelled_test_under_xdist_runs_nothing(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_a="def test_x(): raise SystemExit(3)\n")
    write_labels(pytester, {})
    write_quota(pytester, 0)
    result = run(pytester, "-n", "2")
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        ["evidence: 1 collected test(s) have no row*", "  test_a.py::test_x"]
    )
    assert "1 error" in result.stdout.lines[-1]


def test_an_invariant_that_fails_then_passes_is_a_flicker_failure(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_core=flaky("core"))
    write_labels(pytester, {"test_core.py::test_core": "invariant"})
    write_quota(pytester, 0)  # the confirming run is never spent
    result = run(pytester, "--junitxml=junit.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.parseoutcomes() == {"failed": 1}
    assert runs_of(pytester, "core") == 2
    result.stdout.fnmatch_lines(
        [
            "*evidence: flicker on an invariant*",
            "failed, then passed on attempt 2 with the same seed*",
            "flicker on an invariant (a failure): test_core.py::test_core (2 attempts)",
        ]
    )
    case = junit_cases(pytester.path / "junit.xml")["test_core"]
    assert case.find("failure") is not None
    assert props(case)["evidence"] == "flicker"


def test_an_invariant_that_fails_twice_is_a_plain_failure(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_core=flaky("core", fails=9))
    write_labels(pytester, {"test_core.py::test_core": "invariant"})
    write_quota(pytester, 0)
    result = run(pytester)
    assert result.parseoutcomes() == {"failed": 1, "rerun": 1}
    assert "flicker" not in result.stdout.str()


def test_a_failing_characterization_test_is_changed_behaviour(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_out="def test_output():\n    assert 'new' == 'old'\n")
    write_labels(pytester, {"test_out.py::test_output": "characterization"})
    write_quota(pytester, 0)
    result = run(pytester, "--junitxml=junit.xml")
    assert result.ret == 0
    assert result.parseoutcomes() == {"changed": 1}
    result.stdout.fnmatch_lines(["changed behaviour (characterization): test_out.py::test_output*"])
    case = junit_cases(pytester.path / "junit.xml")["test_output"]
    skipped = case.find("skipped")
    assert skipped is not None and skipped.get("type") == "evidence.changed"


def test_evidence_strict_makes_changed_behaviour_fail(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_out="def test_output():\n    assert 'new' == 'old'\n")
    write_labels(pytester, {"test_out.py::test_output": "characterization"})
    write_quota(pytester, 0)
    result = run(pytester, "--evidence-strict")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert result.parseoutcomes() == {"failed": 1}
    result.stdout.fnmatch_lines(["*evidence: changed behaviour*"])


# -- where the labels come from ------------------------------------------------------


def test_labels_edited_in_the_working_tree_are_ignored(pytester: pytest.Pytester) -> None:
    labels = "tests/evidence-labels.tsv"
    git(pytester.path, "init", "-q", "-b", "main")
    pytester.makepyfile(test_a="def test_old(): pass\n")
    (pytester.path / "tests").mkdir()
    (pytester.path / labels).write_text("test_a.py::test_old\tinvariant\n")
    commit_all(pytester.path, "base")
    git(pytester.path, "checkout", "-qb", "feature")
    pytester.makepyfile(test_a="def test_old(): pass\ndef test_new(): pass\n")
    (pytester.path / labels).write_text(
        "test_a.py::test_old\tinvariant\ntest_a.py::test_new\tinvariant\n"
    )
    commit_all(pytester.path, "the candidate labels its own test")
    (pytester.path / labels).write_text(
        "test_a.py::test_old\tinvariant\ntest_a.py::test_new\tnondeterministic\n"
    )
    result = run(pytester, files=False)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [
            "evidence: seed *, labels from base:tests/evidence-labels.tsv (sha256:*)",
            "evidence: base * (merge-base of HEAD and refs/heads/main);*",
            "*have no row in base:tests/evidence-labels.tsv:",
            "  test_a.py::test_new",
        ]
    )


def test_a_sealed_labels_file_wins_over_the_base(pytester: pytest.Pytester, tmp_path: Path) -> None:
    git(pytester.path, "init", "-q", "-b", "main")
    pytester.makepyfile(test_a="def test_x(): pass\n")
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests/evidence-labels.tsv").write_text("")
    commit_all(pytester.path, "base")
    sealed = tmp_path / "sealed-labels.tsv"
    sealed.write_text("test_a.py::test_x\tinvariant\n")
    git(pytester.path, "config", "evidence.labelsFile", str(sealed))
    result = run(pytester, files=False)
    assert result.ret == 0
    result.stdout.fnmatch_lines([f"evidence: seed *, labels from sealed:{sealed} (sha256:*)"])


def test_no_labels_file_at_the_base_says_how_to_start(pytester: pytest.Pytester) -> None:
    git(pytester.path, "init", "-q", "-b", "main")
    pytester.makepyfile(test_a="def test_x(): pass\n")
    commit_all(pytester.path, "base")
    result = run(pytester, files=False)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*no labels file tests/evidence-labels.tsv at *", "*git evidence labels init*"]
    )


def test_labels_from_the_judge_variables(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_net=flaky("net"))
    write_labels(pytester, {"test_net.py::test_net": "nondeterministic"}, "judge-labels.tsv")
    write_quota(pytester, 1)
    monkeypatch.setenv("EVIDENCE_LABELS_FILE", str(pytester.path / "judge-labels.tsv"))
    monkeypatch.setenv("EVIDENCE_QUOTA_FILE", str(pytester.path / QUOTA_FILE))
    monkeypatch.setenv("EVIDENCE_SEED", "41")
    result = run(pytester, files=False)
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        ["evidence: seed 41, labels from file:*judge-labels.tsv (sha256:*)"]
    )


def test_a_labels_option_that_disagrees_with_the_judge_is_refused(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_a="def test_x(): pass\n")
    write_labels(pytester, {"test_a.py::test_x": "invariant"})
    write_labels(pytester, {"test_a.py::test_x": "invariant"}, "judge-labels.tsv")
    monkeypatch.setenv("EVIDENCE_LABELS_FILE", str(pytester.path / "judge-labels.tsv"))
    result = run(pytester, "--evidence-labels", LABELS_FILE, files=False)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*--evidence-labels labels.tsv and EVIDENCE_LABELS_FILE=* disagree*"]
    )


# -- seeds ---------------------------------------------------------------------------

DRAWS = """
import pathlib, random
def test_draw():
    with open(pathlib.Path(__file__).with_name("draws"), "a") as out:
        out.write(f"{random.random()}\\n")
"""


def test_evidence_seed_last_replays_the_previous_seed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_d=DRAWS)
    write_labels(pytester, {"test_d.py::test_draw": "invariant"})
    write_quota(pytester, 0)
    first = run(pytester)
    header = next(line for line in first.stdout.lines if line.startswith("evidence: seed"))
    seed = header.split()[2].rstrip(",")
    again = run(pytester, "--evidence-seed", "last")
    assert f"evidence: seed {seed}," in again.stdout.str()
    other = run(pytester, "--evidence-seed", str(int(seed) + 1))
    assert other.ret == 0
    draws = (pytester.path / "draws").read_text().splitlines()
    assert draws[0] == draws[1] != draws[2]


def test_an_option_seed_that_disagrees_with_evidence_seed_is_refused(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_d=DRAWS)
    write_labels(pytester, {"test_d.py::test_draw": "invariant"})
    write_quota(pytester, 0)
    monkeypatch.setenv("EVIDENCE_SEED", "5")
    result = run(pytester, "--evidence-seed", "6")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--evidence-seed 6 and EVIDENCE_SEED=5 disagree*"])


def test_hypothesis_is_seeded_and_its_hits_are_written(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(
        test_p="""
import pathlib
from hypothesis import assume, given, settings, strategies as st
@settings(max_examples=30, database=None)
@given(st.integers())
def test_prop(x):
    assume(x % 7 != 0)
    with open(pathlib.Path(__file__).with_name("drawn"), "a") as out:
        out.write(f"{x}\\n")
"""
    )
    write_labels(pytester, {"test_p.py::test_prop": "invariant"})
    write_quota(pytester, 0)
    hits = pytester.path / "hits"
    monkeypatch.setenv("EVIDENCE_HITS_FILE", str(hits))
    for _ in range(2):
        result = pytester.runpytest_subprocess(
            "-p", "git_evidence", "--evidence-labels", LABELS_FILE, "--evidence-seed", "3"
        )
        assert result.ret == 0
    drawn = (pytester.path / "drawn").read_text().splitlines()
    assert drawn[: len(drawn) // 2] == drawn[len(drawn) // 2 :]  # same seed, same examples
    lines = hits.read_text().splitlines()
    assert lines == [f"test_p.py::test_prop {len(drawn) // 2}"] * 2


# -- opt-in, and other retry plugins -------------------------------------------------


def entry_point(pytester: pytest.Pytester) -> dict[str, str]:
    """Install the pytest11 entry point as pip would, into a directory on PYTHONPATH."""
    site = pytester.path / "site"
    info = site / "git_evidence_probe-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: git-evidence-probe\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text("[pytest11]\ngit_evidence = git_evidence.plugin.entry\n")
    return {"PYTHONPATH": f"{site}:{PROJECT}"}


def test_the_entry_point_loads_the_plugin_inactive(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in entry_point(pytester).items():
        monkeypatch.setenv(name, value)
    pytester.makepyfile(test_a="def test_unlabelled(): pass\n")
    plain = pytester.runpytest_subprocess("-p", "no:hypothesispytest", "--strict-markers")
    plain.assert_outcomes(passed=1)
    assert "evidence:" not in plain.stdout.str()
    assert "git-evidence" in plain.stdout.str() or "git_evidence" in plain.stdout.str()
    write_labels(pytester, {})
    for switch in (["--evidence"], ["-p", "git_evidence"]):
        active = pytester.runpytest_subprocess(
            "-p", "no:hypothesispytest", *switch, "--evidence-labels", LABELS_FILE
        )
        assert active.ret == pytest.ExitCode.INTERRUPTED, switch
        active.stdout.fnmatch_lines(["  test_a.py::test_unlabelled"])


def test_pyproject_declares_the_entry_point() -> None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]
    doc = tomllib.loads((PROJECT / "pyproject.toml").read_text())
    assert doc["project"]["entry-points"]["pytest11"] == {
        "git_evidence": "git_evidence.plugin.entry"
    }
    assert any(
        dep.startswith("pytest-xdist") for dep in doc["project"]["optional-dependencies"]["test"]
    )


def test_another_retry_plugin_is_refused(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(rerunfailures="def pytest_configure(config): pass\n")
    pytester.makepyfile(test_a="def test_x(): pass\n")
    write_labels(pytester, {"test_a.py::test_x": "invariant"})
    write_quota(pytester, 0)
    pytester.syspathinsert()  # the stand-in plugin module, importable by its name
    result = run(pytester, "-p", "rerunfailures")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*evidence: pytest-rerunfailures is active, but under --evidence git evidence "
            "owns retries*"
        ]
    )


# -- labels check and init -----------------------------------------------------------


def labelled_repo(pytester: pytest.Pytester) -> Path:
    git(pytester.path, "init", "-q", "-b", "main")
    pytester.makepyfile(test_a="def test_one(): pass\ndef test_two(): pass\n")
    commit_all(pytester.path, "suite")
    return pytester.path


def test_labels_init_writes_every_test_invariant_and_never_overwrites(
    pytester: pytest.Pytester,
) -> None:
    repo = labelled_repo(pytester)
    result = evidence(repo, "labels", "init", "--", "-p", "no:hypothesispytest")
    assert result.returncode == 0, result.stderr
    assert "A person must now review each row" in result.stdout
    text = (repo / "tests/evidence-labels.tsv").read_text()
    assert text.splitlines()[-2:] == [
        "test_a.py::test_one\tinvariant",
        "test_a.py::test_two\tinvariant",
    ]
    again = evidence(repo, "labels", "init")
    assert again.returncode == 2
    assert "exists already; init never overwrites it" in again.stderr
    assert (repo / "tests/evidence-labels.tsv").read_text() == text


def test_labels_init_refuses_to_run_in_ci(pytester: pytest.Pytester) -> None:
    repo = labelled_repo(pytester)
    result = evidence(repo, "labels", "init", env={"CI": "true"})
    assert result.returncode == 2
    assert "labels init does not run in CI (CI is set)" in result.stderr
    assert not (repo / "tests/evidence-labels.tsv").exists()


def test_labels_check_lists_missing_stale_and_duplicate_rows(pytester: pytest.Pytester) -> None:
    repo = labelled_repo(pytester)
    (repo / "tests").mkdir()
    (repo / "tests/evidence-labels.tsv").write_text(
        "test_a.py::test_one\tinvariant\ntest_a.py::test_gone\tinvariant\n"
        "test_a.py::test_one\tnondeterministic\n"
    )
    result = evidence(repo, "labels", "check", "--", "-p", "no:hypothesispytest")
    assert result.returncode == 1
    assert (
        "no row (1): collected tests the labels do not name\n  test_a.py::test_two" in result.stdout
    )
    assert "  tests/evidence-labels.tsv:2: test_a.py::test_gone" in result.stdout
    assert "tests/evidence-labels.tsv:3: duplicate node id 'test_a.py::test_one'" in result.stdout
    doc = json.loads(
        evidence(
            repo, "labels", "check", "--format", "json", "--", "-p", "no:hypothesispytest"
        ).stdout
    )
    assert doc["missing"] == ["test_a.py::test_two"]
    assert [s["node"] for s in doc["stale"]] == ["test_a.py::test_gone"]


def test_labels_check_passes_on_a_clean_file(pytester: pytest.Pytester) -> None:
    repo = labelled_repo(pytester)
    (repo / "tests").mkdir()
    (repo / "tests/evidence-labels.tsv").write_text(
        "test_a.py::test_one\tinvariant\ntest_a.py::test_two\tcharacterization\n"
    )
    result = evidence(repo, "labels", "check", "--", "-p", "no:hypothesispytest")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "every collected test has exactly one row" in result.stdout
