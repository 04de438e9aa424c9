"""Real git, sealed: each test gets its own HOME, no system config, fixed names and
dates; the temporary directories in memory; the real servers on one worker. The
helpers that drive repositories and pushes are in tests/helpers/."""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.bytecode import BYTECODE, forget, warm
from helpers.examples import PROFILE
from helpers.repos import (
    CI_VARS,
    MEMORY_TMP,
    MEMORY_TMP_FREE,
    PROJECT,
    PUSHER_VARS,
    SERVER_FIXTURES,
    Work,
    _Templates,
    clone_of,
    make_server,
)

pytest_plugins = [
    "helpers.servers",  # the real-server fixtures: http_git, gitolite
    "helpers.groups",  # a group of tests on one worker
]

# pytest keeps the test modules it rewrote for their assertions as bytecode, unless the
# environment forbids bytecode (PYTHONDONTWRITEBYTECODE): then every worker rewrites all
# of them again, about 2 s each. The test modules' bytecode is pytest's cache, in
# tests/__pycache__ (ignored by git); the code under test is unaffected.
sys.dont_write_bytecode = False


def pytest_configure(config: pytest.Config) -> None:
    """Temporary directories in memory when the machine has room there, unless the
    user chose a place (``TMPDIR``, ``--basetemp``; xdist's workers are given one)."""
    if "TMPDIR" in os.environ or config.option.basetemp:
        return
    try:
        stats = os.statvfs(MEMORY_TMP)
    except OSError:
        return
    if stats.f_bavail * stats.f_frsize >= MEMORY_TMP_FREE and os.access(
        MEMORY_TMP, os.W_OK | os.X_OK
    ):
        os.environ["TMPDIR"] = str(MEMORY_TMP)  # pytest, and every git and hook started
        tempfile.tempdir = None  # computed again from TMPDIR


def pytest_report_header() -> str:
    return f"hypothesis: the {PROFILE} profile (helpers/examples.py)"


def pytest_sessionfinish(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the controller, after its workers
        forget(BYTECODE, {MEMORY_TMP, Path(tempfile.gettempdir()), Path("/tmp")})


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if SERVER_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.xdist_group("servers"))
            item.add_marker(pytest.mark.slow)  # a real server: `python -m pytest -m slow`


@pytest.fixture(autouse=True)
def sealed_env(
    request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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
    # The suite runs in CI too: what a test wants of a CI's variables, it sets itself
    # (`labels init` refuses to run in CI; `git evidence ci` reads the forge's).
    for name in CI_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-cache"))
    # A pytest the tests start (a judged property suite) loads the plugins it names,
    # not every one installed here: half a second less each, the same with or without
    # the developer's extras. The plugin's own tests (marked `installed_plugins`) load
    # them as a user's pytest does.
    if request.node.get_closest_marker("installed_plugins") is None:
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    else:
        monkeypatch.delenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    # Every hook and command the tests start runs this source tree, installed or not.
    monkeypatch.setenv("PYTHONPATH", str(PROJECT))
    # The first `python` on PATH is this one, as in an activated virtualenv: what
    # `labels init|check` run the project's pytest with when not told.
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    # ...from bytecode compiled once, as an installed package's hooks run (pip compiles
    # at install time): without it every hook would compile its ~40 modules again, a
    # quarter of a push's cost here, and every pytest the judge runs in its sandbox
    # pytest and the standard library (helpers/bytecode.py).
    monkeypatch.delenv("PYTHONDONTWRITEBYTECODE", raising=False)
    if _Templates.bytecode is not None:
        monkeypatch.setenv("PYTHONPYCACHEPREFIX", str(_Templates.bytecode))
    # Repositories start empty (no sample hooks: a quarter of the files the suite
    # writes) and git does no housekeeping of its own after commits and pushes.
    template = f"\ttemplateDir = {_Templates.git_template}\n" if _Templates.git_template else ""
    (home / ".gitconfig").write_text(
        f'[init]\n\tdefaultBranch = main\n{template}[protocol "file"]\n\tallow = always\n'
        "[advice]\n\tdetachedHead = false\n[core]\n\tautocrlf = false\n"
        "[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n[receive]\n\tautogc = false\n"
    )


# -- templates ---------------------------------------------------------------------------
# Seeding a server, cloning it and pinning its lock are the same git operations, with
# the same fixed names and dates, in most tests. The first test to need a state builds
# it for real and leaves a copy here; the next test with the same inputs gets a copy of
# that copy (shutil.copytree), which is what the real operations would have produced.
# A copy is only taken from a repository whose refs, config and hooks still equal the
# template's: anything a test changed first sends it down the real path.


@pytest.fixture(scope="session", autouse=True)
def _template_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    _Templates.root = tmp_path_factory.mktemp("templates")
    _Templates.bytecode = BYTECODE
    warm(BYTECODE, tmp_path_factory.mktemp("warm"))
    _Templates.git_template = tmp_path_factory.mktemp("git-template")
    yield
    _Templates.root = None
    _Templates.by_key.clear()
    _Templates.by_copy.clear()


@pytest.fixture
def server(tmp_path: Path) -> Path:
    return make_server(tmp_path)


@pytest.fixture
def work(tmp_path: Path, server: Path) -> Iterator[Work]:
    """A clone of the protected server (no client hooks: the server must hold alone)."""
    yield clone_of(tmp_path, server, "work")


@pytest.fixture
def gone_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The process stands in a directory that was deleted, and no ``GIT_DIR`` names a
    repository for it: git, asked anything, says it cannot read where it is."""
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    monkeypatch.delenv("GIT_DIR", raising=False)
