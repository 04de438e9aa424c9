"""Writing notes: the note blobs stored by one ``hash-object``, every note of a write
in one notes commit by ``git fast-import`` on top of the tip that was read (never over
another writer's), and another notes ref merged in. The lock's pins and the judge's
verdicts are written here.

Apart from git.py, which reads: these are the only writes to a notes ref, each with
what it does when another writer moved the ref meanwhile."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from typing import cast

from git_evidence.core.errors import GitError
from git_evidence.core.oids import Oid
from git_evidence.plumbing.git import Git


def write_blobs(git: Git, contents: Sequence[bytes]) -> list[Oid]:
    """Store each of ``contents`` as a blob, byte for byte; their ids. One
    ``hash-object -w`` writes them loose, each deflated once at the loose level (a
    2 MB note through fast-import was deltified against the last note, deflated,
    then inflated and deflated again by ``unpack-objects``: 4x slower)."""
    import tempfile  # only a pin needs it: the hooks start without it

    with tempfile.TemporaryDirectory(prefix="git-evidence-") as tmp:
        names = []
        for number, data in enumerate(contents):
            name = os.path.join(tmp, str(number))
            with open(name, "wb") as handle:
                handle.write(data)
            names.append(name)
        query = "".join(f"{name}\n" for name in names).encode("utf-8", "surrogateescape")
        out = git.out("hash-object", "-w", "--no-filters", "--stdin-paths", input=query)
    oids = cast("list[Oid]", out.decode().split())
    if len(oids) != len(contents):
        raise GitError(["git", "hash-object", "-w", "--stdin-paths"], 0, out, b"")
    return oids


def write_notes(
    git: Git, notes_ref: str, tip: Oid | None, notes: Mapping[Oid, Oid | bytes], message: str
) -> bool:
    """Attach each ``commit → blob id`` (or the note's bytes, written inline) as
    that commit's note on ``notes_ref``, in one notes commit on top of ``tip`` (the
    ref's value, None when it has none) written by ``git fast-import``. False when
    ``notes_ref`` is not at ``tip`` (moved meanwhile): fast-import never moves a ref
    to a commit that does not contain its current value (git-fast-import(1),
    ``--force``)."""
    text = message.encode("utf-8", "surrogateescape")
    parts = [
        b"commit %s\ncommitter %s\ndata %d\n%s\n"
        % (notes_ref.encode(), committer_ident(git), len(text), text)
    ]
    if tip:
        parts.append(b"from %s\n" % tip.encode())
    for commit, note in notes.items():
        if isinstance(note, bytes):
            parts.append(b"N inline %s\ndata %d\n%s\n" % (commit.encode(), len(note), note))
        else:
            parts.append(b"N %s %s\n" % (note.encode(), commit.encode()))
    code, _ = git.run("fast-import", "--quiet", input=b"".join(parts), ok_codes=(0, 1))
    if code == 0:
        return True
    if git.ref_oid(notes_ref) != tip:
        return False  # another writer moved it: write again on top of theirs
    raise GitError(["git", "fast-import"], 1, b"", f"could not update {notes_ref}".encode())


def committer_ident(git: Git) -> bytes:
    """``Name <email> <seconds> <zone>`` for a notes commit we write; a server account
    with no identity configured writes as git-evidence."""
    ident = git.configured_ident()
    if ident:
        return ident
    return b"git-evidence <git-evidence@localhost> %d +0000" % int(time.time())


def merge_notes(git: Git, notes_ref: str, other: str) -> None:
    """Merge the notes of ``other`` into ``notes_ref``; where both annotate one
    object differently, ``other``'s note wins (``git notes merge -s theirs``)."""
    env = dict(git.env)
    if git.configured_ident() is None:
        for role in ("AUTHOR", "COMMITTER"):
            env[f"GIT_{role}_NAME"] = "git-evidence"
            env[f"GIT_{role}_EMAIL"] = "git-evidence@localhost"
    git.run("notes", f"--ref={notes_ref}", "merge", "-q", "-s", "theirs", other, env=env)
