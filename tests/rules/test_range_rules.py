"""The rules of a range's commits one at a time, in process and without git: what the
range is gathered into (``Span``) and each rule's own edge (``mixed_commits``,
``mixed_range``, ``evidence_writes``, ``held_paths``), each read from the span alone.
Fast enough to run on each mutation (bench/mutation.py)."""

from __future__ import annotations

from helpers.rule_facts import AGENT, ALICE, BASE_POLICY, CI, OLD, facts, summary, who

from git_evidence.core.facts import CommitSummary
from git_evidence.policy.parsing import parse_policy
from git_evidence.policy.schema import Policy
from git_evidence.rules import range_rules
from git_evidence.rules.range_rules import (
    Span,
    decide_range,
    evidence_writes,
    held_paths,
    mixed_commits,
    mixed_range,
    writer_role,
)
from git_evidence.rules.table import HOLD, REJECT

HOLDS = parse_policy(
    b'[identities]\nevidence_writers = ["alice"]\nreviewers = ["rita"]\n'
    b'[rules]\nother_path = "hold"\nadded_test = "hold"\ntest_edit = "reject"\n',
    "base",
)


def _span(commits: list[CommitSummary], pusher: str = AGENT, pol: Policy = BASE_POLICY) -> Span:
    return Span(facts(), commits, pol, who(pusher))


# -- Span: the range gathered once -----------------------------------------------------------


def test_span_gathers_classes_mixed_commits_and_test_paths_each_once() -> None:
    mixed = summary("src/app.py", "tests/fixtures/a.json", n=1)
    commits = [
        mixed,
        summary("A:tests/test_new.py", "tests/test_app.py", n=2),
        summary("tests/test_app.py", n=3),
    ]
    found = _span(commits)
    assert found.ref == "refs/heads/main" and found.commits == 3
    assert found.present == {"product", "fixture", "test"}
    assert found.mixed == (mixed,)
    assert list(found.added) == ["tests/test_new.py"]
    assert list(found.changed) == ["tests/test_app.py"]
    assert found.where["base"] == OLD[:12]


def test_span_lists_no_path_of_a_range_the_pusher_may_write_whole() -> None:
    commits = [summary("src/app.py", n=1), summary("src/b.py", n=2)]
    assert _span(commits).union == {}


def test_span_lists_both_sides_when_the_split_trick_may_fire() -> None:
    commits = [summary("src/app.py", n=1), summary("tests/fixtures/a.json", n=2)]
    assert _span(commits).union == {
        "product": {"src/app.py": None},
        "fixture": {"tests/fixtures/a.json": None},
    }


# -- one rule at a time --------------------------------------------------------------------


def test_mixed_commits_names_each_mixing_commit_and_no_other() -> None:
    first = summary("src/app.py", "tests/fixtures/a.json", n=1)
    second = summary("tests/test_app.py", "tests/goldens/out.txt", n=3)
    found = _span([first, summary("src/app.py", n=2), second])
    assert [f.commit for f in mixed_commits(found)] == [first.oid, second.oid]
    assert {f.rule for f in mixed_commits(found)} == {"mixed-commit"}


def test_mixed_range_fires_only_without_a_mixed_commit() -> None:
    split = [summary("src/app.py", n=1), summary("tests/fixtures/a.json", n=2)]
    (finding,) = mixed_range(_span(split), BASE_POLICY, who(AGENT))
    assert finding.rule == "mixed-range"
    one_mixed = [*split, summary("src/b.py", "tests/fixtures/b.json", n=3)]
    assert mixed_range(_span(one_mixed), BASE_POLICY, who(AGENT)) == []


def test_mixed_range_lets_an_evidence_writer_through() -> None:
    split = [summary("src/app.py", n=1), summary("tests/fixtures/a.json", n=2)]
    assert mixed_range(_span(split, ALICE), BASE_POLICY, who(ALICE)) == []


def test_mixed_range_needs_both_sides() -> None:
    evidence_only = [summary("tests/fixtures/a.json", n=1), summary("tests/goldens/o.txt", n=2)]
    assert mixed_range(_span(evidence_only), BASE_POLICY, who(AGENT)) == []
    product_only = [summary("src/app.py", n=1), summary("src/b.py", n=2)]
    assert mixed_range(_span(product_only), BASE_POLICY, who(AGENT)) == []


def test_evidence_writes_proposes_evidence_alone_on_a_proposal_ref() -> None:
    found = _span([summary("tests/fixtures/a.json")])
    (proposed,) = evidence_writes(found, BASE_POLICY, who(AGENT), proposing=True)
    assert proposed.rule == "evidence-proposed"
    assert (
        proposed.message
        == "evidence proposed by agent-bot: an evidence writer must bring it to refs/heads/main"
    )
    (untrusted,) = evidence_writes(found, BASE_POLICY, who(AGENT), proposing=False)
    assert untrusted.rule == "evidence-untrusted"
    assert untrusted.paths == proposed.paths == {"fixture": ["tests/fixtures/a.json"]}


def test_evidence_beside_product_is_never_a_proposal() -> None:
    found = _span([summary("src/app.py", "tests/fixtures/a.json")])
    (finding,) = evidence_writes(found, BASE_POLICY, who(AGENT), proposing=True)
    assert finding.rule == "evidence-untrusted"


def test_evidence_writes_says_nothing_of_what_the_pusher_may_write() -> None:
    fixture = _span([summary("tests/fixtures/a.json")], ALICE)
    assert evidence_writes(fixture, BASE_POLICY, who(ALICE), proposing=False) == []
    ledger = _span([summary("tests/freeze.jsonl")], CI)
    assert evidence_writes(ledger, BASE_POLICY, who(CI), proposing=False) == []
    (finding,) = evidence_writes(ledger, BASE_POLICY, who(ALICE), proposing=False)
    assert finding.paths == {"freeze_ledger": ["tests/freeze.jsonl"]}


def test_held_paths_settles_each_hold_of_rules_in_its_order() -> None:
    commits = [summary("Makefile", "A:tests/test_new.py", "tests/test_app.py", pol=HOLDS)]
    found = _span(commits, AGENT, HOLDS)
    held = held_paths(found, HOLDS, who(AGENT), bound=True, target="refs/heads/main")
    assert [(f.rule, f.decision, f.blocking) for f in held] == [
        ("other-path", HOLD, True),
        ("added-test", HOLD, True),
        ("test-edit", REJECT, True),
    ]
    assert "rita" in held[0].hint


def test_held_paths_does_not_block_off_the_way_into_a_protected_ref() -> None:
    commits = [summary("A:tests/test_new.py", pol=HOLDS)]
    found = _span(commits, AGENT, HOLDS)
    (held,) = held_paths(found, HOLDS, who(AGENT), bound=False, target="refs/heads/main")
    assert held.rule == "added-test" and not held.blocking


def test_held_paths_holds_nothing_the_policy_allows() -> None:
    allowing = parse_policy(
        b'[rules]\nother_path = "allow"\nadded_test = "allow"\ntest_edit = "allow"\n', "base"
    )
    commits = [summary("Makefile", "A:tests/test_new.py", "tests/test_app.py", pol=allowing)]
    found = _span(commits, AGENT, allowing)
    assert held_paths(found, allowing, who(AGENT), bound=True, target="main") == []


def test_decide_range_reports_the_rules_in_order() -> None:
    commits = [
        summary("src/app.py", "tests/fixtures/a.json", n=1, pol=HOLDS),
        summary("Makefile", n=2, pol=HOLDS),
    ]
    found = decide_range(facts(), commits, HOLDS, who(AGENT), bound=True, proposal=False)
    assert [f.rule for f in found] == ["mixed-commit", "evidence-untrusted", "other-path"]


def test_writer_role_names_the_ledger_writers_for_the_ledger_alone() -> None:
    assert writer_role(True, BASE_POLICY) == ("a ledger writer", "ci-bot")
    assert writer_role(False, BASE_POLICY) == ("an evidence writer", "alice")


def test_the_rules_read_no_other_rules_findings() -> None:
    # each rule's inputs are the span, the policy and who pushes: none takes findings
    for rule in (mixed_commits, mixed_range, evidence_writes, held_paths):
        assert "findings" not in rule.__code__.co_varnames, rule.__name__
    assert range_rules.__doc__ is not None and "one function a rule" in range_rules.__doc__


def test_decide_range_asks_the_ref_whether_it_takes_proposals_unless_told() -> None:
    evidence = [summary("tests/fixtures/a.json")]
    topic = facts("refs/heads/topic", protected=False)
    (asked,) = decide_range(topic, evidence, BASE_POLICY, who(AGENT))
    assert asked.rule == "evidence-proposed"  # an unprotected branch takes proposals
    (told,) = decide_range(topic, evidence, BASE_POLICY, who(AGENT), proposal=False)
    assert told.rule == "evidence-untrusted"
    (main,) = decide_range(facts(), evidence, BASE_POLICY, who(AGENT))
    assert main.rule == "evidence-untrusted"  # a protected branch takes none
    (told_main,) = decide_range(facts(), evidence, BASE_POLICY, who(AGENT), proposal=True)
    assert told_main.rule == "evidence-proposed"
