"""Fold paths and classify them (SPEC §4). Pure: no git, no I/O."""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

PRODUCT, FIXTURE, ORACLE, LEDGER, POLICY = (
    "product",
    "fixture",
    "oracle",
    "freeze_ledger",
    "policy",
)
TEST, NEUTRAL, OTHER = "test", "neutral", "other"

# Highest precedence first: evidence always wins (SPEC §3).
PRECEDENCE = (POLICY, LEDGER, ORACLE, FIXTURE, PRODUCT, TEST, NEUTRAL)
EVIDENCE_CLASSES = frozenset({FIXTURE, ORACLE, LEDGER, POLICY})

SYMLINK_MODE = "120000"
GITLINK_MODE = "160000"

# Unicode Default_Ignorable_Code_Point (DerivedCoreProperties.txt): characters that
# render as nothing, so `fix\u200ctures` reads as `fixtures` to a person and to some
# tools.
_IGNORABLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
_TRAILING = re.compile(r"[. ]+(?=/|$)")
_WILDCARD = re.compile(r"[*?\[]")


def fold_path(path: str) -> str:
    """The spelling every checkout agrees on: backslashes as separators, no
    default-ignorable code points, NFC, case-folded, and no trailing dots or spaces on
    any component (Windows drops them)."""
    if "\\" in path:  # a Windows checkout reads a backslash as a separator
        path = path.replace("\\", "/")
    if path.isascii():
        return _TRAILING.sub("", path.lower())
    text = _IGNORABLE.sub("", path)
    text = unicodedata.normalize("NFC", text).casefold()
    text = unicodedata.normalize("NFC", text)
    return _TRAILING.sub("", text)


def canonical_glob(glob: str) -> str:
    """``./a//b`` → ``a/b``; a leading ``/`` (anchor) is kept."""
    anchored = glob.startswith("/")
    parts = [p for p in glob.split("/") if p not in ("", ".")]
    text = "/".join(parts)
    if glob.endswith("/") and text:
        text += "/"
    return ("/" + text) if anchored else text


def glob_problem(glob: str) -> str | None:
    """Why a policy glob is unacceptable, or None."""
    if not glob.strip("/ "):
        return "an empty glob matches nothing"
    if ".." in glob.split("/"):
        return "a glob may not contain `..`"
    if glob.startswith("!"):
        return "negated globs (`!`) are not supported: list what is evidence instead"
    if "\\" in glob:
        return "backslashes are not supported in globs"
    return None


def glob_regex(glob: str) -> str:
    """Translate a gitignore-style glob into a regex over folded paths.

    No slash (besides a trailing one): matches the base name at any depth. Otherwise
    anchored at the root. ``**`` spans whole components. A match on a directory covers
    everything under it, as in gitignore.
    """
    glob = fold_path(glob.rstrip("/")) if glob.strip("/") else glob
    anchored = "/" in glob
    glob = glob.lstrip("/")
    parts = glob.split("/")
    out: list[str] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if part == "**":
            out.append(".*" if last else "(?:[^/]*/)*")
            continue
        out.append(_component_regex(part) + ("" if last else "/"))
    body = "".join(out)
    prefix = "" if anchored else "(?:.*/)?"
    return f"{prefix}{body}(?:/.*)?"


def _component_regex(part: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(part):
        ch = part[i]
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = part.find("]", i + 2)
            if end == -1:
                out.append(re.escape(ch))
            else:
                inner = part[i + 1 : end]
                if inner.startswith("!"):
                    inner = "^" + inner[1:]
                out.append("[" + inner.replace("\\", "\\\\") + "]")
                i = end
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def literal_root(glob: str) -> str | None:
    """The directory (or file) an anchored glob is rooted at: ``tests/fixtures/**`` →
    ``tests/fixtures``. None for globs that match at any depth (``*.snap``)."""
    text = glob.rstrip("/")
    if "/" not in text:
        return None
    parts = text.lstrip("/").split("/")
    fixed: list[str] = []
    for part in parts:
        if _WILDCARD.search(part):
            break
        fixed.append(part)
    return fold_path("/".join(fixed)) if fixed else None


@dataclass(frozen=True)
class Match:
    klass: str
    glob: str | None  # None: no glob (class `other`) or a structural reason
    reason: str = ""


class Change(NamedTuple):
    """One row of ``git diff-tree --raw``; for a merge, the combined row (old side is
    the first parent's). Object ids are kept for symlink rows only (their targets are
    read); other rows carry empty ids."""

    status: str
    old_mode: str
    new_mode: str
    old_oid: str
    new_oid: str
    path: str
    link_target: str | None = None  # the new symlink's text, when it is one
    old_link_target: str | None = None
    # Repository paths the new link leads through, following links it meets in the
    # commit's own tree (`src/a -> b`, `src/b -> ../tests/fixtures`).
    link_hops: tuple[str, ...] = ()
    raw_meta: bytes = b""  # the raw row, for plain rows whose ids were not decoded

    def object_ids(self) -> tuple[str, str]:
        """(old, new) object ids, decoded from the raw row when needed."""
        if self.old_oid or self.new_oid or not self.raw_meta:
            return self.old_oid, self.new_oid
        fields = self.raw_meta.decode().split()
        return fields[2], fields[3]


class Classifier:
    """Maps paths (and changes) to path classes under one policy's globs."""

    def __init__(self, globs: Mapping[str, Sequence[str]], extra_roots: Sequence[str] = ()) -> None:
        # One alternation in precedence order: the first alternative that matches is
        # the class (regex alternation is ordered), one match call per path.
        self._globs: list[tuple[str, str]] = []
        alternatives = []
        for klass in PRECEDENCE:
            for glob in globs.get(klass, ()):
                alternatives.append(f"(?P<g{len(self._globs)}>{glob_regex(glob)})")
                self._globs.append((klass, glob))
        self._regex = re.compile("|".join(alternatives) or "(?!)")
        roots: dict[str, str] = {}
        for klass in PRECEDENCE:
            if klass not in EVIDENCE_CLASSES:
                continue
            for glob in globs.get(klass, ()):
                root = literal_root(glob)
                if root and root not in roots:
                    roots[root] = klass
        for root in extra_roots:
            roots.setdefault(fold_path(root.strip("/")), FIXTURE)
        self.evidence_roots = roots
        # Every proper ancestor of a root: an entry there replaces the root's directory.
        self._above: dict[str, tuple[str, str]] = {}
        for root, klass in roots.items():
            parts = root.split("/")
            for depth in range(len(parts) - 1, -1, -1):
                self._above.setdefault("/".join(parts[:depth]), (klass, root))
        self._cache: dict[str, Match] = {}
        self._change_cache: dict[str, Match] = {}

    def classify(self, path: str) -> Match:
        hit = self._cache.get(path)
        if hit is None:
            hit = self._classify(fold_path(path))
            if len(self._cache) < 1 << 18:
                self._cache[path] = hit
        return hit

    def _classify(self, folded: str) -> Match:
        found = self._regex.fullmatch(folded)
        if found is None or found.lastgroup is None:
            return Match(OTHER, None)
        klass, glob = self._globs[int(found.lastgroup[1:])]
        return Match(klass, glob)

    def _structural(self, path: str) -> Match:
        """The path's class, raised to evidence at or above an evidence root."""
        folded = fold_path(path)
        own = self._cache.get(path) or self._classify(folded)
        if own.klass in EVIDENCE_CLASSES:
            return own
        return self._root_relation(folded) or own

    def root_relation(self, path: str) -> Match | None:
        """Evidence class when ``path`` is an evidence root, lies in one, or is an
        ancestor of one (a file or link there replaces the root's directory)."""
        return self._root_relation(fold_path(path))

    def _root_relation(self, folded: str) -> Match | None:
        above = self._above.get(folded)
        if above is not None:
            return Match(above[0], above[1], f"above evidence root {above[1]}/")
        parts = folded.split("/")
        for depth in range(1, len(parts) + 1):
            prefix = "/".join(parts[:depth])
            klass = self.evidence_roots.get(prefix)
            if klass is not None:
                return Match(klass, prefix, f"inside evidence root {prefix}/")
        return None

    def classify_change(self, change: Change) -> Match:
        """The class that counts for a change (SPEC §4): the path's own class, raised
        to evidence by structure (an entry at or above an evidence root; a symlink or
        gitlink pointing into evidence)."""
        if change.link_target is None and change.old_link_target is None:
            hit = self._change_cache.get(change.path)
            if hit is None:
                hit = self._structural(change.path)
                if len(self._change_cache) < 1 << 18:
                    self._change_cache[change.path] = hit
            return hit
        own = self._structural(change.path)
        if own.klass in EVIDENCE_CLASSES:
            return own
        hops = list(change.link_hops)
        for target in (change.link_target, change.old_link_target):
            resolved = None if target is None else resolve_link(change.path, target)
            if resolved is not None:
                hops.append(resolved)
        for resolved in hops:
            hit = self.classify(resolved)
            if hit.klass in EVIDENCE_CLASSES:
                return Match(hit.klass, hit.glob, f"symlink to {resolved}")
            rel = self.root_relation(resolved)
            if rel is not None:
                return Match(rel.klass, rel.glob, f"symlink to {resolved}: {rel.reason}")
        return own


def resolve_link(link_path: str, target: str) -> str | None:
    """Where a symlink at ``link_path`` points, relative to the repository root; None
    when it leaves the repository or is absolute (nothing in the tree is there)."""
    if target.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(link_path), target))
    if joined == ".":
        return ""
    if joined == ".." or joined.startswith("../"):
        return None
    return joined
