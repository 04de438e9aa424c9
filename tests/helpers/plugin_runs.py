"""Sessions under the pytest plugin: flaky tests, labels and quota files, a run and its
outcome."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers.repos import git

QUOTA_FILE = "quota.jsonl"


LABELS_FILE = "labels.tsv"


ENV_NAMES = (
    "EVIDENCE_SEED",
    "EVIDENCE_LABELS_FILE",
    "EVIDENCE_QUOTA_FILE",
    "EVIDENCE_HITS_FILE",
    "EVIDENCE_RETRIES",
    "PYTEST_ADDOPTS",
    "PYTEST_PLUGINS",
    "CI",
    "GITHUB_ACTIONS",
    "GITLAB_CI",
)


def flaky(name: str, fails: int = 1) -> str:
    """A test that fails its first ``fails`` runs, counting runs in a file beside it."""
    return f"""
import pathlib
def test_{name}():
    runs = pathlib.Path(__file__).with_name("{name}.runs")
    n = int(runs.read_text()) if runs.exists() else 0
    runs.write_text(str(n + 1))
    assert n >= {fails}, "fails its first {fails} run(s)"
"""


def write_labels(pytester: pytest.Pytester, rows: dict[str, str], name: str = LABELS_FILE) -> None:
    (pytester.path / name).write_text("".join(f"{k}\t{v}\n" for k, v in rows.items()))


def write_quota(pytester: pytest.Pytester, granted: int) -> None:
    line = {"kind": "grant", "amount": granted, "writer": "alice", "at": "2026-01-01T00:00:00Z"}
    text = json.dumps({**line, "reason": "flaky network"}) + "\n" if granted else ""
    (pytester.path / QUOTA_FILE).write_text(text)


def run(
    pytester: pytest.Pytester, *args: str, files: bool = True, process: bool = False
) -> pytest.RunResult:
    """pytest with the plugin asked for by name, and (``files``) the labels and quota
    read from files as `git evidence judge` hands them over.

    The session runs in this process (a fresh config and plugin manager; the plugin
    keeps a session's state in an object it registers on that config), sparing the
    ~150 ms of a process's start and imports; ``process`` runs it as a process of its
    own, for what only a fresh interpreter shows (how the plugin's modules load)."""
    given = ["--evidence-labels", LABELS_FILE, "--evidence-quota", QUOTA_FILE] if files else []
    start = pytester.runpytest_subprocess if process else pytester.runpytest_inprocess
    return start("-p", "git_evidence", "-p", "no:hypothesispytest", *given, *args)


def commit_all(path: Path, message: str) -> None:
    git(path, "add", "-A")
    git(path, "commit", "-qm", message)
