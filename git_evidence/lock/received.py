"""Pinning what each accepted push brought to a protected branch (post-receive): every
first-parent commit whose lock-root trees differ from the pin before it, and the new
tip, so a tag or a branch made from a commit in the middle of the push has a lock of
its own in force.

A push that changes no lock root (the lock in force before it, its own note or the
nearest pin on the first-parent line, has the tip's root trees) writes nothing and
says nothing: the lock in force at its tip is that pin (``walk.py``). Refs cannot be
written from pre-receive (git forbids it in quarantine), so the lock is written here.
``pin_received`` yields what it did ref by ref; ``commands/post_receive.py`` says it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

from git_evidence.core.errors import EvidenceError
from git_evidence.core.facts import RefUpdate
from git_evidence.lock import walk as lock_walk
from git_evidence.plumbing.context import server_push
from git_evidence.plumbing.git import Git
from git_evidence.policy.identity import Identity


class RefPinned(NamedTuple):
    ref: str
    new: str
    earlier: tuple[str, ...]  # earlier commits of the push pinned, abbreviated
    skipped: int  # older commits whose roots changed, left unpinned (too many)
    digest: str | None  # the tip's new pin, when it is news (written, and moved)


class NotPinned(NamedTuple):
    ref: str
    new: str
    message: str


def pin_received(
    git: Git, updates: Sequence[RefUpdate], who: Identity
) -> Iterator[RefPinned | NotPinned]:
    """Pin each update of a protected branch in ``updates`` (a push through a symbolic
    ref pins the ref it names) by the server's policy; one that could not be pinned is
    ``NotPinned`` and the others still are."""
    push = server_push(git, updates)
    refs, policy = push.refs, push.policy
    roots, notes_ref = policy.lock_roots, policy.notes_ref
    for update in push.updates:
        if update.is_delete or not policy.is_protected(update.ref):
            continue
        # The accepted range: old..new, or what no other protected ref holds yet.
        exclude = (
            [oid for r, oid in refs.items() if r != update.ref and policy.is_protected(r)]
            if update.is_create
            else [update.old]
        )
        try:
            walk = lock_walk.first_parent_walk(git, update.new, exclude, roots, notes_ref)
            if lock_walk.unmoved(git, walk, roots, notes_ref):
                continue  # the lock in force before the push is the tip's: nothing to say
            from git_evidence.lock import pinning  # hashes and writes: only for a pin

            pinned, skipped, moved = pinning.pin_range(
                git,
                update.new,  # peeled by the walk
                exclude,
                roots,
                policy.lock_exclude,
                notes_ref,
                f"post-receive (push by {who.describe()})",
                walk,
            )
        except EvidenceError as exc:
            yield NotPinned(update.ref, update.new, exc.message)
            continue
        *earlier, (tip, written) = pinned
        inside = tuple(lock.commit[:12] for lock, was_written in earlier if was_written)
        digest = tip.digest if written and moved else None
        yield RefPinned(update.ref, update.new, inside, skipped, digest)
