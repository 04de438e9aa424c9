"""The error types: each one means "the gate could not decide" (exit 2)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final, Literal

PREFIX = "git-evidence"  # what every message of ours starts with

EXIT_ALLOW = 0
EXIT_REFUSE = 1
EXIT_ERROR = 2
# A reader that stopped reading (`git evidence policy | head -1`): the exit status of a
# process ended by SIGPIPE, as the shell reports it, never 0 (a hook never allows on it).
EXIT_BROKEN_PIPE = 128 + 13

# What a command that could not decide says as its decision (JSON `"decision"`).
ERROR = "error"
USAGE_HINT = "see `git evidence <command> --help` or `man git-evidence`"
INTERNAL_ERROR: Final = "internal-error"  # an exception nobody foresaw: a bug
INTERNAL_HINT = (
    "a bug in git evidence, nothing was allowed: report it with the trace file named "
    "(rerun with -v to see the trace)"
)
# The rule an error names (``EvidenceError.rule``): a rule of the table (rules.RuleId)
# or one of a command's own. A closed set: the type checker holds every error to it.
ErrorRule = Literal[
    "git-error",
    "policy-error",
    "usage-error",
    "time-budget",
    "internal-error",
    "lock-invalid",
    "verdict-invalid",
    "cannot-start",
    "ref-moved",
]
# The rules that mean "could not decide" (exit 2, nothing allowed), not a finding.
ERROR_RULES: frozenset[ErrorRule] = frozenset(
    {"usage-error", "git-error", "policy-error", "time-budget", INTERNAL_ERROR}
)


class EvidenceError(Exception):
    """Something the user must fix; printed as one message plus a fix, exit 2."""

    rule: ClassVar[ErrorRule] = "git-error"

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


class CommandLineError(UsageError):
    """The command line does not parse (argparse's complaint), with the usage."""

    def __init__(self, message: str, *, usage: str, prog: str) -> None:
        super().__init__(message, fix=f"see `{prog} --help`")
        self.usage = usage


class NotARepository(UsageError):
    """Run outside any git repository: one line, as git says it."""

    def __init__(self, where: str) -> None:
        super().__init__(f"{where} is not a git repository (nor is any parent directory)")
