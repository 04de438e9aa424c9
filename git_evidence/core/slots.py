"""Mutable records without ``dataclasses``: ``Slotted`` gives a class that lists its
fields in ``__slots__`` a field-wise ``==`` and a readable ``repr``.

Why not ``@dataclass``: every process that loads it pays ~14 ms here (the module pulls
in ``inspect``; each class compiles its methods at import), a quarter of a push's
hook. The hooks' immutable records are ``NamedTuple``s; the few records the gate fills
in as it goes are ``Slotted``."""

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
