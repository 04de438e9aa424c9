"""The lock record's canonical form, built by hand, equals the json module's."""

from __future__ import annotations

import json

import pytest
from helpers.examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from git_evidence.core.facts import Entry
from git_evidence.core.oids import Oid
from git_evidence.core.records import canonical_json
from git_evidence.lock.record import Lock, LockInvalid, parse_note

hexes = st.text(alphabet="0123456789abcdef", min_size=40, max_size=40)
paths = st.text(min_size=1, max_size=20).filter(lambda p: "\n" not in p)


@st.composite
def entries(draw: st.DrawFn) -> Entry:
    kind = draw(st.sampled_from(["file", "exec", "link", "gitlink", "lfs"]))
    blob = draw(hexes)
    if kind == "gitlink":
        return Entry("160000", blob)
    sha = draw(st.text(alphabet="0123456789abcdef", min_size=64, max_size=64))
    size = draw(st.integers(0, 10**9))
    mode = {"file": "100644", "exec": "100755", "link": "120000", "lfs": "100644"}[kind]
    lfs = f"sha256:{sha} {size}" if kind == "lfs" else None
    return Entry(mode, blob, size, sha, lfs)


@given(st.dictionaries(paths, entries(), max_size=8), hexes, st.text(max_size=10))
@settings(max_examples=examples(200))
def test_hand_built_canonical_form_equals_json_dumps(
    files: dict[str, Entry], commit: str, who: str
) -> None:
    lock = Lock(
        Oid(commit),
        ("tests/fixtures", "b"),
        {"tests/fixtures": commit, "b": None},
        files,
        who,
        "2026-01-01T00:00:00Z",
    )
    assert lock.canonical == canonical_json(lock.as_json())
    assert parse_note(lock.canonical, Oid(commit)) == lock


def test_a_reformatted_note_is_not_canonical() -> None:
    commit = Oid("a" * 40)
    lock = Lock(commit, ("r",), {"r": None}, {}, "x", "2026-01-01T00:00:00Z")
    spaced = json.dumps(lock.as_json(), sort_keys=True).encode()  # one line, with spaces
    assert b"\n" not in spaced and spaced != lock.canonical
    with pytest.raises(LockInvalid, match="not in canonical form"):
        parse_note(spaced, commit)


def test_a_note_moved_to_another_commit_is_invalid() -> None:
    lock = Lock(Oid("a" * 40), ("r",), {"r": None}, {}, "x", "2026-01-01T00:00:00Z")
    with pytest.raises(LockInvalid, match="attached to bbbbbbbbbbbb"):
        parse_note(lock.canonical, Oid("b" * 40))


def test_duplicate_keys_are_invalid() -> None:
    text = b'{"commit":"' + b"a" * 40 + b'","commit":"x"}'
    with pytest.raises(LockInvalid, match="duplicate key"):
        parse_note(text, Oid("a" * 40))
