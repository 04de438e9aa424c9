"""A note scanned instead of parsed (the first `verify` of a clone that fetched it)
says what the full parse says, or nothing: every note the scan accepts, the parse
accepts with the same summary and paths; a hostile note (truncated, reordered, a file
twice, a field of the wrong shape, a file outside its roots) is left to the parse,
which refuses it as it always did. End to end, the first `verify` of a fresh clone
and the full path agree, and a forged note is still refused there."""

from __future__ import annotations

import json
import marshal
import shutil
from pathlib import Path
from typing import Any

import pytest
from helpers.examples import examples
from helpers.locks import NOTES, pin_main
from helpers.repos import Work, clone_of, evidence
from hypothesis import given, settings
from hypothesis import strategies as st

from git_evidence.core.facts import Entry
from git_evidence.core.oids import Oid
from git_evidence.core.records import canonical_json
from git_evidence.lock.record import CachedLock, Lock, LockInvalid, outside_roots, parse_note
from git_evidence.lock.scan import scan_note
from git_evidence.lock.store import CACHE_DIR

COMMIT = Oid("c" * 40)
hexes = st.text(alphabet="0123456789abcdef", min_size=40, max_size=40)
ascii_paths = st.builds(
    str.__add__,
    st.sampled_from(["", "tests", "tests/", "tests/data", "tests/data/", "x/", "a b/"]),
    st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=16),
).filter(bool)
# overlapping roots, one missing: what lies outside them is counted as the parse does
ROOTS: dict[str, str | None] = {
    "tests/data": "d" * 40,
    "tests": "e" * 40,
    "x": None,
    "a b": "f" * 40,
}
any_paths = st.text(min_size=1, max_size=12).filter(lambda p: "\n" not in p)


@st.composite
def entries(draw: st.DrawFn) -> Entry:
    kind = draw(st.sampled_from(["file", "file", "exec", "link", "gitlink", "lfs"]))
    blob = draw(st.one_of(hexes, st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)))
    if kind == "gitlink":
        return Entry("160000", blob)
    sha = draw(st.text(alphabet="0123456789abcdef", min_size=64, max_size=64))
    size = draw(st.integers(0, 10**12))
    mode = {"file": "100644", "exec": "100755", "link": "120000", "lfs": "100644"}[kind]
    return Entry(mode, blob, size, sha, f"sha256:{sha} {size}" if kind == "lfs" else None)


def lock_of(files: dict[str, Entry], trees: dict[str, str | None] | None = None) -> Lock:
    trees = ROOTS if trees is None else trees
    return Lock(COMMIT, tuple(trees), trees, files, "a <a@b>", "2026-01-01T00:00:00Z")


def agrees(data: bytes) -> bool:
    """The scan says nothing, or what the full parse says; True when it said it."""
    scanned = scan_note(data, COMMIT)
    if scanned is None:
        return False
    parsed = parse_note(data, COMMIT)  # raises if the scan accepted a broken note
    assert scanned.summary == parsed.summary()
    assert scanned.paths == [path.encode() for path in parsed.files]
    return True


@given(st.dictionaries(st.one_of(ascii_paths, any_paths), entries(), max_size=10))
@settings(max_examples=examples(300))
def test_the_scan_agrees_with_the_full_parse_on_every_note_it_accepts(
    files: dict[str, Entry],
) -> None:
    lock = lock_of(files)
    # the common shape (paths written as they are, plain blobs) is always scanned
    common = all(
        all(" " <= c <= "~" and c not in '"\\' for c in path)
        and entry.mode != "160000"
        and entry.lfs is None
        for path, entry in files.items()
    )
    assert agrees(lock.canonical) == common


@given(
    st.dictionaries(ascii_paths, entries(), min_size=1, max_size=6),
    st.integers(0, 10**6),
    st.sampled_from(["cut", "drop", "insert", "flip"]),
    st.sampled_from(b' ",:{}[]0a\\\x00-9Z'),
)
@settings(max_examples=examples(500))
def test_a_damaged_note_is_never_scanned_as_valid(
    files: dict[str, Entry], where: int, how: str, byte: int
) -> None:
    data = lock_of(files).canonical
    at = where % len(data)
    damaged = {
        "cut": data[:at],
        "drop": data[:at] + data[at + 1 :],
        "insert": data[:at] + bytes([byte]) + data[at:],
        "flip": data[:at] + bytes([byte]) + data[at + 1 :],
    }[how]
    try:
        parse_note(damaged, COMMIT)
    except LockInvalid:
        assert scan_note(damaged, COMMIT) is None
    else:
        agrees(damaged)


def plain(size: int = 5) -> Entry:
    return Entry("100644", "b" * 40, size, "e" * 64)


def doc_of(lock: Lock) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(lock.canonical)
    return doc


def test_a_truncated_note_is_left_to_the_parse() -> None:
    data = lock_of({"tests/data/a": plain(), "tests/data/b": plain()}).canonical
    for end in range(len(data)):
        assert scan_note(data[:end], COMMIT) is None


def test_a_note_with_a_file_twice_is_left_to_the_parse() -> None:
    data = lock_of({"tests/data/a": plain()}).canonical
    entry = data[data.index(b'"tests/data/a"') : data.index(b'},"pinned_at"')]
    doubled = data.replace(entry, entry + b"," + entry)
    assert scan_note(doubled, COMMIT) is None
    with pytest.raises(LockInvalid):
        parse_note(doubled, COMMIT)


def test_a_note_with_files_out_of_order_is_left_to_the_parse() -> None:
    data = lock_of({"tests/data/a": plain(1), "tests/data/b": plain(2)}).canonical
    a = data[data.index(b'"tests/data/a"') : data.index(b',"tests/data/b"')]
    b = data[data.index(b'"tests/data/b"') : data.index(b'},"pinned_at"')]
    swapped = data.replace(a + b"," + b, b + b"," + a)
    assert swapped != data and scan_note(swapped, COMMIT) is None
    with pytest.raises(LockInvalid, match="canonical"):
        parse_note(swapped, COMMIT)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("size", -1),
        ("size", "4,400 digits"),  # more than json.loads parses
        ("size", 1.0),
        ("size", True),
        ("mode", "160000"),  # a gitlink's mode on a blob's record
        ("mode", "10064"),
        ("blob", "B" * 40),
        ("blob", "b" * 41),
        ("sha256", "e" * 63),
        ("sha256", "E" * 64),
    ],
)
def test_a_note_whose_file_has_a_field_of_the_wrong_shape_is_left_to_the_parse(
    field: str, value: object
) -> None:
    lock = lock_of({"tests/data/a": plain(), "tests/data/b": plain(7)})
    if value == "4,400 digits":  # json cannot write it: written by hand
        forged = lock.canonical.replace(b'"size":7}', b'"size":' + b"9" * 4400 + b"}")
    else:
        doc = doc_of(lock)
        doc["files"]["tests/data/b"][field] = value
        forged = canonical_json(doc)
    assert scan_note(forged, COMMIT) is None
    with pytest.raises(LockInvalid):
        parse_note(forged, COMMIT)


def test_a_note_whose_digest_is_not_its_bytes_cannot_exist() -> None:
    """The pin digest is the hash of the note's bytes, computed, never read from it: a
    field claiming another digest makes a record the parse refuses."""
    doc = doc_of(lock_of({"tests/data/a": plain()}))
    doc["digest"] = "sha256:" + "0" * 64
    forged = canonical_json(doc)
    assert scan_note(forged, COMMIT) is None
    with pytest.raises(LockInvalid, match="fields"):
        parse_note(forged, COMMIT)


def test_a_note_pinning_files_outside_its_roots_counts_them_as_the_parse_does() -> None:
    trees: dict[str, str | None] = {"tests/data": "d" * 40, "gone": None}
    files = {"tests/data/a": plain(), "gone/b": plain(), "elsewhere": plain()}
    data = lock_of(files, trees).canonical
    scanned = scan_note(data, COMMIT)
    assert scanned is not None and scanned.summary.outside == 2
    assert outside_roots(trees, files) == 2 == parse_note(data, COMMIT).summary().outside


# -- end to end: a fresh clone that fetched the note -----------------------------------


@pytest.fixture
def fetched(work: Work, tmp_path: Path) -> Work:
    """A fresh clone of a pinned server that fetched the notes and validated none."""
    pin_main(work)
    clone = clone_of(tmp_path, Path(work.git("remote", "get-url", "origin").stdout.strip()), "c")
    clone.git("fetch", "-q", "origin", f"{NOTES}:{NOTES}")
    assert not (clone.path / ".git" / "git-evidence").exists()
    return clone


def cache_of(work: Work) -> list[dict[str, Any]]:
    folder = work.path / ".git" / "git-evidence" / CACHE_DIR
    return [
        dict(zip(CachedLock._fields, marshal.loads(p.read_bytes())[1], strict=True))
        for p in sorted(folder.iterdir())
    ]


def forget_cache(work: Work) -> None:
    shutil.rmtree(work.path / ".git" / "git-evidence")


def test_first_verify_of_a_fresh_clone_agrees_with_the_full_path(fetched: Work) -> None:
    first = evidence(fetched.path, "verify", "--base", "HEAD", "--format", "json")
    scanned = cache_of(fetched)  # learnt by the scan
    again = evidence(fetched.path, "verify", "--base", "HEAD", "--format", "json")
    forget_cache(fetched)
    evidence(fetched.path, "show-lock")  # a full parse: the cache learns the Lock
    assert cache_of(fetched) == scanned
    forget_cache(fetched)
    full = evidence(fetched.path, "verify", "--worktree", "--base", "HEAD", "--format", "json")
    assert first.returncode == again.returncode == full.returncode == 0, first.stdout
    lock = json.loads(first.stdout)["lock"]
    assert lock == json.loads(again.stdout)["lock"] == json.loads(full.stdout)["lock"]
    assert lock["files"] == scanned[0]["files"] > 0


def forge_note(work: Work, change: Any) -> None:
    """Replace HEAD's note with ``change(doc)`` written canonically (a local forgery:
    the server refuses such a note when it is pushed)."""
    doc = json.loads(work.git("notes", f"--ref={NOTES}", "show", "HEAD").stdout)
    data = change(doc)
    blob = work.git("hash-object", "-w", "--stdin", input=data).stdout.strip()
    work.git("notes", f"--ref={NOTES}", "add", "-f", "-C", blob, "HEAD")


def test_first_verify_refuses_a_truncated_note_whose_trees_match(fetched: Work) -> None:
    forge_note(fetched, lambda doc: canonical_json(doc)[:-40] + canonical_json(doc)[-2:])
    result = evidence(fetched.path, "verify", "--base", "HEAD")
    assert result.returncode != 0 and "is not JSON" in result.stdout, result.stdout


def test_first_verify_refuses_a_note_whose_file_hash_is_malformed(fetched: Work) -> None:
    def malformed(doc: dict[str, Any]) -> bytes:
        next(iter(doc["files"].values()))["sha256"] = "not hex"
        return canonical_json(doc)

    forge_note(fetched, malformed)
    result = evidence(fetched.path, "verify", "--base", "HEAD")
    assert result.returncode != 0 and "is not a lock" in result.stdout, result.stdout


def test_first_verify_reports_a_file_the_note_pins_outside_its_roots(fetched: Work) -> None:
    def outside(doc: dict[str, Any]) -> bytes:
        doc["files"]["zz/outside.json"] = next(iter(doc["files"].values()))
        return canonical_json(doc)

    forge_note(fetched, outside)
    for _ in ("first, scanned", "again, from the cache"):
        result = evidence(fetched.path, "verify", "--base", "HEAD", "--format", "json")
        drift = json.loads(result.stdout)["drift"]
        assert result.returncode != 0
        assert [(d["path"], d["kind"]) for d in drift] == [("zz/outside.json", "removed")]


def test_a_note_whose_lfs_oid_has_a_space_is_invalid_not_a_crash() -> None:
    lock = lock_of({"tests/data/a": Entry("100644", "b" * 40, 5, "e" * 64, "sha256:x 5")})
    forged = lock.canonical.replace(b'"oid":"sha256:x"', b'"oid":" sha256:x"')
    with pytest.raises(LockInvalid, match="lfs oid"):
        parse_note(forged, COMMIT)
