"""The lock in a judgement: what the lock in force says about a ref update, whether
a pushed note describes its commit, and which pin digests exist."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from git_evidence.git import CatFile, Git
from git_evidence.lock import (
    Lock,
    LockCache,
    LockInvalid,
    LockRef,
    find_lock,
    note_paths,
    parse_note,
    peek_trees,
    previous_lock,
    read_lock,
)
from git_evidence.manifest import Drift, Entry, build_manifest, compare, root_trees, tree_ids
from git_evidence.policy import Policy


@dataclass
class LockFacts:
    """What the lock says about one ref update; the rules turn it into findings."""

    found: LockRef | None = None
    invalid: str | None = None
    breach: list[Drift] | None = None  # new vs the lock, drift the update brings
    stale: list[Drift] | None = None  # base vs the lock
    digest: str | None = None


def lock_facts(
    git: Git, cat: CatFile, policy: Policy, base: str | None, new: str, notes_known: bool
) -> LockFacts:
    """Compare ``new`` (and ``base``) with the lock in force at ``base``.

    The common case is one ``cat-file --batch-check`` and no blob read: the note on
    the base itself (post-receive pins every new protected tip), already validated
    (LockCache), whose root trees (at the policy's lock roots) equal new's. Otherwise
    the note is read, and blobs are read only where root trees differ."""
    facts = LockFacts()
    if base is None or not notes_known:
        return facts
    notes_ref, exclude, roots_hint = policy.notes_ref, policy.lock_exclude, policy.lock_roots
    cache = LockCache(git)
    # One round trip: where the base's note is, and new's root trees.
    spots = note_paths(notes_ref, base)
    hits = git.batch_check([*spots, *(f"{new}:{root}" for root in roots_hint)])
    blob = next((h[0] for h in hits[: len(spots)] if h is not None and h[1] == "blob"), None)
    if blob is not None:
        known = cache.get(blob)
        new_trees = tree_ids(roots_hint, hits[len(spots) :])
        if known is not None and known.commit == base and known.trees == new_trees:
            facts.found, facts.digest = LockRef(base, blob), known.digest
            return facts
        found = LockRef(base, blob)
    else:
        located = find_lock(git, notes_ref, base)
        if located is None:
            return facts
        found = located
    facts.found = found
    data = cat.read(found.blob)
    try:
        trees = peek_trees(data, found.commit)
        roots = list(trees)
        new_trees = root_trees(git, new, roots)
        if new_trees == trees:
            return facts
        lock = read_lock(git, found, cache, data)
    except LockInvalid as exc:
        facts.invalid = exc.message
        return facts
    facts.digest = lock.digest
    _, new_files = build_manifest(git, new, roots, exclude, lock, trees=new_trees)
    if base == lock.commit:
        base_files: Mapping[str, Entry] = lock.files
    else:
        base_trees = root_trees(git, base, roots)
        base_files = (
            lock.files
            if base_trees == trees
            else build_manifest(git, base, roots, exclude, lock, trees=base_trees)[1]
        )
        facts.stale = compare(lock.files, base_files)
    facts.breach = [
        d for d in compare(lock.files, new_files) if new_files.get(d.path) != base_files.get(d.path)
    ]
    return facts


def check_notes_update(
    git: Git, cat: CatFile, old: str | None, new: str, policy: Policy
) -> list[str]:
    """Problems with the notes an update of the notes ref adds or changes: each must be
    one canonical lock record, and must describe the commit it is attached to (its root
    trees, and its files: blobs the lock in force at the parent has not vouched for are
    hashed), so a lock writer's slip cannot pin bytes the commit does not have."""
    out = git.out("diff-tree", "-r", "-z", "--raw", "--no-renames", old or git.empty_tree(), new)
    problems = []
    tokens = out.split(b"\0")
    for meta, raw in zip(tokens[0::2], tokens[1::2], strict=False):
        if not meta.startswith(b":"):
            continue
        fields = meta.decode().split()
        if fields[-1] == "D":
            continue
        annotated = raw.decode("utf-8", "replace").replace("/", "")
        try:
            pinned = parse_note(cat.read(fields[3]), annotated)
        except LockInvalid as exc:
            problems.append(exc.message)
            continue
        problem = _describes_its_commit(git, pinned, policy)
        if problem:
            problems.append(problem)
    return problems


def _describes_its_commit(git: Git, pinned: Lock, policy: Policy) -> str | None:
    commit = pinned.commit
    if git.resolve_commit(commit) != commit:
        return f"the note on {commit[:12]} annotates no commit of this repository"
    trees = root_trees(git, commit, pinned.roots)
    if trees != dict(pinned.trees):
        return f"the note on {commit[:12]} records root trees that commit does not have"
    parent = git.resolve_commit(f"{commit}^")
    previous = previous_lock(git, policy.notes_ref, parent) if parent else None
    _, files = build_manifest(git, commit, pinned.roots, policy.lock_exclude, previous, trees=trees)
    drift = compare(pinned.files, files)
    if drift:
        return (
            f"the note on {commit[:12]} does not match that commit's files: "
            f"{len(drift)} differ ({drift[0].describe()})"
        )
    return None


def pin_lookup(git: Git, cat: CatFile, notes_ref: str) -> Callable[[str], bool]:
    """``pin_exists(digest)``: is it the digest of a lock note on ``notes_ref``? Notes
    are hashed as they are (a valid note's bytes are its canonical form); validated
    ones answer from the cache without being read."""
    known: set[str] = set()
    pending: list[str] | None = None
    cache = LockCache(git)

    def exists(digest: str) -> bool:
        nonlocal pending
        if digest in known:
            return True
        if pending is None:
            pending = list(git.notes(notes_ref).values())
        while pending:
            blob = pending.pop()
            summary = cache.get(blob)
            got = (
                summary.digest
                if summary
                else "sha256:" + hashlib.sha256(cat.read(blob)).hexdigest()
            )
            known.add(got)
            if got == digest:
                return True
        return False

    return exists
