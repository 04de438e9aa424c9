"""Why a run failed, shown: ``judge -v`` prints the last lines of each failing run's
output, ``--keep`` keeps each run's stdout and stderr as files, and the record keeps a
bounded tail of a failing seed's output in a field of its own, the run's text."""

from __future__ import annotations

import json

from helpers.judge_repos import APP, KEPT, Repo

BROKEN = APP.replace("return True", "return seed < 0  # broken on purpose")


def test_verbose_shows_the_failing_assertions_text(repo: Repo) -> None:
    repo.product(BROKEN)
    result, doc = repo.judge("-v", "--property", "suite")
    assert doc["class"] == "property_fail", doc["reason"]
    assert "suite seed 0 run 1 failed (exit 1); its last output:" in result.stderr
    assert "  | E       AssertionError: assert False" in result.stderr, result.stderr
    assert "  | E        +  where False = <function check" in result.stderr, result.stderr


def test_without_verbose_nothing_of_the_runs_output_is_printed(repo: Repo) -> None:
    repo.product(BROKEN)
    result, _ = repo.judge("--property", "suite")
    assert "assert False" not in result.stderr + result.stdout.split('"run_output"')[0]


def test_the_record_keeps_a_bounded_tail_of_a_failing_seed_as_the_runs_own_text(
    repo: Repo,
) -> None:
    repo.product(BROKEN.replace("def check(seed):", "def check(seed):\n    print('x' * 9000)"))
    _, doc = repo.judge("--property", "suite")
    seed = doc["properties"][0]["runs"][0]
    said = seed["run_output"]
    assert said["run"] == 1 and said["code"] == 1
    assert len(said["tail"].encode()) <= 4096 + len("\n[stderr]\n")
    assert "assert False" in said["tail"] or "failed" in said["tail"], said["tail"]
    assert "assert False" not in doc["reason"] + " ".join(doc["details"]) + doc["next"]


def test_a_passing_seed_keeps_no_output(repo: Repo) -> None:
    repo.product(APP)
    _, doc = repo.judge("--property", "suite")
    assert doc["class"] == "accept", doc["reason"]
    assert doc["properties"][0]["runs"][0]["run_output"] is None


def test_keep_keeps_each_runs_stdout_and_stderr(repo: Repo) -> None:
    repo.product(BROKEN)
    result, doc, kept = repo.judge_kept("--property", "suite")
    assert "each run's output: scratch/run-N.stdout and .stderr" in result.stderr
    outs = sorted((kept / "scratch").glob("run-*.stdout"))
    assert len(outs) == 2, list((kept / "scratch").iterdir())
    assert all(out.with_suffix(".stderr").is_file() for out in outs)
    assert "assert False" in outs[0].read_text()
    assert json.dumps(doc)  # the record is whole
    assert kept in KEPT
