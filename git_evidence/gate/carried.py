"""What a push or a commit leaves that must parse, read from git: the policy file and
the labels file a tip carries, or the index stages. Problems out, never findings:
``rules/files.py`` words them, the same decider for a staged file and a pushed one."""

from __future__ import annotations

from collections.abc import Sequence

from git_evidence.core.errors import PolicyError
from git_evidence.core.facts import FileProblem
from git_evidence.core.oids import is_zero
from git_evidence.core.paths import Change
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.git import Git
from git_evidence.policy.parsing import parse_policy
from git_evidence.policy.schema import POLICY_FILE, Policy


def _parsed(data: bytes, source: str) -> tuple[str | None, Policy | None]:
    """Why a policy file's bytes do not parse and validate, or None and the policy."""
    try:
        return None, parse_policy(data, source)
    except PolicyError as exc:
        return exc.message, None


def tip_policy(cat: CatFile, commit: str) -> tuple[str | None, Policy | None]:
    """Why the policy file ``commit`` carries does not parse and validate, or None
    and the policy (the built-in defaults when there is no file, which are valid)."""
    hit = cat.get(f"{commit}:{POLICY_FILE}")
    if hit is None:
        return None, Policy()
    _, kind, data = hit
    source = f"{commit[:12]}:{POLICY_FILE}"
    if kind != "blob":
        return f"{source}: a {kind}, not a policy file", None
    return _parsed(data, source)


def tip_labels(cat: CatFile, commit: str, path: str) -> str | None:
    """Why the labels file ``commit`` carries at ``path`` does not parse (``FILE:LINE:
    what``), or None (no file: no labels, nothing to parse)."""
    hit = cat.get(f"{commit}:{path}")
    if hit is None:
        return None
    _, kind, data = hit
    source = f"{commit[:12]}:{path}"
    if kind != "blob":
        return f"{source}: a {kind}, not a labels file"
    return _labels_problem(data, source)


def staged_policy(git: Git, changes: Sequence[Change]) -> tuple[str | None, Policy | None]:
    """Why the staged policy file does not parse, or None (unchanged, deleted: the
    built-in defaults, or valid) and the staged policy when one is staged."""
    for change in changes:
        if change.path != POLICY_FILE:
            continue
        new = change.object_ids()[1]
        if is_zero(new):
            return None, None
        if not change.new_mode.startswith("100"):
            return f"{POLICY_FILE}: not a regular file", None
        return _parsed(git.blob_bytes(new), f"staged:{POLICY_FILE}")
    return None, None


def staged_files(git: Git, changes: Sequence[Change], policy: Policy) -> list[FileProblem]:
    """The staged policy file and labels files that do not parse: labels at the path the
    policy names, or the one a staged policy file names."""
    problem, staged = staged_policy(git, changes)
    found = [] if problem is None else [FileProblem("policy", POLICY_FILE, problem)]
    named = {policy.labels_path}
    if staged is not None:
        named.add(staged.labels_path)
    for change in changes:
        if change.path not in named:
            continue
        new = change.object_ids()[1]
        if is_zero(new):  # deleted: no labels, nothing to parse
            continue
        source = f"staged:{change.path}"
        if not change.new_mode.startswith("100"):
            found.append(FileProblem("labels", change.path, f"{source}: not a regular file"))
            continue
        why = _labels_problem(git.blob_bytes(new), source)
        if why is not None:
            found.append(FileProblem("labels", change.path, why))
    return found


def _labels_problem(data: bytes, source: str) -> str | None:
    # loaded only for a push or commit that leaves a labels file to parse, off the
    # hook's start
    from git_evidence.policy import labels

    return labels.labels_problem(data, source)
