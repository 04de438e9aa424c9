"""A hostile candidate's kit: the code an attack runs inside the sandbox, a repository
armed with it, and what an attack must leave unchanged."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from helpers.judge_repos import APP, FAST, KEPT, Repo, markers
from helpers.repos import evidence_process

# What every attack starts with: a report line per route, and the calls of a process
# that is root in its namespaces (lift a mount that hides a path, make one writable).
KIT = r'''
import ctypes, os, subprocess, sys
_LIBC = ctypes.CDLL(None, use_errno=True)
_HERE = os.open(".", os.O_DIRECTORY)  # the workspace, whatever is mounted over it later


def reach(what, attempt):
    try:
        got = attempt()
    except BaseException as exc:
        line = f"blocked {what}: {type(exc).__name__}: {exc}"
    else:
        line = f"REACHED {what}: {got!r}"
    fd = os.open("reach.local", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644, dir_fd=_HERE)
    os.write(fd, (" ".join(line.split())[:400] + "\n").encode())
    os.close(fd)


def fail(why):
    raise LookupError(why)


def _call(code, what):
    if code != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, os.strerror(errno), what)


def mount_of(path):
    """The mount point a lookup of ``path`` ends on (the topmost mount, not one that is
    covered by a mount over a folder above it)."""
    mounts = [line.split() for line in open("/proc/self/mountinfo")]
    ids = {m[0] for m in mounts}
    top = next(m for m in mounts if m[4] == "/" and m[1] not in ids)
    parts = [p for p in path.split("/") if p]
    for point in ["/"] + ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]:
        above = [m for m in mounts if m[1] == top[0] and m[4] == point]
        while above:
            top = above[-1]
            above = [m for m in mounts if m[1] == top[0] and m[4] == point]
    return top[4]


def umount(point):
    _call(_LIBC.umount2(point.encode(), 2), "umount " + point)  # MNT_DETACH


def uncover(path):
    """Lift every mount over ``path`` until it shows, then make its mount writable."""
    for _ in range(8):
        if os.path.lexists(path):
            break
        point = mount_of(path)
        if point == "/":
            raise FileNotFoundError(path)
        umount(point)
    for point in {mount_of(path), mount_of("/dev/null")}:  # writable, devices allowed
        _call(_LIBC.mount(None, point.encode(), None, 32 | 4096, None), "remount " + point)
    return path


def git(*args, **kwargs):
    done = subprocess.run(["git", *args], capture_output=True, text=True, **kwargs)
    if done.returncode:
        raise RuntimeError(done.stderr.strip()[-200:])
    return done.stdout.strip()


def existing(path):
    if not os.path.lexists(path):  # what is hidden is not there (an empty tmpfs)
        raise FileNotFoundError(path)
    return path


def append_existing(path, text):
    with open(path, "r+") as handle:  # never creates: a hidden file is not there
        handle.seek(0, 2)
        handle.write(text)
    return path
'''


def attack(
    repo: Repo, code: str, *args: str, env: dict[str, str] | None = None, own: bool = False
) -> tuple[Any, dict[str, Any], Path]:
    """Judge the candidate with ``-- python -c KIT+code`` (repeat 2) and keep the
    workspaces; ``own``: the judge is a process of its own (its command line shows)."""
    command = (*args, "--", sys.executable, "-c", KIT + code)
    if not own:
        return repo.judge_kept(*command, env=env)
    result = evidence_process(
        repo.path, "judge", "--format", "json", "--keep", *command, env={**FAST, **(env or {})}
    )
    kept = Path(result.stderr.split("workspace kept in ", 1)[1].split()[0])
    KEPT.append(kept)
    assert result.stdout.strip(), result.stderr
    return result, json.loads(result.stdout), kept


def assert_blocked(kept: Path, routes: int = 1) -> list[str]:
    """Every route of every run reported, and none got through."""
    lines = markers(kept, "reach.local")
    assert lines and len(lines) % routes == 0, lines
    through = [line for line in lines if not line.startswith("blocked ")]
    assert not through, "\n".join(["routes that got through:", *through])
    return lines


def home() -> Path:
    return Path(os.environ["HOME"])  # the test's own, sealed


def host_state(repo: Repo) -> tuple[object, ...]:
    """What no run may change: every ref, the git directory's config, hooks and info,
    and every file of the real HOME."""
    gitdir = repo.path / ".git"

    def files(under: Path) -> list[tuple[str, bytes]]:
        return sorted((str(p), p.read_bytes()) for p in under.rglob("*") if p.is_file())

    return (
        repo.git("for-each-ref").stdout,
        (gitdir / "config").read_bytes(),
        files(gitdir / "hooks"),
        files(gitdir / "info"),
        files(home()),
    )


def armed(repo: Repo) -> Repo:
    """The repository with a candidate, and a HOME holding a git config to attack."""
    (home() / ".gitconfig").write_text("[user]\n\tname = Real User\n")
    repo.product(APP.replace("return True", "return seed >= 0"))
    return repo


def assert_accepted_and_unchanged(doc: dict[str, Any], repo: Repo, before: object) -> None:
    assert doc["class"] == "accept" and doc["exit"] == 0, doc["reason"]
    assert doc["sandbox"] == {"kind": "bwrap", "network": False}
    assert host_state(repo) == before
