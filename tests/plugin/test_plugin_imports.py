"""What the pytest plugin loads: its entry point alone, and a whole session under it
(labels enforced, a nondeterministic test retried within the quota, JUnit XML and the
retries file written), load nothing of the rule table (``git_evidence.rules``). The
plugin runs inside every session the judge holds; the gate's rules are no part of a
test run. Each in a fresh interpreter, read from its ``sys.modules``."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from helpers.plugin_runs import ENV_NAMES, flaky, run, write_labels, write_quota
from helpers.repos import PROJECT

pytest_plugins = ["pytester"]

# Sessions started here load every installed plugin (the entry points), as a user's do.
pytestmark = pytest.mark.installed_plugins

RULES = "git_evidence.rules"

PROBE = """
import json, pathlib, sys

def pytest_unconfigure(config):
    path = pathlib.Path(str(config.rootpath), "modules.json")
    path.write_text(json.dumps(sorted(sys.modules)))
"""


@pytest.fixture(autouse=True)
def quiet_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (*ENV_NAMES, "EVIDENCE_RETRIES_FILE"):
        monkeypatch.delenv(name, raising=False)


def rule_modules(modules: list[str]) -> list[str]:
    return [m for m in modules if m == RULES or m.startswith(RULES + ".")]


def test_importing_the_entry_point_loads_no_rule_table() -> None:
    code = (
        "import json, sys\nimport git_evidence.plugin.entry\nprint(json.dumps(sorted(sys.modules)))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, check=True
    )
    modules = json.loads(proc.stdout)
    assert "git_evidence.plugin.entry" in modules
    assert rule_modules(modules) == []


def test_a_session_under_the_plugin_loads_no_rule_table(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeconftest(PROBE)
    pytester.makepyfile(test_net=flaky("net"), test_ok="def test_ok(): pass\n")
    write_labels(
        pytester, {"test_net.py::test_net": "nondeterministic", "test_ok.py::test_ok": "invariant"}
    )
    write_quota(pytester, 3)
    monkeypatch.setenv("EVIDENCE_RETRIES_FILE", str(pytester.path / "retries.log"))
    result = run(pytester, "--junitxml=junit.xml", process=True)
    assert result.ret == 0, result.stdout.str()
    modules = json.loads((pytester.path / "modules.json").read_text())
    # the session ran under the plugin, and reported its retry to the judge
    assert "git_evidence.plugin.session" in modules
    assert (pytester.path / "retries.log").read_bytes()
    assert rule_modules(modules) == []
