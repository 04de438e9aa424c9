"""Publishing a verdict, after every run has ended: ``--out`` (its record) and ``--log``
(one line per judgement) written never through a symbolic link, ``--note`` (its
record) on the candidate commit. Apart from ``verdict.py`` and ``record.py`` so that
they stay pure: this is the only part of a judgement's result that writes anything."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, BinaryIO

from git_evidence.core.errors import EvidenceError
from git_evidence.core.oids import Oid
from git_evidence.core.records import canonical_json, now_utc
from git_evidence.plumbing import notes
from git_evidence.plumbing.git import Git

if TYPE_CHECKING:
    from git_evidence.judge.verdict import Verdict

NOTE_TRIES = 3


def publish(
    git: Git,
    notes_ref: str,
    verdict: Verdict,
    candidate: Oid | None,
    *,
    out: str | None,
    log: str | None,
    note: bool,
) -> None:
    data = canonical_json(verdict.as_json())
    if out:
        with _output(out, "--out", os.O_TRUNC) as handle:
            handle.write(data)
    if log:
        line = {
            "at": now_utc(),
            "base": verdict.facts.base,
            "candidate": verdict.facts.candidate,
            "class": verdict.klass,
            "exit": verdict.exit,
            "pin": (verdict.facts.pin or {}).get("digest"),
            "duration_s": verdict.duration_s,
        }
        if verdict.scorecard is not None:
            line["scorecard"] = verdict.scorecard["result"]
        with _output(log, "--log", os.O_APPEND) as handle:
            handle.write(canonical_json(line) + b"\n")
    if note and candidate is not None:
        # Written byte for byte; a writer that moved the ref meanwhile is written over
        # in a second try on top of its commit, never replaced.
        (blob,) = notes.write_blobs(git, [data])
        for _ in range(NOTE_TRIES):
            if notes.write_notes(
                git, notes_ref, git.ref_oid(notes_ref), {candidate: blob}, "git evidence judge"
            ):
                break
        else:
            raise EvidenceError(
                f"could not write the verdict note on {notes_ref}",
                fix="another writer keeps moving it: retry",
            )


def _output(path: str, option: str, mode: int) -> BinaryIO:
    """An output file opened for writing, never through a symbolic link."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | mode, 0o644)
    except OSError as exc:
        link = os.path.islink(path)
        raise EvidenceError(
            f"{option} {path}: "
            + ("a symbolic link stands there (refused)" if link else str(exc.strerror)),
            fix=f"remove it, or give {option} a path of its own",
        ) from None
    return os.fdopen(fd, "wb")
