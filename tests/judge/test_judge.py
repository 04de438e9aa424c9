"""``git evidence judge`` end to end: real repositories, a real tiny pytest property
suite run by ``sys.executable -m pytest``, real processes. Each attack is a test of its
own; the product under test decides each outcome (the tests are evidence and never
change)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.judge_repos import (
    APP,
    CI,
    FAST,
    FILES,
    FLAKY_APP,
    MARKER,
    POLICY,
    PROPERTY_TEST,
    Repo,
    flaky_on_main,
    markers,
    running,
)
from helpers.repos import evidence, git, make_server


def pin_digest(repo: Repo) -> str:
    shown = evidence(repo.path, "show-lock", "main", "--format", "json")
    digest: str = json.loads(shown.stdout)["digest"]
    return digest


def codes(doc: dict[str, Any], prop: str) -> list[list[Any]]:
    found = next(p for p in doc["properties"] if p["id"] == prop)
    return [seed["codes"] for seed in found["runs"]]


# -- accept ----------------------------------------------------------------------------


def test_a_product_fix_is_accepted(repo: Repo, tmp_path: Path) -> None:
    candidate = repo.product(APP.replace("return True", "return seed >= 0"))
    out = tmp_path / "verdict.json"
    result, doc = repo.judge("--property", "suite", "--property", "fixtures", "--out", str(out))
    assert result.returncode == 0, result.stdout + result.stderr
    assert doc["class"] == "accept" and doc["exit"] == 0 and doc["result"] == "PASSED"
    assert doc["candidate"] == candidate and doc["base"] == repo.head("main")
    assert doc["pin"]["digest"] == pin_digest(repo) and doc["pin"]["unpinned"] is False
    assert doc["freeze_allowed"] is False
    assert doc["evidence"]["paths"] == {"product": ["src/app.py"]}
    assert codes(doc, "suite") == [[0, 0]]
    fixtures = next(p for p in doc["properties"] if p["id"] == "fixtures")["fixtures"]
    assert {(f["kind"], f["ok"]) for f in fixtures} == {("must_fail", True), ("must_pass", True)}
    # the file holds the record's canonical bytes; stdout is the same record
    assert out.read_bytes() == result.stdout.strip().encode()
    assert out.read_bytes() == json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()


def test_text_output_puts_the_class_first_then_why_then_what_to_do(repo: Repo) -> None:
    repo.product(APP.replace("return True", "return seed >= 0"))
    result = evidence(repo.path, "judge", "--property", "suite", env=FAST)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "accept"
    assert lines[1].startswith("  why: every run of every seed passed and agreed")
    assert lines[2].startswith("  do: ")
    assert result.stderr == ""  # progress goes to a terminal only


def test_a_base_without_a_lock_is_judged_against_its_own_manifest(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    git(tmp_path, "init", "-q", str(repo.path))
    repo.commit("seed", FILES)
    repo.git("checkout", "-qb", "feat")
    repo.product(APP.replace("return True", "return seed >= 0"))
    _result, doc = repo.judge("--property", "suite")
    assert doc["class"] == "accept", doc["reason"]
    assert doc["pin"]["unpinned"] is True and doc["pin"]["digest"] is None


def test_parallel_jobs_run_seeds_in_workspaces_of_their_own_and_leave_nothing(
    repo: Repo, tmp_path: Path
) -> None:
    repo.product(APP)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    record = (
        "import os, time; time.sleep(0.2); "
        "open('where.local', 'a').write(os.getcwd() + ' ' + os.environ['EVIDENCE_SEED'] + '\\n')"
    )
    _, doc, kept = repo.judge_kept(
        "--seeds",
        "3",
        "--jobs",
        "2",
        "--",
        sys.executable,
        "-c",
        record,
        env={"TMPDIR": str(scratch)},
    )
    assert doc["class"] == "accept", doc["reason"]
    assert codes(doc, "cli") == [[0, 0], [0, 0], [0, 0]]
    lines = [line.split() for line in markers(kept, "where.local")]
    assert sorted(seed for _, seed in lines) == ["0", "0", "1", "1", "2", "2"]
    assert len({where for where, _ in lines}) == 2  # two workspaces
    assert all(where.startswith(str(scratch)) for where, _ in lines)
    shutil.rmtree(kept)
    assert list(scratch.iterdir()) == []
    # without --keep, the judge leaves nothing in TMPDIR
    _, doc = repo.judge(
        "--jobs",
        "2",
        "--seeds",
        "2",
        "--",
        sys.executable,
        "-c",
        "pass",
        env={"TMPDIR": str(scratch)},
    )
    assert doc["class"] == "accept", doc["reason"]
    assert list(scratch.iterdir()) == []


# -- nothing runs ------------------------------------------------------------------------


def test_a_patch_that_does_not_apply_is_patch_invalid_and_nothing_runs(
    repo: Repo, tmp_path: Path
) -> None:
    patch = tmp_path / "bad.patch"
    patch.write_text("--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,3 @@\n-not in the file\n+x\n")
    result, doc, kept = repo.judge_kept("--patch", str(patch), env={"JUDGE_MARKER": MARKER})
    assert result.returncode == 1
    assert doc["class"] == "patch_invalid"
    assert doc["candidate"].startswith("patch:sha256:")
    assert doc["properties"] == [] and markers(kept) == []


def test_an_applicable_patch_is_judged_on_the_base(repo: Repo, tmp_path: Path) -> None:
    patch = repo.patch_of(tmp_path, {"src/app.py": APP.replace("return True", "return 1")})
    _result, doc, kept = repo.judge_kept(
        "--patch", str(patch), "--property", "suite", env={"JUDGE_MARKER": MARKER}
    )
    assert doc["class"] == "accept", doc["reason"]
    assert doc["base"] == repo.head("main")
    assert markers(kept) == ["0 1", "0 2"]  # EVIDENCE_SEED, EVIDENCE_RUN in order
    # the repository is untouched: the patch's objects went to the workspace
    assert repo.git("status", "--porcelain").stdout == ""


@pytest.mark.parametrize(
    ("attack", "kind"),
    [
        ("edit", "modified"),
        ("lookalike", "modified"),
        ("ignored-addition", "added"),
        ("symlink", "modified"),
    ],
)
def test_a_patch_touching_the_fixtures_is_a_breach_and_nothing_runs(
    repo: Repo, tmp_path: Path, attack: str, kind: str
) -> None:
    if attack == "symlink":
        repo.git("checkout", "-qb", "scratch", "main")
        os.remove(repo.path / "tests/fixtures/a.json")
        repo.commit_link("link", "tests/fixtures/a.json", "bad.json")
        patch = tmp_path / "candidate.patch"
        patch.write_text(repo.git("diff", "--binary", "main", "scratch").stdout)
        repo.git("checkout", "-q", "main")
    else:
        change = {
            "edit": {"tests/fixtures/a.json": '{"a": 1, "b": 0}\n'},
            # the same JSON value, two bytes smaller: a reader cannot tell
            "lookalike": {"tests/fixtures/a.json": '{"a":1}'},
            # ignored by .gitignore: `git status` in a checkout would not show it
            "ignored-addition": {"tests/fixtures/extra.local": "{}\n"},
        }[attack]
        patch = repo.patch_of(tmp_path, change)
    result, doc, kept = repo.judge_kept("--patch", str(patch), env={"JUDGE_MARKER": MARKER})
    assert result.returncode == 1
    assert doc["class"] == "fixture_breach", doc["reason"]
    assert "before any run" in doc["reason"]
    drifted = {(d["path"], d["kind"]) for d in doc["drift"]["before"]}
    path = "tests/fixtures/extra.local" if attack == "ignored-addition" else "tests/fixtures/a.json"
    assert (path, kind) in drifted
    assert doc["properties"] == [] and markers(kept) == []


def test_a_patch_loosening_a_property_is_an_oracle_rewrite(repo: Repo, tmp_path: Path) -> None:
    loose = PROPERTY_TEST.replace("assert app.check(", "assert True or app.check(")
    patch = repo.patch_of(tmp_path, {"tests/properties/test_prop.py": loose})
    result, doc, kept = repo.judge_kept("--patch", str(patch), env={"JUDGE_MARKER": MARKER})
    assert doc["class"] == "oracle_rewrite" and result.returncode == 1
    assert "oracle: tests/properties/test_prop.py" in doc["details"]
    assert markers(kept) == []


def test_a_candidate_deleting_a_test_is_an_oracle_rewrite(repo: Repo, tmp_path: Path) -> None:
    repo.commit("drop a test", remove=("tests/test_other.py",))
    _result, doc, kept = repo.judge_kept(env={"JUDGE_MARKER": MARKER})
    assert doc["class"] == "oracle_rewrite"
    assert "test (deleted): tests/test_other.py" in doc["details"]
    assert markers(kept) == []


def test_a_patch_deselecting_the_property_in_pytest_ini_is_held(repo: Repo, tmp_path: Path) -> None:
    patch = repo.patch_of(tmp_path, {"pytest.ini": "[pytest]\naddopts = -k 'not seeded'\n"})
    result, doc, kept = repo.judge_kept("--patch", str(patch), env={"JUDGE_MARKER": MARKER})
    assert doc["class"] == "held" and result.returncode == 1
    assert "other: pytest.ini" in doc["details"]
    assert doc["properties"] == [] and markers(kept) == []


# -- evidence during the run -------------------------------------------------------------


FIXTURE_WRITER = APP.replace(
    "    return True",
    "    with open('tests/fixtures/a.json', 'w') as handle:\n"
    "        handle.write('{\"a\": 1}')\n"
    "    return True",
)


def test_in_the_sandbox_a_product_writing_its_fixture_gets_erofs(repo: Repo) -> None:
    repo.product(FIXTURE_WRITER)
    before = (repo.path / "tests/fixtures/a.json").read_bytes()
    _result, doc = repo.judge("--property", "suite")
    # the write fails (a read-only lock root), so the product's own test fails with it
    assert doc["class"] == "property_fail", doc["reason"]
    assert doc["drift"]["after"] == [] and doc["sandbox"]["kind"] == "bwrap"
    assert (repo.path / "tests/fixtures/a.json").read_bytes() == before


def test_unsandboxed_a_product_rewriting_its_fixture_during_the_run_is_a_breach(
    repo: Repo,
) -> None:
    repo.git("checkout", "-q", "main")
    repo.commit(
        "no sandbox",
        {".git-evidence.toml": POLICY.replace("[judge]\n", '[judge]\nsandbox = "none"\n')},
    )
    assert evidence(repo.path, "lock").returncode == 0
    repo.git("checkout", "-q", "feat")
    repo.git("rebase", "-q", "main")
    repo.product(FIXTURE_WRITER)
    _result, doc = repo.judge("--property", "suite")
    assert doc["class"] == "fixture_breach", doc["reason"]
    assert "changed during the run" in doc["reason"]
    assert [d["path"] for d in doc["drift"]["after"]] == ["tests/fixtures/a.json"]
    assert doc["drift"]["before"] == []
    assert codes(doc, "suite")  # it ran


def test_a_test_run_cannot_write_the_repositorys_notes_or_objects(
    repo: Repo, tmp_path: Path
) -> None:
    repo.product(
        APP.replace(
            "    return True",
            "    import subprocess\n"
            "    log = open('attempts.local', 'a')\n"
            "    for args in (['notes', '--ref=refs/notes/evidence', 'add', '-f', '-m', 'x'],\n"
            "                 ['hash-object', '-w', '--stdin'],\n"
            "                 ['update-ref', 'refs/notes/evidence-verdicts', 'HEAD']):\n"
            "        done = subprocess.run(['git', *args], input=b'forged', capture_output=True)\n"
            "        log.write(f'{done.returncode} {done.stderr!r}\\n')\n"
            "    return True",
        )
    )
    refs_before = repo.git("for-each-ref").stdout
    objects_before = repo.git("count-objects", "-v").stdout
    _result, doc, kept = repo.judge_kept("--property", "suite")
    assert doc["class"] == "accept", doc["reason"]
    assert doc["pin"]["digest"] == pin_digest(repo)
    tried = markers(kept, "attempts.local")
    assert len(tried) == 6 and all(line.startswith("128 ") for line in tried), tried
    assert "not a git repository" in tried[0]
    assert repo.git("for-each-ref").stdout == refs_before
    assert repo.git("count-objects", "-v").stdout == objects_before


# -- what the runs say -------------------------------------------------------------------


def test_a_seed_that_always_fails_is_a_property_failure_naming_it(repo: Repo) -> None:
    repo.product(APP.replace("return True", "return seed != 1"))
    result, doc = repo.judge("--property", "suite", "--seeds", "2")
    assert doc["class"] == "property_fail" and result.returncode == 1
    assert doc["counterexamples"] == [{"property": "suite", "seed": 1}]
    assert codes(doc, "suite") == [[0, 0], [1, 1]]
    assert "keep seed 1 as a counterexample" in doc["next"]
    assert doc["freeze_line"] is None and doc["flaky"] == []


def test_a_flake_the_candidate_brings_is_a_flake_candidate_with_nothing_to_freeze(
    repo: Repo,
) -> None:
    repo.product(FLAKY_APP)
    result, doc = repo.judge("--property", "suite", "--repeat", "3")
    assert doc["class"] == "flake_candidate" and result.returncode == 1
    assert codes(doc, "suite") == [[0, 1, 0]]
    [flake] = doc["flaky"]
    assert flake["seed"] == 0 and flake["freeze"] is None
    assert flake["on_base"] is False  # the base, run again on seed 0, agrees with itself
    assert doc["freeze_line"] is None
    assert "the candidate introduced the nondeterminism" in doc["next"]
    assert "freeze add" not in doc["next"]


def test_a_failure_one_time_in_three_on_one_seed_is_a_flake_candidate(repo: Repo) -> None:
    flaky_on_main(repo)
    result, doc = repo.judge("--property", "suite", "--repeat", "3")
    assert doc["class"] == "flake_candidate" and result.returncode == 1
    assert codes(doc, "suite") == [[0, 1, 0]]
    [flake] = doc["flaky"]
    assert flake["test_id"] == "suite" and flake["seed"] == 0 and flake["freeze"] is None
    assert flake["on_base"] is True
    line = doc["freeze_line"]
    assert line.startswith("git evidence freeze add --ci --test suite --runs 3 --seed 0")
    assert "-m pytest -q -p no:cacheprovider tests/properties" in line
    assert line in doc["next"] and doc["freeze_allowed"] is False


def freeze_on_main(repo: Repo, entry_line: str | None = None, prop: str = "suite") -> None:
    """Reproduce the flake with the very line the judge printed (on a checkout of the
    candidate, as CI would), commit the ledger alone on main, re-pin, and rebase the
    candidate onto it."""
    candidate = repo.head()
    if entry_line is None:
        _, doc = repo.judge("--property", prop)  # repeat 2: run 2 fails
        argv = shlex.split(doc["freeze_line"])
        assert argv[:2] == ["git", "evidence"]
        proc = evidence(repo.path, *argv[2:], env={**FAST, "GIT_EVIDENCE_PUSHER": CI})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        entry_line = (repo.path / "tests/freeze.jsonl").read_text()
        repo.git("checkout", "-q", "--", "tests/freeze.jsonl")
    repo.git("checkout", "-q", "main")
    repo.commit("freeze the flake", {"tests/freeze.jsonl": entry_line})
    assert evidence(repo.path, "lock").returncode == 0
    repo.git("checkout", "-q", "feat")
    repo.git("rebase", "-q", "main")
    assert repo.head() != candidate


def test_a_flake_with_a_freeze_in_force_of_the_same_fingerprint_is_frozen(repo: Repo) -> None:
    flaky_on_main(repo)
    freeze_on_main(repo)
    result, doc = repo.judge("--property", "suite")
    assert doc["class"] == "flake_frozen", doc["reason"]
    assert result.returncode == 0 and doc["result"] == "WARNED"
    [flake] = doc["flaky"]
    assert flake["freeze"] is not None and flake["freeze"]["line"] == 1
    assert flake["freeze"]["fingerprint"] == flake["fingerprint"]
    assert doc["warned_tests"] == ["suite"]


# slow: the junit form of the flake-then-freeze round (seven judged runs); the default
# run has the round itself (test_a_flake_with_a_freeze_in_force_of_the_same_fingerprint_
# is_frozen), a JUnit flake's freeze line (test_judge_text.py's
# test_the_freeze_line_keeps_its_junit_placeholder) and JUnit test ids
# (test_judge_text.py's test_a_junit_property_failure_names_the_test_that_failed_on_every_run)
@pytest.mark.slow
def test_a_junit_flake_names_the_test_and_its_freeze_shares_the_fingerprint(
    repo: Repo,
) -> None:
    flaky_on_main(repo)
    _, doc = repo.judge("--property", "junit")
    assert doc["class"] == "flake_candidate", doc["reason"]
    test_id = "tests/properties/test_prop.py::test_seeded_property"  # pytest's node id
    assert [f["test_id"] for f in doc["flaky"]] == [test_id]
    assert f"--test {test_id} --runs 2 --seed 0" in doc["freeze_line"]
    assert "--junitxml={junitxml}" in doc["freeze_line"]
    freeze_on_main(repo, prop="junit")  # freeze add reads the JUnit XML the same way
    entry = json.loads(repo.git("show", "main:tests/freeze.jsonl").stdout)
    assert entry["test_id"] == test_id
    _, doc = repo.judge("--property", "junit")
    assert doc["class"] == "flake_frozen", doc["reason"]
    assert doc["flaky"][0]["fingerprint"] == entry["fingerprint"]
    assert test_id in doc["warned_tests"]


def test_a_flake_with_a_freeze_of_another_fingerprint_is_a_flake_candidate(repo: Repo) -> None:
    repo.product(FLAKY_APP)
    now = time.time()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 60))
    until = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 3600))
    entry = {
        "test_id": "suite",
        "fingerprint": "0123456789abcdef",
        "seed": 0,
        "pin": pin_digest(repo),
        "reproduced": True,
        "runs": 3,
        "failures": 1,
        "writer": CI,
        "frozen_at": stamp,
        "until": until,
    }
    freeze_on_main(repo, json.dumps(entry) + "\n")
    _result, doc = repo.judge("--property", "suite")
    assert doc["class"] == "flake_candidate", doc["reason"]
    assert doc["flaky"][0]["freeze"] is None
    assert doc["flaky"][0]["fingerprint"] != "0123456789abcdef"


def test_a_must_fail_fixture_that_starts_passing_is_a_property_miss(repo: Repo) -> None:
    repo.product(APP.replace('return doc.get("a") == 1', "return True"))
    result, doc = repo.judge("--property", "fixtures")
    assert doc["class"] == "property_miss" and result.returncode == 1
    assert any("must-fail fixture tests/fixtures/bad.json" in m for m in doc["misses"])


def test_fewer_hits_than_min_hits_is_a_property_miss(repo: Repo) -> None:
    repo.product(APP.replace("list(range(5))", "list(range(1))"))
    _result, doc = repo.judge("--property", "suite")
    assert doc["class"] == "property_miss", doc["reason"]
    assert "fewer than min_hits = 5" in doc["misses"][0]
    runs = next(p for p in doc["properties"] if p["id"] == "suite")["runs"]
    # an id the property does not declare: its count kept, its text dropped
    assert runs[0]["hits"] == [{"": 1}] * 2
    assert doc["dropped"]["hit_ids"] == 2


def test_a_hanging_command_times_out_and_its_processes_are_killed(
    repo: Repo, tmp_path: Path
) -> None:
    repo.product(APP)
    # a sleep of this run's own: its duration's digits (this process, the clock) are
    # in no other command line on the machine, whatever other judgements and suites
    # run at once, so every process found by them is one this run started
    marker = f"sleep 29.{os.getpid()}{time.time_ns() % 10**9:09d}"
    draft = tmp_path / "draft.toml"
    policy = (repo.path / ".git-evidence.toml").read_text()
    draft.write_text(policy.replace("sleep 29.0417", marker))
    assert marker in draft.read_text()
    started = time.monotonic()
    _result, doc = repo.judge("--policy", str(draft), "--property", "hang")
    assert time.monotonic() - started < 15
    assert doc["class"] == "property_fail"
    assert codes(doc, "hang") == [["timeout", "timeout"]]
    # the background sleep went with its run (the kernel ends a PID namespace's
    # processes as its first one dies, a moment after: on a loaded machine, not at once)
    deadline = time.monotonic() + 3
    while running(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running(marker) == []


def test_a_command_that_cannot_start_is_undecided(repo: Repo, tmp_path: Path) -> None:
    repo.product(APP)
    log = tmp_path / "judge.log"
    result, doc = repo.judge("--log", str(log), "--", str(tmp_path / "no-such-command"))
    assert result.returncode == 2
    assert doc["class"] == "undecided" and doc["exit"] == 2
    assert "cannot start" in doc["reason"]
    [line] = log.read_text().splitlines()
    assert json.loads(line)["class"] == "undecided"


def test_an_ad_hoc_command_replaces_the_policys_properties(repo: Repo) -> None:
    repo.product(APP)
    _result, doc = repo.judge("--repeat", "2", "--", sys.executable, "-c", "pass")
    assert doc["class"] == "accept", doc["reason"]
    [prop] = doc["properties"]
    assert prop["id"] == "cli" and prop["source"] == "command line"


def test_ctrl_c_during_a_run_leaves_no_workspace(repo: Repo, tmp_path: Path) -> None:
    repo.product(APP)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "git_evidence",
            "judge",
            "--",
            "sh",
            "-c",
            "touch started.local; sleep 30.0619 & wait",
        ],
        cwd=repo.path,
        env={**os.environ, "TMPDIR": str(scratch)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # Ctrl-C as a terminal delivers it: a suite started in the background by a
        # shell has SIGINT ignored, and the judge would inherit that
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 10
    while not list(scratch.glob("*/ws-1/started.local")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(scratch.iterdir()), "the workspace exists while the command runs"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == 2
    assert b"interrupted" in err
    assert list(scratch.iterdir()) == []
    assert running("sleep 30.0619") == []


# -- the verdict note --------------------------------------------------------------------


def test_the_verdict_note_round_trips_through_show_verdict(repo: Repo) -> None:
    candidate = repo.product(APP)
    result, doc = repo.judge("--property", "suite", "--note")
    assert doc["class"] == "accept"
    blob = repo.git("notes", "--ref=refs/notes/evidence-verdicts", "list", candidate).stdout
    note = subprocess.run(
        ["git", "cat-file", "blob", blob.strip()], cwd=repo.path, capture_output=True, check=True
    ).stdout
    assert note == result.stdout.strip().encode()  # the note is the record, byte for byte
    shown = evidence(repo.path, "show-verdict", candidate)
    assert shown.returncode == 0 and "\naccept\n" in shown.stdout
    as_json = json.loads(evidence(repo.path, "show-verdict", "--format", "json").stdout)
    assert as_json["verdict"] == doc


def test_verdict_notes_are_refused_from_an_untrusted_pusher(tmp_path: Path) -> None:
    bare = make_server(tmp_path, FILES)
    work = Repo(tmp_path / "w")
    git(tmp_path, "clone", "-q", str(bare), str(work.path))
    work.git("checkout", "-qb", "feat")
    work.product(APP)
    assert work.judge("--property", "suite", "--note")[1]["class"] == "accept"
    refused = work.push("origin", "refs/notes/evidence-verdicts", pusher="agent-bot")
    assert refused.returncode != 0
    assert "notes-forge" in refused.stderr
    accepted = work.push("origin", "refs/notes/evidence-verdicts", pusher=CI)
    assert accepted.returncode == 0, accepted.stderr


def test_a_forged_verdict_note_is_refused_even_from_a_verdict_writer(tmp_path: Path) -> None:
    bare = make_server(tmp_path, FILES)
    work = Repo(tmp_path / "w")
    git(tmp_path, "clone", "-q", str(bare), str(work.path))
    work.git("checkout", "-qb", "feat")
    candidate = work.product(APP)
    _result, doc = work.judge("--property", "suite", "--note")
    assert doc["class"] == "accept"
    lying = json.dumps(
        {**doc, "freeze_allowed": True}, sort_keys=True, separators=(",", ":")
    ).encode()
    other = json.dumps(
        {**doc, "candidate": work.head("main")}, sort_keys=True, separators=(",", ":")
    ).encode()
    # spaced (not canonical), one that allows a freeze, one about another commit
    for data in (json.dumps(doc).encode(), lying, other):
        blob = work.git("hash-object", "-w", "--stdin", input=data).stdout.strip()
        work.git("notes", "--ref=refs/notes/evidence-verdicts", "add", "-f", "-C", blob, candidate)
        pushed = work.push("origin", "+refs/notes/evidence-verdicts", pusher=CI)
        assert pushed.returncode != 0
        assert "verdict-invalid" in pushed.stderr, pushed.stderr


def test_freeze_status_says_an_old_fingerprint_is_of_the_old_kind(repo: Repo) -> None:
    now = time.time()
    entry = {
        "test_id": "suite",
        "fingerprint": "5be1c0ffee5e0b1a",  # what freeze add once took: an output digest
        "seed": 0,
        "pin": pin_digest(repo),
        "reproduced": True,
        "runs": 2,
        "failures": 1,
        "writer": CI,
        "frozen_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now - 60)),
        "until": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now + 3600)),
        "outputs": [[0, "0011223344556677"], [1, "5be1c0ffee5e0b1a"]],
    }
    repo.write("tests/freeze.jsonl", json.dumps(entry) + "\n")
    status = evidence(repo.path, "freeze", "status", "suite")
    assert status.returncode == 0, status.stdout  # it keeps working
    assert "of the old kind" in status.stdout
    entry["fingerprint"] = "89abcdef01234567"  # the shared kind is no output digest
    repo.write("tests/freeze.jsonl", json.dumps(entry) + "\n")
    status = evidence(repo.path, "freeze", "status", "suite")
    assert status.returncode == 0 and "old kind" not in status.stdout


def test_the_freeze_line_names_the_ledger_writer_and_runs_as_printed(repo: Repo) -> None:
    flaky_on_main(repo)
    _, doc = repo.judge("--property", "suite", env={"GIT_EVIDENCE_PUSHER": CI})
    line = doc["freeze_line"]
    assert f"--writer {CI}" in line and "--ci" not in line
    argv = shlex.split(line)
    # run exactly as printed, with no pusher variable: the line carries the writer
    env = {k: v for k, v in os.environ.items() if k != "GIT_EVIDENCE_PUSHER"}
    proc = subprocess.run(
        [sys.executable, "-m", "git_evidence", *argv[2:]],
        cwd=repo.path,
        env={**env, **FAST},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    entry = json.loads((repo.path / "tests/freeze.jsonl").read_text())
    assert entry["writer"] == CI


def test_freeze_add_runs_the_committed_tree_never_the_working_tree(repo: Repo) -> None:
    flaky_on_main(repo)
    # an uncommitted edit that would make every run pass is not what freeze add runs
    (repo.path / "src/app.py").write_text(APP)
    proc = evidence(
        repo.path,
        "freeze",
        "add",
        "--writer",
        CI,
        "--test",
        "suite",
        "--runs",
        "2",
        "--",
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "tests/properties",
        env=FAST,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "froze suite" in proc.stdout


def test_a_run_that_writes_runner_configuration_for_the_runs_after_it_is_caught(
    repo: Repo,
) -> None:
    # every later interpreter in this workspace would load it from PYTHONPATH (src)
    repo.product(
        "open('src/sitecustomize.py', 'w').write('import os\\n')\n" + APP,
    )
    result, doc = repo.judge("--property", "suite")
    assert doc["class"] == "fixture_breach" and result.returncode == 1, doc["reason"]
    assert any(
        "runner configuration added during the run: src/sitecustomize.py" in d
        for d in doc["details"]
    ), doc["details"]


def test_a_virtualenv_in_the_work_tree_on_path_is_found_by_a_command_that_starts_python(
    repo: Repo,
) -> None:
    # the work tree is hidden from the runs; the environment on PATH is bound back
    repo.product(APP)
    venv = repo.path / ".venv"  # made after the commit: it is not part of the candidate
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    script = "import sys; open('prefix.local', 'a').write(sys.prefix + chr(10))"
    path = f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"
    _, doc, kept = repo.judge_kept("--", "sh", "-c", f'python -c "{script}"', env={"PATH": path})
    assert doc["class"] == "accept", doc["reason"]
    assert markers(kept, "prefix.local") == [str(venv)] * 2
