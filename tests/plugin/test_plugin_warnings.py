"""The plugin's own reads end clean: a project that turns every warning into an error
(``filterwarnings = error``) sees none from the git processes and files the plugin
opened, also when the garbage collector runs in the middle of its tests."""

from __future__ import annotations

import pytest
from helpers.plugin_runs import ENV_NAMES, commit_all, run
from helpers.repos import git

pytestmark = pytest.mark.installed_plugins

pytest_plugins = ["pytester"]

# Each test forces a collection: an object the plugin left open would be finalized
# inside that test, and its ResourceWarning would become the test's failure.
TESTS = """
import gc

def test_first():
    gc.collect()

def test_second():
    gc.collect()
"""


@pytest.fixture(autouse=True)
def quiet_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)


def test_a_session_with_warnings_as_errors_sees_no_warning_from_the_plugin(
    pytester: pytest.Pytester,
) -> None:
    git(pytester.path, "init", "-q", "-b", "main")
    pytester.makeini("[pytest]\nfilterwarnings =\n    error\n")
    pytester.makepyfile(test_a=TESTS)
    (pytester.path / "tests").mkdir()
    (pytester.path / "tests/evidence-labels.tsv").write_text(
        "test_a.py::test_first\tinvariant\ntest_a.py::test_second\tinvariant\n"
    )
    commit_all(pytester.path, "base")
    # A process of its own, warnings as errors from its start: the labels are read from
    # the base through git's object reader, the one the warnings came from.
    result = run(pytester, "-W", "error", files=False, process=True)
    assert result.ret == 0, result.stdout.str() + result.stderr.str()
    assert result.parseoutcomes() == {"passed": 2}
    assert "Warning" not in result.stdout.str() + result.stderr.str()
