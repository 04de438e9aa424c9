"""The records that replaced dataclasses on the hook path keep what the dataclasses
gave: field-wise equality, a readable repr, fresh mutable defaults, immutability where
they were frozen."""

from __future__ import annotations

import pytest

from git_evidence.core.facts import LockFacts, RefUpdate, UpdateFacts
from git_evidence.core.oids import Oid
from git_evidence.gate.ranges import UpdatePlan, settle_plans
from git_evidence.gate.report import Report
from git_evidence.lock.record import Lock
from git_evidence.policy.identity import Identity
from git_evidence.policy.labels import Labels
from git_evidence.policy.schema import Policy
from git_evidence.rules.findings import UpdateDecision

UPDATE = RefUpdate(Oid("a" * 40), Oid("b" * 40), "refs/heads/main")


def test_slotted_records_are_equal_field_by_field() -> None:
    assert LockFacts(digest="sha256:1") == LockFacts(digest="sha256:1")
    assert LockFacts(digest="sha256:1") != LockFacts(digest="sha256:2")
    assert UpdateFacts(UPDATE, True, False) == UpdateFacts(UPDATE, True, False)
    assert UpdateFacts(UPDATE, True, False) != UpdateFacts(UPDATE, False, False)


def test_slotted_records_of_two_types_are_never_equal() -> None:
    facts = UpdateFacts(UPDATE, True, False)
    assert UpdateDecision(facts, ()) != LockFacts()
    assert LockFacts() != (None, None, None, None, None)


def test_slotted_records_are_not_hashable() -> None:
    with pytest.raises(TypeError):
        hash(LockFacts())


def test_slotted_records_take_no_attribute_they_do_not_declare() -> None:
    with pytest.raises(AttributeError):
        LockFacts().foundd = None  # a typo is an error


def test_slotted_repr_names_every_field() -> None:
    text = repr(LockFacts(invalid="bad"))
    assert text.startswith("LockFacts(") and text.endswith(")")
    shown = sorted(text.removeprefix("LockFacts(").removesuffix(")").split(", "))
    assert shown == [
        "breach=None",
        "digest=None",
        "found=None",
        "invalid='bad'",
        "stale=None",
    ]


def test_mutable_defaults_are_fresh_for_each_record() -> None:
    one, two = UpdatePlan(UPDATE, True, False), UpdatePlan(UPDATE, True, False)
    one.listed.append("c" * 40)
    assert two.listed == []
    (settled,) = settle_plans([one])
    assert settled.listed == ["c" * 40] and settled.commits == [Oid("c" * 40)]
    assert UpdateFacts(UPDATE, True, False).commits == ()


def test_a_report_and_its_decisions_refuse_assignment_once_built() -> None:
    decision = UpdateDecision(UpdateFacts(UPDATE, True, False), ())
    report = Report(Identity("alice", "test"), None, (decision,), notes=("said",))
    with pytest.raises(AttributeError, match="built once"):
        report.notes = ()  # type: ignore[misc]
    with pytest.raises(AttributeError, match="built once"):
        report.max_findings = 0
    with pytest.raises(AttributeError, match="built once"):
        decision.findings = ()  # type: ignore[misc]
    assert report.notes == ("said",) and report.decisions == (decision,)
    assert Report(Identity("bob", "test"), None).decisions == ()


def test_facts_refuse_assignment_once_built() -> None:
    facts = UpdateFacts(UPDATE, True, False)
    with pytest.raises(AttributeError, match="built once"):
        facts.base = Oid("c" * 40)  # type: ignore[misc]
    with pytest.raises(AttributeError, match="built once"):
        LockFacts().stale = []  # type: ignore[misc]
    with pytest.raises(AttributeError, match="built once"):
        del facts.update
    assert facts.base is None


def test_a_policys_default_paths_cannot_be_changed_through_it() -> None:
    policy = Policy()
    with pytest.raises(TypeError):
        policy.paths["fixture"] = ("everything/**",)  # type: ignore[index]
    assert Policy().paths == policy.paths


def test_immutable_records_refuse_assignment() -> None:
    with pytest.raises(AttributeError):
        Policy().base = "refs/heads/other"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        UPDATE.ref = "refs/heads/other"  # type: ignore[misc]


def test_a_lock_refuses_assignment_and_keeps_its_digest() -> None:
    one = Lock(Oid("a" * 40), ("r",), {"r": None}, {}, "x", "2026-01-01T00:00:00Z")
    digest = one.digest
    with pytest.raises(AttributeError):
        one.pinned_by = "y"
    with pytest.raises(AttributeError):
        del one.commit
    assert one.digest == digest and one.pinned_by == "x"


def test_labels_are_replaced_and_made_as_records() -> None:
    labels = Labels({"t.py::a": "invariant", "t.py::b": "invariant"}, "file:x", "sha256:1")
    assert labels._replace(source="file:y").source == "file:y"
    assert Labels._make(labels) == labels
    assert Labels().kinds == {} and Labels().get("t.py::a") is None


def test_a_lock_is_equal_to_another_with_the_same_fields() -> None:
    one = Lock(Oid("a" * 40), ("r",), {"r": None}, {}, "x", "2026-01-01T00:00:00Z")
    two = Lock(Oid("a" * 40), ("r",), {"r": None}, {}, "x", "2026-01-01T00:00:00Z")
    other = Lock(Oid("a" * 40), ("r",), {"r": None}, {}, "y", "2026-01-01T00:00:00Z")
    assert one == two
    assert one != other
    assert one.digest == two.digest != other.digest
    assert "pinned_by='x'" in repr(one)


def test_a_record_takes_its_fields_by_position_or_by_name() -> None:
    by_position = UpdateFacts(UPDATE, True, False, Oid("c" * 40))
    by_name = UpdateFacts(notes=False, update=UPDATE, protected=True, commit=Oid("c" * 40))
    assert by_position == by_name and by_name.fast_forward is None and by_name.named_ref


def test_a_record_refuses_a_field_it_does_not_declare() -> None:
    with pytest.raises(TypeError, match="'digets'"):
        LockFacts(digets="sha256:1")  # type: ignore[call-arg]


def test_a_record_refuses_a_field_given_twice() -> None:
    with pytest.raises(TypeError, match="'update'"):
        UpdateFacts(UPDATE, True, False, update=UPDATE)  # type: ignore[misc]


def test_a_record_refuses_too_many_fields() -> None:
    with pytest.raises(TypeError, match="takes 5 fields, 6 were given"):
        LockFacts(None, None, None, None, None, None)  # type: ignore[call-arg]


def test_a_record_missing_a_field_without_default_is_refused() -> None:
    with pytest.raises(TypeError, match="missing its field 'notes'"):
        UpdateFacts(UPDATE, True)  # type: ignore[call-arg]
