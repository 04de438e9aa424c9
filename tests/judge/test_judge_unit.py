"""The judge's pure parts: the class table (total, first match wins), the fingerprint,
JUnit and hits parsing, the verdict record, the [[judge.property]] policy tables, and
the on-disk manifest the workspace is compared with."""

from __future__ import annotations

import dataclasses
import json
import os
import re
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers.examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from git_evidence.core.errors import PolicyError
from git_evidence.core.facts import Entry
from git_evidence.core.records import RecordError, canonical_json, parse_canonical
from git_evidence.judge import record as verdict_record
from git_evidence.judge.classes import (
    ACCEPT,
    CLASSES,
    EXIT,
    FIXTURE_BREACH,
    FLAKE_CANDIDATE,
    FLAKE_FROZEN,
    HELD,
    ORACLE_REWRITE,
    PATCH_INVALID,
    PIN_MOVED,
    PROPERTY_FAIL,
    PROPERTY_MISS,
    Failing,
    Flake,
    Signals,
    classify,
    runs_before_runs,
)
from git_evidence.judge.signals import (
    FixtureRun,
    PropertyRuns,
    active_freezes,
    seed_flakes,
    signals_from_runs,
)
from git_evidence.judge.text import explain, freeze_line, reproduce_line, to_text
from git_evidence.ledger.entries import Freeze
from git_evidence.ledger.fingerprint import exit_fingerprint, fingerprint, normalize_message
from git_evidence.lock.disk import worktree_manifest
from git_evidence.lock.manifest import compare
from git_evidence.policy.parsing import parse_policy
from git_evidence.policy.properties import JudgeProperty
from git_evidence.sandbox.outcomes import CaseResult, module_parts, node_id, parse_junit, read_junit
from git_evidence.sandbox.outcomes import read_hits as _read_hits
from git_evidence.sandbox.runner import Run as RunResult

# -- the class table -----------------------------------------------------------------------

texts = st.lists(st.text(max_size=3), max_size=2).map(tuple)
flakes = st.lists(
    st.builds(
        Flake,
        property=st.sampled_from(["p", "q"]),
        test_id=st.text(max_size=3),
        seed=st.integers(0, 3),
        fingerprint=st.text("0123456789abcdef", min_size=16, max_size=16),
        freeze=st.one_of(st.none(), st.just({"line": 1, "until": "2026-01-01T00:00:00Z"})),
    ),
    max_size=3,
).map(tuple)
signals = st.builds(
    Signals,
    patch_invalid=st.booleans(),
    oracle_rewrite=texts,
    fixture_breach=texts,
    held=texts,
    misses=texts,
    counterexamples=st.lists(st.tuples(st.just("p"), st.integers(0, 3)), max_size=2).map(tuple),
    flakes=flakes,
    unexplained=texts,
)


@given(signals)
@settings(max_examples=examples(500), deadline=None)
def test_the_class_table_is_total_and_first_match_wins(s: Signals) -> None:
    klass = classify(s)
    assert klass in CLASSES
    expected = next(
        name
        for name, fired in (
            (PATCH_INVALID, s.patch_invalid),
            (ORACLE_REWRITE, bool(s.oracle_rewrite)),
            (FIXTURE_BREACH, bool(s.fixture_breach)),
            (HELD, bool(s.held)),
            (PROPERTY_MISS, bool(s.misses)),
            (PROPERTY_FAIL, bool(s.counterexamples)),
            (
                FLAKE_FROZEN,
                bool(s.flakes)
                and all(f.freeze is not None for f in s.flakes)
                and not s.unexplained,
            ),
            (FLAKE_CANDIDATE, bool(s.flakes)),
            (PROPERTY_FAIL, bool(s.unexplained)),
            (ACCEPT, True),
        )
        if fired
    )
    assert klass == expected


@given(signals)
@settings(max_examples=examples(300), deadline=None)
def test_only_accept_and_flake_frozen_exit_0(s: Signals) -> None:
    klass = classify(s)
    assert (EXIT[klass] == 0) == (klass in (ACCEPT, FLAKE_FROZEN))
    if klass == ACCEPT:  # accept only when nothing at all fired
        assert s == Signals()


def test_anything_before_the_runs_stops_them() -> None:
    assert runs_before_runs(Signals())
    for fired in (
        Signals(patch_invalid=True),
        Signals(oracle_rewrite=("x",)),
        Signals(fixture_breach=("x",)),
        Signals(held=("x",)),
    ):
        assert not runs_before_runs(fired)


# -- from runs to signals ------------------------------------------------------------------


def run(
    seed: int, number: int, code: int | str, tests: dict[str, CaseResult] | None = None
) -> RunResult:
    return RunResult(seed, number, code, "sha256:" + "0" * 64, 0.1, tests)


PROP = JudgeProperty("p", ("cmd",), (0, 1), 3, 10.0)
JPROP = JudgeProperty("j", ("cmd", "{junitxml}"), (0,), 3, 10.0, junit=True)


def freeze(test_id: str, print_: str) -> Freeze:
    now = datetime.now(timezone.utc)
    return Freeze(
        test_id,
        print_,
        0,
        "sha256:" + "1" * 64,
        3,
        1,
        "ci",
        now - timedelta(hours=1),
        now + timedelta(hours=1),
        "",
        7,
    )


def test_a_seed_failing_every_run_is_a_counterexample_not_a_flake() -> None:
    result = PropertyRuns(
        PROP, {0: [run(0, i, 0) for i in (1, 2, 3)], 1: [run(1, i, 1) for i in (1, 2, 3)]}
    )
    s = signals_from_runs([result], {})
    assert s.counterexamples == (("p", 1),) and s.flakes == ()
    assert classify(s) == PROPERTY_FAIL


def test_one_failure_in_three_on_one_seed_is_a_flake_with_the_exit_fingerprint() -> None:
    result = PropertyRuns(PROP, {0: [run(0, 1, 0), run(0, 2, 1), run(0, 3, 0)]})
    s = signals_from_runs([result], {})
    [flake] = s.flakes
    assert (flake.test_id, flake.seed, flake.fingerprint) == ("p", 0, exit_fingerprint("p", 1))
    assert classify(s) == FLAKE_CANDIDATE
    line = freeze_line(PROP, flake)
    assert line == "git evidence freeze add --ci --test p --runs 3 --seed 0 --seeds 1 -- cmd"


def test_a_freeze_of_the_same_fingerprint_makes_it_frozen_another_does_not() -> None:
    result = PropertyRuns(PROP, {0: [run(0, 1, 0), run(0, 2, 1), run(0, 3, 0)]})
    same = active_freezes([freeze("p", exit_fingerprint("p", 1))], datetime.now(timezone.utc))
    assert classify(signals_from_runs([result], same)) == FLAKE_FROZEN
    other = active_freezes([freeze("p", exit_fingerprint("p", 2))], datetime.now(timezone.utc))
    assert classify(signals_from_runs([result], other)) == FLAKE_CANDIDATE


def test_an_expired_freeze_covers_nothing() -> None:
    old = freeze("p", exit_fingerprint("p", 1))._replace(
        frozen_at=datetime(2020, 1, 1, tzinfo=timezone.utc),
        until=datetime(2020, 1, 2, tzinfo=timezone.utc),
    )
    assert active_freezes([old], datetime.now(timezone.utc)) == {}


def test_junit_flakes_name_the_test_and_a_frozen_one_hides_no_other_failure() -> None:
    ok = CaseResult("passed")
    boom = CaseResult("failed", "AssertionError", "assert 3 == 4 at 0x7f00aa")
    other = CaseResult("failed", "ValueError", "bad")
    runs = [
        run(0, 1, 0, {"t::a": ok, "t::b": ok}),
        run(0, 2, 1, {"t::a": boom, "t::b": ok}),
        run(0, 3, 1, {"t::a": boom, "t::b": other}),
    ]
    pairs = seed_flakes("j", True, runs)
    assert [p[0] for p in pairs] == ["t::a", "t::b"]
    frozen_a = active_freezes([freeze("t::a", pairs[0][1])], datetime.now(timezone.utc))
    s = signals_from_runs([PropertyRuns(JPROP, {0: runs})], frozen_a)
    assert s.unexplained and classify(s) == FLAKE_CANDIDATE
    both = active_freezes(
        [freeze("t::a", pairs[0][1]), freeze("t::b", pairs[1][1])], datetime.now(timezone.utc)
    )
    assert classify(signals_from_runs([PropertyRuns(JPROP, {0: runs})], both)) == (FLAKE_FROZEN)


def test_runs_that_agree_on_exit_but_not_on_junit_are_a_flake() -> None:
    runs = [
        run(0, 1, 0, {"t::a": CaseResult("passed")}),
        run(0, 2, 0, {"t::a": CaseResult("skipped")}),
        run(0, 3, 0, {"t::a": CaseResult("passed")}),
    ]
    assert [p[0] for p in seed_flakes("j", True, runs)] == ["t::a"]


def test_a_counterexample_names_the_tests_that_failed_on_every_run_of_its_seed() -> None:
    ok, boom = CaseResult("passed"), CaseResult("failed", "AssertionError", "no")
    err = CaseResult("error", "E", "setup")
    runs = [
        run(0, 1, 1, {"t.py::a": boom, "t.py::b": boom, "t.py::c": err}),
        run(0, 2, 1, {"t.py::a": boom, "t.py::b": ok, "t.py::c": err}),
        run(0, 3, 1, {"t.py::a": boom, "t.py::b": boom, "t.py::c": err}),
    ]
    s = signals_from_runs([PropertyRuns(JPROP, {0: runs})], {})
    assert s.failing == (Failing("j", 0, ("t.py::a", "t.py::c"), (1,)),)
    why = explain(PROPERTY_FAIL, s, base="b" * 40, props={"j": JPROP})
    assert why.reason == "property j: seed 0 failed on every run: t.py::a, t.py::c"
    assert why.details == ("j: seed 0 failed on every run: t.py::a, t.py::c",)
    assert classify(s) == classify(dataclasses.replace(s, failing=()))  # no class reads it


def test_a_counterexample_without_junit_or_one_common_test_names_the_exit_codes() -> None:
    plain = PropertyRuns(PROP, {1: [run(1, 1, 1), run(1, 2, "timeout"), run(1, 3, 1)]})
    assert signals_from_runs([plain], {}).failing == (Failing("p", 1, (), (1, "timeout")),)
    a, b = CaseResult("failed"), CaseResult("passed")
    apart = PropertyRuns(JPROP, {0: [run(0, n, 1, {"x": a if n % 2 else b}) for n in (1, 2, 3)]})
    [failing] = signals_from_runs([apart], {}).failing
    assert failing.tests == () and failing.text() == "exit 1"
    many = Failing("j", 0, tuple(f"t{i}" for i in range(5)), (1,))
    assert many.text() == "t0, t1, t2 and 2 more"


def test_an_unexplained_failure_says_which_run_of_how_many_and_why() -> None:
    runs = [run(0, 1, 0), run(0, 2, 1), run(0, 3, 2)]
    frozen = active_freezes([freeze("p", exit_fingerprint("p", 1))], datetime.now(timezone.utc))
    s = signals_from_runs([PropertyRuns(PROP, {0: runs})], frozen)
    assert s.unexplained == ("p: run 3 of 3 of seed 0 failed, and no freeze in force explains it",)


def test_the_reproduce_command_replaces_the_junit_placeholder_and_sets_the_runs_variables() -> None:
    prop = JudgeProperty("j", ("python", "-m", "pytest", "--junitxml={junitxml}"), (0,), 2, 1.0)
    line = reproduce_line(prop, 2**32 + 3, ("src", "lib"))
    assert line == (
        "PYTHONPATH=src:lib EVIDENCE_SEED=4294967299 EVIDENCE_RUN=1 PYTHONHASHSEED=3 "
        "EVIDENCE_HITS_FILE=/dev/null python -m pytest --junitxml=junit.xml"
    )
    assert reproduce_line(PROP, 0).startswith("EVIDENCE_SEED=0 ")


def test_a_fixture_breach_counts_files_and_says_when_the_pin_moved() -> None:
    lines = ("fixture changed by the candidate: a: modified (1 -> 2)", "drift: b: added (- -> 3)")
    why = explain(FIXTURE_BREACH, Signals(fixture_breach=lines), base="b" * 40, props={})
    assert why.reason.endswith("(before any run): 2 file(s)")
    moved = Signals(fixture_breach=(lines[0], PIN_MOVED))
    why = explain(FIXTURE_BREACH, moved, base="b" * 40, props={}, during_run=True)
    assert why.reason.endswith("(changed during the run): 1 file(s) and the pin in force moved")


def test_a_must_fail_fixture_that_passes_or_times_out_is_a_miss() -> None:
    prop = JudgeProperty("p", ("cmd",), (0,), 2, 1.0, must_fail=("f",))
    for code, missed in ((1, False), (0, True), ("timeout", True)):
        result = PropertyRuns(prop, {0: [run(0, 1, 0), run(0, 2, 0)]})
        result.fixtures.append(FixtureRun("must_fail", "f", 0, run(0, 1, code)))
        s = signals_from_runs([result], {})
        assert bool(s.misses) is missed


# -- fingerprint ------------------------------------------------------------------------


def test_the_fingerprint_ignores_numbers_and_addresses_but_not_the_message() -> None:
    a = fingerprint("t::x", "failed", "AssertionError", "assert 12 == 13 at 0x7ffe12ab\nmore")
    b = fingerprint("t::x", "failed", "AssertionError", "assert 7 == 99 at 0x55aa\nother")
    c = fingerprint("t::x", "failed", "AssertionError", "assert 'a' == 'b'")
    assert a == b != c and len(a) == 16
    assert normalize_message("object deadbeef12 at 0xff: 42 items") == "object # at #: # items"
    assert fingerprint("t::y", "failed", "AssertionError", "assert 1 == 2") != fingerprint(
        "t::x", "failed", "AssertionError", "assert 1 == 2"
    )


def test_the_exit_fingerprint_keeps_the_exit_code() -> None:
    assert exit_fingerprint("p", 1) != exit_fingerprint("p", 2) != exit_fingerprint("p", "timeout")
    assert exit_fingerprint("p", 1) == exit_fingerprint("p", 1)


@given(st.text(), st.text(), st.text(), st.text())
@settings(max_examples=examples(200), deadline=None)
def test_the_fingerprint_never_crashes(test_id: str, outcome: str, kind: str, message: str) -> None:
    assert len(fingerprint(test_id, outcome, kind, message)) == 16


# -- JUnit and hits ------------------------------------------------------------------------


def test_junit_maps_test_ids_to_outcomes_worst_first() -> None:
    xml = b"""<?xml version="1.0"?><testsuites><testsuite name="pytest">
      <testcase classname="tests.test_a" name="test_ok"/>
      <testcase classname="tests.test_a" name="test_bad">
        <failure message="assert 1 == 2" type="AssertionError">long</failure></testcase>
      <testcase classname="tests.test_a" name="test_err"><error message="boom"/></testcase>
      <testcase classname="tests.test_a" name="test_skip"><skipped/></testcase>
      <testcase classname="tests.test_a" name="test_ok"><failure message="again"/></testcase>
    </testsuite></testsuites>"""
    tests = parse_junit(xml)
    assert tests["tests.test_a::test_bad"] == CaseResult(
        "failed", "AssertionError", "assert 1 == 2"
    )
    assert tests["tests.test_a::test_err"].outcome == "error"
    assert tests["tests.test_a::test_skip"].outcome == "skipped"
    assert tests["tests.test_a::test_ok"].outcome == "failed"  # listed twice: the worst


def _junit(*names: str) -> bytes:
    cases = "".join(f'<testcase classname="tests.test_a" name="{n}"/>' for n in names)
    return f"<testsuites><testsuite>{cases}</testsuite></testsuites>".encode()


@pytest.mark.parametrize(
    ("name", "odd"),
    [
        ("ok&#10;::error file=a::forged", "U+000A"),  # a workflow command on its own line
        ("ok&#13;", "U+000D"),
        ("ok\u009b31m", "U+009B"),  # a C1 control: a terminal's escape
        ("ok\u202eevil", "U+202E"),  # a direction override
        ("ok\u2028", "U+2028"),  # a line separator
        ("ok\u2067x", "U+2067"),  # a direction isolate
    ],
)
def test_a_junit_id_with_an_unsafe_character_is_not_read(name: str, odd: str) -> None:
    with pytest.raises(ValueError, match=re.escape(f"unsafe character {odd}")):
        parse_junit(_junit(name))


@pytest.mark.parametrize(
    "name", ["café", "test_π", "a\u00a0b", "שלום\u200f", "名前", "emoji_\U0001f600", "x[a b]"]
)
def test_a_junit_id_in_any_script_is_read(name: str) -> None:
    assert list(parse_junit(_junit(name))) == [f"tests.test_a::{name}"]


def test_a_junit_id_too_long_or_empty_is_not_read() -> None:
    assert parse_junit(_junit("t" * 4000))  # a long parametrized id is still read
    with pytest.raises(ValueError, match="more than 4096 characters"):
        parse_junit(_junit("t" * 4097))
    with pytest.raises(ValueError, match="neither a classname nor a name"):
        parse_junit(b"<testsuite><testcase/></testsuite>")


def test_a_junit_file_with_too_many_cases_is_not_read() -> None:
    assert len(parse_junit(_junit("a", "b", "c"), most=3)) == 3
    with pytest.raises(ValueError, match="more than 3 test cases"):
        parse_junit(_junit("a", "b", "c", "d"), most=3)


def test_a_failing_seed_says_why_its_junit_was_not_read() -> None:
    failing = Failing("j", 0, (), (0,), "the JUnit XML is unreadable: a test id …")
    assert failing.text() == "exit 0; the JUnit XML is unreadable: a test id …"
    assert failing.as_json()["junit"] == "the JUnit XML is unreadable: a test id …"
    assert "junit" not in Failing("j", 0, (), (1,)).as_json()  # records as they were


def test_junit_classnames_become_node_ids_where_the_workspace_has_the_module(
    tmp_path: Path,
) -> None:
    (tmp_path / "tests/pkg").mkdir(parents=True)
    (tmp_path / "tests/test_a.py").write_text("")
    (tmp_path / "tests/pkg/test_b.py").write_text("")
    (tmp_path / "tests/pkg.py").write_text("")  # a shorter prefix that is a module too
    modules = module_parts(str(tmp_path))
    assert node_id("tests.test_a", "test_x[1-2]", modules) == "tests/test_a.py::test_x[1-2]"
    assert node_id("tests.test_a.TestX", "t", modules) == "tests/test_a.py::TestX::t"
    assert node_id("tests.pkg.test_b.T.U", "t", modules) == "tests/pkg/test_b.py::T::U::t"
    assert node_id("com.example.FooTest", "t", modules) == "com.example.FooTest::t"  # Surefire
    assert node_id("tests", "t", modules) == "tests::t"  # a folder is no module
    assert node_id("", "t", modules) == "t"
    assert node_id("tests.test_a", "t") == "tests.test_a::t"  # no workspace: as JUnit says
    xml = tmp_path / "junit.xml"
    xml.write_text('<testsuite><testcase classname="tests.test_a" name="t"/></testsuite>')
    assert read_junit(str(xml), str(tmp_path))[0] == {"tests/test_a.py::t": CaseResult("passed")}
    assert read_junit(str(xml))[0] == {"tests.test_a::t": CaseResult("passed")}


def test_a_hostile_classname_makes_the_judge_look_only_inside_the_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    space, outside = tmp_path / "ws", tmp_path / "outside"
    (space / "real").mkdir(parents=True)
    outside.mkdir()
    (outside / "test_out.py").write_text("")
    (space / "real/test_r.py").write_text("")
    os.symlink(outside, space / "linked")
    os.symlink(outside / "test_out.py", space / "test_alias.py")
    looked: list[str] = []
    real_lstat = os.lstat

    def lstat(path: str, *args: object, **kw: object) -> os.stat_result:
        looked.append(path)
        return real_lstat(path)

    monkeypatch.setattr(os, "lstat", lstat)
    modules = module_parts(str(space))
    for classname in (
        "..",
        "....tmp.outside.test_out",
        "linked.test_out",
        "test_alias",
        "real/../../outside.test_out",
        "real.test_r/..",
        "/etc.passwd",
        "real\x00.x",
        "a" * 5000,
        ".".join(["real"] * 200),
    ):
        assert node_id(classname, "t", modules) == f"{classname}::t"
    assert node_id("real.test_r.C", "t", modules) == "real/test_r.py::C::t"
    assert looked, "the module check ran"
    prefix = str(space) + os.sep
    for path in looked:
        assert path.startswith(prefix) and ".." not in Path(path).relative_to(space).parts
    assert len(looked) < 400  # a classname of many parts is looked at once, to 64 parts


def test_junit_with_entities_or_garbage_is_refused() -> None:
    for bad in (b'<!DOCTYPE x [<!ENTITY a "b">]><testsuite/>', b"<testsuite>", b"<html/>"):
        with pytest.raises(ValueError):
            parse_junit(bad)


def test_hits_lines_are_summed_and_anything_else_ignored(tmp_path: Path) -> None:
    hits = tmp_path / "hits"
    hits.write_text("test_a 5\n7\ntest_a 3\ngarbage line\ntest b -1\n\n")
    assert _read_hits(str(hits)) == {"test_a": 8, "": 7}
    assert _read_hits(str(tmp_path / "none")) == {}


# -- records ----------------------------------------------------------------------------


def test_a_canonical_record_round_trips_and_anything_else_is_refused() -> None:
    doc = {"b": [1, "\udcff"], "a": {"z": None}}
    data = canonical_json(doc)
    assert parse_canonical(data) == doc
    for bad in (
        data + b"\n",
        json.dumps(doc).encode(),
        data + b"\n" + data,
        b"[1]",
        b'{"a":1,"a":2}',
    ):
        with pytest.raises(RecordError):
            parse_canonical(bad)


def verdict_doc(**over: object) -> dict[str, object]:
    doc: dict[str, object] = {
        "schema": 1,
        "kind": verdict_record.KIND,
        "class": "accept",
        "exit": 0,
        "result": "PASSED",
        "reason": "r",
        "base": "b" * 40,
        "candidate": "c" * 40,
        "freeze_allowed": False,
        "started_at": "2026-01-01T00:00:00Z",
    }
    doc.update(over)
    return doc


@pytest.mark.parametrize(
    "over",
    [
        {"freeze_allowed": True},
        {"class": "accept", "exit": 1},
        {"class": "lgtm"},
        {"candidate": "d" * 40},
        {"schema": 2},
        {"result": "FAILED"},
    ],
)
def test_a_verdict_note_that_lies_is_invalid(over: dict[str, object]) -> None:
    with pytest.raises(verdict_record.VerdictInvalid):
        verdict_record.parse(canonical_json(verdict_doc(**over)), "c" * 40)


def test_a_valid_verdict_note_parses_and_renders() -> None:
    doc = verdict_record.parse(canonical_json(verdict_doc(pin=None)), "c" * 40)
    text = to_text(doc)
    assert text.splitlines()[0] == "accept" and "unpinned base" in text


# -- policy -------------------------------------------------------------------------------


def policy_error(text: str) -> PolicyError:
    with pytest.raises(PolicyError) as caught:
        parse_policy(text.encode(), "base:.git-evidence.toml")
    return caught.value


def test_judge_properties_parse_with_defaults_from_the_judge_table() -> None:
    policy = parse_policy(
        b'[judge]\nrepeat = 4\nseeds = 2\n[[judge.property]]\nid = "a"\ncommand = ["x"]\n'
        b'[[judge.property]]\nid = "b"\ncommand = ["y", "--junitxml={junitxml}"]\n'
        b"junit = true\nseed_list = [9, 3]\nrepeat = 2\n",
        "x",
    )
    a, b = policy.judge.properties
    assert (a.seeds, a.repeat, a.junit) == ((0, 1), 4, False)
    assert (b.seeds, b.repeat, b.junit) == ((9, 3), 2, True)
    assert policy.verdict_writer_names == policy.lock_writers
    assert policy.judge.notes_ref == "refs/notes/evidence-verdicts"


def test_a_policy_without_judge_keeps_its_digest() -> None:
    from git_evidence.policy.schema import Policy

    assert parse_policy(b"", "x").digest == Policy(source="y").digest


@pytest.mark.parametrize(
    ("text", "key", "line"),
    [
        (
            '[[judge.property]]\nid = "a"\ncommand = ["x"]\nrepeat = 1\n',
            "judge.property[0].repeat",
            4,
        ),
        ('[[judge.property]]\nid = "a"\ncommand = []\n', "judge.property[0].command", 3),
        (
            '[[judge.property]]\nid = "a"\ncommand = ["x"]\n'
            '[[judge.property]]\nid = "a"\ncommand = ["y"]\n',
            "judge.property[1].id",
            5,
        ),
        (
            '[[judge.property]]\nid = "a"\ncommand = ["x"]\nseed = 1\nseed_list = [2]\n',
            "judge.property[0].seed_list",
            5,
        ),
        (
            '[[judge.property]]\nid = "a"\ncommand = ["x"]\nmust_fail = ["../x"]\n',
            "judge.property[0].must_fail",
            4,
        ),
        (
            '[[judge.property]]\nid = "a"\ncommand = ["x", "{junitxml}"]\n',
            "judge.property[0].junit",
            1,
        ),
        ('[[judge.property]]\nid = "a b"\ncommand = ["x"]\n', "judge.property[0].id", 2),
        ('[judge]\nnotes_ref = "refs/notes/evidence"\n', "judge.notes_ref", 2),
        ("[judge]\ntimeout_s = 0\n", "judge.timeout_s", 2),
        ("[judge]\nwhatever = 0\n", "judge.whatever", 2),
    ],
)
def test_judge_policy_errors_name_key_and_line(text: str, key: str, line: int) -> None:
    exc = policy_error(text)
    assert exc.key == key and exc.line == line, str(exc)


# -- the workspace manifest -------------------------------------------------------------


def test_the_disk_manifest_sees_untracked_files_and_hashes_links_without_following(
    tmp_path: Path,
) -> None:
    root = tmp_path / "tests/fixtures"
    root.mkdir(parents=True)
    (root / "a.json").write_text("{}\n")
    (tmp_path / "secret").write_text("outside\n")
    os.symlink("../../secret", root / "link")
    (root / "__pycache__").mkdir()
    (root / "__pycache__/x.pyc").write_bytes(b"\0")
    files = worktree_manifest(
        str(tmp_path), ("tests/fixtures",), ("**/__pycache__/**",), {}, submodules=False
    )
    assert set(files) == {"tests/fixtures/a.json", "tests/fixtures/link"}
    link = files["tests/fixtures/link"]
    assert link.mode == "120000" and link.size == len("../../secret")
    pinned = {"tests/fixtures/a.json": files["tests/fixtures/a.json"]._replace(blob="b" * 40)}
    assert [(d.path, d.kind) for d in compare(pinned, files)] == [("tests/fixtures/link", "added")]


def test_an_empty_directory_where_the_lock_has_a_submodule_matches_it(tmp_path: Path) -> None:
    (tmp_path / "testdata/sub").mkdir(parents=True)
    locked = {"testdata/sub": Entry("160000", "a" * 40)}
    files = worktree_manifest(str(tmp_path), ("testdata",), (), locked, submodules=False)
    assert compare(locked, files) == []
