"""Annotations within what GitHub shows of a step (ten errors, ten warnings, ten
notices): the most important first, and a last notice that counts truthfully what was
left out and says where every finding is (the job summary, which lists them all,
collapsed past the first screen)."""

from __future__ import annotations

import json
import re

from helpers.forge_jobs import Forge, branch, printed_commands

from git_evidence.forge.formats import Item, workflow_commands


def test_a_40_finding_request_is_annotated_within_githubs_limits(forge: Forge) -> None:
    files = {f"tests/fixtures/f{i:02}.json": "{}\n" for i in range(12)}
    files |= {f"src/m{i:02}.py": "x = 1\n" for i in range(8)}
    files |= {f"tests/test_t{i:02}.py": "def test_t():\n    pass\n" for i in range(20)}
    head = branch(forge.work, files)
    doc = json.loads(forge.pull_request(head, args=("--format", "json")).stdout)
    places = [
        (f["rule"], f["decision"], p)
        for u in doc["updates"]
        for f in u["findings"]
        for listed in f["paths"].values()
        for p in listed
    ]
    assert len(places) >= 40
    result = forge.pull_request(head)
    assert result.returncode == 1
    found = printed_commands(result.stdout)
    kinds = [line.split(" ", 1)[0].split("::")[1] for line in found]
    assert kinds.count("error") == 10
    assert kinds.count("warning") == 10
    assert kinds.count("notice") <= 10
    # rejects first, then holds
    assert kinds[:10] == ["error"] * 10 and kinds[10:20] == ["warning"] * 10
    last = found[-1]
    assert last.startswith("::notice title=git-evidence::")
    count = int(re.search(r"::(\d+) more findings not annotated", last).group(1))  # type: ignore[union-attr]
    assert count == len(places) - (len(found) - 1)
    assert "job summary lists every finding" in last
    # the summary lists every path, the ones past the first screen collapsed
    summary = forge.summary.read_text()
    for _, _, path in places:
        assert f"`{path}`" in summary
    assert "<details><summary>" in summary


def test_a_short_list_gets_no_notice_of_more() -> None:
    item = Item("mixed-commit", "error", "mixes", "split it", (("fixture", "a.json"),), "")
    assert workflow_commands([item]) == [
        "::error file=a.json,title=mixed-commit::a.json (fixture): mixes. To fix: split it"
    ]


def test_holds_never_push_rejects_out_of_the_annotations() -> None:
    holds = [
        Item("added-test", "warning", "new test", "", (("test", f"t{i}.py"),), "")
        for i in range(30)
    ]
    reject = Item("mixed-commit", "error", "mixes", "", (("fixture", "a.json"),), "")
    lines = workflow_commands([*holds, reject])
    assert lines[0].startswith("::error file=a.json")
    assert sum(line.startswith("::warning") for line in lines) == 10
    assert "20 more findings not annotated (20 warnings)" in lines[-1]
