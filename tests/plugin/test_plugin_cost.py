"""What keeps the pytest plugin cheap (docs/performance.md, "The pytest plugin"): its modules
load from their ordinary bytecode, not through pytest's assertion rewriting, in the
controller and in every xdist worker; the labels reach the workers whole."""

from __future__ import annotations

import pytest
from helpers.plugin_runs import ENV_NAMES, run, write_labels, write_quota

from git_evidence.plugin.sources import Sources
from git_evidence.policy.labels import CHARACTERIZATION, INVARIANT, NONDETERMINISTIC, Labels

pytest_plugins = ["pytester"]

# Sessions started here load every installed plugin (the entry points), as a user's do.
pytestmark = pytest.mark.installed_plugins

LOADERS = """
import sys

def test_plugin_modules_load_as_python_loads_them():
    modules = (
        "git_evidence.plugin.session",
        "git_evidence.plugin.sources",
        "git_evidence.policy.labels",
    )
    for name in modules:
        loader = type(sys.modules[name].__loader__).__name__
        assert loader == "SourceFileLoader", f"{name} loaded by {loader}"

def test_assertions_of_tests_are_still_rewritten():
    seen = 1
    assert seen == 2
"""


@pytest.fixture(autouse=True)
def quiet_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("xdist", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_the_plugin_modules_skip_assertion_rewriting_and_tests_keep_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, xdist: list[str]
) -> None:
    # no rewritten bytecode can be cached: every rewrite would be paid in full
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    pytester.makepyfile(test_a=LOADERS)
    write_labels(
        pytester,
        {
            "test_a.py::test_plugin_modules_load_as_python_loads_them": INVARIANT,
            "test_a.py::test_assertions_of_tests_are_still_rewritten": NONDETERMINISTIC,
        },
    )
    write_quota(pytester, 0)
    result = run(pytester, *xdist, process=True)
    assert result.parseoutcomes() == {"passed": 1, "failed": 1}
    # the test module's own assertion was rewritten: pytest shows the compared values
    result.stdout.fnmatch_lines(["E       assert 1 == 2"])


def test_workers_get_every_label_as_the_controller_read_it() -> None:
    kinds = {
        "tests/test_a.py::test_one": INVARIANT,
        "tests/test_a.py::test_two[a b-\u00e9]": CHARACTERIZATION,
        "tests/t\u00e9st_b.py::TestX::test_three[1-2]": NONDETERMINISTIC,
        "tests/test_b.py::test_four[::]": INVARIANT,
    }
    sources = Sources(Labels(kinds, "base:labels.tsv", "sha256:00"), "labels.tsv", 3, "q", 2)
    shared = Sources.from_worker_input(sources.worker_input())
    assert dict(shared.labels.kinds) == kinds
    assert list(shared.labels.kinds) == list(kinds)
    assert (shared.labels.source, shared.labels.digest) == ("base:labels.tsv", "sha256:00")
    assert (shared.labels_path, shared.remaining, shared.quota_source, shared.retries) == (
        "labels.tsv",
        3,
        "q",
        2,
    )


def test_workers_get_an_empty_labels_file_as_empty() -> None:
    sources = Sources(Labels({}, "file:labels.tsv", "sha256:e3"), "labels.tsv", 0, "q", 2)
    assert dict(Sources.from_worker_input(sources.worker_input()).labels.kinds) == {}
