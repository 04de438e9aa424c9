"""Object ids: the one type that names a git object, git's zero ids, the shape of an id,
and the id git gives a blob of given bytes (`blob_id`).

``Oid`` is a ``typing.NewType`` over ``str``: the type checker tells an id from a path,
a ref name or a rev expression, and at run time an id is the plain string git printed
(nothing wrapped, nothing copied on the hook path). An ``Oid`` is made where an id comes
in: parsed from git's output (``git.py``, ``objects.py``, the raw rows in ``plumbing/raw_diff.py``),
read from hook input (``ranges.parse_receive_lines``), or read from a record that was
checked first. A parameter that takes any revision (``HEAD``, ``main~2``, ``<rev>:<path>``)
stays a ``str``; an ``Oid`` passes wherever a ``str`` does.

Pure and a leaf: every module may type its ids without importing what runs git."""

from __future__ import annotations

from typing import Final, NewType

Oid = NewType("Oid", str)

ZERO_OID: Final = Oid("0" * 40)  # git's "no object" (SHA-1); a SHA-256 repository's is 64 zeros
ZERO_OIDS: Final = frozenset({ZERO_OID, Oid("0" * 64)})

_HEX = frozenset("0123456789abcdef")


def is_oid(text: str) -> bool:
    """Whether ``text`` is a full object id (SHA-1 or SHA-256, lower-case hex)."""
    return len(text) in (40, 64) and set(text) <= _HEX


def is_zero(oid: str) -> bool:
    return oid in ZERO_OIDS


def zero_oid(like: str) -> Oid:
    """The zero object id of ``like``'s hash (SHA-1 or SHA-256)."""
    return Oid("0" * len(like))


def blob_id(data: bytes | memoryview, like: str) -> Oid:
    """The id git gives a blob of ``data``, in the hash of the id ``like``."""
    import hashlib  # here: the hooks that never hash a blob start without it

    digest = hashlib.sha256() if len(like) == 64 else hashlib.sha1()
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return Oid(digest.hexdigest())
