"""What the pytest plugin tells ``git evidence judge`` about a session: one
line in ``EVIDENCE_RETRIES_FILE`` with the labels it enforced, the quota it started
with and the retries it used, read back by the scorecard. pytester runs real sessions."""

from __future__ import annotations

import hashlib

import pytest
from helpers.plugin_runs import LABELS_FILE, flaky, run, write_labels, write_quota

from git_evidence.plugin import retries

# Sessions started here load every installed plugin (the entry points), as a user's do.
pytestmark = pytest.mark.installed_plugins

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def quiet_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("EVIDENCE_SEED", "EVIDENCE_LABELS_FILE", "EVIDENCE_QUOTA_FILE", "PYTEST_ADDOPTS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("EVIDENCE_RETRIES", raising=False)
    monkeypatch.delenv("PYTEST_PLUGINS", raising=False)


def sessions(pytester: pytest.Pytester) -> list[retries.Session]:
    return retries.parse_retry_log((pytester.path / "retries.log").read_bytes())


def labels_digest(pytester: pytest.Pytester) -> str:
    return "sha256:" + hashlib.sha256((pytester.path / LABELS_FILE).read_bytes()).hexdigest()


def test_a_session_reports_the_retry_it_used_and_the_labels_it_enforced(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_net=flaky("net"), test_ok="def test_ok(): pass\n")
    write_labels(
        pytester, {"test_net.py::test_net": "nondeterministic", "test_ok.py::test_ok": "invariant"}
    )
    write_quota(pytester, 3)
    monkeypatch.setenv("EVIDENCE_RETRIES_FILE", str(pytester.path / "retries.log"))
    result = run(pytester)
    assert result.ret == 0
    assert sessions(pytester) == [
        retries.Session(
            labels_digest(pytester),
            3,
            1,
            (retries.Retried("test_net.py::test_net", "nondeterministic", 2, "passed"),),
        )
    ]


def test_a_retry_the_quota_refused_is_reported(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_net=flaky("net"))
    write_labels(pytester, {"test_net.py::test_net": "nondeterministic"})
    write_quota(pytester, 0)
    monkeypatch.setenv("EVIDENCE_RETRIES_FILE", str(pytester.path / "retries.log"))
    result = run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    ((session),) = sessions(pytester)
    assert session.retries_used == 0 and session.remaining == 0
    assert session.tests == (
        retries.Retried("test_net.py::test_net", "nondeterministic", 1, "quota"),
    )


def test_an_invariants_second_run_is_not_reported_as_a_retry(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_inv=flaky("inv"))
    write_labels(pytester, {"test_inv.py::test_inv": "invariant"})
    write_quota(pytester, 3)
    monkeypatch.setenv("EVIDENCE_RETRIES_FILE", str(pytester.path / "retries.log"))
    result = run(pytester)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # a flicker on an invariant
    ((session),) = sessions(pytester)
    assert session.retries_used == 0 and session.tests == ()


def test_under_xdist_the_controller_reports_the_session_once(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile(test_a=flaky("one"), test_b=flaky("two"))
    write_labels(
        pytester,
        {"test_a.py::test_one": "nondeterministic", "test_b.py::test_two": "nondeterministic"},
    )
    write_quota(pytester, 5)
    monkeypatch.setenv("EVIDENCE_RETRIES_FILE", str(pytester.path / "retries.log"))
    result = run(pytester, "-n", "2", "--dist", "loadfile")
    assert result.ret == 0
    ((session),) = sessions(pytester)
    assert session.retries_used == 2
    assert sorted(t.test_id for t in session.tests) == [
        "test_a.py::test_one",
        "test_b.py::test_two",
    ]


def test_without_the_variable_nothing_is_written(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_net=flaky("net"))
    write_labels(pytester, {"test_net.py::test_net": "nondeterministic"})
    write_quota(pytester, 3)
    assert run(pytester).ret == 0
    assert not (pytester.path / "retries.log").exists()
