"""One commit's classified content (``summarize``: the hot per-commit code of a push,
one ``CommitSummary`` per commit while the diff streams), what it sets as evidence
(``value_key``, ``value_pairs``, ``sets_value``) and a merge charged with the evidence it
kept (``with_kept``). Pure: a parsed diff and the classifier in; apart from the deciders
because the gate builds summaries while it gathers, and ``split`` classifies with them."""

from __future__ import annotations

from collections.abc import Iterable

from git_evidence.core import paths
from git_evidence.core.facts import CommitDiff, CommitSummary
from git_evidence.core.path_globs import fold_path
from git_evidence.core.paths import EVIDENCE_CLASSES, Classifier, PathClass


def value_key(mode: str, oid: str) -> bytes:
    """A path's value (mode, object id) in a few bytes: the mode, the id in binary."""
    return mode.encode() + bytes.fromhex(oid)


def value_pairs(summary: CommitSummary) -> frozenset[tuple[str | bytes, str | bytes]]:
    """``(path, value_key)`` of each value the commit's own diff sets as evidence: a
    walk asking one commit about many paths (a crate move sets thousands) builds it once."""
    flat = summary.evidence_values
    return frozenset(zip(flat[0::2], flat[1::2], strict=True))


def sets_value(summary: CommitSummary, value: tuple[str, str, str]) -> bool:
    """Whether the commit's own diff sets ``(path, mode, object id)`` as evidence."""
    return sets_in(value_pairs(summary), value)


def sets_in(pairs: frozenset[tuple[str | bytes, str | bytes]], value: tuple[str, str, str]) -> bool:
    """``sets_value`` on a commit's ``value_pairs``."""
    path, mode, oid = value
    return (path, value_key(mode, oid)) in pairs


# Classes whose plain rows are read past their path (status, mode, blob ids).
_WATCHED: frozenset[PathClass] = EVIDENCE_CLASSES | {paths.TEST}
# Commits share a handful of class combinations: one frozenset object each.
_CLASS_SETS: dict[tuple[PathClass, ...], frozenset[PathClass]] = {}


def summarize(
    commit: CommitDiff, classifier: Classifier, ledger_path: str = "", quota_path: str = ""
) -> CommitSummary:
    """``ledger_path`` and ``quota_path`` (folded): changes to them keep their blob ids
    for the append-only checks.

    Plain rows come raw (``commit.rows``): each is looked up by its path's bytes, so a
    path the push names again costs one dict lookup, and only test and evidence rows
    have their row read further."""
    by_class: dict[PathClass, list[str]] = {}
    added: list[str] = []
    changed: list[str] = []
    ledger: list[tuple[str, str, str, str]] = []
    quota: list[tuple[str, str, str, str]] = []
    values: list[str | bytes] = []
    if commit.rows:
        known = classifier.plain_classes
        classify = classifier.classify_plain
        rows = iter(commit.rows)
        for meta, raw in zip(rows, rows, strict=True):
            path, klass = known.get(raw) or classify(raw)
            listed = by_class.get(klass)
            if listed is None:
                by_class[klass] = [path]
            else:
                listed.append(path)
            if klass in _WATCHED:
                # `:<old mode> <new mode> <old id> <new id> <status>`
                _, new_mode, old_oid, new_oid, letters = meta.decode().split(" ")
                status = letters[:1]
                if klass == paths.TEST:
                    (added if status == "A" else changed).append(path)
                    continue
                values += (path, value_key(new_mode, new_oid))
                if klass == paths.LEDGER:
                    folded = fold_path(path)
                    if folded == ledger_path:
                        ledger.append((status, old_oid, new_oid, path))
                    elif folded == quota_path:
                        quota.append((status, old_oid, new_oid, path))
    for change in commit.changes:
        klass = classifier.classify_change(change).klass
        by_class.setdefault(klass, []).append(change.path)
        if klass == paths.TEST:
            (added if change.status == "A" else changed).append(change.path)
        elif klass in EVIDENCE_CLASSES:
            values += (change.path, value_key(change.new_mode, change.object_ids()[1]))
            if klass == paths.LEDGER:
                folded = fold_path(change.path)
                if folded == ledger_path:
                    ledger.append((change.status, *change.object_ids(), change.path))
                elif folded == quota_path:
                    quota.append((change.status, *change.object_ids(), change.path))
    key = tuple(by_class)
    classes = _CLASS_SETS.get(key) or _CLASS_SETS.setdefault(key, frozenset(key))
    return CommitSummary(
        commit.oid,
        commit.merge,
        tuple([(k, tuple(v)) for k, v in by_class.items()]),
        classes,
        tuple(added),
        tuple(changed),
        tuple(ledger),
        tuple(values),
        quota=tuple(quota),
    )


def with_kept(summary: CommitSummary, kept: Iterable[tuple[PathClass, str]]) -> CommitSummary:
    """``summary`` judged as also changing ``kept`` (``(class, path)`` pairs): evidence
    a merge brought back from an older copy is a change that merge made."""
    by_class = {k: list(v) for k, v in summary.by_class}
    paths_kept = list(summary.kept)
    for klass, path in kept:
        if path not in by_class.setdefault(klass, []):
            by_class[klass].append(path)
        if path not in paths_kept:
            paths_kept.append(path)
    return summary._replace(
        by_class=tuple((k, tuple(v)) for k, v in by_class.items()),
        classes=frozenset(by_class),
        kept=tuple(paths_kept),
    )
