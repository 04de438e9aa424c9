"""The judge is a library: ``judgement.judge(git, request)`` judges a real candidate from
a ``Request`` alone (no command line), and publishes the record it returns; nothing in
the judge package reads a command line; ``commands/judge.py`` is one call of it; the
verdict record module checks a pushed note (``record.problems``) as it parses it."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from helpers.judge_repos import FAST, Repo
from helpers.repos import PROJECT

from git_evidence.core.errors import UsageError
from git_evidence.core.records import canonical_json
from git_evidence.judge import record as verdict_record
from git_evidence.judge.judgement import judge
from git_evidence.judge.request import Request, check
from git_evidence.plumbing.git import Git

JUDGE = PROJECT / "git_evidence" / "judge"


def test_a_request_alone_judges_a_candidate_and_publishes_its_record(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo.path)
    for name, value in FAST.items():
        monkeypatch.setenv(name, value)
    out, log = tmp_path / "verdict.json", tmp_path / "verdicts.jsonl"
    verdict = judge(Git(), Request(properties=("suite",), out=str(out), log=str(log)))
    record = verdict.as_json()
    assert (record["class"], record["exit"]) == ("accept", 0)
    assert [p["id"] for p in record["properties"]] == ["suite"]
    assert out.read_bytes() == canonical_json(record)
    (line,) = log.read_text().splitlines()
    assert json.loads(line)["class"] == "accept"
    assert verdict_record.problems(canonical_json(record), record["candidate"]) == []


def test_a_request_that_makes_no_sense_is_refused_before_anything_is_read() -> None:
    with pytest.raises(UsageError, match="a shard's partial record is no verdict"):
        check(Request(note=True, shard=(1, 2)))
    with pytest.raises(UsageError, match="not both"):
        judge(Git(), Request(candidate="HEAD", patch="candidate.patch"))  # no repository read


def test_the_record_check_says_what_is_wrong_with_a_pushed_note() -> None:
    doc = {
        "schema": verdict_record.SCHEMA,
        "kind": verdict_record.KIND,
        "class": "accept",
        "exit": 0,
        "result": "PASSED",
        "reason": "every run passed",
        "base": "a" * 40,
        "candidate": "b" * 40,
        "freeze_allowed": False,
        "started_at": "2026-01-01T00:00:00Z",
    }
    assert verdict_record.problems(canonical_json(doc), "b" * 40) == []
    assert verdict_record.problems(canonical_json(doc), "c" * 40) == [
        f"the verdict note on {'c' * 12} judges {'b' * 19}, not the commit it is attached to"
    ]
    lying = canonical_json({**doc, "exit": 1})
    assert verdict_record.problems(lying, "b" * 40) == [
        f"the verdict note on {'b' * 12} gives exit 1 / result PASSED for class accept"
    ]
    assert verdict_record.problems(canonical_json(doc) + b"\n", "b" * 40) != []
    with pytest.raises(verdict_record.VerdictInvalid, match="gives exit 1"):
        verdict_record.parse(lying, "b" * 40)


def test_nothing_in_the_judge_package_reads_a_command_line() -> None:
    found = []
    for path in sorted(JUDGE.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if not isinstance(node, (ast.Import, ast.ImportFrom, ast.Attribute)):
                continue
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Attribute) and node.attr == "Namespace":
                names = ["Namespace"]
            found += [
                f"{path.name}:{node.lineno}: {name}"
                for name in names
                if name.partition(".")[0] in ("argparse", "Namespace")
            ]
    assert found == []


def test_the_judge_command_is_one_library_call() -> None:
    tree = ast.parse((PROJECT / "git_evidence" / "commands" / "judge.py").read_text())
    calls = [
        n.func.id
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "judge"
    ]
    assert calls == ["judge"]
    imported = {
        n.module
        for n in ast.walk(tree)
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("git_evidence.judge")
    }
    assert imported == {
        "git_evidence.judge.judgement",
        "git_evidence.judge.request",
        "git_evidence.judge.text",
    }
