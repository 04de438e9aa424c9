"""The second belt around the judge's sandbox: a fingerprint of what no run may change
in the repository (refs of every namespace, ``packed-refs``, ``HEAD``, config,
``hooks/``, ``info/``), taken before the first run and after the last; and the one
careful reader of a file a run may have planted (never through a link, never blocking
on a FIFO)."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable, Mapping


def repository_state(git_dirs: Iterable[str]) -> dict[str, str]:
    """What a run must never change in the repository: every ref (loose, every
    namespace, notes included), ``packed-refs``, ``HEAD``, ``config``, ``hooks/`` and
    ``info/``, each file's sha256 (a link: its text)."""
    state: dict[str, str] = {}
    for git_dir in dict.fromkeys(os.path.realpath(d) for d in git_dirs):
        for name in ("packed-refs", "HEAD", "config", "config.worktree"):
            _note(state, git_dir, name)
        for folder in ("refs", "hooks", "info"):
            top = os.path.join(git_dir, folder)
            for directory, subdirs, files in os.walk(top):
                subdirs.sort()
                rel_dir = os.path.relpath(directory, git_dir)
                state.setdefault(os.path.join(git_dir, rel_dir) + "/", "dir")
                for name in sorted(files + [d for d in subdirs if _islink(directory, d)]):
                    _note(state, git_dir, os.path.join(rel_dir, name))
    return state


def _islink(directory: str, name: str) -> bool:
    return os.path.islink(os.path.join(directory, name))


def _note(state: dict[str, str], git_dir: str, rel: str) -> None:
    path = os.path.join(git_dir, rel)
    found = file_state(path)
    if found is not None:
        state[path] = found


def file_state(path: str) -> str | None:
    """A file's sha256, a link's text (``link:…``), what else stands there, or None
    when nothing does. Never follows a link, never blocks on a FIFO: a run may have put
    either where the judge looks."""
    try:
        if os.path.islink(path):
            return "link:" + os.readlink(path)
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return "not a regular file"
        digest = hashlib.sha256()
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
        return digest.hexdigest()


def state_changes(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """What differs, one line a path: added, removed or changed."""
    out = []
    for path in sorted(set(before) | set(after)):
        old, new = before.get(path), after.get(path)
        if old == new:
            continue
        what = "added" if old is None else "removed" if new is None else "changed"
        out.append(f"{what}: {path}")
    return out
