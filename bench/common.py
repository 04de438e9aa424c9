"""What the benchmark scripts share: a git runner and byte-compiling the package."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"


def git(
    repo: Path, *args: str, env: dict[str, str] | None = None, input: bytes | None = None
) -> str:
    """Run git in ``repo``; its stripped output."""
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        env={**os.environ, **(env or {})},
        input=input,
    )
    return done.stdout.decode().strip()


def compile_package() -> None:
    """Measure the package as an install leaves it: byte-compiled (pip compiles on
    install; a PYTHONDONTWRITEBYTECODE environment would otherwise recompile each run)."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(HERE.parent / "git_evidence")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
