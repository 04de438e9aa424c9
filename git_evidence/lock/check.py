"""The lock in a judgement: what the lock in force says about a ref update, whether
a pushed note describes its commit, and which pin digests exist."""

from __future__ import annotations

from collections.abc import Callable

from git_evidence.core.facts import Drift, LockFacts, LockRef
from git_evidence.core.oids import Oid
from git_evidence.lock.record import Lock, LockInvalid, parse_note, pin_digest
from git_evidence.lock.store import (
    LONG,
    LockCache,
    first_parent_line,
    lock_in_force,
    own_notes,
    previous_lock,
    read_lock,
)
from git_evidence.lock.walk import tree_ids
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.git import Git
from git_evidence.policy.schema import Policy


def lock_facts(
    git: Git, cat: CatFile, policy: Policy, base: Oid | None, new: Oid, notes_known: bool
) -> LockFacts:
    """What ``new`` changes under the lock roots against ``base``'s own manifest (the
    base is accepted history: a commit that no pin covers yet, one in the middle of a
    push being pinned right now, is still the reference), and whether the lock in
    force at ``base`` is valid and still matches it.

    The common case is one ``cat-file --batch-check`` (and, when the base has no note
    of its own, the nearest pin looked up by note path: post-receive pins a tip only
    when a lock root changed) and no blob read: equal root trees at ``base`` and
    ``new`` mean no breach, and a pin already validated (LockCache) whose root trees
    equal the base's means the lock is in force and current. Otherwise the note is
    read, and blobs only where root trees differ."""
    if base is None:
        return LockFacts()
    # The manifest builder (and its hashing) is loaded only where root trees differ:
    # a push that leaves them as they were starts without it.
    # No notes ref yet (a new server, a clone that fetched none) still has a base whose
    # own manifest is the reference: the breach is computed all the same.
    roots, exclude = policy.lock_roots, policy.lock_exclude
    cache = LockCache(git)
    at = [f"{rev}:{root}" for rev in (base, new) for root in roots]
    notes, hits = own_notes(git, policy.notes_ref, [base], *at)
    base_trees = tree_ids(roots, hits[: len(roots)])
    new_trees = tree_ids(roots, hits[len(roots) :])

    if notes.get(base) is None and notes_known and new != base:
        # The lock in force is further down the first-parent line: list it from the
        # tip once, so that the walk a push's post-receive question makes reads the
        # same listing.
        first_parent_line(git, new, LONG)
    found = lock_in_force(git, policy.notes_ref, base, notes.get(base), any_notes=notes_known)
    summary = cache.get(found.blob) if found is not None else None
    lock: Lock | None = None
    invalid: str | None = None
    digest: str | None = None
    breach: list[Drift] | None = None
    stale: list[Drift] | None = None
    if found is not None and (summary is None or summary.commit != found.commit):
        try:
            lock = read_lock(git, found, cache, cat.read(found.blob))
            summary = lock.summary()
        except LockInvalid as exc:
            invalid, summary = exc.message, None
    if found is not None and summary is not None:
        digest = summary.digest
        lock_roots = list(summary.trees)  # a note lists them sorted
        at_lock_roots = (
            base_trees
            if sorted(lock_roots) == sorted(roots)
            else _root_trees(git, base, lock_roots)
        )
        # Files of the note under none of its roots are missing from a base with those
        # very trees: compared in full like a changed tree.
        if at_lock_roots != summary.trees or summary.outside:
            from git_evidence.lock import manifest

            lock = lock or read_lock(git, found, cache, cat.read(found.blob))
            _, base_files = manifest.build_manifest(
                git, base, lock.roots, exclude, lock, trees=at_lock_roots
            )
            stale = manifest.compare(lock.files, base_files)
    if new_trees != base_trees:
        from git_evidence.lock import manifest

        if lock is None and found is not None and summary is not None:
            lock = read_lock(git, found, cache, cat.read(found.blob))  # its hashes are reused
        if lock is None:  # no hashes to build on: hash only the blobs that differ
            breach = manifest.drift_between(git, base, new, roots, exclude, (base_trees, new_trees))
            return LockFacts(found, invalid, breach, stale, digest)
        _, base_files = manifest.build_manifest(git, base, roots, exclude, lock, trees=base_trees)
        # Built on the base's own manifest: only what differs from it is listed and read
        # (with no lock fetched, every blob was read twice before).
        _, new_files = manifest.build_manifest(
            git, new, roots, exclude, manifest.Listed(base_trees, base_files), trees=new_trees
        )
        breach = manifest.compare(base_files, new_files)
    return LockFacts(found, invalid, breach, stale, digest)


def _root_trees(git: Git, rev: str, roots: list[str]) -> dict[str, str | None]:
    from git_evidence.lock import manifest

    return manifest.root_trees(git, rev, roots)


def check_notes_update(
    git: Git, cat: CatFile, old: str | None, new: str, policy: Policy
) -> list[str]:
    """Problems with the notes an update of the notes ref adds or changes: each must be
    one canonical lock record, and must describe the commit it is attached to (its root
    trees, and its files: blobs the lock in force at the parent has not vouched for are
    hashed), so a lock writer's slip cannot pin bytes the commit does not have."""
    problems = []
    for status, _, blob, path in git.changed_files(old or git.empty_tree(), new):
        if status == "D":
            continue
        # the annotated object's id, as the notes tree names it (fanned out in directories)
        annotated = Oid(path.replace("/", ""))
        try:
            pinned = parse_note(cat.read(blob), annotated)
        except LockInvalid as exc:
            problems.append(exc.message)
            continue
        problem = _describes_its_commit(git, pinned, policy)
        if problem:
            problems.append(problem)
    return problems


def _describes_its_commit(git: Git, pinned: Lock, policy: Policy) -> str | None:
    from git_evidence.lock import manifest

    commit = pinned.commit
    if git.resolve_commit(commit) != commit:
        return f"the note on {commit[:12]} annotates no commit of this repository"
    trees = manifest.root_trees(git, commit, pinned.roots)
    if trees != dict(pinned.trees):
        return f"the note on {commit[:12]} records root trees that commit does not have"
    previous = previous_lock(git, policy.notes_ref, f"{commit}^")  # None for a root
    _, files = manifest.build_manifest(
        git, commit, pinned.roots, policy.lock_exclude, previous, trees=trees
    )
    drift = manifest.compare(pinned.files, files)
    if drift:
        return (
            f"the note on {commit[:12]} does not match that commit's files: "
            f"{len(drift)} differ ({drift[0].describe()})"
        )
    return None


def pin_lookup(git: Git, cat: CatFile, notes_ref: str) -> Callable[[str], bool]:
    """``pin_exists(digest)``: is it the pin digest of a valid lock note on
    ``notes_ref``? A valid note is its record's canonical bytes, so its raw bytes hash
    to its digest (``pin_digest``): a note is read in full only when its bytes hash to
    the digest asked for, and counts only if it is valid. Validated notes answer from
    the cache unread."""
    valid: set[str] = set()
    unchecked: dict[str, list[LockRef]] = {}  # raw digest → notes not validated yet
    pending: list[tuple[Oid, Oid]] | None = None
    cache = LockCache(git)

    def validates(digest: str) -> bool:
        for found in unchecked.pop(digest, []):
            try:
                read_lock(git, found, cache)
            except LockInvalid:
                continue
            valid.add(digest)
            return True
        return False

    def exists(digest: str) -> bool:
        nonlocal pending
        if digest in valid or validates(digest):
            return True
        if pending is None:
            pending = list(git.notes(notes_ref).items())
        while pending:
            commit, blob = pending.pop()
            summary = cache.get(blob)
            if summary is not None and summary.commit == commit:
                valid.add(summary.digest)
            else:
                raw = pin_digest(cat.read(blob))
                unchecked.setdefault(raw, []).append(LockRef(commit, blob))
            if digest in valid or validates(digest):
                return True
        return False

    return exists
