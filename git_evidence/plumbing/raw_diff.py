"""git's raw diff rows (``diff-tree -z --raw``, combined rows for merges, ``diff-index
--cached``) read into each commit's ``CommitDiff``, and where a changed symlink leads
(``LinkResolver``: one ``ls-tree -r`` of a commit that changes a link). Apart from the
gate, because the gate's stream, a staged change, the judge's changed paths and a split
all read the same rows."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator, Sequence
from typing import cast

from git_evidence.core.errors import GitError
from git_evidence.core.facts import CommitDiff
from git_evidence.core.links import LinkWalk, follow_link
from git_evidence.core.oids import Oid, is_zero
from git_evidence.core.paths import GITLINK_MODE, SYMLINK_MODE, Change
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.git import Git, decode_path
from git_evidence.plumbing.stream import zsplit

# ``sys.intern`` for the ids the rows carry: typed to give an Oid, at no cost per id.
_intern_oid = cast("Callable[[str], Oid]", sys.intern)


def parse_raw(
    tokens: Iterator[bytes],
    links: LinkResolver,
    first_commit: Oid | None = None,
    *,
    plain_rows: bool = False,
) -> Iterator[CommitDiff]:
    """Parse ``diff-tree -z --raw`` (combined rows for merges) token by token.

    ``first_commit`` names the changes when the output has no header (``diff-index
    --cached``: links are then followed through the index). ``plain_rows``: plain
    rows are handed on raw in ``rows`` instead of as ``Change`` objects."""
    in_index = first_commit is not None
    oid = first_commit
    merge = False
    changes: list[Change] = []
    rows: list[bytes] = []
    for token in tokens:
        if not token or token[0] != _COLON:
            if oid is not None:
                yield _commit(oid, merge, changes, rows, links, in_index)
            oid, merge, changes, rows = _intern_oid(token.decode()), False, [], []
            continue
        raw = next(tokens, None)
        if raw is None:
            raise GitError(["git", "diff-tree"], 0, token, b"a row without a path")
        if plain_rows and token[1] != _COLON and _PLAIN_MODES[token[1:14]]:
            rows.append(token)
            rows.append(raw)
            continue
        # Interned: a push touches the same paths again and again.
        changes.append(
            _change(token, sys.intern(decode_path(raw)), links, None if in_index else oid)
        )
        if token[1] == _COLON:
            merge = True
    if oid is not None:
        yield _commit(oid, merge, changes, rows, links, in_index)


def _commit(
    oid: Oid,
    merge: bool,
    changes: list[Change],
    rows: list[bytes],
    links: LinkResolver,
    in_index: bool,
) -> CommitDiff:
    if not changes:
        return CommitDiff(oid, merge, (), rows)
    return CommitDiff(oid, merge, links.dependents(None if in_index else oid, changes), rows)


_COLON = ord(":")


class _PlainModes(dict[bytes, bool]):
    """``<old mode> <new mode>`` of a raw row → whether it is plain: neither side a
    symlink or a gitlink (whose rows need their targets read)."""

    def __missing__(self, key: bytes) -> bool:
        modes = key.split(b" ")
        plain = (
            len(modes) == 2
            and all(len(mode) == 6 and mode.isdigit() for mode in modes)
            and not {_SYMLINK_BYTES, _GITLINK_BYTES} & set(modes)
        )
        self[key] = plain
        return plain


_PLAIN_MODES = _PlainModes()


_SYMLINK_BYTES = SYMLINK_MODE.encode()
_GITLINK_BYTES = GITLINK_MODE.encode()
_MODES: dict[bytes, str] = {}


def _change(meta: bytes, path: str, links: LinkResolver, treeish: str | None) -> Change:
    if not meta.startswith(b"::") and _SYMLINK_BYTES not in meta:
        # The common row, `:<old> <new> <oid> <oid> <S>`, read at fixed offsets. The
        # object ids are only needed to read link targets, so plain rows skip them.
        old_mode = _MODES.get(meta[1:7]) or _MODES.setdefault(meta[1:7], meta[1:7].decode())
        new_mode = _MODES.get(meta[8:14]) or _MODES.setdefault(meta[8:14], meta[8:14].decode())
        return Change(chr(meta[-1]), old_mode, new_mode, "", "", path, raw_meta=meta)
    text = meta.decode()
    parents = len(text) - len(text.lstrip(":"))
    fields = text.lstrip(":").split()
    modes = fields[: parents + 1]
    oids = cast("list[Oid]", fields[parents + 1 : 2 * parents + 2])
    letters = fields[2 * parents + 2] if len(fields) > 2 * parents + 2 else "M"
    if parents > 1:
        # combined row: A everywhere = added, D = deleted, anything else = modified
        status = letters[0] if len(set(letters)) == 1 and letters[0] in "AD" else "M"
    else:
        status = letters[0]
    old_mode, new_mode, old_oid, new_oid = modes[0], modes[-1], oids[0], oids[-1]
    link = old_link = None
    walk = LinkWalk((), False)
    if new_mode == SYMLINK_MODE and not is_zero(new_oid):
        link = links.text(new_oid)
        walk = links.follow(treeish, path, link)
    if old_mode == SYMLINK_MODE and not is_zero(old_oid):
        old_link = links.text(old_oid)
    return Change(
        status,
        old_mode,
        new_mode,
        old_oid,
        new_oid,
        path,
        link,
        old_link,
        walk.reached,
        link_outside=walk.outside,
    )


class LinkResolver:
    """Resolves symlinks through the links of one tree (a commit's, or the index), so
    a chain of product-side links cannot reach evidence unseen (links.follow_link).
    A tree's links are listed once, when one of its rows is a link."""

    def __init__(self, git: Git, blobs: CatFile) -> None:
        self.git = git
        self.blobs = blobs
        self._texts: dict[Oid, str] = {}  # blob id → link text
        self._tree: tuple[str | None, dict[str, Oid]] | None = None  # the last tree's links

    def text(self, oid: Oid) -> str:
        text = self._texts.get(oid)
        if text is None:
            text = self._texts[oid] = decode_path(self.blobs.read(oid))
        return text

    def _links(self, treeish: str | None) -> dict[str, Oid]:
        if self._tree is None or self._tree[0] != treeish:
            self._tree = (treeish, symlinks(self.git, treeish))
        return self._tree[1]

    def _reader(self, treeish: str | None) -> Callable[[Sequence[str]], dict[str, str]]:
        links = self._links(treeish)
        return lambda paths: {p: self.text(links[p]) for p in paths if p in links}

    def follow(self, treeish: str | None, link_path: str, text: str) -> LinkWalk:
        return follow_link(link_path, text, self._reader(treeish))

    def dependents(self, treeish: str | None, changes: list[Change]) -> tuple[Change, ...]:
        """``changes`` with, for each link it adds or changes, where the tree's other
        links that climb (``..``) through it now lead: `src/l -> sub/../../fixtures/g`
        committed first, `src/sub -> ../tests/unit/deep` later, makes the later
        commit's `src/sub` lead to tests/fixtures/g."""
        changed = {c.path for c in changes if c.link_target is not None}
        if not changed:
            return tuple(changes)
        read = self._reader(treeish)
        extra: dict[str, list[str]] = {}
        for path, oid in self._links(treeish).items():
            text = self.text(oid)
            # Without a `..` a walk through a link stays under that link's target,
            # which the link's own walk judges.
            if path in changed or ".." not in text:
                continue
            walk = follow_link(path, text, read)
            for hop in walk.through:
                if hop in changed:
                    extra.setdefault(hop, []).extend(walk.reached)
        return tuple(
            c._replace(link_hops=(*c.link_hops, *extra[c.path])) if c.path in extra else c
            for c in changes
        )


def symlinks(git: Git, treeish: str | None) -> dict[str, Oid]:
    """Every symlink of ``treeish`` (None: the index): path → blob id."""
    if treeish is None:
        out = git.out("ls-files", "-s", "-z")
    else:
        out = git.out("ls-tree", "-r", "-z", "--full-tree", treeish)
    links: dict[str, Oid] = {}
    for record in zsplit(out):
        if not record.startswith(b"120000 "):
            continue
        meta, _, raw = record.partition(b"\t")
        fields = meta.split()
        links[decode_path(raw)] = Oid((fields[1] if treeish is None else fields[2]).decode())
    return links
