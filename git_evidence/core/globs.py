"""Glob syntax → regular expressions (gitignore's wildmatch, the part the policy uses).

Pure and unaware of folding: callers fold what they match (paths.py folds paths and
path globs; ref globs are matched case-folded). A name may hold any character but
``/``, a newline included, so no pattern here relies on ``.`` without DOTALL.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

ANY = "(?s:.*)"  # anything, newlines included
ANY_DIRS = "(?:[^/]*/)*"  # zero or more whole components (`[^/]` matches a newline)
WILDCARDS = frozenset("*?[")


def has_wildcard(text: str) -> bool:
    return any(ch in WILDCARDS for ch in text)


def components_regex(parts: Sequence[str]) -> str:
    """A regex for paths whose components match ``parts`` one by one; a ``**`` part
    spans zero or more whole components (one or more when it is the last)."""
    out: list[str] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append(ANY if last else ANY_DIRS)
        else:
            out.append(component_regex(part) + ("" if last else "/"))
    return "".join(out)


def component_regex(part: str) -> str:
    """One component: ``*`` and ``?`` never match ``/``; ``[...]`` is a character
    class (``!`` or ``^`` negates it); anything else is literal."""
    out: list[str] = []
    i = 0
    while i < len(part):
        ch = part[i]
        if ch == "*":
            # Runs of stars are one star: `a*****b` must not backtrack exponentially.
            while i + 1 < len(part) and part[i + 1] == "*":
                i += 1
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[" and (end := _bracket_end(part, i)) != -1:
            out.append(_bracket_regex(part[i + 1 : end]))
            i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def _bracket_end(part: str, start: int) -> int:
    """Index of the ``]`` closing the class opened at ``start``; -1: no class (the
    ``[`` is literal). A ``]`` first in the class is a member, as in wildmatch."""
    j = start + 1
    if j < len(part) and part[j] in "!^":
        j += 1
    if j < len(part) and part[j] == "]":
        j += 1
    return part.find("]", j)


def _bracket_regex(inner: str) -> str:
    negate = inner[:1] in ("!", "^")
    if negate:
        inner = inner[1:]
    if "[:" in inner:
        raise ValueError(
            f"character classes like [:alpha:] are not supported ([{inner}]): list the characters"
        )
    out: list[str] = []
    i = 0
    while i < len(inner):
        if i + 2 < len(inner) and inner[i + 1] == "-":
            # An empty range (`z-a`) is left for re.compile to refuse.
            out.append(f"{re.escape(inner[i])}-{re.escape(inner[i + 2])}")
            i += 3
        else:
            out.append(re.escape(inner[i]))
            i += 1
    body = "".join(out)
    return f"[^/{body}]" if negate else f"[{body}]"


def ref_glob_regex(glob: str) -> str:
    """A ref-name glob (``refs/heads/release/*``): ``*`` stays within a component,
    ``**`` spans components. No implicit any-depth prefix and nothing below a match:
    a ref glob names refs, not directories."""
    return components_regex(glob.split("/"))
