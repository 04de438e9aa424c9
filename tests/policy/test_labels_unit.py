"""The labels file and the retry quota as data: strict parsing, the
append-only rule, the scorecard. Pure functions, so many inputs: Hypothesis drives the
parsers with any bytes."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from git_evidence.core.errors import PolicyError
from git_evidence.judge import scorecard
from git_evidence.ledger import quota
from git_evidence.plugin import retries
from git_evidence.policy import labels
from git_evidence.policy.labels import (
    KINDS,
    LabelsError,
    format_labels,
    labels_problem,
    parse_labels,
)
from git_evidence.policy.parsing import parse_policy
from git_evidence.policy.schema import Policy

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
WRITERS = quota.Writers({"alice"}, {"ci-bot"}, pusher_grants=True, pusher_spends=True)


# -- labels: the format ----------------------------------------------------------------


def test_rows_comments_and_blank_lines_parse() -> None:
    data = (
        "# labels\n"
        "tests/test_a.py::test_x\tinvariant\n"
        "\n"
        "   # indented comment\n"
        "tests/test_a.py::test_y[1-2]\tnondeterministic\n"
        "tests/test_интервью.py::test_z\tcharacterization\n"
    ).encode()
    found = parse_labels(data, "base:tests/evidence-labels.tsv")
    assert dict(found.kinds) == {
        "tests/test_a.py::test_x": "invariant",
        "tests/test_a.py::test_y[1-2]": "nondeterministic",
        "tests/test_интервью.py::test_z": "characterization",
    }
    assert found.digest == labels.digest(data)
    assert found.source == "base:tests/evidence-labels.tsv"


def test_an_empty_file_has_no_rows() -> None:
    assert len(parse_labels(b"", "x").kinds) == 0


def _error(data: bytes) -> LabelsError:
    with pytest.raises(LabelsError) as caught:
        parse_labels(data, "base:labels.tsv")
    return caught.value


def test_unknown_kind_names_file_and_line() -> None:
    err = _error(b"a::t\tinvariant\nb::t\tflaky\n")
    assert err.line == 2
    assert str(err).startswith("base:labels.tsv:2: unknown kind 'flaky'")
    assert err.rule == "policy-error"


def test_duplicate_node_id_names_both_lines() -> None:
    err = _error(b"a::t\tinvariant\n# x\na::t\tnondeterministic\n")
    assert err.line == 3
    assert "duplicate node id 'a::t' (first at line 1)" in str(err)


def test_a_line_without_a_tab_is_refused() -> None:
    assert "found 1 tab-separated field" in str(_error(b"a::t invariant\n"))


def test_a_third_field_is_refused() -> None:
    assert "found 3 tab-separated fields" in str(_error(b"a::t\tinvariant\t# why\n"))


def test_trailing_space_after_the_kind_is_named() -> None:
    assert "(trailing space?)" in str(_error(b"a::t\tinvariant \n"))


def test_crlf_is_refused() -> None:
    assert "carriage return" in str(_error(b"a::t\tinvariant\r\n"))


def test_a_byte_order_mark_is_refused() -> None:
    assert _error(labels.BOM + b"a::t\tinvariant\n").line == 1


def test_non_utf8_names_its_line() -> None:
    err = _error(b"a::t\tinvariant\nb::\xff\tinvariant\n")
    assert err.line == 2 and "not UTF-8" in str(err)


def test_a_zero_width_joiner_in_a_node_id_is_refused() -> None:
    err = _error("a::te\u200dst\tinvariant\n".encode())
    assert "U+200D" in str(err)


def test_a_node_id_with_surrounding_spaces_is_refused() -> None:
    assert "leading or trailing spaces" in str(_error(b" a::t\tinvariant\n"))


def test_labels_problem_is_none_for_a_valid_file() -> None:
    assert labels_problem(b"a::t\tinvariant\n", "tests/evidence-labels.tsv") is None


def test_labels_problem_names_path_and_line() -> None:
    problem = labels_problem(b"a::t\tinvariant\nb::t\n", "tests/evidence-labels.tsv")
    assert problem is not None
    assert problem.startswith("tests/evidence-labels.tsv:2: expected `node id<TAB>kind`")


def test_scan_reports_every_problem_for_labels_check() -> None:
    rows, problems = labels.scan_labels(b"a\tinvariant\na\tinvariant\nb\tnope\nc\tinvariant\n")
    assert [r.node for r in rows] == ["a", "c"]
    assert [p.line for p in problems] == [2, 3]


# -- labels: properties ----------------------------------------------------------------

node_ids = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")),
    min_size=1,
    max_size=40,
).filter(lambda s: s == s.strip() and not s.startswith("#") and s.isprintable())


@given(st.dictionaries(node_ids, st.sampled_from(KINDS), max_size=30), st.text(max_size=80))
def test_any_valid_labels_file_round_trips(rows: dict[str, str], header: str) -> None:
    data = format_labels(rows.items(), header)
    parsed = parse_labels(data, "x")
    assert dict(parsed.kinds) == rows
    assert list(parsed.kinds) == list(rows)  # order kept
    assert format_labels(parsed.kinds.items(), header) == data


@given(st.binary(max_size=300))
def test_any_bytes_either_parse_or_name_a_line(data: bytes) -> None:
    try:
        parsed = parse_labels(data, "f.tsv")
    except LabelsError as err:
        lines = max(1, data.count(b"\n") + (0 if data.endswith(b"\n") else 1))
        assert 1 <= err.line <= lines
        assert str(err).startswith(f"f.tsv:{err.line}: ")
        assert labels_problem(data, "f.tsv") == str(err)
    else:
        assert labels_problem(data, "f.tsv") is None
        assert all(kind in KINDS for kind in parsed.kinds.values())


@given(st.lists(st.sampled_from(["a\tinvariant", "a\tnondeterministic", "# c", "", "b\tx"])))
def test_any_mix_of_lines_keeps_the_first_row_of_a_node(lines: list[str]) -> None:
    rows, problems = labels.scan_labels("".join(f"{line}\n" for line in lines).encode())
    assert len({r.node for r in rows}) == len(rows)
    first_a = next((line for line in lines if line.startswith("a\t")), None)
    assert [r.kind for r in rows if r.node == "a"] == ([first_a.split("\t")[1]] if first_a else [])
    assert len(problems) == sum(1 for line in lines if line == "b\tx") + max(
        0, sum(1 for line in lines if line.startswith("a\t")) - 1
    )


# -- the [labels] policy table -----------------------------------------------------------


def test_labels_table_defaults() -> None:
    policy = parse_policy(b"", "p")
    assert (policy.labels_path, policy.quota_path, policy.retries) == (
        "tests/evidence-labels.tsv",
        "tests/retry-quota.jsonl",
        2,
    )


def test_labels_table_is_read() -> None:
    policy = parse_policy(
        b'[labels]\npath = "qa/labels.tsv"\nquota_path = "qa/quota.jsonl"\nretries = 5\n', "p"
    )
    assert (policy.labels_path, policy.quota_path, policy.retries) == (
        "qa/labels.tsv",
        "qa/quota.jsonl",
        5,
    )
    assert policy.as_dict()["labels"] == {
        "path": "qa/labels.tsv",
        "quota_path": "qa/quota.jsonl",
        "retries": 5,
    }


@pytest.mark.parametrize("value", ["11", "-1", "true", '"2"', "2.0"])
def test_retries_out_of_bounds_is_a_policy_error(value: str) -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy(f"[labels]\nretries = {value}\n".encode(), "base:.git-evidence.toml")
    assert "base:.git-evidence.toml:2: labels.retries:" in str(caught.value)


@pytest.mark.parametrize("value", ['"tests/*.tsv"', '"../x.tsv"', "3", '""', '"!x"'])
def test_a_labels_path_that_is_not_a_plain_path_is_refused(value: str) -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy(f"[labels]\npath = {value}\n".encode(), "p")
    assert "labels.path" in str(caught.value)


def test_the_quota_may_not_be_the_ledger() -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy(b'[labels]\nquota_path = "Tests/Freeze.jsonl"\n', "p")
    assert "labels.quota_path: 'Tests/Freeze.jsonl' is already ledger.path" in str(caught.value)


def test_the_labels_file_may_not_be_the_policy_file() -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy(b'[labels]\npath = ".git-evidence.toml"\n', "p")
    assert "is already the policy file" in str(caught.value)


def test_an_unknown_key_in_labels_is_refused() -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy(b"[labels]\nretry = 3\n", "p")
    assert "labels.retry: unknown key" in str(caught.value)


def test_labels_file_is_policy_and_quota_is_ledger_class() -> None:
    classifier = Policy().classifier()
    assert classifier.classify("tests/evidence-labels.tsv").klass == "policy"
    assert classifier.classify("Tests/Evidence-Labels.tsv").klass == "policy"
    assert classifier.classify("tests/retry-quota.jsonl").klass == "freeze_ledger"


def test_moved_labels_and_quota_paths_are_classified_where_they_are() -> None:
    policy = parse_policy(b'[labels]\npath = "qa/l.tsv"\nquota_path = "qa/q.jsonl"\n', "p")
    classifier = policy.classifier()
    assert classifier.classify("qa/l.tsv").klass == "policy"
    assert classifier.classify("qa/q.jsonl").klass == "freeze_ledger"


# -- quota: entries --------------------------------------------------------------------


def grant(amount: int = 3, **over: object) -> dict[str, object]:
    doc: dict[str, object] = {
        "kind": "grant",
        "amount": amount,
        "writer": "alice",
        "at": "2026-06-01T10:00:00Z",
        "reason": "flaky network test",
    }
    doc.update(over)
    return doc


def spend(amount: int = 1, **over: object) -> dict[str, object]:
    doc: dict[str, object] = {
        "kind": "spend",
        "amount": amount,
        "test_id": "tests/test_net.py::test_fetch",
        "candidate": "a" * 40,
        "writer": "ci-bot",
        "at": "2026-06-01T11:00:00Z",
    }
    doc.update(over)
    return doc


def jl(*docs: dict[str, object]) -> bytes:
    return b"".join(json.dumps(d).encode() + b"\n" for d in docs)


def test_remaining_is_grants_minus_spends() -> None:
    entries, problems = quota.parse_quota(jl(grant(5), spend(2), spend(1), grant(1)))
    assert problems == []
    assert quota.remaining(entries) == 3


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        (
            b'{"kind":"grant","amount":1,"amount":9,"writer":"a","at":"2026-01-01T00:00:00Z",'
            b'"reason":"r"}',
            "duplicate key 'amount'",
        ),
        (json.dumps(grant(reason="a\ud800b")).encode(), "U+D800"),
        (json.dumps(grant(writer="al\u0000ice")).encode(), "U+0000"),
        (json.dumps(grant(amount=0)).encode(), "amount must be a whole number"),
        (json.dumps(grant(amount=True)).encode(), "amount must be a whole number"),
        (json.dumps(grant(extra=1)).encode(), "unknown field extra"),
        (json.dumps(spend(test_id="")).encode(), "test_id is empty"),
        (json.dumps({**spend(), "kind": "loan"}).encode(), "kind must be 'grant' or 'spend'"),
        (json.dumps(grant(at="2026-06-01T10:00:00+02:00")).encode(), "not in UTC"),
        (b"[1]", "not a JSON object"),
    ],
)
def test_a_bad_entry_is_refused_with_its_reason(raw: bytes, why: str) -> None:
    _, problems = quota.parse_quota(raw + b"\n")
    assert len(problems) == 1 and why in problems[0].message, problems


def test_a_grant_needs_a_reason() -> None:
    doc = grant()
    del doc["reason"]
    _, problems = quota.parse_quota(jl(doc))
    assert "a grant needs reason" in problems[0].message


@pytest.mark.parametrize("used", [0, 1, 2, 3])
def test_a_retry_is_allowed_only_while_remaining_covers_it(used: int) -> None:
    assert quota.retry_allowed(2, used) is (used <= 2)
    assert quota.retry_allowed(0, 1) is False  # grants equal to spends: no retry


# -- quota: the append-only check ------------------------------------------------------


def check(old: bytes | None, new: bytes | None, writers: quota.Writers = WRITERS) -> list[str]:
    return [
        f"{p.rule}:{p.line}:{p.message}"
        for p in quota.check_change(old, new, now=NOW, writers=writers)
    ]


def test_appending_a_grant_and_a_spend_is_clean() -> None:
    old = jl(grant(2))
    assert check(old, old + jl(spend(1))) == []
    assert check(None, jl(grant(1))) == []


def test_a_spend_past_the_grants_is_an_entry_problem() -> None:
    old = jl(grant(2), spend(1))
    found = check(old, old + jl(spend(2)))
    assert found == ["ledger-entry:3:remaining retries would be -1: spends never exceed grants"]


def test_editing_an_old_line_is_a_rewrite() -> None:
    old = jl(grant(2), spend(1))
    assert check(old, jl(grant(9), spend(1)))[0].startswith("ledger-rewrite:1:")


def test_deleting_the_quota_is_a_rewrite() -> None:
    assert check(jl(grant(1)), None)[0].startswith("ledger-rewrite:None:")


def test_a_grant_by_a_ledger_writer_is_refused() -> None:
    ci_only = quota.Writers({"alice"}, {"ci-bot"}, pusher_grants=False, pusher_spends=True)
    found = check(b"", jl(grant(5, writer="ci-bot")), ci_only)
    assert any("'ci-bot' is not an evidence writer" in f for f in found)
    assert any("granted by an evidence writer's push only" in f for f in found)


def test_a_spend_by_an_evidence_writer_is_refused() -> None:
    alice = quota.Writers({"alice"}, {"ci-bot"}, pusher_grants=True, pusher_spends=False)
    found = check(jl(grant(3)), jl(grant(3), spend(1)), alice)
    assert found == ["ledger-entry:2:spends are appended by a ledger writer (CI) only"]


def test_an_entry_from_the_future_is_refused() -> None:
    later = (NOW + timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert "in the future" in check(b"", jl(grant(1, at=later)))[0]


def test_an_append_without_final_newline_is_refused() -> None:
    assert check(b"", jl(grant(1))[:-1]) == ["ledger-entry:1:the last line has no newline"]


@given(st.lists(st.tuples(st.sampled_from(["grant", "spend"]), st.integers(1, 5)), max_size=12))
def test_the_check_refuses_exactly_the_appends_that_go_negative(
    moves: list[tuple[str, int]],
) -> None:
    data = jl(*[grant(n) if kind == "grant" else spend(n) for kind, n in moves])
    balance, lowest = 0, 0
    for kind, n in moves:
        balance += n if kind == "grant" else -n
        lowest = min(lowest, balance)
    found = check(b"", data)
    assert (found == []) is (lowest >= 0)


# -- the scorecard and the quota's vote ------------------------------------------------


@pytest.mark.parametrize(
    ("properties", "fixtures", "vote", "merge"),
    [
        (True, True, "pass", True),
        (True, True, "abstain", True),
        (True, True, "fail", False),
        (False, True, "pass", False),
        (True, False, "abstain", False),
        (False, False, "fail", False),
    ],
)
def test_scorecard_merges_only_when_properties_and_fixtures_pass(
    properties: bool, fixtures: bool, vote: scorecard.Vote, merge: bool
) -> None:
    card = scorecard.merge_rule(properties, fixtures, vote)
    assert card["merge"] is merge
    assert card["votes"] == {
        "properties": "pass" if properties else "fail",
        "fixtures": "pass" if fixtures else "fail",
        "quota": vote,
    }


def test_scorecard_refuses_an_unknown_vote() -> None:
    with pytest.raises(ValueError, match="pass, fail or abstain"):
        scorecard.merge_rule(True, True, "maybe")  # type: ignore[arg-type]


def test_quota_vote() -> None:
    assert scorecard.quota_vote(0, 3, 0) == "abstain"
    assert scorecard.quota_vote(2, 3, 0) == "pass"
    assert scorecard.quota_vote(3, 3, 0) == "pass"
    assert scorecard.quota_vote(4, 3, 0) == "fail"
    assert scorecard.quota_vote(0, 0, 1) == "fail"  # a retry the quota refused


def test_retries_are_read_from_junit_properties() -> None:
    xml = b"""<testsuites><testsuite>
    <testcase classname="t" name="a"><properties>
      <property name="test_id" value="t.py::a"/><property name="label" value="nondeterministic"/>
      <property name="attempts" value="3"/><property name="evidence" value="flaky"/>
    </properties><flakyFailure message="x"/></testcase>
    <testcase classname="t" name="b"><properties>
      <property name="test_id" value="t.py::b"/><property name="label" value="invariant"/>
      <property name="attempts" value="1"/></properties></testcase>
    <testcase classname="t" name="c"><properties>
      <property name="test_id" value="t.py::c"/><property name="label" value="nondeterministic"/>
      <property name="attempts" value="1"/><property name="evidence" value="quota"/>
    </properties><failure message="y"/></testcase>
    </testsuite></testsuites>"""
    assert retries.retries_from_junit(xml) == [
        retries.Retried("t.py::a", "nondeterministic", 3, "passed"),
        retries.Retried("t.py::c", "nondeterministic", 1, "quota"),
    ]


def test_a_spend_line_is_canonical_and_parses_back() -> None:
    entry = quota.Entry(quota.SPEND, 2, "ci-bot", NOW, 0, test_id="t::a", candidate="c" * 40)
    line = quota.line_of(entry)
    assert line == (
        b'{"kind":"spend","amount":2,"test_id":"t::a","candidate":"' + b"c" * 40 + b'",'
        b'"writer":"ci-bot","at":"2026-06-01T12:00:00Z"}\n'
    )
    assert quota.parse_entry(line[:-1], 7) == entry._replace(line=7)
