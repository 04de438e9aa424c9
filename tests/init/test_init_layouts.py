"""`git evidence init` end to end on the layouts of four real projects (their paths,
placeholder contents, their recent history replayed): the draft classifies each
project's representative paths as its maintainers read them, and its figures are the
ones `check` gives on the same range, run as init prints it."""

from __future__ import annotations

import json
import shlex
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers.project_layouts import PROJECTS, build
from helpers.repos import evidence

COMMITS = 30

# Representative paths of each project, and the class their maintainers give them.
EXPECTED = {
    "black": {
        "tests/data/cases/fmtonoff9.py": "fixture",
        "tests/test_black.py": "test",
        "src/black/linegen.py": "product",
        "docs/faq.md": "neutral",
        "README.md": "neutral",
    },
    "mypy": {
        "test-data/unit/check-classes.test": "fixture",
        "mypyc/test-data/run-classes.test": "fixture",
        "mypy/test/testcheck.py": "test",
        "mypy/checker.py": "product",
        "mypyc/irbuild/builder.py": "product",
        "docs/source/index.rst": "neutral",
    },
    "pylint": {
        "tests/functional/a/abstract/abstract_method.txt": "fixture",
        "tests/functional/a/access/access_attr_before_def_false_positive.rc": "fixture",
        "tests/functional/a/abstract/abstract_method.py": "test",
        "tests/regrtest_data/absimp/string.py": "fixture",
        "tests/input/func_w0801.py": "fixture",
        "tests/messages/func_w0801.txt": "fixture",
        "tests/test_self.py": "test",
        "pylint/checkers/base_checker.py": "product",
        "doc/data/messages/a/abstract-method/bad/abstract_method.py": "fixture",
        "doc/whatsnew/index.rst": "neutral",
    },
    "ruff": {
        "crates/ruff_linter/resources/test/fixtures/pyflakes/F401_0.py": "fixture",
        "crates/ruff_linter/src/rules/pyflakes/snapshots/"
        "ruff_linter__rules__pyflakes__tests__F401_F401_0.py.snap": "oracle",
        "crates/ruff_linter/src/rules/pyflakes/mod.rs": "product",
        "crates/ruff/tests/integration_test.rs": "test",
        "crates/ruff_python_formatter/resources/test/fixtures/black/cases/comments.py": "fixture",
        "README.md": "neutral",
    },
}


def _classes(repo: Path, paths: list[str]) -> dict[str, str]:
    out = evidence(repo, "classify", "--policy", ".git-evidence.toml", "--format", "json", *paths)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    rows = rows["paths"] if isinstance(rows, dict) else rows
    return {row["path"]: row["class"] for row in rows}


@pytest.mark.parametrize("project", PROJECTS)
def test_init_classifies_each_projects_representative_paths_as_its_maintainers_do(
    tmp_path: Path, project: str
) -> None:
    repo = build(tmp_path, project)
    out = evidence(repo, "init", "--commits", str(COMMITS))
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("wrote .git-evidence.toml")
    assert _classes(repo, list(EXPECTED[project])) == EXPECTED[project]


@pytest.mark.parametrize("project", PROJECTS)
def test_every_glob_of_the_draft_says_why_it_was_chosen(tmp_path: Path, project: str) -> None:
    repo = build(tmp_path, project)
    text = evidence(repo, "init", "--dry-run").stdout
    section = text.split("[paths]", 1)[1].split("[rules]", 1)[0].splitlines()
    globs = [i for i, line in enumerate(section) if line.startswith('  "')]
    assert globs
    for i in globs:
        j = i - 1
        while section[j].startswith("  #   "):
            j -= 1
        assert section[j].startswith("  # ") and "e.g." in " ".join(section[j:i]), section[i]
    # A line runs past 80 columns only for a path that cannot be broken.
    long = [line for line in text.splitlines() if len(line) > 80]
    assert all(len([w for w in line.split() if w not in ("#", "e.g.")]) == 1 for line in long), long


def _tally(doc: dict[str, Any]) -> dict[str, Any]:
    """Check's JSON counted as a person would: each commit by its worst finding."""
    severity = {"allow": 0, "hold": 1, "reject": 2}
    per_commit: dict[str, list[tuple[str, str]]] = {}
    ranged: dict[str, dict[str, Any]] = {}
    commits = 0
    for update in doc["updates"]:
        commits += update["commits"]
        for f in update["findings"]:
            if f["commit"] is None:
                paths = sum(len(v) for v in f["paths"].values())
                was = ranged.get(f["rule"], {"decision": "allow", "paths": 0})
                worst = max(was["decision"], f["decision"], key=severity.__getitem__)
                ranged[f["rule"]] = {"decision": worst, "paths": was["paths"] + paths}
            else:
                per_commit.setdefault(f["commit"], []).append((f["rule"], f["decision"]))
    decisions: Counter[str] = Counter()
    by: dict[str, Counter[str]] = {"hold": Counter(), "reject": Counter()}
    for found in per_commit.values():
        worst = max((d for _, d in found), key=severity.__getitem__)
        decisions[worst] += 1
        if worst in by:
            by[worst].update({r for r, d in found if d == worst})
    held, refused = decisions["hold"], decisions["reject"]
    return {
        "commits": commits,
        "allowed": commits - held - refused,
        "held": held,
        "refused": refused,
        "held_by": dict(by["hold"]),
        "refused_by": dict(by["reject"]),
        "range": ranged,
        "decision": doc["decision"],
    }


@pytest.mark.parametrize("project", PROJECTS)
def test_inits_figures_are_the_ones_its_printed_check_gives(tmp_path: Path, project: str) -> None:
    repo = build(tmp_path, project)
    out = evidence(repo, "init", "--commits", str(COMMITS), "--format", "json")
    assert out.returncode == 0, out.stderr
    history = json.loads(out.stdout)["history"]
    words = shlex.split(history["check"])
    assert words[:3] == ["git", "evidence", "check"]
    checked = evidence(repo, *words[2:], "--format", "json")
    assert checked.returncode in (0, 1), checked.stderr
    mine = {k: history[k] for k in ("commits", "allowed", "held", "refused", "decision")}
    mine |= {"held_by": history["held_by"], "refused_by": history["refused_by"]}
    mine["range"] = history["range"]
    assert mine == _tally(json.loads(checked.stdout))
    assert history["commits"] >= COMMITS
    assert history["refused"] > 0  # the projects mix product and test data in commits
