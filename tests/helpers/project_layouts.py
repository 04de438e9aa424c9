"""Repositories with the layouts of real projects: their tracked paths (placeholder
contents) and their recent first-parent history replayed, from the samples kept in
tests/init/layouts/ (each project's paths, git's spelling, one a line; and its last
commits as `git log --first-parent --no-renames --name-status --format='commit %H'`
writes them, newest first)."""

from __future__ import annotations

import ast
from pathlib import Path

from helpers.repos import git

LAYOUTS = Path(__file__).resolve().parents[1] / "init" / "layouts"
PROJECTS = ("black", "mypy", "pylint", "ruff")


def unquote(line: str) -> str:
    """A path as git prints it, its C-style quoting (non-ASCII names) undone."""
    if line.startswith('"'):
        quoted: bytes = ast.literal_eval("b" + line)
        return quoted.decode("utf-8", "surrogateescape")
    return line


def layout(name: str) -> tuple[list[str], list[list[tuple[str, str]]]]:
    """The project's paths, and its commits oldest first as (status, path) rows."""
    files = [unquote(x) for x in (LAYOUTS / f"{name}.files.txt").read_text("utf-8").splitlines()]
    commits: list[list[tuple[str, str]]] = []
    for line in (LAYOUTS / f"{name}.history.txt").read_text("utf-8").splitlines():
        if line.startswith("commit "):
            commits.append([])
        elif "\t" in line:
            status, path = line.split("\t", 1)
            commits[-1].append((status[0], unquote(path)))
    return files, commits[::-1]


def _quoted(path: str) -> bytes:
    inner = path.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{inner}"'.encode("utf-8", "surrogateescape")


def _data(text: str) -> bytes:
    raw = text.encode("utf-8", "surrogateescape")
    return b"data %d\n%s\n" % (len(raw), raw)


def build(root: Path, name: str) -> Path:
    """A work tree whose `main` holds the project's paths at its tip, reached by a
    first commit and the project's recent commits replayed over it (one `fast-import`)."""
    files, commits = layout(name)
    first = set(files)
    for rows in commits:
        first -= {p for s, p in rows if s == "A"}
    for rows in commits:
        first |= {p for s, p in rows if s == "D"}
    repo = root / name
    git(root, "init", "-q", "-b", "main", str(repo))
    stream: list[bytes] = []
    for n, rows in enumerate([[("A", p) for p in sorted(first)], *commits]):
        stream.append(b"commit refs/heads/main\n")
        stream.append(b"committer Dev <dev@example.com> %d +0000\n" % (1_700_000_000 + 60 * n))
        stream.append(_data(f"{name} commit {n}"))
        for status, path in rows:
            if status == "D":
                stream.append(b"D " + _quoted(path) + b"\n")
            else:
                stream.append(b"M 100644 inline " + _quoted(path) + b"\n")
                stream.append(_data(f"{path} {n}\n"))
    git(repo, "fast-import", "--quiet", input=b"".join(stream))
    git(repo, "reset", "-q", "--hard", "main")
    return repo
