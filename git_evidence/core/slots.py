"""Mutable records without ``dataclasses``: ``Slotted`` gives a class that lists its
fields in ``__slots__`` a field-wise ``==`` and a readable ``repr``.

Why not ``@dataclass``: every process that loads it pays ~14 ms here (the module pulls
in ``inspect``; each class compiles its methods at import), a quarter of a push's
hook. The hooks' immutable records are ``NamedTuple``s; the few records the gate fills
in as it goes are ``Slotted``, and the facts built once and never compared with a tuple
are ``Frozen``."""

from __future__ import annotations

from typing import ClassVar


class Slotted:
    __slots__: ClassVar[tuple[str, ...]] = ()

    def _values(self) -> tuple[object, ...]:
        return tuple(getattr(self, name) for name in self.__slots__)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Slotted) or type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    __hash__ = None  # type: ignore[assignment]  # mutable: never a dict key

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__)
        return f"{type(self).__name__}({fields})"


class Frozen(Slotted):
    """A ``Slotted`` record built once: its ``__init__`` sets each field through
    ``object.__setattr__``, and any assignment after that is an error. For the facts the
    rules read, which no one may change between gathering and deciding."""

    __slots__ = ()

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is built once: {name} cannot be set")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is built once: {name} cannot be deleted")
