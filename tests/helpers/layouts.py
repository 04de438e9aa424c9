"""Where the judge's runner lives, as users lay it out: a real virtual environment built
in the test (pytest and git evidence reached through a ``.pth`` onto the environment
these tests run in, as an installed project has them), a small project whose property
runs that environment's Python, and the judge run as a process of its own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

from helpers.repos import PROJECT, Work, git

CALC = "def add(a, b):\n    return a + b\n"
BROKEN = "def add(a, b):\n    return a - b\n"
FILES = {
    "pytest.ini": "[pytest]\n",
    "src/calc/__init__.py": CALC,
    "tests/properties/test_calc.py": (
        "import calc\n\n\ndef test_add():\n    assert calc.add(2, 3) == 5, 'calc.add is wrong'\n"
    ),
    "tests/fixtures/cases.json": "[[2, 3, 5]]\n",
}
PURELIB = "import sysconfig; print(sysconfig.get_paths()['purelib'])"
OUTER = sysconfig.get_paths()["purelib"]


def make_venv(where: Path, *, outer: bool = True, evidence: bool = True) -> Path:
    """A virtual environment at ``where`` (no pip: fast); with ``outer``, the
    packages of the environment these tests run in (pytest, pluggy) through a
    ``.pth``; with ``evidence``, git evidence too. Its Python."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    python = where / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", PURELIB], capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    lines = []
    if evidence:
        lines.append(str(PROJECT))
    if outer:  # its packages only: not its .pth files (the editable finder of this
        # checkout's git evidence among them)
        lines.append(OUTER if evidence else _without_evidence(where))
    (site / "outer.pth").write_text("".join(line + "\n" for line in lines))
    return python


def _without_evidence(where: Path) -> str:
    """The outer packages less git evidence: where it is installed beside pytest (a
    non-editable install), a folder of links to every other entry of theirs."""
    outer = Path(OUTER)
    if not any(outer.glob("git_evidence*")):
        return OUTER
    view = where / "outer-less-evidence"
    view.mkdir()
    for entry in outer.iterdir():
        if not entry.name.startswith(("git_evidence", "git-evidence", "__editable__")):
            (view / entry.name).symlink_to(entry)
    return str(view)


def policy(command: list[str], extra: str = "") -> str:
    return (
        '[identities]\nevidence_writers = ["alice"]\n\n[judge]\nrepeat = 2\nseeds = 1\n'
        f'{extra}\n[[judge.property]]\nid = "suite"\ncommand = {json.dumps(command)}\n'
    )


def pytest_command(python: str | Path) -> list[str]:
    return [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/properties"]


def make_repo(path: Path, command: list[str], extra: str = "") -> Work:
    """A repository on main with FILES and a policy running ``command``, and a branch
    ``feat`` checked out for the candidate."""
    path.parent.mkdir(parents=True, exist_ok=True)
    git(path.parent, "init", "-q", "-b", "main", str(path))
    repo = Work(path)
    repo.commit("seed", {**FILES, ".git-evidence.toml": policy(command, extra)})
    repo.git("checkout", "-qb", "feat")
    return repo


def honest(repo: Work) -> None:
    repo.commit("refactor", {"src/calc/__init__.py": CALC.replace("a + b", "b + a")})


def broken(repo: Work) -> None:
    repo.commit("break it", {"src/calc/__init__.py": BROKEN})


def judge(
    repo: Work,
    *args: str,
    python: str | Path = sys.executable,
    env: dict[str, str] | None = None,
    unset: tuple[str, ...] = (),
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """``python -m git_evidence judge --format json --base main ARGS`` in the
    repository, a process of its own (the judge's interpreter is part of the layout)."""
    full = {k: v for k, v in os.environ.items() if k not in unset}
    full.update(env or {})
    full.setdefault("PYTHONPATH", str(PROJECT))
    if not full["PYTHONPATH"]:
        del full["PYTHONPATH"]
    result = subprocess.run(
        [str(python), "-m", "git_evidence", "judge", "--format", "json", "--base", "main", *args],
        cwd=repo.path,
        env=full,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.stdout.strip(), result.stderr
    return result, json.loads(result.stdout.splitlines()[-1])


def copy_package(dest: Path) -> Path:
    """A copy of the git evidence package under ``dest`` (a checkout installed
    editable): ``dest/git_evidence``."""
    target = dest / "git_evidence"
    shutil.copytree(PROJECT / "git_evidence", target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def judge_draft(
    repo: Work, command: list[str], *args: str, **kw: Any
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    """Judge under a draft policy whose one property runs ``command``."""
    draft = repo.path.parent / f"draft-{len(list(repo.path.parent.glob('draft-*')))}.toml"
    draft.write_text(policy(command))
    return judge(repo, "--policy", str(draft), *args, **kw)


def assert_undecided(
    result: subprocess.CompletedProcess[str], doc: dict[str, Any], *said: str
) -> None:
    assert (doc["class"], result.returncode) == ("undecided", 2), doc["reason"]
    for words in said:
        assert words in doc["reason"], doc["reason"]
    assert "counterexample" not in doc["next"], doc["next"]
