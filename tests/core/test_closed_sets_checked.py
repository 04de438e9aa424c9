"""The type checker refuses a value outside a closed set: a rule id the table lacks, a
decision or a path class that does not exist, a string passed as an object id. Each
wrong line of a snippet must be reported, and only those lines."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.repos import PROJECT

SNIPPET = """\
from git_evidence.core.oids import Oid, ZERO_OID
from git_evidence.core.paths import FIXTURE, PathClass
from git_evidence.policy.schema import Decision
from git_evidence.core.facts import RefUpdate
from git_evidence.rules.table import HOLD
from git_evidence.rules.findings import Finding, _finding, error_finding

_finding("mixed-commit", "refs/heads/main", message="fine")
_finding("mixed-comit", "refs/heads/main", message="a typo")  # wrong
Finding("notes-forge", HOLD, "refs/heads/main", None, {}, "fine", "fine")
Finding("no-such-rule", HOLD, "refs/heads/main", None, {}, "unknown", "rule")  # wrong
error_finding("usage-error", "fine", "fine")
error_finding("mixed-commit", "not an error's rule", "")  # wrong
decided: Decision = HOLD
maybe: Decision = "maybe"  # wrong
klass: PathClass = FIXTURE
fixtures: PathClass = "fixtures"  # wrong
RefUpdate(ZERO_OID, Oid("1" * 40), "refs/heads/main")
RefUpdate(ZERO_OID, "1" * 40, "refs/heads/main")  # wrong
"""


def test_values_outside_the_closed_sets_do_not_type_check(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="LOUD: mypy is not installed: the types are not checked")
    snippet = tmp_path / "snippet.py"
    snippet.write_text(SNIPPET, encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(PROJECT / "pyproject.toml"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-error-summary",
            "--hide-error-context",
            str(snippet),
        ],
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(PROJECT)},  # this source, not an installed copy
        capture_output=True,
        text=True,
        check=False,
    )
    flagged = {int(line) for line in re.findall(r"^.*snippet\.py:(\d+): error:", done.stdout, re.M)}
    wrong = {n for n, text in enumerate(SNIPPET.splitlines(), start=1) if text.endswith("# wrong")}
    assert flagged == wrong, done.stdout + done.stderr
    assert "git_evidence" not in re.sub(r"^.*snippet\.py:.*$", "", done.stdout, flags=re.M)
