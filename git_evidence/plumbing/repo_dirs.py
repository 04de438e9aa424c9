"""Where a repository keeps files of its own that this tool reads or writes: the
common git directory (the caches of validated locks and parsed policies live under
it, and a commit looked up through ``commit_noting_dirs`` names it too) and the current
HEAD with the merge in progress, if any. Found with as few git
processes as can be: none when git gave a hook its ``GIT_DIR`` or a work tree's own
``.git`` directory is found above the current one (whose HEAD and MERGE_HEAD files the
pre-commit hook then reads), else one ``rev-parse`` a process, which the pre-commit
hook also asks for HEAD and MERGE_HEAD.

Apart from git.py because it remembers answers for the whole process, by directory."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from git_evidence.core.oids import Oid, is_oid

if TYPE_CHECKING:  # the agent's guard reads the directories without starting git
    from collections.abc import Mapping

    from git_evidence.plumbing.git import Git

COMMON_DIRS: dict[tuple[str, str | None], str] = {}  # (where, GIT_DIR) → common dir


def _where(git: Git) -> tuple[str, str | None]:
    """Where ``git`` runs and the ``GIT_DIR`` its own environment gives it (the
    process's, unless the Git was made with another): what its answers are kept by.
    ``("", None)`` when the process's directory is gone: nothing is found or kept then,
    and git is asked (it says why it cannot answer)."""
    git_dir = git.env.get("GIT_DIR") if git.cwd is None else None
    return git.running_in() or "", git_dir


def _absolute(git: Git, path: str) -> str:
    return os.path.abspath(os.path.join(git.cwd or "", path))


def common_dir(git: Git) -> str:
    """The repository's common git directory (a linked worktree's is its main one's);
    when git gave a hook ``GIT_DIR``, that directory."""
    where = _where(git)
    if where[1]:
        return _absolute(git, where[1])
    if not where[0]:
        return _absolute(git, git.text("rev-parse", "--git-common-dir"))
    if where not in COMMON_DIRS:
        COMMON_DIRS[where] = _discovered(where[0], git.env) or _absolute(
            git, git.text("rev-parse", "--git-common-dir")
        )
    return COMMON_DIRS[where]


# What changes where git finds a repository: with any of them set, git is asked.
_DISCOVERY = (
    "GIT_DIR",
    "GIT_COMMON_DIR",
    "GIT_WORK_TREE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
)


def _discovered(start: str, env: Mapping[str, str]) -> str | None:
    """The common directory git finds from ``start`` in the plain case, without a
    process: the nearest ``.git`` directory above it (a main work tree's own). None
    when git could find another (a discovery variable set in ``env``, git's
    environment; a ``.git`` file of a linked work tree or submodule; a bare
    repository): then git is asked."""
    if not start or any(name in env for name in _DISCOVERY):
        return None
    here = os.path.abspath(start)
    while True:
        candidate = os.path.join(here, ".git")
        if os.path.isdir(candidate) and os.path.isfile(os.path.join(candidate, "HEAD")):
            return candidate
        if os.path.exists(candidate) or os.path.isfile(os.path.join(here, "HEAD")):
            return None  # a .git file, or possibly a bare repository: git knows
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def head_target(git: Git) -> str | None:
    """The ref HEAD names (``symbolic-ref -q HEAD``), None when HEAD is detached. In a
    hook (git gave it ``GIT_DIR``) read from the HEAD file, a process less on every
    push; git is asked when the file says anything but a plain ``ref:`` line (the
    reftable format's placeholder, say)."""
    where = _where(git)
    if where[1]:
        try:
            with open(os.path.join(_absolute(git, where[1]), "HEAD"), "rb") as handle:
                text = handle.read(4096).decode("utf-8")
        except (OSError, UnicodeDecodeError):
            text = ""
        if text.startswith("ref: refs/") and text.endswith("\n") and text.count("\n") == 1:
            ref = text[len("ref: ") : -1]
            if ref.strip() == ref and not ref.endswith(".invalid"):
                return ref
        if is_oid(text.strip()):
            return None  # detached
    return git.head_branch()


def commit_noting_dirs(git: Git, rev: str) -> Oid | None:
    """``rev`` peeled to a commit id (``rev-parse --verify --quiet``), None when it
    names none or git fails (the caller says which rev it needed). The same
    ``rev-parse`` names the common git directory, kept for ``common_dir``: the lock
    cache a command opens next starts no process of its own."""
    code, out = git.run(
        "rev-parse",
        "--git-common-dir",
        "--verify",
        "--quiet",
        "--end-of-options",
        f"{rev}^{{commit}}",
        ok_codes=(0, 1, 128),
    )
    common, _, oid = out.rstrip(b"\n").rpartition(b"\n")
    if code != 0 or not common:
        return None
    remember_common_dir(git, common)
    return Oid(oid.decode())


def remember_common_dir(git: Git, path: bytes) -> None:
    """Keep ``path``, the ``--git-common-dir`` a ``rev-parse`` of another question
    printed too, so that ``common_dir`` asks no process of its own."""
    where = _where(git)
    if where[0] and not where[1]:
        COMMON_DIRS.setdefault(where, _absolute(git, path.decode("utf-8", "surrogateescape")))


class HeadState:
    """HEAD as a commit about to be made sees it: its commit (None on an unborn
    branch), the branch it names ("" when detached) and the heads a merge in progress
    joins (``MERGE_HEAD``)."""

    __slots__ = ("branch", "commit", "merge_heads")

    def __init__(self, commit: Oid | None, branch: str, merge_heads: list[Oid]) -> None:
        self.commit = commit
        self.branch = branch
        self.merge_heads = merge_heads


def head_state(git: Git) -> HeadState:
    """In a main work tree found as git finds it (``_discovered``), its HEAD and
    MERGE_HEAD files and the commit HEAD names asked of the object reader (the
    ``lookups.live`` block's, which the policy is then read with): no process of its
    own. Elsewhere one ``rev-parse`` (which names the common directory too); on an
    unborn branch, or an answer of another shape, one question at a time."""
    where = _where(git)
    found = None if where[1] else _discovered(where[0], git.env)
    state = _from_files(git, found) if found is not None else None
    if state is not None:
        COMMON_DIRS.setdefault(where, found or "")
        return state
    code, out = git.run(
        "rev-parse",
        "--git-common-dir",
        "--git-path",
        "MERGE_HEAD",
        "HEAD^{commit}",  # fails on an unborn branch: then one question at a time
        "--symbolic-full-name",
        "HEAD",
        ok_codes=(0, 128),
    )
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    if code != 0 or len(lines) != 5 or lines[4] or not is_oid(lines[2]):
        branch = git.head_branch() or ""
        merging = _read_merge_heads(git.git_path("MERGE_HEAD"))
        return HeadState(git.resolve_commit("HEAD"), branch, merging)
    remember_common_dir(git, lines[0].encode("utf-8", "surrogateescape"))
    branch = lines[3] if lines[3].startswith("refs/") else ""  # "HEAD": detached
    return HeadState(Oid(lines[2]), branch, _read_merge_heads(_absolute(git, lines[1])))


def _from_files(git: Git, git_dir: str) -> HeadState | None:
    """HEAD from the files of ``git_dir``; None when its HEAD file says anything but a
    plain ``ref:`` line or a commit id (the reftable format's placeholder, say)."""
    try:
        with open(os.path.join(git_dir, "HEAD"), "rb") as handle:
            text = handle.read(4096).decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if text.startswith("ref: refs/") and text.endswith("\n") and text.count("\n") == 1:
        branch = text[len("ref: ") : -1]
        if branch.strip() != branch or branch.endswith(".invalid"):
            return None
    elif is_oid(text.strip()):
        branch = ""  # detached
    else:
        return None
    from git_evidence.plumbing.batch import CatFile

    with CatFile(git) as cat:
        hit = cat.get("HEAD^{commit}")
    commit = hit[0] if hit is not None and hit[1] == "commit" else None
    return HeadState(commit, branch, _read_merge_heads(os.path.join(git_dir, "MERGE_HEAD")))


def _read_merge_heads(path: str) -> list[Oid]:
    try:
        with open(path) as handle:
            return [Oid(line.strip()) for line in handle if line.strip()]
    except FileNotFoundError:
        return []


def work_tree_of(where: str) -> tuple[str, str, str] | None:
    """The work tree holding ``where``, its git directory and its common git directory
    (real paths), read from the files git keeps (a ``.git`` directory, or a ``.git``
    file naming one, and its ``commondir``) without starting git; None outside a work
    tree. The agent's guard asks it, so that a pinned policy costs no git process."""
    here = os.path.realpath(where)
    while True:
        dot_git = os.path.join(here, ".git")
        if os.path.isdir(dot_git):
            git_dir = dot_git
            break
        if os.path.isfile(dot_git):
            try:
                with open(dot_git, encoding="utf-8") as handle:
                    line = handle.readline().strip()
            except (OSError, UnicodeDecodeError):
                return None
            if not line.startswith("gitdir:"):
                return None
            git_dir = os.path.join(here, line[len("gitdir:") :].strip())
            break
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent
    git_dir = os.path.realpath(git_dir)
    common = git_dir
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            common = os.path.realpath(os.path.join(git_dir, handle.readline().strip()))
    except (OSError, UnicodeDecodeError):
        pass
    return here, git_dir, common
