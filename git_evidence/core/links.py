"""Where a symlink leads. Pure: the tree is read through a callback.

A link is read two ways and both count, because both kinds of reader exist:

* as the kernel does: component by component, each link met is replaced by its
  target, so a ``..`` after a linked directory climbs from where that link points
  (``src/sub -> ../tests/unit/deep`` makes ``src/sub/../../fixtures`` be
  ``tests/fixtures``);
* lexically, ``..`` cancelling the component written before it, as Windows and
  ``os.path.normpath``-style tools do, then following the links the result meets.

A backslash in a target is a separator (a Windows checkout reads it as one).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

MAX_LINKS = 40  # the kernel's MAXSYMLINKS: past it, resolution fails (ELOOP)

# paths → the target text of those that are symlinks in the tree (others absent)
ReadLinks = Callable[[Sequence[str]], Mapping[str, str]]


class LinkWalk(NamedTuple):
    reached: tuple[str, ...]  # repository paths the link leads to ("" = the root)
    outside: bool  # some reading leaves the repository (absolute, or above its root)
    through: tuple[str, ...] = ()  # the other links it follows on the way


class _Outside(Exception):
    pass


def resolve_link(link_path: str, target: str) -> str | None:
    """The lexical reading of a link at ``link_path``, relative to the repository
    root ("" is the root itself); None when it is absolute or climbs out."""
    target = target.replace("\\", "/")
    if target.startswith("/"):
        return None
    try:
        return "/".join(_normalized([*link_path.split("/")[:-1], *target.split("/")]))
    except _Outside:
        return None


def follow_link(link_path: str, text: str, read_links: ReadLinks) -> LinkWalk:
    """Every path the link at ``link_path`` (target ``text``) leads to, through the
    links of one tree, read both ways."""
    # The link's own directories are directories of the tree, not links.
    parents = link_path.split("/")[:-1]
    known: dict[str, str | None] = {"/".join(parents[:i]): None for i in range(1, len(parents) + 1)}
    reached: list[str] = []
    through: list[str] = []
    outside = False
    for lexical in (False, True):
        try:
            end = _walk(link_path, text, read_links, known, through, lexical=lexical)
        except _Outside:
            outside = True
            continue
        if end is not None and end not in reached:
            reached.append(end)
    return LinkWalk(tuple(reached), outside, tuple(dict.fromkeys(through)))


def _walk(
    link_path: str,
    text: str,
    read_links: ReadLinks,
    known: dict[str, str | None],
    through: list[str],
    *,
    lexical: bool,
) -> str | None:
    """The path a reading ends at; None when it loops past MAX_LINKS. The links it
    follows are added to ``through``."""
    here: list[str] = link_path.split("/")[:-1]  # a real directory of the tree
    pending: deque[str] = deque()
    for _ in range(MAX_LINKS):
        text = text.replace("\\", "/")
        if text.startswith("/"):
            raise _Outside
        pending.extendleft(reversed(text.split("/")))
        if lexical:
            here, pending = [], deque(_normalized([*here, *pending]))
        found = _advance(here, pending, read_links, known)
        if found is None:
            return "/".join(here)
        through.append(found[0])
        text = found[1]
    return None


def _advance(
    here: list[str],
    pending: deque[str],
    read_links: ReadLinks,
    known: dict[str, str | None],
) -> tuple[str, str] | None:
    """Move ``pending`` components onto ``here`` until one is a symlink: return its
    path and text (``here`` then holds the link's directory), or None at the end."""
    while pending:
        part = pending.popleft()
        if part in ("", "."):
            continue
        if part == "..":
            if not here:
                raise _Outside
            here.pop()
            continue
        here.append(part)
        path = "/".join(here)
        if path not in known:
            _probe(here, pending, read_links, known)
        text = known.get(path)
        if text is not None:
            here.pop()
            return path, text
    return None


def _probe(
    here: list[str],
    pending: deque[str],
    read_links: ReadLinks,
    known: dict[str, str | None],
) -> None:
    """Ask the tree about ``here`` and the plain components ahead of it at once (one
    lookup per run, not one per component)."""
    run = ["/".join(here)]
    probe = list(here)
    for part in pending:
        if part == "..":
            break
        if part in ("", "."):
            continue
        probe.append(part)
        run.append("/".join(probe))
    wanted = [p for p in run if p not in known]
    links = read_links(wanted)
    for path in wanted:
        known[path] = links.get(path)


def _normalized(parts: Sequence[str]) -> list[str]:
    out: list[str] = []
    for part in parts:
        if part in ("", "."):
            continue
        if part == "..":
            if not out:
                raise _Outside
            out.pop()
        else:
            out.append(part)
    return out
