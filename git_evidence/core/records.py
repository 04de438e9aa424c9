"""Records kept in git notes and files: canonical JSON, its digest, one record per note,
and UTC times. Pure: bytes and documents in, bytes and documents out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from datetime import datetime

# json, hashlib and datetime are imported where they are used: a hook that reads no
# record and writes no time starts without them.


class RecordError(ValueError):
    """Bytes that are not exactly one canonical record."""


class DuplicateKey(ValueError):
    """A JSON object that gives one key twice."""


def no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads`` hook: a key given twice is an error, never "the last one wins"."""
    doc: dict[str, Any] = {}
    for key, value in pairs:
        if key in doc:
            raise DuplicateKey(f"duplicate key {key!r}")
        doc[key] = value
    return doc


def canonical_json(doc: Any) -> bytes:
    """Sorted keys, no spaces, ASCII (lone surrogates and non-UTF-8 path bytes survive
    as escapes): the same document always gives the same bytes."""
    import json

    return json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def digest(data: bytes) -> str:
    import hashlib

    return "sha256:" + hashlib.sha256(data).hexdigest()


def record_digest(doc: Any) -> str:
    """``sha256:`` of the document's canonical bytes."""
    return digest(canonical_json(doc))


def one_record(data: bytes) -> bytes:
    """The single line a note holds; two or more (a ``cat_sort_uniq`` notes merge joins
    them) or none is no record at all."""
    records = [line for line in data.split(b"\n") if line.strip()]
    if len(records) != 1:
        raise RecordError(f"holds {len(records)} records, expected exactly one")
    return records[0]


def parse_canonical(data: bytes) -> dict[str, Any]:
    """A JSON object whose bytes are exactly its canonical form (no trailing newline,
    no duplicate key, nothing else), or RecordError saying why not."""
    import json

    record = one_record(data)
    try:
        doc = json.loads(record, object_pairs_hook=no_duplicate_keys)
    except ValueError as exc:
        raise RecordError(f"is not JSON: {exc}") from None
    if not isinstance(doc, dict):
        raise RecordError("is not a JSON object")
    if canonical_json(doc) != data:
        raise RecordError("is not in canonical form (sorted keys, no spaces, nothing else)")
    return doc


def iso_utc(moment: datetime) -> str:
    from datetime import timezone

    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_utc() -> str:
    from datetime import datetime, timezone

    return iso_utc(datetime.now(timezone.utc))
