"""A file the agent writes that has other names in the work tree: a hard link to a
fixture is the fixture, whatever its path says. Reads the file system (``stat``, and
a walk of the work tree only when a written file has more than one name)."""

from __future__ import annotations

import os

from git_evidence.guard.tool_calls import Target


def other_names(inside: list[tuple[Target, str]], top: str) -> list[tuple[Target, str]]:
    """The other names in the work tree of a file written that has more than one (a
    hard link to a fixture is the fixture): asked only of such a file, so the tree is
    walked only then."""
    linked = {}
    for target, rel in inside:
        try:
            info = os.stat(os.path.join(top, rel), follow_symlinks=False)
        except OSError:
            continue
        if info.st_nlink > 1 and not os.path.isdir(os.path.join(top, rel)):
            linked[(info.st_dev, info.st_ino)] = (target, rel)
    found: list[tuple[Target, str]] = []
    for directory, subdirs, files in os.walk(top) if linked else ():
        subdirs[:] = [d for d in subdirs if d != ".git"]
        for name in files:
            path = os.path.join(directory, name)
            try:
                info = os.stat(path, follow_symlinks=False)
            except OSError:
                continue
            hit = linked.get((info.st_dev, info.st_ino))
            rel = os.path.relpath(path, top).replace(os.sep, "/")
            if hit is not None and rel != hit[1]:
                found.append((hit[0], rel))
    return found
