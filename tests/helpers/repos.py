"""Real repositories for the tests: git and git evidence run as a user runs them, a work
tree, seeded servers and the templates they are copied from."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # a type only: the helpers load no module of the package before a test
    from git_evidence.core.oids import Oid

PROJECT = Path(__file__).resolve().parents[2]


PUSHER_VARS = (
    "GIT_EVIDENCE_PUSHER",
    "GL_USERNAME",
    "GL_USER",
    "GITEA_PUSHER_NAME",
    "GITHUB_USER_LOGIN",
    "REMOTE_USER",
    "GL_ID",
)


CI_VARS = ("CI", "GITHUB_ACTIONS", "GITLAB_CI", "BUILDKITE", "JENKINS_URL", "TF_BUILD")


POLICY = """\
[identities]
evidence_writers = ["alice"]
ledger_writers = ["ci-bot"]
lock_writers = ["ci-bot"]
"""


# Fixtures that start real servers or create system users: their tests run on one
# worker (`--dist loadgroup`), so that each server starts once and no two `useradd`
# race for /etc/passwd.
SERVER_FIXTURES = frozenset({"http_git", "gitolite", "ssh_host", "gitolite_common"})


# The suite writes tens of thousands of small files (repositories, packs, hooks) and
# removes them again: on a memory-backed file system that is a third of its time less.
MEMORY_TMP = Path("/dev/shm")


MEMORY_TMP_FREE = 2 << 30  # bytes it must have free


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


# Run as processes of their own: the hooks (their time budget counts from the start of
# the process, and git starts them so).
OWN_PROCESS = frozenset({"pre-commit", "pre-push", "pre-receive", "post-receive"})


def evidence(
    cwd: Path | str, *args: str, input: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real command line, as a user or a hook would.

    A command other than a hook runs in this process: the same ``main`` the
    console script calls, given what a process of its own would have (its directory,
    its environment, standard input, output and error as file descriptors that git's
    children write to as well), without ~50 ms of interpreter start and imports."""
    full = {**os.environ, **(env or {})}
    command = next((a for a in args if not a.startswith("-")), None)
    if command in OWN_PROCESS or command is None or _starts_differently(full):
        return evidence_process(cwd, *args, input=input, env=full)
    return _in_process(Path(cwd), list(args), input, full)


def _starts_differently(env: dict[str, str]) -> bool:
    """Whether ``env`` changes what an interpreter settles as it starts (its streams'
    encoding, its locale, its temporary directory): only a process of its own shows it."""
    return any(
        env.get(name) != os.environ.get(name)
        for name in {*env, *os.environ}
        if name.startswith(("PYTHON", "LC_")) or name in ("LANG", "TMPDIR", "TEMP", "TMP")
    )


def evidence_process(
    cwd: Path | str, *args: str, input: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the command line as a process of its own (``python -m git_evidence``)."""
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


def _in_process(
    cwd: Path, args: list[str], input: bytes | None, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    from git_evidence.cli import main
    from git_evidence.plumbing import process, repo_dirs

    repo_dirs.COMMON_DIRS.clear()  # a process of its own starts without what another found
    process.SETTINGS.clear()
    with _as_a_process(cwd, env, input) as (stdout, stderr):
        try:
            code = main.main(args)
        except SystemExit as exit:  # pragma: no cover - main returns its status
            code = exit.code if isinstance(exit.code, int) else 1
    return subprocess.CompletedProcess(
        [sys.executable, "-m", "git_evidence", *args],
        code,
        stdout.getvalue().decode("utf-8", "replace"),
        stderr.getvalue().decode("utf-8", "replace"),
    )


@contextlib.contextmanager
def _as_a_process(
    cwd: Path, env: dict[str, str], input: bytes | None
) -> Iterator[tuple[io.BytesIO, io.BytesIO]]:
    """This process's directory, environment and standard streams (the file
    descriptors, which git's children inherit, and Python's objects over them) set as
    a command started in ``cwd`` with ``env`` and ``input`` would have them; what it
    wrote to standard output and error is in the two buffers afterwards."""
    saved_env, saved_cwd = dict(os.environ), os.getcwd()
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    for stream in saved_streams[1:]:
        stream.flush()
    saved_fds = [os.dup(fd) for fd in (0, 1, 2)]
    out, err = io.BytesIO(), io.BytesIO()
    with contextlib.ExitStack() as stack:
        files = [stack.enter_context(tempfile.TemporaryFile()) for _ in range(3)]
        files[0].write(input or b"")
        files[0].seek(0)
        for fd, file in enumerate(files):
            os.dup2(file.fileno(), fd)
        sys.stdin = stack.enter_context(
            open(0, encoding="utf-8", errors="surrogateescape", closefd=False)
        )
        sys.stdout = stack.enter_context(
            open(1, "w", encoding="utf-8", errors="surrogateescape", closefd=False)
        )
        sys.stderr = stack.enter_context(
            open(2, "w", encoding="utf-8", errors="backslashreplace", closefd=False, buffering=1)
        )
        os.environ.clear()
        os.environ.update(env)
        os.chdir(cwd)
        try:
            yield out, err
        finally:
            for stream in (sys.stdout, sys.stderr):  # into the files, not the test's streams
                with contextlib.suppress(OSError, ValueError):
                    stream.flush()
            os.chdir(saved_cwd)
            os.environ.clear()
            os.environ.update(saved_env)
            for fd, saved in enumerate(saved_fds):
                os.dup2(saved, fd)
                os.close(saved)
            sys.stdin, sys.stdout, sys.stderr = saved_streams
        for file, buffer in zip(files[1:], (out, err), strict=True):
            file.seek(0)
            buffer.write(file.read())


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
    ) -> Oid:
        for rel, content in (files or {}).items():
            self.write(rel, content)
        for rel in remove:
            self.git("rm", "-rq", "--", rel)
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.head()

    def commit_link(self, message: str, link: str, target: str) -> Oid:
        """Commit a symlink ``link`` (relative to the work tree) pointing at ``target``."""
        os.symlink(target, self.path / link)
        self.git("add", "-A")
        self.git("commit", "-qm", message)
        return self.head()

    def head(self, rev: str = "HEAD") -> Oid:
        if rev == "HEAD":  # the branch's loose ref, as a commit just wrote it
            fast = _loose_head(self.path / ".git")
            if fast is not None:
                return cast("Oid", fast)
        return cast("Oid", self.git("rev-parse", rev).stdout.strip())

    def push(
        self, *args: str, pusher: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        extra = dict(env or {})
        if pusher is not None:
            extra["GIT_EVIDENCE_PUSHER"] = pusher
        return self.git("push", *args, check=False, env=extra)


def _loose_head(gitdir: Path) -> str | None:
    """What ``git rev-parse HEAD`` prints, read from the files when HEAD names a branch
    whose ref is loose (a commit writes it so; a fresh clone packs its refs): a
    process less for each of the suite's thousands of commits. None: ask git."""
    try:
        head = (gitdir / "HEAD").read_text()
        if not head.startswith("ref: refs/heads/"):
            return None
        oid = (gitdir / head[len("ref: ") :].strip()).read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return oid if len(oid) in (40, 64) and all(c in "0123456789abcdef" for c in oid) else None


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


@dataclass
class _Template:
    dir: Path
    bare: Path
    state: tuple[object, ...]
    clone: Path | None = None  # a plain clone of ``bare`` (its origin is ``bare``)
    clone_state: tuple[object, ...] | None = None
    pinned: Path | None = None  # ``bare`` after a lock writer pinned main
    digest: str = ""


class _Templates:
    root: Path | None = None  # set for the session by the `_template_root` fixture
    bytecode: Path | None = None  # every started Python's compiled modules (helpers/bytecode.py)
    git_template: Path | None = None  # an empty `init.templateDir`, for the session
    by_key: dict[str, _Template] = {}  # noqa: RUF012
    by_copy: dict[Path, _Template] = {}  # noqa: RUF012


def _environment_key() -> str:
    """Everything in the environment that can change what seeding writes: git's
    variables (names, dates), the pusher variables and the user's git config."""
    parts = [f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("GIT")]
    parts += [f"{k}={os.environ.get(k, '')}" for k in (*PUSHER_VARS, "PYTHONPATH")]
    for config in (
        Path(os.environ.get("HOME", "/nonexistent")) / ".gitconfig",
        Path(os.environ.get("XDG_CONFIG_HOME", "/nonexistent")) / "git" / "config",
    ):
        parts.append(config.read_text() if config.is_file() else "")
    return "\0".join(parts)


def _repo_state(gitdir: Path, origin: Path | None = None) -> tuple[object, ...]:
    """What a clone or a pin reads of a repository besides its objects: HEAD, refs,
    config (the origin's path written as `<origin>`) and hooks."""

    def files(under: Path) -> tuple[tuple[str, bytes], ...]:
        if not under.is_dir():
            return ()
        return tuple(
            sorted(
                (p.relative_to(gitdir).as_posix(), p.read_bytes())
                for p in under.rglob("*")
                if p.is_file()
            )
        )

    def read(name: str) -> bytes:
        path = gitdir / name
        return path.read_bytes() if path.is_file() else b""

    config = read("config")
    if origin is not None:
        config = config.replace(os.fsencode(origin), b"<origin>")
    return (
        read("HEAD"),
        read("packed-refs"),
        files(gitdir / "refs"),
        config,
        files(gitdir / "hooks"),
    )


def _copy_repo(source: Path, target: Path) -> None:
    shutil.copytree(source, target, symlinks=True)


def _store(source: Path, target: Path, gitdir: str = ".") -> None:
    """Keep a copy of ``source`` as a template, its objects in one pack: every test
    copies it, and a few files copy faster than one per object."""
    _copy_repo(source, target)
    git(target / gitdir, "repack", "-adq")


def _repoint(work: Path, old: Path, new: Path) -> None:
    """A copied clone's origin is the copied server."""
    config = work / ".git" / "config"
    text = config.read_bytes()
    line = b"\turl = " + os.fsencode(old) + b"\n"
    assert line in text, f"{config} does not name {old} as its remote"
    config.write_bytes(text.replace(line, b"\turl = " + os.fsencode(new) + b"\n"))


def _seed_server(root: Path, files: dict[str, str] | None, name: str, protect: bool) -> Path:
    bare = root / name
    git(root, "init", "-q", "--bare", str(bare))
    seed = Work(root / f"seed-{name}")
    git(root, "init", "-q", str(seed.path))
    seed.commit("seed", {**SEED, **(files or {})})
    seed.git("push", "-q", str(bare), "HEAD:refs/heads/main")
    if protect:
        result = evidence(bare, "install", "--server")
        assert result.returncode == 0, result.stderr
    return bare


def make_server(root: Path, files: dict[str, str] | None = None, name: str = "server.git") -> Path:
    """A bare repository seeded with main (policy, product, fixtures), then protected
    with `git evidence install --server`."""
    return _seeded(root, files, name, protect=True)


def make_remote(root: Path, files: dict[str, str] | None = None, name: str = "remote.git") -> Path:
    """A bare repository seeded as `make_server` seeds it, with no hook: nothing but
    the client hooks stands."""
    return _seeded(root, files, name, protect=False)


def _seeded(root: Path, files: dict[str, str] | None, name: str, protect: bool) -> Path:
    if _Templates.root is None or (root / name).exists() or (root / f"seed-{name}").exists():
        return _seed_server(root, files, name, protect)  # re-seeding goes the real way
    inputs = [name, str(protect), repr(sorted((files or {}).items())), _environment_key()]
    key = hashlib.sha256("\0".join(inputs).encode()).hexdigest()[:16]
    template = _Templates.by_key.get(key)
    bare = root / name
    if template is None:
        _seed_server(root, files, name, protect)
        where = _Templates.root / key
        where.mkdir()
        template = _Template(where, where / name, _repo_state(bare))
        _store(bare, template.bare)
        _Templates.by_key[key] = template
    else:
        _copy_repo(template.bare, bare)  # the seeding clone is not kept: no test reads it
    _Templates.by_copy[bare.resolve()] = template
    return bare


def _template_of(bare: Path) -> _Template | None:
    """The template ``bare`` is a copy of, if it still is in that template's state."""
    template = _Templates.by_copy.get(bare.resolve())
    if template is None or _repo_state(bare) != template.state:
        return None
    return template


def clone_of(root: Path, bare: Path, name: str = "w") -> Work:
    template = _template_of(bare)
    path = root / name
    if template is not None and template.clone is not None:
        _copy_repo(template.clone, path)
        _repoint(path, template.bare, bare)
        git(path, "update-index", "-q", "--refresh")  # the copy's files have new inodes
        return Work(path)
    git(root, "clone", "-q", str(bare), str(path))
    if template is not None:
        template.clone = template.dir / "clone"
        _store(path, template.clone, ".git")
        _repoint(template.clone, bare, template.bare)
        template.clone_state = _repo_state(template.clone / ".git", template.bare)
    return Work(path)


def pinned_copy(work: Work, pin: Callable[[Work], str]) -> str:
    """``pin(work)`` (a lock writer pins the server's main and pushes the note), or the
    same result copied from the template when ``work`` and its server are untouched
    copies: the server becomes the pinned one and the clone fetches the note, as the
    real pin leaves it. Returns the pin digest."""
    origin = work.path.parent / "?"
    config = work.path / ".git" / "config"
    for line in config.read_text().splitlines() if config.is_file() else ():
        if line.startswith("\turl = "):
            origin = Path(line[len("\turl = ") :])
            break
    template = _template_of(origin) if origin.is_dir() else None
    if template is None or template.clone_state != _repo_state(work.path / ".git", origin):
        return pin(work)
    if template.pinned is not None:
        shutil.rmtree(origin)
        _copy_repo(template.pinned, origin)
        work.git("fetch", "-q", "origin")
        work.git("fetch", "-q", "origin", "+refs/notes/evidence:refs/notes/evidence")
        return template.digest
    digest = pin(work)
    template.pinned = template.dir / "pinned.git"
    _store(origin, template.pinned)
    template.digest = digest
    return digest


def protected_clone(root: Path, files: dict[str, str] | None = None) -> Work:
    """A clone of a fresh protected server seeded with ``files`` over the seed."""
    return clone_of(root, make_server(root, files))
