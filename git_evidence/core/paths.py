"""Classify paths: the path classes (a closed set), a change as the classifier reads it
(``Change``: one ``diff-tree --raw`` row, with what its links lead to), and the
``Classifier`` of one policy's globs: classes with negation in precedence order, and
structural evidence (an entry at or above an evidence root, in a lock root, a symlink
or gitlink leading into evidence). Pure: no git, no I/O.

Paths are folded and globs compiled by path_globs.py; the classifier is what one
policy's globs, taken together, say of a path."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from typing import Final, Literal, NamedTuple

from git_evidence.core.globs import ANY
from git_evidence.core.links import resolve_link
from git_evidence.core.path_globs import fold_path, glob_regex, root_patterns, split_negation
from git_evidence.core.runner_files import RUNNER_CONFIG as _RUNNER_CONFIG

# The path classes: a closed set, so the type checker knows every class a
# path can have. `other` is a path no glob classifies.
PathClass = Literal[
    "product", "fixture", "oracle", "freeze_ledger", "policy", "test", "neutral", "other"
]
PRODUCT: Final = "product"
FIXTURE: Final = "fixture"
ORACLE: Final = "oracle"
LEDGER: Final = "freeze_ledger"
POLICY: Final = "policy"
TEST: Final = "test"
NEUTRAL: Final = "neutral"
OTHER: Final = "other"

# Highest precedence first: evidence always wins.
PRECEDENCE: Final[tuple[PathClass, ...]] = (POLICY, LEDGER, ORACLE, FIXTURE, PRODUCT, TEST, NEUTRAL)
EVIDENCE_CLASSES: Final[frozenset[PathClass]] = frozenset({FIXTURE, ORACLE, LEDGER, POLICY})

SYMLINK_MODE = "120000"
GITLINK_MODE = "160000"


class Negation(NamedTuple):
    """A negation that took a path back from a class before its class was reached."""

    klass: PathClass
    glob: str  # the glob of that class that matched
    by: str  # the negation, with its `!`

    def describe(self) -> str:
        return f"{self.klass} glob {self.glob} negated by {self.by}"


class Match(NamedTuple):
    klass: PathClass
    glob: str | None  # None: no glob (class `other`) or a structural reason
    reason: str = ""
    negated: tuple[Negation, ...] = ()


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
    # Repository paths the new link leads to, resolved through the commit's own tree
    # (links.follow_link), and whether some reading of it leaves the repository.
    link_hops: tuple[str, ...] = ()
    raw_meta: bytes = b""  # the raw row, for plain rows whose ids were not decoded
    link_outside: bool = False

    def object_ids(self) -> tuple[str, str]:
        """(old, new) object ids, decoded from the raw row when needed."""
        if self.old_oid or self.new_oid or not self.raw_meta:
            return self.old_oid, self.new_oid
        fields = self.raw_meta.decode().split()
        return fields[2], fields[3]


# A path above roots of several classes takes the class only evidence writers may
# change before the ledger's (a ledger writer must not replace `tests/`).
STRUCTURAL_ORDER: Final[tuple[PathClass, ...]] = (POLICY, ORACLE, FIXTURE, LEDGER)
_CACHE_LIMIT = 1 << 18


def is_runner_config(path: str) -> bool:
    """Whether ``path`` (folded or not) names runner configuration."""
    return _RUNNER_CONFIG.fullmatch(fold_path(path)) is not None


class _Entry(NamedTuple):
    klass: PathClass
    glob: str  # as written; a negation keeps its `!`
    negated: bool


def _runner_config(folded: str, negated: tuple[Negation, ...]) -> Match:
    name = folded.rsplit("/", 1)[-1]
    return Match(OTHER, None, f"runner configuration ({name}: loaded without being named)", negated)


class Classifier:
    """Maps paths (and changes) to path classes under one policy's globs.

    ``forced`` globs (the built-in policy files, the ledger path) are matched before
    the class's own list, so no negation takes them back; ``extra_roots`` (the lock
    roots) are evidence roots of their own: fixture at, in and above them."""

    def __init__(
        self,
        globs: Mapping[PathClass, Sequence[str]],
        extra_roots: Sequence[str] = (),
        forced: Mapping[PathClass, Sequence[str]] | None = None,
    ) -> None:
        forced = forced or {}
        # One alternation in precedence order, each class's globs last-written first
        # (gitignore: the last match wins): the first alternative that matches
        # decides, one match call per path. Only when that is a negation does a second
        # pass start at the next class.
        self._entries: list[_Entry] = []
        per_class: list[list[str]] = []
        for klass in PRECEDENCE:
            alternatives = []
            own = [(g, False, g) for g in forced.get(klass, ())]
            for glob in reversed(globs.get(klass, ())):
                negated, body = split_negation(glob)
                own.append((body, negated, glob))
            for body, negated, written in own:
                alternatives.append(f"(?P<g{len(self._entries)}>{glob_regex(body)})")
                self._entries.append(_Entry(klass, written, negated))
            per_class.append(alternatives)
        self._passes: dict[int, re.Pattern[str]] = {}
        for i in range(len(PRECEDENCE)):
            if i == 0 or any(e.negated for e in self._entries if e.klass == PRECEDENCE[i - 1]):
                rest = [a for alternatives in per_class[i:] for a in alternatives]
                self._passes[i] = re.compile("|".join(rest) or "(?!)")
        self._single: dict[int, re.Pattern[str]] = {}
        self._roots, self._root_matches = self._compile_roots(globs, forced, extra_roots)
        self._lock_roots = [fold_path(r.strip("/")) for r in extra_roots]
        inside = "|".join(f"{re.escape(r)}/{ANY}" for r in self._lock_roots)
        self._inside = re.compile(inside or "(?!)")
        self._top = next(
            (
                Match(k, None, "the repository root, above every evidence root")
                for k in STRUCTURAL_ORDER
                if globs.get(k) or forced.get(k) or (k == FIXTURE and extra_roots)
            ),
            None,
        )
        self._cache: dict[str, Match] = {}
        self._change_cache: dict[str, Match] = {}
        # A plain row's raw path → (the path decoded and interned, its class): a push
        # names the same paths again and again (see ``classify_plain``).
        self.plain_classes: dict[bytes, tuple[str, PathClass]] = {}

    @staticmethod
    def _compile_roots(
        globs: Mapping[PathClass, Sequence[str]],
        forced: Mapping[PathClass, Sequence[str]],
        extra_roots: Sequence[str],
    ) -> tuple[re.Pattern[str], list[Match]]:
        """One alternation of every path at or above an evidence root. Roots come from
        the positive globs: a negation takes paths back from its class, never a root
        away from the paths still matched."""
        seen: dict[str, Match] = {}
        for klass in STRUCTURAL_ORDER:
            for glob in (*forced.get(klass, ()), *globs.get(klass, ())):
                negated, body = split_negation(glob)
                if negated:
                    continue
                for pattern in root_patterns(body):
                    seen.setdefault(pattern.regex, Match(klass, glob, pattern.reason))
            if klass != FIXTURE:
                continue
            for root in extra_roots:
                folded = fold_path(root.strip("/"))
                parts = folded.split("/")
                for k in range(1, len(parts) + 1):
                    where = "at" if k == len(parts) else "above"
                    seen.setdefault(
                        re.escape("/".join(parts[:k])),
                        Match(klass, root, f"{where} evidence root {folded}/"),
                    )
        alternatives = [f"(?P<r{i}>{regex})" for i, regex in enumerate(seen)]
        return re.compile("|".join(alternatives) or "(?!)"), list(seen.values())

    def classify(self, path: str) -> Match:
        hit = self._cache.get(path)
        if hit is None:
            hit = self._classify(fold_path(path))
            if len(self._cache) < _CACHE_LIMIT:
                self._cache[path] = hit
        return hit

    def _classify(self, folded: str) -> Match:
        start = 0
        negated: tuple[Negation, ...] = ()
        while start < len(PRECEDENCE):
            found = self._passes[start].fullmatch(folded)
            if found is None or found.lastgroup is None:
                break
            index = int(found.lastgroup[1:])
            entry = self._entries[index]
            if not entry.negated:
                if entry.klass not in EVIDENCE_CLASSES and _RUNNER_CONFIG.fullmatch(folded):
                    return _runner_config(folded, negated)
                return Match(entry.klass, entry.glob, negated=negated)
            taken = self._taken_back(index, folded)
            if taken is not None:
                negated += (Negation(entry.klass, taken, entry.glob),)
            start = PRECEDENCE.index(entry.klass) + 1
        if _RUNNER_CONFIG.fullmatch(folded):
            return _runner_config(folded, negated)
        return Match(OTHER, None, negated=negated)

    def _taken_back(self, index: int, folded: str) -> str | None:
        """The glob a negation (entry ``index``) took ``folded`` back from: the last
        written positive glob of its class before it that matches (rare: compiled on
        demand)."""
        klass = self._entries[index].klass
        for i in range(index + 1, len(self._entries)):
            entry = self._entries[i]
            if entry.klass != klass:
                break
            if entry.negated:
                continue
            regex = self._single.get(i)
            if regex is None:
                regex = self._single[i] = re.compile(glob_regex(entry.glob))
            if regex.fullmatch(folded):
                return entry.glob
        return None

    def structural(self, path: str) -> Match:
        """The class of an entry placed at ``path``: its own class, raised to evidence
        at or above an evidence root, or inside a lock root (unless a negation took it
        out of the fixture class: the lock is then the lock's business)."""
        folded = fold_path(path)
        own = self._cache.get(path) or self._classify(folded)
        if own.klass in EVIDENCE_CLASSES:
            return own
        return self._raised(folded, own) or own

    def _raised(self, folded: str, own: Match) -> Match | None:
        relation = self._root_relation(folded)
        if relation is not None or any(n.klass == FIXTURE for n in own.negated):
            return relation
        return self._in_lock_root(folded)

    def root_relation(self, path: str) -> Match | None:
        """Evidence class when an entry at ``path`` would be at or above an evidence
        root (a file or link there replaces the root's directory), or in a lock root."""
        folded = fold_path(path)
        return self._root_relation(folded) or self._in_lock_root(folded)

    def _root_relation(self, folded: str) -> Match | None:
        if not folded:
            return self._top
        found = self._roots.fullmatch(folded)
        if found is None or found.lastgroup is None:
            return None
        return self._root_matches[int(found.lastgroup[1:])]

    def _in_lock_root(self, folded: str) -> Match | None:
        if self._inside.fullmatch(folded) is None:
            return None
        root = next(r for r in self._lock_roots if folded.startswith(r + "/"))
        return Match(FIXTURE, root, f"inside evidence root {root}/")

    def classify_plain(self, raw: bytes) -> tuple[str, PathClass]:
        """``(path, class)`` of the raw path of a plain row (one parent, neither side a
        symlink or a gitlink: its class depends on its path alone). Decoded with
        surrogateescape, interned and classified once; later rows find it in
        ``plain_classes`` by their bytes, without decoding."""
        path = sys.intern(raw.decode("utf-8", "surrogateescape"))
        hit = (path, self.classify_change(Change("M", "", "", "", "", path)).klass)
        if len(self.plain_classes) < _CACHE_LIMIT:
            self.plain_classes[raw] = hit
        return hit

    def classify_change(self, change: Change) -> Match:
        """The class that counts for a change: the path's own class, raised
        to evidence by structure (an entry at or above an evidence root; a symlink or
        gitlink leading into, at or above evidence); a link that stays clear of
        evidence but leaves the repository is ``other``."""
        if change.link_target is None and change.old_link_target is None:
            hit = self._change_cache.get(change.path)
            if hit is None:
                hit = self.structural(change.path)
                if len(self._change_cache) < _CACHE_LIMIT:
                    self._change_cache[change.path] = hit
            return hit
        own = self.structural(change.path)
        if own.klass in EVIDENCE_CLASSES:
            return own
        hops = list(change.link_hops)
        outside = change.link_outside
        for target in (change.link_target, change.old_link_target):
            resolved = None if target is None else resolve_link(change.path, target)
            if resolved is not None:
                hops.append(resolved)
            elif target is not None and target is change.link_target:
                outside = True
        for resolved in hops:
            if not resolved and self._top is not None:
                return Match(self._top.klass, None, f"symlink to {self._top.reason}")
            hit = self.classify(resolved)
            if hit.klass in EVIDENCE_CLASSES:
                return Match(hit.klass, hit.glob, f"symlink to {resolved}")
            rel = self._raised(fold_path(resolved), hit)
            if rel is not None:
                return Match(rel.klass, rel.glob, f"symlink to {resolved}: {rel.reason}")
        if outside:
            return Match(OTHER, None, f"symlink out of the repository ({change.link_target})")
        return own
