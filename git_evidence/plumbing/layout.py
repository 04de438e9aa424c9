"""What ``git evidence init`` reads of a repository: its default branch and the files
tracked at its tip (one ``ls-tree``), and the commit some first-parent steps below
the tip where the recent history starts (one ``rev-list``). The history itself is
read by the gate's own stream when the draft is tried on it."""

from __future__ import annotations

from git_evidence.core.oids import Oid
from git_evidence.plumbing.git import Git, decode_path

# Where a default branch is looked for when the clone's origin names none.
COMMON_DEFAULTS = ("main", "master", "trunk", "develop")


def default_branch(git: Git, refs: dict[str, Oid]) -> tuple[str, Oid | None]:
    """The default branch as a branch ref (``refs/heads/NAME``), and its tip: the
    branch origin's HEAD names, else a common default name, else HEAD's branch; the
    tip is origin's copy of it when the clone has one, else the local branch."""
    name = None
    target = git.symref_target("refs/remotes/origin/HEAD")
    if target and target.startswith("refs/remotes/origin/"):
        name = target.removeprefix("refs/remotes/origin/")
    for candidate in COMMON_DEFAULTS:
        if name is None and (
            f"refs/heads/{candidate}" in refs or f"refs/remotes/origin/{candidate}" in refs
        ):
            name = candidate
    if name is None:
        head = git.symref_target("HEAD")
        name = head.removeprefix("refs/heads/") if head else "main"
    for ref in (f"refs/remotes/origin/{name}", f"refs/heads/{name}"):
        if ref in refs:
            return f"refs/heads/{name}", git.resolve_commit(refs[ref])
    return f"refs/heads/{name}", git.resolve_commit("HEAD")


def tracked_paths(git: Git, rev: str) -> list[str]:
    """Every file tracked at ``rev`` (links and submodules included), git's paths."""
    out = git.out("ls-tree", "-r", "-z", "--full-tree", "--name-only", rev)
    return decode_path(out).split("\0")[:-1]


def history_start(git: Git, tip: str, commits: int) -> Oid | None:
    """The commit ``commits`` first-parent steps below ``tip``: the range
    ``start..tip`` holds the last ``commits`` commits of the branch (with what their
    merges brought); None when the branch is not that long (its whole history)."""
    ids = git.first_parent_ids(tip, commits + 1)
    return ids[commits] if len(ids) > commits else None
