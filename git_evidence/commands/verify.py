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
from git_evidence.commands.check import judge_range, policy_and_base
from git_evidence.context import require_commit
from git_evidence.errors import EXIT_ALLOW, EXIT_REFUSE, PREFIX, GitError
from git_evidence.git import Git
from git_evidence.identity import client_identity
from git_evidence.lock import LockInvalid
from git_evidence.manifest import LFS_MAX, Drift, Entry, Excluder, lfs_pointer
from git_evidence.paths import GITLINK_MODE
from git_evidence.report import show_path, to_json, to_text


def run(args: argparse.Namespace) -> int:
    git = Git()
    refs = git.refs()
    rev = require_commit(git, args.rev)
    policy, base = policy_and_base(git, refs, args.base)

    found = lock.find_lock(git, policy.notes_ref, rev)
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
            and manifest.root_trees(git, rev, list(summary.trees)) == summary.trees
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
                    _, actual = manifest.build_manifest(
                        git, rev, pinned.roots, policy.lock_exclude, pinned
                    )
                drift = manifest.compare(pinned.files, actual)

    who = client_identity(git.config_bool("evidence.trusted"))
    label = f"{base[:12]}..{rev[:12]}" if base else rev[:12]
    checked = judge_range(git, refs, policy, who, base, rev, label)
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
        what = "the working tree" if args.worktree else rev[:12]
        reasons = [
            "no lock to compare with" if summary is None else "",
            f"{what} differs from the lock in {len(drift)} file(s)" if drift else "",
            "the base no longer matches its lock (lock-stale)" if stale else "",
            "the range is not allowed" if checked.exit_code != EXIT_ALLOW else "",
        ]
        # The last line says what the exit status says.
        if ok:
            print(f"{PREFIX}: verified: {what} matches its lock and the range is allowed")
        else:
            print(f"{PREFIX}: not verified: {'; '.join(r for r in reasons if r)}")
    return EXIT_ALLOW if ok else EXIT_REFUSE


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
    their text is hashed.

    A file is compared as git would check it in (SPEC §10 Lock): `git hash-object`
    applies the conversions its attributes ask for (`eol`, `text`, filters), so a
    checkout whose `.gitattributes` turns LF into CRLF matches its lock, and one git
    process hashes them all. A file whose lock entry is an LFS pointer also matches when
    its bytes are the object the pointer names (git-lfs has smudged it)."""
    excluded = Excluder(exclude)
    files: dict[str, Entry] = {}
    regular: dict[str, int] = {}  # path → st_mode of each regular file
    for root in roots:
        start = os.path.join(top, root)
        if os.path.islink(start) or os.path.isfile(start):
            _add_file(files, regular, top, root, excluded)
            continue
        for directory, subdirs, names in os.walk(start):
            rel_dir = os.path.relpath(directory, top).replace(os.sep, "/")
            for sub in list(subdirs):
                path = f"{rel_dir}/{sub}"
                full = os.path.join(directory, sub)
                if os.path.islink(full):
                    subdirs.remove(sub)
                    _add_file(files, regular, top, path, excluded)
                elif os.path.exists(os.path.join(full, ".git")):
                    subdirs.remove(sub)  # a submodule: recorded by its commit
                    head = Git(cwd=full).resolve_commit("HEAD")
                    if head and not excluded(path):
                        files[path] = Entry(GITLINK_MODE, head)
            for name in names:
                _add_file(files, regular, top, f"{rel_dir}/{name}", excluded)
    blobs = checked_in_blobs(Git(cwd=top), list(regular))
    for path, st_mode in regular.items():
        mode = "100755" if st_mode & stat.S_IXUSR else "100644"
        entry = locked.get(path)
        if entry is not None and entry.blob == blobs[path]:
            files[path] = entry._replace(mode=mode)  # the locked bytes, as git stores them
            continue
        files[path] = _hash_file(top, path, mode, blobs[path])
        pointer = entry
        if (
            pointer is not None
            and pointer.lfs is not None
            and files[path].lfs is None
            and pointer.lfs == f"sha256:{files[path].sha256} {files[path].size}"
        ):
            files[path] = pointer._replace(mode=mode)
    return dict(sorted(files.items()))


def checked_in_blobs(git: Git, paths: list[str]) -> dict[str, str]:
    """The blob id git would store for each file (relative to ``git``'s directory, the
    top of the working tree) after the clean conversions its attributes ask for: one
    `git hash-object --stdin-paths`. Every path is quoted the way git unquotes it, so
    any byte in a name is safe. `core.safecrlf` is off: a file whose endings do not
    round-trip is a difference to report, not an error."""
    if not paths:
        return {}
    data = b"".join(_c_quote(os.fsencode(p)) + b"\n" for p in paths)
    out = git.out("-c", "core.safecrlf=false", "hash-object", "--stdin-paths", input=data)
    oids = out.decode().split()
    if len(oids) != len(paths):
        raise GitError(
            ["git", "hash-object", "--stdin-paths"], 128, out, b"one blob id per path expected"
        )
    return dict(zip(paths, oids, strict=True))


def _c_quote(raw: bytes) -> bytes:
    """A path as a C-style quoted string (git's `unquote_c_style` reads it back)."""
    out = bytearray(b'"')
    for byte in raw:
        if byte in b'"\\':
            out += b"\\" + bytes([byte])
        elif byte < 0x20 or byte >= 0x7F:
            out += b"\\%03o" % byte
        else:
            out.append(byte)
    out += b'"'
    return bytes(out)


def _add_file(
    files: dict[str, Entry], regular: dict[str, int], top: str, path: str, excluded: Excluder
) -> None:
    """Record a link by its text; note a regular file, hashed later with all others."""
    if excluded(path):
        return
    full = os.path.join(top, path)
    info = os.lstat(full)
    if stat.S_ISLNK(info.st_mode):
        data = os.fsencode(os.readlink(full))
        files[path] = Entry("120000", "", len(data), hashlib.sha256(data).hexdigest())
    elif stat.S_ISREG(info.st_mode):
        regular[path] = info.st_mode


def _hash_file(top: str, path: str, mode: str, blob: str) -> Entry:
    """A file that differs from its lock entry (or has none): its bytes on disk, for
    the drift report."""
    digest = hashlib.sha256()
    size = 0
    lfs = None
    with open(os.path.join(top, path), "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            if size == 0 and len(chunk) <= LFS_MAX:
                lfs = lfs_pointer(chunk)
            digest.update(chunk)
            size += len(chunk)
    if size > LFS_MAX:
        lfs = None
    return Entry(mode, blob, size, digest.hexdigest(), lfs)
