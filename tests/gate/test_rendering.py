"""A report is what was decided; how it is shown is a ``Rendering`` handed to the
renderers: the findings the text shows in full, the options a printed command carries,
the notes of a setting that is no number. Rendering changes no report, and a report
joined from others is a new one. In process, on records built by hand."""

from __future__ import annotations

import json

from git_evidence.core.facts import RefUpdate, UpdateFacts
from git_evidence.core.oids import Oid
from git_evidence.gate.report import (
    PLAIN,
    Rendering,
    Report,
    given_options,
    join,
    to_doc,
    to_json,
    to_text,
)
from git_evidence.policy.identity import Identity
from git_evidence.policy.schema import Policy
from git_evidence.rules.findings import Finding, UpdateDecision

WHO = Identity("alice", "test")
BASE, TIP = Oid("a" * 40), Oid("b" * 40)
CHECK_HINT = "split it: `git evidence split HEAD` then `git evidence check HEAD~2..HEAD`"


def decision(ref: str, count: int, hint: str = CHECK_HINT) -> UpdateDecision:
    facts = UpdateFacts(
        RefUpdate(BASE, TIP, ref), True, False, commit=TIP, base=BASE, commits=(TIP,)
    )
    findings = tuple(
        Finding("mixed-commit", "reject", ref, TIP, {"fixture": [f"t/{i}.json"]}, "mixed", hint)
        for i in range(count)
    )
    return UpdateDecision(facts, findings, judged=True)


def report(*decisions: UpdateDecision, notes: tuple[str, ...] = ()) -> Report:
    return Report(WHO, Policy(), decisions, notes=notes)


def test_join_keeps_each_parts_decisions_and_notes_in_order() -> None:
    one, two = decision("refs/heads/a", 1), decision("refs/heads/b", 2)
    first, second = report(one, notes=("one",)), report(two, notes=("two",))
    joined = join(WHO, Policy(), [first, second], before=("before",), after=("after",))
    assert joined.decisions == (one, two)
    assert joined.notes == ("before", "one", "two", "after")
    assert (joined.who, joined.decision) == (WHO, "reject")


def test_join_leaves_its_parts_as_they_are() -> None:
    part = report(decision("refs/heads/a", 1), notes=("said",))
    kept = (part.decisions, part.notes)
    join(WHO, Policy(), [part, part], after=("more",))
    assert (part.decisions, part.notes) == kept


def test_a_decision_with_other_findings_is_a_new_decision() -> None:
    outcome = decision("refs/heads/a", 2)
    fewer = outcome.with_findings(outcome.findings[:1])
    assert len(fewer.findings) == 1 and len(outcome.findings) == 2
    assert (fewer.facts, fewer.judged) == (outcome.facts, outcome.judged)


def test_the_limit_is_the_renderings_and_the_report_keeps_every_finding() -> None:
    judged = report(decision("refs/heads/a", 5))
    text = to_text(judged, Rendering(max_findings=2))
    assert text.count("mixed-commit: ") == 2
    assert "... and 3 more mixed-commit findings" in text
    assert to_text(judged, Rendering(max_findings=0)).count("mixed-commit: ") == 5
    assert len(judged.decisions[0].findings) == 5
    assert len(to_doc(judged, Rendering(max_findings=2))["updates"][0]["findings"]) == 5


def test_carried_options_ride_on_check_and_only_the_policy_on_split() -> None:
    shown = Rendering(options=("--base", "origin/main", "--policy", "draft.toml"))
    assert shown.hint(CHECK_HINT) == (
        "split it: `git evidence split HEAD --policy draft.toml` then "
        "`git evidence check HEAD~2..HEAD --base origin/main --policy draft.toml`"
    )
    assert PLAIN.hint(CHECK_HINT) == CHECK_HINT
    assert shown.hint("no command here") == "no command here"


def test_carried_options_are_rendered_in_text_and_json_not_stored() -> None:
    judged = report(decision("refs/heads/a", 1))
    shown = Rendering(options=("--as", "bob"))
    doc = json.loads(to_json(judged, shown))
    assert doc["updates"][0]["findings"][0]["hint"].endswith("HEAD~2..HEAD --as bob`")
    assert "HEAD~2..HEAD --as bob`" in " ".join(to_text(judged, shown).split())
    assert judged.decisions[0].findings[0].hint == CHECK_HINT
    assert json.loads(to_json(judged))["updates"][0]["findings"][0]["hint"] == CHECK_HINT


def test_a_renderings_notes_follow_the_reports_in_text_and_json() -> None:
    judged = report(decision("refs/heads/a", 1), notes=("decided",))
    shown = Rendering(notes=("the limit is no number",))
    assert to_doc(judged, shown)["notes"] == ["decided", "the limit is no number"]
    text = to_text(judged, shown)
    assert text.index("decided") < text.index("the limit is no number")
    assert "notes" not in to_doc(report(decision("refs/heads/a", 0)))


def test_given_options_are_quoted_for_a_shell() -> None:
    class Args:
        base = "origin/main"
        as_name = "Bob Smith"
        policy = None

    assert given_options(Args()) == ("--base", "origin/main", "--as", "'Bob Smith'")
