"""``git evidence lock``'s work: pin one revision's lock roots as the person running
it, and with a remote publish the pin. Publishing takes the remote's notes first
(theirs win, so no note on another commit is ever overwritten), pins, pushes the notes
ref; when the remote's notes moved meanwhile (its post-receive pinned a push), it
takes them again and retries."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from git_evidence.core.errors import EvidenceError, GitError
from git_evidence.core.oids import Oid
from git_evidence.lock import pinning
from git_evidence.lock.record import Lock
from git_evidence.plumbing import notes
from git_evidence.plumbing.git import Git
from git_evidence.policy.schema import Policy

RETRIES = 3
# Where the remote's notes land before they are merged into the local notes ref
# (`git notes merge` takes only refs under refs/notes/).
FETCHED = "refs/notes/git-evidence-fetched"

HashProgress = Callable[[int, int], None]  # blobs hashed, of how many


class Pinned(NamedTuple):
    lock: Lock
    written: bool  # False: the commit's own note was this lock already


class Published(NamedTuple):
    pinned: Pinned
    remote: str
    summary: str  # what git push said of the notes ref, e.g. "new reference"


class Refused(NamedTuple):
    """The remote's hook declined the notes: ``said`` is what it printed;
    ``by_identity``: its notes check named the pusher (not a lock writer)."""

    remote: str
    ref: str
    said: str
    by_identity: bool


def pin_here(git: Git, rev: Oid, policy: Policy, progress: HashProgress | None = None) -> Pinned:
    """Pin ``rev``'s lock roots in the policy's notes ref, as the configured identity;
    a work tree's files are read for the blobs they already hold."""
    ident = git.configured_ident()  # asked once: the notes commit is written as it too
    # "Name <email> 1700000000 +0000": who pins, without the time (pinned_at has it)
    pinned_by = ident.decode("utf-8", "replace").rsplit(" ", 2)[0] if ident else "unknown"
    checkout = git.toplevel()  # None in a bare repository: no files to reuse
    lock, written = pinning.pin(
        git,
        rev,
        policy.lock_roots,
        policy.lock_exclude,
        policy.notes_ref,
        pinned_by,
        progress,
        checkout or None,
    )
    return Pinned(lock, written)


def publish(
    git: Git,
    remote: str,
    rev: Oid,
    policy: Policy,
    progress: HashProgress | None = None,
    moved: Callable[[str], None] = lambda said: None,
) -> Published | Refused:
    """Pin ``rev`` and push the notes ref to ``remote``, retrying while the remote's
    notes move under it (``moved`` is told each time why); a refusal by the remote's
    hook is returned, any other failure of the push raised."""
    ref = policy.notes_ref
    for attempt in range(RETRIES + 1):
        take_remote_notes(git, remote, ref)
        pinned = pin_here(git, rev, policy, progress)
        pushed = git.push(remote, f"{ref}:{ref}")
        flag, summary = push_status(pushed.stdout.decode("utf-8", "replace"), ref)
        said = pushed.stderr.decode("utf-8", "replace")
        if pushed.returncode == 0 and flag != "!":
            return Published(pinned, remote, summary.strip("[]"))
        if flag == "!" and "hook declined" in summary:
            return Refused(remote, ref, said, "notes-forge" in said)
        if flag == "!" and attempt < RETRIES:
            # `[rejected] (fetch first)`: the remote's notes moved since they were
            # fetched; `[remote rejected] (failed to update ref)`: they moved while
            # this push was under way. Either way: take them again, pin again, push.
            moved(
                f"{remote}'s {ref} moved meanwhile {summary}; fetching it again "
                f"(retry {attempt + 1} of {RETRIES})"
            )
            continue
        if flag != "!":
            raise GitError(list(pushed.args), pushed.returncode, pushed.stdout, pushed.stderr)
    raise EvidenceError(
        f"{remote}'s {ref} kept moving: the pin was not published after {RETRIES} retries",
        fix=f"run it again: git evidence lock {rev[:12]} --push {remote}",
    )


def take_remote_notes(git: Git, remote: str, ref: str) -> None:
    """Merge the remote's notes into the local notes ref, theirs winning where both
    annotate one commit: what is pushed afterwards then fast-forwards the remote's."""
    if not git.fetch_ref(remote, ref, FETCHED):
        return  # the remote has no notes yet
    try:
        notes.merge_notes(git, ref, FETCHED)
    finally:
        git.delete_ref(FETCHED)


def push_status(porcelain: str, ref: str) -> tuple[str, str]:
    """``(flag, summary)`` of ``ref``'s line in ``git push --porcelain`` output:
    ``<flag> TAB <from>:<to> TAB <summary>``."""
    for line in porcelain.splitlines():
        fields = line.split("\t")
        if len(fields) >= 3 and fields[1].endswith(f":{ref}"):
            return fields[0], fields[2]
    return "", ""


def empty_lock_warnings(pinned: Lock) -> list[str]:
    """What a lock that pins nothing, or misses a root, should tell its writer: a
    policy whose [lock].roots name no directory of the tree locks no byte."""
    roots = ", ".join(pinned.roots) or "none"
    missing = [root for root in pinned.roots if not pinned.trees.get(root)]
    fix = "set [lock].roots in the policy to the directories the tests read (try it first "
    fix += "with --policy FILE)"
    if not pinned.files:
        return [f"the lock pins no file: nothing is under its roots ({roots}); {fix}"]
    if missing:
        return [f"lock root(s) {', '.join(missing)} do not exist at this commit; {fix}"]
    return []


def root_counts(pinned: Lock) -> dict[str, int]:
    """How many files the lock pins under each of its roots."""
    return {
        root: sum(1 for p in pinned.files if p == root or p.startswith(root + "/"))
        for root in pinned.roots
    }
