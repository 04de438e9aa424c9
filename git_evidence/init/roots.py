"""Where test data and oracles live, as folders: each folder found with the files it
was found for (``Seen``), folders that differ in one name merged under ``*``, their
globs, and the literal ones as the lock's roots. Pure; apart from draft.py, which
finds them."""

from __future__ import annotations

from collections import defaultdict
from typing import NamedTuple

from git_evidence.init.shapes import literal_component


class Entry(NamedTuple):
    glob: str
    why: str  # why it was chosen, a phrase
    files: int  # tracked files it was chosen for
    example: str  # one of them


MAX_ROOT_GLOBS = 12  # past this, one glob per folder name instead of one per place
MAX_LOCK_ROOTS = 40


class Seen:
    """Files found for one glob: how many, and the first."""

    __slots__ = ("count", "example", "extra", "why")

    def __init__(self, why: str = "") -> None:
        self.count = 0
        self.example = ""
        self.extra = 0  # a second tally (non-code files of a snapshot folder)
        self.why = why

    def add(self, path: str) -> None:
        if not self.count:
            self.example = path
        self.count += 1


Roots = dict[tuple[str, ...], Seen]


def merged(roots: Roots, with_files: set[tuple[str, ...]]) -> Roots:
    """Roots that differ in one folder name (never the last) merged into one with `*`
    there; roots inside another root dropped. Never where the folder above holds files
    of its own: a file there would stand above a root (`tests/*/data` makes every
    `tests/x.py` evidence, as a file in place of a folder of roots)."""
    current: Roots = dict(roots)
    changed = True
    while changed:
        changed = False
        longest = max((len(r) for r in current), default=0)
        for j in range(longest - 1):
            groups: dict[tuple[object, ...], list[tuple[str, ...]]] = defaultdict(list)
            for r in current:
                if len(r) > j + 1 and r[j] != "*" and r[:j] not in with_files:
                    groups[(current[r].why, len(r), r[:j], r[j + 1 :])].append(r)
            for members in groups.values():
                if len(members) < 2:
                    continue
                merged = (*members[0][:j], "*", *members[0][j + 1 :])
                seen = Seen(current[members[0]].why)
                for m in members:
                    part = current.pop(m)
                    seen.count += part.count
                    seen.example = seen.example or part.example
                current[merged] = seen
                changed = True
    return {r: s for r, s in current.items() if not any(o != r and inside(r, o) for o in current)}


def inside(root: tuple[str, ...], other: tuple[str, ...]) -> bool:
    if len(other) > len(root):
        return False
    return all(o in ("*", r) for o, r in zip(other, root, strict=False))


def root_entries(roots: Roots, with_files: set[tuple[str, ...]]) -> list[Entry]:
    found = merged(roots, with_files)
    if len(found) > MAX_ROOT_GLOBS:  # one glob per folder name, at any depth
        named: Roots = {}
        for root, seen in found.items():
            into = named.setdefault(("**", root[-1].lower()), Seen(seen.why))
            into.count += seen.count
            into.example = into.example or seen.example
        found = named
    out = []
    for root, seen in sorted(found.items(), key=lambda kv: (-kv[1].count, kv[0])):
        glob = "/".join(c if c in ("*", "**") else literal_component(c) for c in root) + "/**"
        out.append(Entry(glob, seen.why, seen.count, seen.example))
    return out


def lock_roots(roots: Roots) -> list[str]:
    """The literal test-data folders, largest first, as the lock's roots."""
    plain = [
        (seen.count, "/".join(root))
        for root, seen in roots.items()
        if not any(ch in "/".join(root) for ch in "*?[]!\\") and ".." not in root
    ]
    kept = {r for _, r in sorted(plain, key=lambda cr: (-cr[0], cr[1]))[:MAX_LOCK_ROOTS]}
    return sorted(r for r in kept if not any(r.startswith(o + "/") for o in kept))
