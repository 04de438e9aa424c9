"""pre-receive's word to post-receive that a push needs no pin, so that the server
starts no second interpreter for an ordinary push.

When pre-receive allows a push after finding that post-receive would pin nothing for
it (``lock.walk.unmoved`` of every update, read as post-receive would read it), it
writes the push's exact ``<old> <new> <ref>`` lines to ``<git dir>/git-evidence/
quiet/<pid of git receive-pack>``. The post-receive hook script (``hooks.py``) reads
that file with shell built-ins, empties it, and exits at once when the lines git gives
it are the same bytes; on any difference (a ref that failed to update, another push,
a file left by a push that died) it runs post-receive as always. A pre-receive that
gives no word takes back any word at its path (``unsay``): one left by an earlier push
whose refs never moved, under a receive-pack id this push got again, would otherwise
stop this push's pin if its lines were the same. Only the server's own
processes can write its git directory, the same trust as the hooks themselves."""

from __future__ import annotations

import contextlib
import os

QUIET_DIR = "git-evidence/quiet"


def quiet_path(git_dir: str, receive_pack: int) -> str:
    return os.path.join(git_dir, QUIET_DIR, str(receive_pack))


def say_quiet(lines: bytes) -> None:
    """Tell this push's post-receive that ``lines`` need no pin: only under git,
    which gives a hook ``GIT_DIR`` and is its parent (the installed script ``exec``s
    the interpreter). Best effort: a directory that cannot be written says nothing,
    and post-receive then runs as always."""
    git_dir = os.environ.get("GIT_DIR")
    if not git_dir or not lines.endswith(b"\n"):
        return
    path = quiet_path(git_dir, os.getppid())
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        _sweep(os.path.dirname(path))
        temporary = f"{path}.tmp"
        with open(temporary, "wb") as handle:
            handle.write(lines)
        os.replace(temporary, path)
    except OSError:
        pass


def _sweep(folder: str) -> None:
    """Remove the words earlier pushes used (post-receive empties what it read), so
    the folder holds only pushes still running."""
    with os.scandir(folder) as entries:
        for entry in entries:
            try:
                if entry.is_file(follow_symlinks=False) and entry.stat().st_size == 0:
                    os.unlink(entry.path)
            except OSError:
                continue


def unsay() -> None:
    """Take back any word at this push's path: pre-receive found a pin is needed, or
    refused. A word left there by an earlier push under the same receive-pack id
    (post-receive never ran to empty it) must not stand for this push."""
    git_dir = os.environ.get("GIT_DIR")
    if git_dir:
        with contextlib.suppress(OSError):
            os.unlink(quiet_path(git_dir, os.getppid()))
