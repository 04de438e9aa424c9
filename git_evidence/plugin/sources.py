"""What a test run under the evidence plugin enforces, and where each part comes
from: the labels and the retry quota from the files ``git evidence judge``
writes (or named by hand), else from the repository (a sealed labels file, else the
base revision, never the working tree); and the retry budget the session draws on."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import pytest

from git_evidence.core.errors import EvidenceError
from git_evidence.ledger import quota as quota_mod
from git_evidence.policy import labels as labels_mod
from git_evidence.policy.labels import CHARACTERIZATION, INVARIANT, NONDETERMINISTIC, Labels

DEFAULT_RETRIES = 2
# a kind in one letter, for the labels sent to xdist workers
LETTER = {INVARIANT: "i", CHARACTERIZATION: "c", NONDETERMINISTIC: "n"}
KIND = {letter: kind for kind, letter in LETTER.items()}


@dataclass
class Sources:
    """What the run enforces and where each part came from."""

    labels: Labels
    labels_path: str  # shown as the node id of a labels error
    remaining: int  # retries the quota has left
    quota_source: str
    retries: int  # per nondeterministic test
    base_note: str = ""
    granted: int = 0  # retries the quota ever granted (0: no grant, or no quota file)

    def quota_phrase(self) -> str:
        """What the quota allows, for the header: retries left, or that none was ever
        granted (not "used up": nothing was)."""
        if self.granted == 0:
            return f"no retries granted ({self.quota_source})"
        return f"quota {self.remaining} left of {self.granted} granted ({self.quota_source})"

    def worker_input(self) -> dict[str, Any]:
        """What every xdist worker gets. The labels go as two strings, the node ids
        one a line and the kinds one letter each: execnet sends a dict of thousands
        of node ids string by string, two strings in one piece each."""
        kinds = self.labels.kinds
        return {
            "nodes": "\n".join(kinds),  # a node id is printable: never a newline
            "kinds": "".join(map(LETTER.__getitem__, kinds.values())),
            "labels_source": self.labels.source,
            "labels_digest": self.labels.digest,
            "labels_path": self.labels_path,
            "remaining": self.remaining,
            "quota_source": self.quota_source,
            "retries": self.retries,
            "granted": self.granted,
        }

    @classmethod
    def from_worker_input(cls, data: dict[str, Any]) -> Sources:
        nodes = data["nodes"].split("\n") if data["nodes"] else []
        kinds = dict(zip(nodes, map(KIND.__getitem__, data["kinds"]), strict=True))
        labels = Labels(kinds, data["labels_source"], data["labels_digest"])
        return cls(
            labels,
            data["labels_path"],
            data["remaining"],
            data["quota_source"],
            data["retries"],
            granted=data.get("granted", 0),
        )


def read_sources(config: pytest.Config) -> Sources:
    """Labels and quota: files named by the option or by ``git evidence judge``'s
    variables, else the repository (a sealed labels file, else the base revision: the
    merge-base of HEAD with ``rules.base``) — never the working tree."""
    labels_file = _one_path(config, "evidence_labels", "EVIDENCE_LABELS_FILE")
    quota_file = _one_path(config, "evidence_quota", "EVIDENCE_QUOTA_FILE")
    try:
        if labels_file is not None:
            return _from_files(labels_file, quota_file)
        return _from_repository(str(config.rootpath), quota_file)
    except EvidenceError as exc:
        fix = f"\n  To fix: {exc.fix}" if exc.fix else ""
        raise pytest.UsageError(f"evidence: {exc.message}{fix}") from None


def _one_path(config: pytest.Config, option: str, variable: str) -> str | None:
    given = config.getoption(option)
    env = os.environ.get(variable) or None
    if given and env and os.path.abspath(given) != os.path.abspath(env):
        flag = "--" + option.replace("_", "-")
        raise pytest.UsageError(f"evidence: {flag} {given} and {variable}={env} disagree")
    return given or env


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise pytest.UsageError(
            f"evidence: cannot read the {what} {path}: {exc.strerror}"
        ) from None


def _from_files(labels_file: str, quota_file: str | None) -> Sources:
    source = f"file:{labels_file}"
    labels = labels_mod.parse_labels(_read(labels_file, "labels file"), source)
    remaining, quota_source, granted = _quota(
        _read(quota_file, "retry quota") if quota_file else None,
        f"file:{quota_file}" if quota_file else "no quota file",
    )
    retries = os.environ.get("EVIDENCE_RETRIES", str(DEFAULT_RETRIES))
    if not retries.isdecimal() or not 0 <= int(retries) <= labels_mod.MAX_RETRIES:
        raise pytest.UsageError(
            f"evidence: EVIDENCE_RETRIES={retries!r} is not 0 to {labels_mod.MAX_RETRIES}"
        )
    return Sources(labels, labels_file, remaining, quota_source, int(retries), granted=granted)


def _from_repository(root: str, quota_file: str | None) -> Sources:
    from git_evidence.core.errors import UsageError
    from git_evidence.plumbing.batch import CatFile
    from git_evidence.plumbing.context import local_base, open_repo, sealed_labels
    from git_evidence.plumbing.in_force import resolve

    try:
        git = open_repo(root)
    except UsageError:
        raise EvidenceError(
            f"{root} is not in a git repository: there is no base to read the labels from",
            fix="run pytest in the repository, or give the labels with --evidence-labels PATH "
            "(git evidence judge sets EVIDENCE_LABELS_FILE)",
        ) from None
    refs = git.refs()
    policy = resolve(git, refs=refs).policy
    base, how = local_base(git, policy, refs)
    blobs: dict[str, bytes | None] = {policy.labels_path: None, policy.quota_path: None}
    if base is not None:
        with CatFile(git) as cat:  # both files through one process
            for path in blobs:
                hit = cat.get(f"{base}:{path}")
                blobs[path] = hit[2] if hit is not None and hit[1] == "blob" else None
    data, source = sealed_labels(git) or (blobs[policy.labels_path], f"base:{policy.labels_path}")
    if data is None:
        where = f"at {base[:12]} ({how})" if base else f"to read ({how})"
        raise EvidenceError(
            f"no labels file {policy.labels_path} {where}",
            fix="write one with `git evidence labels init`, have a person review it, and "
            "commit it alone (an evidence writer pushes it)",
        )
    labels = labels_mod.parse_labels(data, source)
    quota_data: bytes | None
    if quota_file:
        quota_data, quota_source = _read(quota_file, "retry quota"), f"file:{quota_file}"
    else:
        quota_data, quota_source = blobs[policy.quota_path], f"base:{policy.quota_path}"
    remaining, quota_source, granted = _quota(quota_data, quota_source)
    note = f"base {base[:12]} ({how})" if base else ""
    return Sources(
        labels, policy.labels_path, remaining, quota_source, policy.retries, note, granted
    )


def _quota(data: bytes | None, read_from: str) -> tuple[int, str, int]:
    """Retries remaining, where the quota was read, and how many were ever granted."""
    if data is None:
        if read_from.startswith("base:"):
            read_from = f"no {read_from.removeprefix('base:')} at the base"
        return 0, read_from, 0
    entries, problems = quota_mod.parse_quota(data)
    if problems:
        first = problems[0]
        raise pytest.UsageError(f"evidence: {read_from}:{first.line}: {first.message}")
    granted = sum(e.amount for e in entries if e.kind == quota_mod.GRANT)
    return max(0, quota_mod.remaining(entries)), read_from, granted


class RetryBudget:
    """Retries the session may still use. Under xdist the workers share it through a
    directory of numbered slots: creating a slot file with O_EXCL is atomic, so two
    workers never take the same retry."""

    def __init__(self, remaining: int, slots: str | None = None) -> None:
        self.remaining = remaining
        self.slots = slots
        self.used = 0

    def take(self) -> bool:
        if self.slots is None:
            if not quota_mod.retry_allowed(self.remaining, self.used + 1):
                return False
            self.used += 1
            return True
        for number in range(self.remaining):
            try:
                fd = os.open(os.path.join(self.slots, str(number)), os.O_CREAT | os.O_EXCL)
            except FileExistsError:
                continue
            os.close(fd)
            self.used += 1
            return True
        return False
