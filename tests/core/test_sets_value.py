"""`rules.sets_value` reads a commit's evidence values kept flat (path, mode, id, ...):
it must answer as membership in the list of triples would, whatever the strings."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from git_evidence.core.facts import CommitSummary
from git_evidence.core.oids import Oid
from git_evidence.rules.summaries import sets_value, value_key

# Few distinct strings, so that paths, modes and ids collide with each other (SHA-1
# and SHA-256 ids both).
paths = st.sampled_from(["a", "100644", "120000", "f" * 40, "tests/x.json", "0" * 40])
modes = st.sampled_from(["100644", "100755", "120000"])
oids = st.sampled_from(["f" * 40, "0" * 40, "0123456789" * 4, "ab" * 32])
triples = st.tuples(paths, modes, oids)


def summary(values: list[tuple[str, str, str]]) -> CommitSummary:
    flat = tuple(part for p, m, o in values for part in (p, value_key(m, o)))
    return CommitSummary(Oid("c" * 40), False, (), frozenset(), evidence_values=flat)


@given(st.lists(triples, max_size=6), triples)
def test_answers_as_membership_in_the_triples(
    values: list[tuple[str, str, str]], value: tuple[str, str, str]
) -> None:
    assert sets_value(summary(values), value) == (value in values)


def test_a_path_spelled_like_a_mode_is_not_matched_at_a_mode() -> None:
    # ("a", "100644", id): no path "100644" was set, though a mode spells it.
    values = [("a", "100644", "f" * 40)]
    assert not sets_value(summary(values), ("100644", "100644", "f" * 40))
    assert sets_value(summary(values), ("a", "100644", "f" * 40))
    assert not sets_value(summary(values), ("a", "120000", "f" * 40))
