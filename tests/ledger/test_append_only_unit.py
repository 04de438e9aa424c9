"""The prefix rule the freeze ledger and the retry quota share (``ledger.appended_to``):
for any old and new bytes both files call the same changes rewrites, at the same line."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import given
from hypothesis import strategies as st

from git_evidence.core.facts import LedgerProblem
from git_evidence.ledger import entries, quota

NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)
lines = st.lists(st.sampled_from([b"a", b"b", b"{}", b""]), max_size=4)
files = st.builds(lambda ls, end: b"\n".join(ls) + end, lines, st.sampled_from([b"", b"\n"]))


def rewrites_of_ledger(old: bytes | None, new: bytes | None) -> list[LedgerProblem]:
    found = entries.check_change(
        old, new, max_window_hours=72, now=NOW, writers=(), pin_exists=lambda pin: False
    )
    return [p for p in found if p.rule == "ledger-rewrite"]


def rewrites_of_quota(old: bytes | None, new: bytes | None) -> list[LedgerProblem]:
    writers = quota.Writers((), (), pusher_grants=False, pusher_spends=False)
    found = quota.check_change(old, new, now=NOW, writers=writers)
    return [p for p in found if p.rule == "ledger-rewrite"]


@given(st.none() | files, files)
def test_the_ledger_and_the_quota_call_the_same_changes_rewrites(
    old: bytes | None, new: bytes
) -> None:
    assert rewrites_of_ledger(old, new) == rewrites_of_quota(old, new)
    expected = entries.appended_to(old, new, "it")
    assert (rewrites_of_ledger(old, new) == []) is isinstance(expected, entries.Appended)


def test_a_deleted_file_is_a_rewrite_named_after_the_file() -> None:
    assert rewrites_of_ledger(b"a\n", None)[0].message == "the ledger was deleted or renamed"
    assert rewrites_of_quota(b"a\n", None)[0].message == "the retry quota was deleted or renamed"


def test_the_appended_bytes_and_their_first_line() -> None:
    assert entries.appended_to(b"a\nb\n", b"a\nb\nc\n", "it") == entries.Appended(b"c\n", 3)
    assert entries.appended_to(None, b"c\n", "it") == entries.Appended(b"c\n", 1)
    assert entries.appended_to(b"a\nb\n", b"a\nx\n", "it") == LedgerProblem(
        "ledger-rewrite", 2, "existing lines were edited, removed, reordered or re-encoded"
    )
    assert entries.appended_to(b"a", b"ab\n", "it") == LedgerProblem(
        "ledger-rewrite", 1, "the last line had no newline, so appending changed it"
    )
