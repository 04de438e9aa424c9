"""``git evidence lock [REV] [--push [REMOTE]]``: pin REV's fixture tree as a note (the
trusted side), and with ``--push`` publish it: take the remote's notes first (theirs win,
so no note on another commit is ever overwritten), pin, push the notes ref; when the
remote's notes moved meanwhile (its post-receive pinned a push), take them again and
retry."""

from __future__ import annotations

import argparse
import json
import sys

from git_evidence.core.errors import EXIT_REFUSE, EvidenceError, GitError
from git_evidence.core.oids import Oid
from git_evidence.lock import pinning
from git_evidence.lock.record import Lock
from git_evidence.lock.store import resolve_commit
from git_evidence.plumbing import notes
from git_evidence.plumbing.context import require_commit
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy.schema import Policy
from git_evidence.terminal.progress import Progress

RETRIES = 3
# Where the remote's notes land before they are merged into the local notes ref
# (`git notes merge` takes only refs under refs/notes/).
FETCHED = "refs/notes/git-evidence-fetched"


def run(args: argparse.Namespace) -> int:
    git = Git()
    rev = resolve_commit(git, args.rev) or require_commit(git, args.rev)
    policy = resolve(git, draft=args.policy).policy
    if args.push is not None:
        return _pin_and_push(git, args.push, rev, policy, args)
    pinned, written = _pin(git, rev, policy)
    _say(pinned, written, rev, policy, args)
    if written and args.format == "text":
        print(f"git-evidence: publish it: git evidence lock {rev[:12]} --push <remote>")
    return 0


def _pin(git: Git, rev: Oid, policy: Policy) -> tuple[Lock, bool]:
    ident = git.configured_ident()  # asked once: the notes commit is written as it too
    # "Name <email> 1700000000 +0000": who pins, without the time (pinned_at has it)
    pinned_by = ident.decode("utf-8", "replace").rsplit(" ", 2)[0] if ident else "unknown"
    # A working tree's files are read for the blobs they hold (a bare repository has none).
    checkout = git.toplevel()
    with Progress(f"locking {rev[:12]}") as progress:
        return pinning.pin(
            git,
            rev,
            policy.lock_roots,
            policy.lock_exclude,
            policy.notes_ref,
            pinned_by,
            lambda done, total: progress(f"hashed {done}/{total} blobs"),
            checkout or None,
        )


def _say(
    pinned: Lock,
    written: bool,
    rev: Oid,
    policy: Policy,
    args: argparse.Namespace,
    published: dict[str, str] | None = None,
) -> None:
    warnings = empty_lock_warnings(pinned)
    if args.format == "json":
        doc = {
            "rev": rev,
            "digest": pinned.digest,
            "written": written,
            "notes_ref": policy.notes_ref,
            "roots": _root_counts(pinned),
            "files": len(pinned.files),
            "published": published,
            "policy": {"source": policy.source, "digest": policy.digest},
            "warnings": warnings,
        }
        print(json.dumps(doc, indent=1))
        return
    for warning in warnings:
        print(f"git-evidence: warning: {warning}", file=sys.stderr)
    if policy.origin == "draft":
        print(f"git-evidence: lock roots and notes ref from the {policy.source}", file=sys.stderr)
    state = "pinned" if written else "already pinned, unchanged"
    print(
        f"{pinned.digest}\t{state}: {rev[:12]} ({len(pinned.files)} files under "
        f"{', '.join(pinned.roots)}) in {policy.notes_ref}"
    )
    if args.verbose:
        for root, count in _root_counts(pinned).items():
            print(f"root {root}: tree {pinned.trees[root] or '(missing)'}, {count} files")
    if published is not None:
        print(
            f"git-evidence: {policy.notes_ref} is published on {published['remote']} "
            f"({published['summary']})"
        )


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


def _root_counts(pinned: Lock) -> dict[str, int]:
    return {
        root: sum(1 for p in pinned.files if p == root or p.startswith(root + "/"))
        for root in pinned.roots
    }


def _pin_and_push(git: Git, remote: str, rev: Oid, policy: Policy, args: argparse.Namespace) -> int:
    ref = policy.notes_ref
    for attempt in range(RETRIES + 1):
        _take_remote_notes(git, remote, ref)
        pinned, written = _pin(git, rev, policy)
        pushed = git.push(remote, f"{ref}:{ref}")
        flag, summary = _status(pushed.stdout.decode("utf-8", "replace"), ref)
        said = pushed.stderr.decode("utf-8", "replace")
        if pushed.returncode == 0 and flag != "!":
            published = {"remote": remote, "summary": summary.strip("[]")}
            _say(pinned, written, rev, policy, args, published)
            return 0
        if flag == "!" and "hook declined" in summary:
            sys.stderr.write(said)
            _refused(remote, ref, said, args.format)
            return EXIT_REFUSE
        if flag == "!" and attempt < RETRIES:
            # `[rejected] (fetch first)`: the remote's notes moved since they were
            # fetched; `[remote rejected] (failed to update ref)`: they moved while
            # this push was under way. Either way: take them again, pin again, push.
            print(
                f"git-evidence: {remote}'s {ref} moved meanwhile {summary}; fetching it "
                f"again (retry {attempt + 1} of {RETRIES})",
                file=sys.stderr,
            )
            continue
        if flag != "!":
            raise GitError(list(pushed.args), pushed.returncode, pushed.stdout, pushed.stderr)
    raise EvidenceError(
        f"{remote}'s {ref} kept moving: the pin was not published after {RETRIES} retries",
        fix=f"run it again: git evidence lock {rev[:12]} --push {remote}",
    )


def _take_remote_notes(git: Git, remote: str, ref: str) -> None:
    """Merge the remote's notes into the local notes ref, theirs winning where both
    annotate one commit: what is pushed afterwards then fast-forwards the remote's."""
    if not git.fetch_ref(remote, ref, FETCHED):
        return  # the remote has no notes yet
    try:
        notes.merge_notes(git, ref, FETCHED)
    finally:
        git.delete_ref(FETCHED)


def _status(porcelain: str, ref: str) -> tuple[str, str]:
    """``(flag, summary)`` of ``ref``'s line in ``git push --porcelain`` output:
    ``<flag> TAB <from>:<to> TAB <summary>``."""
    for line in porcelain.splitlines():
        fields = line.split("\t")
        if len(fields) >= 3 and fields[1].endswith(f":{ref}"):
            return fields[0], fields[2]
    return "", ""


def _refused(remote: str, ref: str, said: str, fmt: str) -> None:
    if "notes-forge" in said:
        why = (
            f"{remote} refused {ref}: the identity you push as is not one of its lock "
            "writers ([identities].lock_writers in the policy of its base branch)"
        )
        fix = "ask a lock writer to pin it (git evidence lock REV --push), or CI's lock job"
    else:
        why = f"{remote} refused {ref}: see its findings above"
        fix = "fix what the findings name, then run git evidence lock REV --push again"
    if fmt == "json":
        doc = {"published": None, "refused": {"remote": remote, "message": why, "hint": fix}}
        print(json.dumps(doc, indent=1))
        return
    print(f"git-evidence: {why}\n  To fix: {fix}", file=sys.stderr)
