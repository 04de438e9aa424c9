"""Every shell block of the README and of the pages under docs/ runs as written: the
blocks of a page, in order, as one shell session in a scratch directory (the README's
in a clone of a project), each command checked for the exit status its comment gives
(`# exit 1`; none: 0). A block marked `<!-- illustration -->` on the line before it is
not run; one marked `<!-- install -->` is run in a fresh virtualenv (slow). So the
documentation cannot drift from what the commands do."""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
from helpers.repos import PROJECT, clone_of, make_server

SHELLS = ("sh", "bash", "shell", "console")
ILLUSTRATION = "<!-- illustration"
INSTALL = "<!-- install"
PAGES = sorted([PROJECT / "README.md", *(PROJECT / "docs").glob("*.md")])
FENCE = re.compile(r"^([ \t]*)```([\w-]*)[ \t]*\n(.*?)^\1```[ \t]*$", re.M | re.S)
EXPECTED = re.compile(r"#\s*exit (\d+)")
HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
CHECK = """__check() {
  if [ "$1" != "$2" ]; then
    printf 'DOCS BLOCK FAILED (exit %s, expected %s): %s\\n' "$1" "$2" "$3" >&2
    exit 99
  fi
}
"""


class Block(NamedTuple):
    page: Path
    line: int
    marker: str  # "", "illustration" or "install"
    text: str


def blocks(page: Path) -> list[Block]:
    """The shell blocks of ``page``, dedented, with the marker on the line before each."""
    source = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(source):
        indent, language, body = match.groups()
        if language not in SHELLS:
            continue
        before = source[: match.start()].rstrip("\n").splitlines()
        last = before[-1].strip() if before else ""
        marker = (
            "illustration"
            if last.startswith(ILLUSTRATION)
            else "install"
            if last.startswith(INSTALL)
            else ""
        )
        lines = [
            line[len(indent) :] if line.startswith(indent) else line for line in body.splitlines()
        ]
        found.append(Block(page, source[: match.start()].count("\n") + 1, marker, "\n".join(lines)))
    return found


def instrumented(text: str) -> str:
    """``text`` with a check of each command's exit status after it: a command runs to
    the end of its line, its `\\` continuations and its here-document."""
    lines = text.splitlines()
    out: list[str] = []
    number = 0
    while number < len(lines):
        line = lines[number]
        if not line.strip() or line.lstrip().startswith("#"):
            out.append(line)
            number += 1
            continue
        command = [line]
        while command[-1].endswith("\\"):
            number += 1
            command.append(lines[number])
        heredoc = HEREDOC.search(line)
        if heredoc:
            while True:
                number += 1
                command.append(lines[number])
                if lines[number].strip() == heredoc.group(1):
                    break
        said = EXPECTED.search(command[0] if heredoc else command[-1])
        expected = said.group(1) if said else "0"
        out += command
        out.append(f"__check $? {expected} {shlex.quote(line.strip())}")
        number += 1
    return "\n".join(out)


def run_page(page: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    script = CHECK + "\n".join(instrumented(b.text) for b in blocks(page) if not b.marker)
    return subprocess.run(
        ["bash", "-c", script],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )


def pages_to_run() -> list[Path]:
    return [page for page in PAGES if any(not b.marker for b in blocks(page))]


# -- the harness itself ---------------------------------------------------------------------


def test_the_harness_checks_each_commands_exit_status(tmp_path: Path) -> None:
    script = CHECK + instrumented("true\nfalse   # exit 1\nfalse\necho never")
    result = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False)
    assert result.returncode == 99
    assert "DOCS BLOCK FAILED (exit 1, expected 0): false" in result.stderr
    assert "never" not in result.stdout


def test_the_harness_keeps_a_here_document_whole(tmp_path: Path) -> None:
    script = CHECK + instrumented("cat > f <<'EOF'\na # exit 3\nb\nEOF\ngrep -c . f")
    result = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "2"


def test_the_harness_sees_a_marked_block_and_an_indented_one(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "<!-- illustration -->\n```sh\nnot run\n```\n\n* item\n\n  ```sh\n  echo run\n  ```\n"
    )
    found = blocks(page)
    assert [(b.marker, b.text) for b in found] == [("illustration", "not run"), ("", "echo run")]


def test_every_page_runs_its_blocks_or_marks_them() -> None:
    """A block is run (its page is in `pages_to_run`), installs (the virtualenv test), or
    is marked an illustration: nothing in between."""
    for page in PAGES:
        for block in blocks(page):
            assert block.marker in ("", "illustration", "install"), (page, block.line)
    assert PROJECT / "docs" / "getting-started.md" in pages_to_run()
    assert PROJECT / "README.md" in pages_to_run()


# -- the pages ---------------------------------------------------------------------------


# The walkthrough of getting-started.md is the longest run of the suite, and two tests
# read it: a page's blocks run once in a session, in a folder all its workers share,
# and every test of the page reads that run (what it printed, and the repositories it
# left, which the tests only read). Its tests are one group: on one worker, the second
# reads the run the first made, instead of waiting for it on another.
WALKTHROUGH = PROJECT / "docs" / "getting-started.md"
ONE_RUN = pytest.mark.xdist_group("getting-started")
PageRun = Callable[[Path], tuple[subprocess.CompletedProcess[str], Path]]


@pytest.fixture
def page_run(tmp_path_factory: pytest.TempPathFactory) -> PageRun:
    """``page``'s blocks run in a scratch directory, and what they printed: the first
    test to ask runs them, a test asking meanwhile waits for that run."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if "PYTEST_XDIST_WORKER" in os.environ else base

    def run(page: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
        folder = shared / f"page-{page.stem}"
        folder.mkdir(exist_ok=True)
        scratch, record = folder / "scratch", folder / "run.json"
        with open(folder / "lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not record.exists():
                shutil.rmtree(scratch, ignore_errors=True)  # a run that did not end
                scratch.mkdir()
                done = run_page(page, scratch)
                record.write_text(json.dumps([done.returncode, done.stdout, done.stderr]))
            code, out, err = json.loads(record.read_text())
        return subprocess.CompletedProcess(["bash", "-c", page.name], code, out, err), scratch

    return run


@pytest.mark.installed_plugins  # `pytest --evidence` finds the plugin as a user's does
@pytest.mark.parametrize(
    "page",
    [
        pytest.param(p, marks=ONE_RUN) if p == WALKTHROUGH else p
        for p in pages_to_run()
        if p.name != "README.md"
    ],
    ids=lambda p: p.name,
)
def test_a_pages_blocks_run_in_a_scratch_directory(page: Path, page_run: PageRun) -> None:
    result, _ = page_run(page)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-6000:]


def test_the_readme_blocks_run_in_a_clone_of_a_project(tmp_path: Path) -> None:
    clone = clone_of(tmp_path, make_server(tmp_path), "project")
    result = run_page(PROJECT / "README.md", clone.path)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-6000:]
    assert (clone.path / ".git" / "hooks" / "pre-push").exists()
    assert "git evidence guard" in (clone.path / ".claude" / "settings.json").read_text()


@pytest.mark.installed_plugins
@ONE_RUN
def test_the_getting_started_walkthrough_ends_where_it_says(page_run: PageRun) -> None:
    result, scratch = page_run(WALKTHROUGH)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-6000:]
    server = scratch / "project.git"
    tree = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "main"],
        cwd=server,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert {"tests/data/tabs.in", "tests/data/tabs.out", "tests/evidence-labels.tsv"} <= set(tree)
    labels = subprocess.run(
        ["git", "show", "main:tests/evidence-labels.tsv"],
        cwd=server,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "tests/test_fmt.py::test_format\tinvariant" in labels
    assert "[" not in labels.split("\n", 3)[-1]  # the parametrized test has one row
    notes = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname)", "refs/notes"],
        cwd=server,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert notes == ["refs/notes/evidence", "refs/notes/evidence-verdicts"]
    assert "accept" in result.stdout


def test_the_readme_test_command_is_the_one_ci_runs() -> None:
    readme = PROJECT / "README.md"
    commands = [
        line.split("#", 1)[0].strip()
        for block in blocks(readme)
        for line in block.text.splitlines()
        if "pytest" in line
    ]
    assert "python -m pytest" in commands
    ci = (PROJECT / ".ci" / "run").read_text(encoding="utf-8")
    assert '  python -m pytest "$@"' in ci


@pytest.mark.slow  # a virtualenv of its own
def test_the_install_block_installs_git_evidence_into_a_fresh_environment(
    tmp_path: Path,
) -> None:
    (install,) = [b for p in PAGES for b in blocks(p) if b.marker == "install"]
    source = tmp_path / "git-evidence"
    files = subprocess.run(
        ["git", "ls-files", "-z"], cwd=PROJECT, capture_output=True, check=True
    ).stdout.split(b"\0")
    for name in filter(None, files):
        target = source / os.fsdecode(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        if (PROJECT / os.fsdecode(name)).is_file():
            shutil.copy2(PROJECT / os.fsdecode(name), target)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True)
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("PYTHONPATH", None)
    result = subprocess.run(
        ["bash", "-c", CHECK + instrumented(install.text)],
        cwd=source,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert (venv / "bin" / "git-evidence").exists()
    version = subprocess.run(
        ["git", "evidence", "--version"], env=env, capture_output=True, text=True, check=False
    )
    assert version.returncode == 0, version.stderr
