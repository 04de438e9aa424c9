"""The endpoint in a judgement (SPEC §10): the evidence that differs between an
update's base and its new tip, and for each value no commit of the range sets by its
own diff, the commits of the range that set it against one of their parents (a merge
that kept an older copy from a parent forked before the evidence changed).

This layer reads git; ``rules`` decides what the rows mean."""

from __future__ import annotations

from collections.abc import Sequence

from git_evidence.git import Git, decode_path
from git_evidence.paths import EVIDENCE_CLASSES, SYMLINK_MODE, Change, Classifier
from git_evidence.ranges import LinkResolver, UpdateFacts, parse_raw

# (class, path, new mode, new object id) of an evidence path that differs between
# base and new; a path new lacks has mode 000000 and a zero id, as git prints them.
EndpointRow = tuple[str, str, str, str]
_SYMLINK = SYMLINK_MODE.encode()


def evidence_rows(
    git: Git, links: LinkResolver, classifier: Classifier, base: str, new: str
) -> list[EndpointRow]:
    """One ``diff-tree base new`` for the whole update. It is not limited by pathspec:
    evidence is matched on folded paths and by structure (links, entries above a
    root), which no pathspec expresses; the rows are classified as commits' are."""
    tokens = git.diff_trees(base, new)
    rows: list[EndpointRow] = []
    header = new.encode()
    pairs = iter(tokens)
    # A large push differs from its base in thousands of product paths: a plain row is
    # classified by its path alone (what the stream already cached), only a symlink
    # row is parsed whole, its target followed through `new`'s tree.
    for meta, raw in zip(pairs, pairs, strict=True):
        if _SYMLINK in meta:
            diff = next(parse_raw(iter([header, meta, raw]), links))
            change = diff.changes[0]
        else:
            change = Change("M", "", "", "", "", decode_path(raw))
        klass = classifier.classify_change(change).klass
        if klass in EVIDENCE_CLASSES:
            fields = meta.decode().split()
            rows.append((klass, change.path, fields[1], fields[3]))
    return rows


def kept_by(
    git: Git, facts: UpdateFacts, stale: Sequence[EndpointRow]
) -> dict[str, list[tuple[str, str]]]:
    """commit → ``(class, path)`` of the ``stale`` rows it is judged as changing.

    A row no commit of the range sets by its own diff arrives through a commit whose
    diff against *one* of its parents sets it to the endpoint's value: a merge that
    took that parent's (older) copy. Every such commit of the range is judged as
    making the change. When there is none, the value came with history the range
    excludes (another protected ref's accepted commits), except on a protected ref,
    whose whole new history is the range: there the update's tip answers for it."""
    revlist = [arg for arg in facts.revlist or () if arg != "--boundary"]
    wanted = {path: (mode, oid, klass) for klass, path, mode, oid in stale}
    pairs = [
        f"{commit} {parent}".rstrip()
        for commit, *parents in git.rev_list_parents(revlist)
        for parent in parents or [""]
    ]
    found: dict[str, list[tuple[str, str]]] = {}
    explained: set[str] = set()
    current = ""
    meta: bytes | None = None
    for token in git.diff_pairs(pairs, sorted(wanted)):
        if meta is not None:
            path = decode_path(token)
            value = wanted.get(path)
            fields = meta.decode().split()
            if value is not None and (fields[1], fields[3]) == value[:2]:
                entry = (value[2], path)
                if entry not in found.setdefault(current, []):
                    found[current].append(entry)
                explained.add(path)
            meta = None
        elif token.startswith(b":"):
            meta = token
        else:
            current = token.decode()
    missing = [(klass, path) for klass, path, _, _ in stale if path not in explained]
    if missing and facts.protected and facts.commit is not None:
        found.setdefault(facts.commit, []).extend(missing)
    return found
