"""Where the full trace of an internal error goes: a file only its user can read.

One directory shared by every user under the system temp directory breaks on a
server where several accounts run hooks (the first user owns it; the others cannot
write there) and lets one user read or plant another's logs. So: the user's state
directory (``$XDG_STATE_HOME/git-evidence``, else ``~/.local/state/git-evidence``,
as the XDG Base Directory spec places logs), else a per-user directory under the
temp directory (``git-evidence-<uid>``, mode 0700, used only when it is a real
directory of this user that nobody else may enter), else a fresh private one."""

from __future__ import annotations

import os
import stat
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping

from git_evidence import __version__

NAME = "git-evidence"


def save(trace: str, env: Mapping[str, str] | None = None) -> str | None:
    """Write ``trace`` to a new file; its path, or None when nowhere would take it."""
    env = os.environ if env is None else env
    text = (
        f"{NAME} {__version__}\nargv: {sys.argv!r}\ncwd: {_cwd()}\n"
        f"time: {time.strftime('%Y-%m-%dT%H:%M:%S%z')}\n\n{trace}"
    )
    for directory in _candidates(env):
        try:
            return _write(directory, text)
        except OSError:
            continue
    return None


def state_dir(env: Mapping[str, str]) -> str:
    base = env.get("XDG_STATE_HOME", "")
    if not os.path.isabs(base):  # the spec: a relative value is invalid, ignore it
        base = os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, NAME)


def user_temp_dir() -> str:
    return os.path.join(tempfile.gettempdir(), f"{NAME}-{_uid()}")


def _candidates(env: Mapping[str, str]) -> Iterator[str]:
    try:
        directory = state_dir(env)
        os.makedirs(directory, mode=0o700, exist_ok=True)
        yield directory
    except (OSError, KeyError, RuntimeError):  # no home, or one that cannot be written
        pass
    directory = user_temp_dir()
    try:
        os.mkdir(directory, 0o700)
    except FileExistsError:
        pass
    except OSError:
        directory = ""
    if directory and _private(directory):
        yield directory
    try:
        yield tempfile.mkdtemp(prefix=f"{NAME}-{_uid()}-")
    except OSError:
        return


def _private(directory: str) -> bool:
    """A real directory (not a link someone planted) of this user, closed to others."""
    try:
        info = os.lstat(directory)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == _uid()
        and not info.st_mode & (stat.S_IRWXG | stat.S_IRWXO)
    )


def _write(directory: str, text: str) -> str:
    stamp = time.strftime("%Y%m%dT%H%M%S")
    fd, path = tempfile.mkstemp(prefix=f"crash-{stamp}-", suffix=".log", dir=directory)
    with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as handle:
        handle.write(text)
    return path


def _uid() -> int:
    getuid = getattr(os, "getuid", None)
    return int(getuid()) if getuid is not None else 0


def _cwd() -> str:
    try:
        return os.getcwd()
    except OSError:
        return "(gone)"
