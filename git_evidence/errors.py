"""The error types: each one means "the gate could not decide" (exit 2)."""

from __future__ import annotations

from collections.abc import Sequence

PREFIX = "git-evidence"  # what every message of ours starts with

EXIT_ALLOW = 0
EXIT_REFUSE = 1
EXIT_ERROR = 2


class EvidenceError(Exception):
    """Something the user must fix; printed as one message plus a fix, exit 2."""

    rule = "git-error"

    def __init__(self, message: str, fix: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix

    def __str__(self) -> str:
        return self.message


class PolicyError(EvidenceError):
    """The policy file is unreadable or invalid: every hook refuses."""

    rule = "policy-error"

    def __init__(
        self, source: str, message: str, *, key: str = "", line: int | None = None
    ) -> None:
        where = source if line is None else f"{source}:{line}"
        text = f"{where}: {key}: {message}" if key else f"{where}: {message}"
        super().__init__(
            text,
            fix=f"correct {source} (see `git evidence policy` and the man page); "
            "until it parses, every push is refused",
        )
        self.source = source
        self.key = key
        self.line = line


class GitError(EvidenceError):
    """A git command failed; carries the command, exit code and output."""

    rule = "git-error"

    def __init__(self, cmd: Sequence[str], returncode: int, stdout: bytes, stderr: bytes) -> None:
        self.cmd = tuple(cmd)
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        err = stderr.decode("utf-8", "replace").strip()
        super().__init__(
            f"`{' '.join(self.cmd)}` exited {returncode}" + (f": {err}" if err else ""),
            fix="check that the repository and the objects named are intact "
            "(git fsck); nothing was allowed",
        )


class UsageError(EvidenceError):
    """Bad command-line or hook input."""

    rule = "usage-error"
