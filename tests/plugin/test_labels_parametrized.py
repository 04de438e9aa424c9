"""Labels on a parametrized suite, in real pytest sessions (pytester): a row without
`[…]` labels every parametrization that has no row of its own, a case added later
included; `labels init` and `labels check` run the project's own pytest."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest
from helpers.plugin_runs import commit_all, flaky, run, write_labels, write_quota
from helpers.repos import evidence, git

from git_evidence.policy.labels import kind_for, unparametrized

pytestmark = pytest.mark.installed_plugins
pytest_plugins = ["pytester"]

CASES = (
    "import pytest\n@pytest.mark.parametrize('case', {cases!r})\ndef test_format(case):\n    pass\n"
)
NO_HYPOTHESIS = ("--", "-p", "no:hypothesispytest")


@pytest.mark.parametrize(
    ("node", "whole"),
    [
        (
            "tests/test_black.py::test_simple_format[comments]",
            "tests/test_black.py::test_simple_format",
        ),
        ("t.py::TestA::test_x[a-1]", "t.py::TestA::test_x"),
        ("t.py::test_x[a::b[c]]", "t.py::test_x"),
        ("dir[1]/t.py::test_x[p]", "dir[1]/t.py::test_x"),
        ("t.py::test_x", None),
        ("t.py", None),
    ],
)
def test_a_parametrization_names_the_test_it_belongs_to(node: str, whole: str | None) -> None:
    assert unparametrized(node) == whole


def test_a_case_s_own_row_wins_over_the_tests_row() -> None:
    kinds = {"t.py::test_x": "invariant", "t.py::test_x[slow]": "nondeterministic"}
    assert kind_for(kinds, "t.py::test_x[fast]") == "invariant"
    assert kind_for(kinds, "t.py::test_x[slow]") == "nondeterministic"
    assert kind_for(kinds, "t.py::test_y[fast]") is None


def test_a_row_without_brackets_labels_every_case_and_a_new_one(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_fmt=CASES.format(cases=["comments", "docstring"]))
    write_labels(pytester, {"test_fmt.py::test_format": "invariant"})
    write_quota(pytester, 0)
    first = run(pytester)
    assert first.ret == 0, first.stdout.str()
    first.assert_outcomes(passed=2)
    # a new golden: a new case of the labelled test
    pytester.makepyfile(test_fmt=CASES.format(cases=["comments", "docstring", "new_case"]))
    again = run(pytester, "-v")
    assert again.ret == 0, again.stdout.str()
    again.assert_outcomes(passed=3)
    again.stdout.fnmatch_lines(["*test_format[[]new_case[]] PASSED*"])


def test_a_case_labelled_on_its_own_keeps_its_label(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_net="import pytest, pathlib\n"
        "@pytest.mark.parametrize('region', ['eu', 'us'])\n"
        "def test_fetch(region):\n"
        "    runs = pathlib.Path(__file__).with_name(region + '.runs')\n"
        "    n = int(runs.read_text()) if runs.exists() else 0\n"
        "    runs.write_text(str(n + 1))\n"
        "    assert region == 'us' or n >= 1\n"
    )
    write_labels(
        pytester,
        {"test_net.py::test_fetch": "invariant", "test_net.py::test_fetch[eu]": "nondeterministic"},
    )
    write_quota(pytester, 1)
    result = run(pytester)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["*passed on a retry (nondeterministic): test_net.py::test_fetch[[]eu[]]*"]
    )


def test_an_unlabelled_parametrized_test_still_stops_the_session(
    pytester: pytest.Pytester,
) -> None:
    pytester.makepyfile(test_fmt=CASES.format(cases=["a", "b"]))
    write_labels(pytester, {"test_fmt.py::test_other": "invariant"})
    write_quota(pytester, 0)
    result = run(pytester)
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(["*2 collected test(s) have no row in file:labels.tsv:*"])


def test_labels_from_the_base_cover_a_case_the_branch_adds(pytester: pytest.Pytester) -> None:
    git(pytester.path, "init", "-q", "-b", "main")
    pytester.makepyfile(test_fmt=CASES.format(cases=["comments"]))
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests/evidence-labels.tsv").write_text(
        "test_fmt.py::test_format\tinvariant\n"
    )
    commit_all(pytester.path, "base")
    git(pytester.path, "checkout", "-qb", "new-golden")
    pytester.makepyfile(test_fmt=CASES.format(cases=["comments", "added"]))
    commit_all(pytester.path, "a new case")
    result = run(pytester, files=False)
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=2)


# -- labels init / check ----------------------------------------------------------------


def parametrized_repo(pytester: pytest.Pytester) -> Path:
    git(pytester.path, "init", "-q", "-b", "main")
    pytester.makepyfile(
        test_fmt=CASES.format(cases=["comments", "docstring"]) + "def test_plain():\n    pass\n"
    )
    commit_all(pytester.path, "suite")
    return pytester.path


def test_labels_init_writes_a_parametrized_test_once(pytester: pytest.Pytester) -> None:
    repo = parametrized_repo(pytester)
    result = evidence(repo, "labels", "init", *NO_HYPOTHESIS)
    assert result.returncode == 0, result.stderr
    assert "3 tests (a parametrized test has one row" in result.stdout
    rows = [r for r in (repo / "tests/evidence-labels.tsv").read_text().splitlines() if "\t" in r]
    assert rows == ["test_fmt.py::test_format\tinvariant", "test_fmt.py::test_plain\tinvariant"]
    check = evidence(repo, "labels", "check", *NO_HYPOTHESIS)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "every collected test has exactly one row" in check.stdout


def test_labels_check_counts_a_tests_row_as_matching_its_cases(pytester: pytest.Pytester) -> None:
    repo = parametrized_repo(pytester)
    (repo / "tests").mkdir()
    (repo / "tests/evidence-labels.tsv").write_text(
        "test_fmt.py::test_format\tinvariant\ntest_fmt.py::test_gone\tinvariant\n"
    )
    result = evidence(repo, "labels", "check", *NO_HYPOTHESIS)
    assert result.returncode == 1
    assert "no row (1): collected tests the labels do not name\n  test_fmt.py::test_plain" in (
        result.stdout
    )
    assert "tests/evidence-labels.tsv:2: test_fmt.py::test_gone" in result.stdout
    assert "tests/evidence-labels.tsv:1:" not in result.stdout


def no_pytest_python(tmp_path: Path) -> Path:
    """A `python` that cannot import pytest, as a tool's own interpreter may be."""
    folder = tmp_path / "bare-bin"
    folder.mkdir()
    python = folder / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} -I -S "$@"\n')
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    return python


def test_labels_init_with_a_python_that_has_no_pytest_says_so(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    repo = parametrized_repo(pytester)
    python = no_pytest_python(tmp_path)
    result = evidence(repo, "labels", "init", "--python", str(python))
    assert result.returncode == 2
    assert f"usage-error: {python} cannot import pytest" in result.stderr
    assert "git-error" not in result.stderr
    assert not (repo / "tests/evidence-labels.tsv").exists()


def test_labels_init_without_pytest_on_path_names_what_it_tried(
    pytester: pytest.Pytester, tmp_path: Path
) -> None:
    repo = parametrized_repo(pytester)
    python = no_pytest_python(tmp_path)
    git_dir = os.path.dirname(shutil.which("git") or "/usr/bin/git")
    env = {"PATH": os.pathsep.join([str(python.parent), git_dir])}
    result = evidence(repo, "labels", "check", env=env)
    assert result.returncode == 2
    assert "usage-error: no python on PATH imports pytest" in result.stderr
    assert f"tried {python}" in result.stderr
    assert "--python PATH" in result.stderr


def test_labels_init_uses_the_python_it_is_given(pytester: pytest.Pytester) -> None:
    repo = parametrized_repo(pytester)
    result = evidence(repo, "labels", "init", "--python", sys.executable, *NO_HYPOTHESIS)
    assert result.returncode == 0, result.stderr
    assert (repo / "tests/evidence-labels.tsv").exists()


# -- the plugin's header and summary about the quota --------------------------------------


def test_the_header_says_no_retries_were_granted_without_a_quota(
    pytester: pytest.Pytester,
) -> None:
    git(pytester.path, "init", "-q", "-b", "main")
    pytester.makepyfile(test_a="def test_x(): pass\n")
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests/evidence-labels.tsv").write_text("test_a.py::test_x\tinvariant\n")
    commit_all(pytester.path, "base")
    result = run(pytester, files=False)
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "evidence: base *; up to 2 retries per nondeterministic test, no retries granted "
            "(no tests/retry-quota.jsonl at the base)"
        ]
    )
    assert "0 left" not in result.stdout.str()
    assert "none: no retries" not in result.stdout.str()


def test_a_quota_spent_to_zero_is_used_up(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_net=flaky("net"))
    write_labels(pytester, {"test_net.py::test_net": "nondeterministic"})
    grant = (
        '{"kind":"grant","amount":1,"writer":"alice","at":"2026-01-01T00:00:00Z","reason":"r"}\n'
    )
    spend = (
        '{"kind":"spend","amount":1,"test_id":"test_net.py::test_net","candidate":"'
        + "a" * 40
        + '","writer":"ci-bot","at":"2026-01-02T00:00:00Z"}\n'
    )
    (pytester.path / "quota.jsonl").write_text(grant + spend)
    result = run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*quota 0 left of 1 granted (file:quota.jsonl)*",
            "not retried: the retry quota is used up: test_net.py::test_net (1 attempt)",
        ]
    )


def test_the_summary_names_the_junit_file_to_spend_from(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_net=flaky("net"))
    write_labels(pytester, {"test_net.py::test_net": "nondeterministic"})
    write_quota(pytester, 2)
    result = run(pytester, "--junitxml=out/run.xml")
    assert result.ret == 0, result.stdout.str()
    result.stdout.fnmatch_lines(
        ["CI records what was spent: git evidence quota spend --from-junit out/run.xml"]
    )
