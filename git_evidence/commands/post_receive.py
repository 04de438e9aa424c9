"""``git evidence post-receive``: pin what each accepted push brought to a protected
branch: every first-parent commit whose lock-root trees differ from the pin before it,
and the new tip, so a tag or a branch made from a commit in the middle of
the push has a lock of its own in force.

A push that changes no lock root (the lock in force before it, its own note or the
nearest pin on the first-parent line, has the tip's root trees) writes nothing and
says nothing: the lock in force at its tip is that pin (``lock/walk.py``). A tip whose
nearest pin is too far back to be found by note path is pinned again, silently.

Refs cannot be written from pre-receive (git forbids it in quarantine), so the lock
for what a push brought to a protected branch is written here."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from git_evidence.core.errors import EXIT_ERROR, PREFIX, EvidenceError
from git_evidence.gate.ranges import parse_receive_lines
from git_evidence.gate.report import WIDTH, wrap
from git_evidence.lock import walk as lock_walk
from git_evidence.plumbing.context import judged_refs, server_aliases, server_view
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy.identity import server_pusher
from git_evidence.terminal import console

if TYPE_CHECKING:
    import argparse


def short_digest(digest: str) -> str:
    """``sha256:`` and 12 hex digits: enough to tell pins apart in a push report
    (`git evidence show-lock` prints the whole digest)."""
    kind, _, hexdigits = digest.partition(":")
    return f"{kind}:{hexdigits[:12]}" if hexdigits else digest[:19]


def run(args: argparse.Namespace) -> int:
    updates = parse_receive_lines(sys.stdin.buffer.read())
    git = Git()
    refs, symrefs = git.refs_and_symrefs()
    policy = resolve(git, refs=refs, server=True).policy
    who = server_pusher(os.environ)
    # A push through a symbolic ref moved the ref it names: pin that one.
    guarded = {*server_view(refs, policy).protected, policy.notes_ref}
    updates, _ = judged_refs(updates, server_aliases(git, refs, symrefs, updates), guarded)
    status = 0
    for update in updates:
        if update.is_delete or not policy.is_protected(update.ref):
            continue
        # The accepted range: old..new, or what no other protected ref holds yet.
        exclude = (
            [oid for r, oid in refs.items() if r != update.ref and policy.is_protected(r)]
            if update.is_create
            else [update.old]
        )
        try:
            roots, notes_ref = policy.lock_roots, policy.notes_ref
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
            command = f"git evidence lock {update.new[:12]} --push origin"
            _say(f"could not pin {update.ref} at {update.new[:12]}: {exc.message}")
            _say(f"To fix: a lock writer pins it by hand: {command}", first="  ", keep=command)
            status = EXIT_ERROR
            continue
        *earlier, (tip, written) = pinned
        inside = [lock.commit[:12] for lock, was_written in earlier if was_written]
        if inside:
            _say(
                f"pinned {len(inside)} earlier commit(s) of {update.ref} whose lock roots "
                f"changed: {', '.join(inside)}"
            )
        if skipped:
            command = "git evidence lock REV --push"
            _say(
                f"left {skipped} older commit(s) of {update.ref} whose lock roots changed "
                f"unpinned (at most {pinning.MAX_RANGE_PINS} pins a push); a lock writer "
                f"pins one when needed: {command}",
                keep=command,
            )
        if written and moved:  # a pin that only repeats the lock before it is not news
            _say(f"pinned {update.ref} at {update.new[:12]}: {short_digest(tip.digest)}")
    return status


def _say(text: str, first: str = f"{PREFIX}: ", keep: str = "") -> None:
    """A line of the push report, wrapped to fit 80 columns under `remote: ` (and
    GitLab's prefix, which it then carries)."""
    narrower = len(console.GITLAB_PREFIX) if console.gitlab() else 0
    lines = wrap(text, WIDTH - narrower, first=first, keep=keep)
    sys.stderr.write(console.for_pusher("".join(line + "\n" for line in lines)))
