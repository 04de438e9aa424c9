"""Records without ``dataclasses``: ``Slotted`` gives a class that lists its fields in
``__slots__`` a field-wise ``==`` and a readable ``repr``; ``Frozen`` is one built
once.

Each field is written once, as an annotation (with its default after ``=``): a class
that declares no ``__slots__`` of its own gets them from its annotations, in their
order, and an ``__init__`` that takes them in that order (positionally or by name),
the defaults filled in (a list, dict or set default copied for each record, never
shared). A class that writes its own ``__slots__`` and ``__init__``
keeps them.

Why not ``@dataclass``: every process that loads it pays ~14 ms here (the module pulls
in ``inspect``; each class compiles its methods at import), a quarter of a push's
hook. The ``__init__`` made here is one function shared by every record, compiled
once; the hooks' immutable records that may compare with a tuple are ``NamedTuple``s."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    if sys.version_info >= (3, 11):
        from typing import dataclass_transform
    else:
        from typing_extensions import dataclass_transform
else:

    def dataclass_transform(**_: object) -> Any:
        return lambda cls: cls


_MUTABLE = (list, dict, set)


class _Fields(type):
    """Reads a record's fields from its annotations when it declares no ``__slots__``:
    the defaults leave the class body (a slot and a class attribute cannot share a
    name) for ``_defaults``."""

    def __new__(mcs, name: str, bases: tuple[type, ...], space: dict[str, Any]) -> _Fields:
        if "__slots__" not in space:
            fields = tuple(
                field
                for field, kind in space.get("__annotations__", {}).items()
                if not str(kind).startswith("ClassVar")
            )
            space["__slots__"] = fields
            space["_fields"] = fields
            defaults = {f: space.pop(f) for f in fields if f in space}
            space["_defaults"] = defaults
            space["_fresh"] = tuple(f for f, v in defaults.items() if type(v) in _MUTABLE)
        return super().__new__(mcs, name, bases, space)


def _init(self: _Record, *args: object, **named: object) -> None:
    fields, kind = self._fields, type(self).__name__
    if len(args) > len(fields):
        raise TypeError(f"{kind} takes {len(fields)} fields, {len(args)} were given")
    values = dict(self._defaults)
    values.update(zip(fields, args, strict=False))
    for field, value in named.items():
        if field not in fields or field in fields[: len(args)]:
            raise TypeError(f"{kind} got an unexpected or repeated field {field!r}")
        values[field] = value
    for field in self._fresh:
        if field not in named and field not in fields[: len(args)]:
            values[field] = type(values[field])(values[field])  # type: ignore[call-arg]
    put = object.__setattr__
    for field in fields:
        if field not in values:
            raise TypeError(f"{kind} is missing its field {field!r}")
        put(self, field, values[field])


class _Record(metaclass=_Fields):
    """What both kinds share; each is marked as a record maker for the type checker on
    its own, since a frozen record may not derive from a mutable one."""

    __slots__: ClassVar[tuple[str, ...]] = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, object]] = {}
    _fresh: ClassVar[tuple[str, ...]] = ()  # fields whose default is copied each time
    __init__ = _init

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Record) or type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable: never a dict key

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


@dataclass_transform(eq_default=False)
class Slotted(_Record):
    """A record filled in as it goes."""

    __slots__ = ()


@dataclass_transform(eq_default=False, frozen_default=True)
class Frozen(_Record):
    """A ``Slotted`` record built once: its ``__init__`` sets each field through
    ``object.__setattr__``, and any assignment after that is an error. For the facts the
    rules read, which no one may change between gathering and deciding."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is built once: {name} cannot be set")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is built once: {name} cannot be deleted")
