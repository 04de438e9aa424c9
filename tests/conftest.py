"""Real git, sealed: each test gets its own HOME, no system config, fixed names and
dates, and helpers that drive repositories and pushes through the git binary."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["servers"]  # the real-server fixtures: http_git, gitolite

PROJECT = Path(__file__).resolve().parents[1]

PUSHER_VARS = (
    "GIT_EVIDENCE_PUSHER",
    "GL_USERNAME",
    "GL_USER",
    "GITEA_PUSHER_NAME",
    "GITHUB_USER_LOGIN",
    "REMOTE_USER",
    "GL_ID",
)

POLICY = """\
[identities]
evidence_writers = ["alice"]
ledger_writers = ["ci-bot"]
lock_writers = ["ci-bot"]
"""


@pytest.fixture(autouse=True)
def sealed_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name, value in {
        "GIT_AUTHOR_NAME": "Test Author",
        "GIT_AUTHOR_EMAIL": "author@example.com",
        "GIT_COMMITTER_NAME": "Test Committer",
        "GIT_COMMITTER_EMAIL": "committer@example.com",
        "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z",
    }.items():
        monkeypatch.setenv(name, value)
    for name in (*PUSHER_VARS, "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "PRE_COMMIT_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-cache"))
    # Every hook and command the tests start runs this source tree, installed or not.
    monkeypatch.setenv("PYTHONPATH", str(PROJECT))
    (home / ".gitconfig").write_text(
        '[init]\n\tdefaultBranch = main\n[protocol "file"]\n\tallow = always\n'
        "[advice]\n\tdetachedHead = false\n[core]\n\tautocrlf = false\n"
    )


def git(
    cwd: Path | str,
    *args: str,
    check: bool = True,
    env: dict[str, str] | None = None,
    input: bytes | None = None,
) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **(env or {})}
    proc = subprocess.run(
        ["git", *args], cwd=cwd, env=full, input=input, capture_output=True, check=False
    )
    out = subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )
    if check and proc.returncode != 0:
        raise AssertionError(
            f"git {' '.join(args)} failed ({proc.returncode}):\n{out.stdout}\n{out.stderr}"
        )
    return out


def evidence(
    cwd: Path | str, *args: str, input: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real command line, as a user or a hook would."""
    full = {**os.environ, **(env or {})}
    proc = subprocess.run(
        [sys.executable, "-m", "git_evidence", *args],
        cwd=cwd,
        env=full,
        input=input,
        capture_output=True,
        check=False,
    )
    return subprocess.CompletedProcess(
        proc.args,
        proc.returncode,
        proc.stdout.decode("utf-8", "replace"),
        proc.stderr.decode("utf-8", "replace"),
    )


class Work:
    """A clone with helpers to write files and commit them."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def git(self, *args: str, **kw: object) -> subprocess.CompletedProcess[str]:
        return git(self.path, *args, **kw)  # type: ignore[arg-type]

    def write(self, rel: str | bytes, content: str | bytes = "x\n") -> None:
        target = Path(os.fsdecode(os.path.join(os.fsencode(self.path), os.fsencode(rel))))
        target.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode() if isinstance(content, str) else content
        target.write_bytes(data)

    def commit(
        self, message: str, files: dict[str, str] | None = None, remove: tuple[str, ...] = ()
    ) -> str:
        for rel, content in (files or {}).items():
            self.write(rel, content)
        for rel in remove:
            self.git("rm", "-rq", "--", rel)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def commit_link(self, message: str, link: str, target: str) -> str:
        """Commit a symlink ``link`` (relative to the work tree) pointing at ``target``."""
        os.symlink(target, self.path / link)
        self.git("add", "-A")
        self.git("commit", "-qm", message)
        return self.head()

    def head(self, rev: str = "HEAD") -> str:
        return self.git("rev-parse", rev).stdout.strip()

    def push(
        self, *args: str, pusher: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        extra = dict(env or {})
        if pusher is not None:
            extra["GIT_EVIDENCE_PUSHER"] = pusher
        return self.git("push", *args, check=False, env=extra)


SEED = {
    ".git-evidence.toml": POLICY,
    "src/app.py": "print('hello')\n",
    "tests/fixtures/a.json": '{"a": 1}\n',
    "tests/fixtures/b.json": '{"b": 2}\n',
    "tests/goldens/out.txt": "golden\n",
    "tests/test_app.py": "def test_app():\n    pass\n",
    "tests/freeze.jsonl": "",
    "docs/guide.md": "guide\n",
    "README.md": "readme\n",
}


def make_server(root: Path, files: dict[str, str] | None = None, name: str = "server.git") -> Path:
    """A bare repository seeded with main (policy, product, fixtures), then protected
    with `git evidence install --server`."""
    bare = root / name
    git(root, "init", "-q", "--bare", str(bare))
    seed = Work(root / f"seed-{name}")
    git(root, "init", "-q", str(seed.path))
    seed.commit("seed", {**SEED, **(files or {})})
    seed.git("push", "-q", str(bare), "HEAD:refs/heads/main")
    result = evidence(bare, "install", "--server")
    assert result.returncode == 0, result.stderr
    return bare


def clone_of(root: Path, bare: Path, name: str = "w") -> Work:
    git(root, "clone", "-q", str(bare), str(root / name))
    return Work(root / name)


def protected_clone(root: Path, files: dict[str, str] | None = None) -> Work:
    """A clone of a fresh protected server seeded with ``files`` over the seed."""
    return clone_of(root, make_server(root, files))


@pytest.fixture
def server(tmp_path: Path) -> Path:
    return make_server(tmp_path)


@pytest.fixture
def work(tmp_path: Path, server: Path) -> Iterator[Work]:
    """A clone of the protected server (no client hooks: the server must hold alone)."""
    path = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(server), str(path))
    yield Work(path)
