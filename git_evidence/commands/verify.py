"""``git evidence verify [REV] [--worktree]``: the reviewer's command.

Compares REV's manifest (or the files on disk, untracked and ignored ones included)
with the lock in force, then runs ``check`` on the range from the protected base.
Exit 0 only when everything matches and the range is allowed."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import stat
from collections.abc import Mapping
from typing import Any

from git_evidence import lock, manifest
from git_evidence.commands.freeze import freeze_notes
from git_evidence.context import policy_at, require_commit
from git_evidence.errors import EXIT_ALLOW, EXIT_REFUSE
from git_evidence.git import Git
from git_evidence.identity import client_identity
from git_evidence.lock import LockInvalid
from git_evidence.manifest import LFS_MAX, Drift, Entry, Excluder, lfs_pointer
from git_evidence.paths import GITLINK_MODE
from git_evidence.report import Report, show_path, to_json, to_text


def run(args: argparse.Namespace) -> int:
    git = Git()
    rev = lock.resolve_commit(git, args.rev) or require_commit(git, args.rev)
    refs: dict[str, str] | None = None
    base: str | None
    if args.base:  # the policy is read there: no refs to list unless a range is judged
        base = require_commit(git, args.base)
        policy = policy_at(git, base)
    else:
        from git_evidence.commands.check import policy_and_base

        refs = git.refs()
        policy, base = policy_and_base(git, refs, None)

    # One batch-check: REV's own note, whether there are notes at all, REV's roots.
    spots = lock.note_paths(policy.notes_ref, rev)
    roots = list(policy.lock_roots)
    hits = git.batch_check([*spots, policy.notes_ref, *(f"{rev}:{root}" for root in roots)])
    own = lock.own_note(hits[: len(spots)])
    found = lock.lock_in_force(git, policy.notes_ref, rev, own, hits[len(spots)] is not None)
    rev_trees = manifest.tree_ids(roots, hits[len(spots) + 1 :])
    summary: lock.CachedLock | None = None
    problem = None
    drift: list[Drift] = []
    if found is None:
        problem = (
            f"no lock in force at {rev[:12]}: fetch the locks (git fetch origin "
            f"{policy.notes_ref}:{policy.notes_ref}) or have a lock writer pin one"
        )
    else:
        cache = lock.LockCache(git)
        summary = cache.get(found.blob)
        # A note validated before, whose root trees equal REV's: nothing to read.
        fast = (
            summary is not None
            and not args.worktree
            and summary.commit == found.commit
            and _trees_at(git, rev, list(summary.trees), rev_trees) == summary.trees
        )
        if not fast:
            try:
                pinned = lock.read_lock(git, found, cache)
            except LockInvalid as exc:
                problem, summary = exc.message, None
            else:
                summary = pinned.summary()
                if args.worktree:
                    top = git.text("rev-parse", "--show-toplevel")
                    actual = worktree_manifest(
                        git, top, pinned.roots, policy.lock_exclude, pinned.files
                    )
                else:
                    trees = _trees_at(git, rev, list(pinned.roots), rev_trees)
                    _, actual = manifest.build_manifest(
                        git, rev, pinned.roots, policy.lock_exclude, pinned, trees=trees
                    )
                drift = manifest.compare(pinned.files, actual)

    who = client_identity(git.config_bool("evidence.trusted"))
    label = f"{base[:12]}..{rev[:12]}" if base else rev[:12]
    if rev == base:
        # An empty range: nothing to judge. What the gate would say about the base (a
        # lock that is stale, invalid or missing there) is what was compared above.
        checked = Report(who, policy, notes=[f"{label}: nothing to judge ({rev[:12]} is the base)"])
        checked.notes += freeze_notes(git, policy, rev, base)
    else:
        # The judging machinery is imported only when there is a range to judge.
        from git_evidence.commands.check import judge_range

        checked = judge_range(
            git, refs if refs is not None else git.refs(), policy, who, base, rev, label
        )
    # A stale lock holds no push unless the policy says so, but verify is the place
    # that says whether bytes match their pin: it fails on it.
    stale = any(f.rule == "lock-stale" for v in checked.verdicts for f in v.findings)
    ok = summary is not None and not drift and not stale and checked.exit_code == EXIT_ALLOW
    if args.format == "json":
        print(
            json.dumps(
                {
                    "rev": rev,
                    "worktree": args.worktree,
                    "matches": ok,
                    "lock": None
                    if summary is None or found is None
                    else {
                        "commit": found.commit,
                        "note": found.blob,
                        "notes_ref": policy.notes_ref,
                        "digest": summary.digest,
                        "pinned_by": summary.pinned_by,
                        "pinned_at": summary.pinned_at,
                        "files": summary.files,
                    },
                    "lock_error": problem,
                    "drift": [_drift_json(d) for d in drift],
                    "check": json.loads(to_json(checked)),
                },
                indent=1,
            )
        )
    else:
        _print_text(rev, args.worktree, found, summary, problem, drift)
        print(to_text(checked), end="")
    return EXIT_ALLOW if ok else EXIT_REFUSE


def _trees_at(
    git: Git, rev: str, roots: list[str], known: Mapping[str, str | None]
) -> dict[str, str | None]:
    """``rev``'s tree for each of ``roots``, from ``known`` when it has them all."""
    if all(root in known for root in roots):
        return {root: known[root] for root in roots}
    return manifest.root_trees(git, rev, roots)


def _print_text(
    rev: str,
    worktree: bool,
    found: lock.LockRef | None,
    pinned: lock.CachedLock | None,
    problem: str | None,
    drift: list[Drift],
) -> None:
    if pinned is None or found is None:
        print(f"lock: {problem}")
        return
    print(
        f"lock: {pinned.digest} pinned on {found.commit[:12]} by {pinned.pinned_by} "
        f"at {pinned.pinned_at}"
    )
    what = "the working tree" if worktree else rev[:12]
    if not drift:
        print(f"lock: {what} matches it ({pinned.files} files)")
        return
    print(f"lock: {what} differs from it in {len(drift)} file(s):")
    for item in drift:
        print(f"  {item.kind}: {show_path(item.describe())}")
    print(
        "  To fix: restore the locked bytes, or have an evidence writer commit the "
        "change and a lock writer pin it (git evidence lock)"
    )


def _drift_json(item: Drift) -> dict[str, Any]:
    def side(entry: Entry | None) -> dict[str, Any] | None:
        if entry is None:
            return None
        return {"mode": entry.mode, "digest": entry.digest, "size": entry.size, "lfs": entry.lfs}

    return {"path": item.path, "kind": item.kind, "old": side(item.old), "new": side(item.new)}


def worktree_manifest(
    git: Git,
    top: str,
    roots: tuple[str, ...],
    exclude: tuple[str, ...],
    locked: Mapping[str, Entry],
) -> dict[str, Entry]:
    """The files on disk under the roots, as the lock records them: every file,
    tracked or not, ignored or not, except the excluded globs. Links are not followed:
    their text is hashed. A file whose lock entry is an LFS pointer matches when its
    bytes are the object the pointer names (git-lfs has smudged it)."""
    excluded = Excluder(exclude)
    files: dict[str, Entry] = {}
    for root in roots:
        start = os.path.join(top, root)
        if os.path.islink(start) or os.path.isfile(start):
            _add_file(files, top, root, excluded)
            continue
        for directory, subdirs, names in os.walk(start):
            rel_dir = os.path.relpath(directory, top).replace(os.sep, "/")
            for sub in list(subdirs):
                path = f"{rel_dir}/{sub}"
                full = os.path.join(directory, sub)
                if os.path.islink(full):
                    subdirs.remove(sub)
                    _add_file(files, top, path, excluded)
                elif os.path.exists(os.path.join(full, ".git")):
                    subdirs.remove(sub)  # a submodule: recorded by its commit
                    head = Git(cwd=full).resolve_commit("HEAD")
                    if head and not excluded(path):
                        files[path] = Entry(GITLINK_MODE, head)
            for name in names:
                _add_file(files, top, f"{rel_dir}/{name}", excluded)
    for path, entry in files.items():
        pointer = locked.get(path)
        if (
            pointer is not None
            and pointer.lfs is not None
            and entry.lfs is None
            and pointer.lfs == f"sha256:{entry.sha256} {entry.size}"
        ):
            files[path] = pointer
    return dict(sorted(files.items()))


def _add_file(files: dict[str, Entry], top: str, path: str, excluded: Excluder) -> None:
    if excluded(path):
        return
    full = os.path.join(top, path)
    info = os.lstat(full)
    if stat.S_ISLNK(info.st_mode):
        data = os.fsencode(os.readlink(full))
        files[path] = Entry("120000", "", len(data), hashlib.sha256(data).hexdigest())
        return
    if not stat.S_ISREG(info.st_mode):
        return
    digest = hashlib.sha256()
    with open(full, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
    lfs = None
    if info.st_size <= LFS_MAX:
        with open(full, "rb") as handle:
            lfs = lfs_pointer(handle.read())
    files[path] = Entry(mode, "", info.st_size, digest.hexdigest(), lfs)
