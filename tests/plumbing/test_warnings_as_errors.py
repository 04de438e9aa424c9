"""Every git process and file the tool opens is closed by the tool, never left to the
garbage collector: run with warnings as errors (``python -W error``, as a project with
``filterwarnings = error`` runs its tests), a command, the client hooks and the server
hooks print no ResourceWarning, nor anything else a warning prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers.repos import Work, evidence, protected_clone


def hooks_with_warnings_as_errors(hooks: Path) -> None:
    """The installed hooks start an isolated interpreter (``-I``: no PYTHON*
    variable reaches it): warnings are made errors on their command line."""
    for hook in hooks.iterdir():
        text = hook.read_text()
        if " -I -c " in text:
            hook.write_text(text.replace(" -I -c ", " -I -W error -X dev -c "))


def strict(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -W error -m git_evidence ARGS`` as a process of its own."""
    return subprocess.run(
        [sys.executable, "-W", "error", "-X", "dev", "-m", "git_evidence", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )


def clean(stderr: str) -> bool:
    return "Warning" not in stderr and "Exception ignored" not in stderr


def test_commands_that_read_objects_leave_no_pipe_open(tmp_path: Path) -> None:
    work = protected_clone(tmp_path)
    work.commit("product", {"src/app.py": "print('bye')\n"})
    for args in (
        ("check",),
        ("verify",),
        ("classify", "src/app.py", "tests/fixtures/a.json"),
        ("policy",),
        ("show-lock",),
        ("split", "--dry-run", "HEAD"),
        ("doctor",),
        ("freeze", "list"),
        ("labels", "check"),
    ):
        result = strict(work.path, *args)
        assert result.returncode in (0, 1, 2), (args, result.stderr)
        assert "Traceback" not in result.stderr, (args, result.stderr)
        assert clean(result.stderr), (args, result.stderr)


def test_the_hooks_of_a_push_leave_no_pipe_open(tmp_path: Path) -> None:
    work: Work = protected_clone(tmp_path)
    assert evidence(work.path, "install").returncode == 0
    server = Path(work.git("remote", "get-url", "origin").stdout.strip())
    hooks_with_warnings_as_errors(work.path / ".git/hooks")
    hooks_with_warnings_as_errors(server / "hooks")
    work.write("src/app.py", "print('bye')\n")
    work.git("add", "-A")
    committed = work.git("commit", "-qm", "product")  # pre-commit runs
    assert clean(committed.stderr), committed.stderr
    # pre-push here, pre-receive and post-receive on the server: the lock is pinned
    pushed = work.push("-q", "origin", "HEAD:main")
    assert pushed.returncode == 0, pushed.stderr
    assert clean(pushed.stderr), pushed.stderr
    work.write("src/app.py", "x\n")
    work.write("tests/fixtures/a.json", "{}\n")
    work.git("add", "-A")
    refused = work.git("commit", "-qm", "mixed", check=False)
    assert refused.returncode == 1 and "mixed-commit" in refused.stderr
    assert clean(refused.stderr), refused.stderr
    work.git("commit", "-qm", "mixed", "--no-verify")
    for hooks in ((), ("--no-verify",)):  # pre-push refuses, then pre-receive does
        held = work.push("-q", *hooks, "origin", "HEAD:main")
        assert held.returncode != 0 and "mixed-commit" in held.stderr, held.stderr
        assert clean(held.stderr), held.stderr
