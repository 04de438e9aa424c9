"""Who is pushing, and what that identity may write."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from git_evidence.policy.schema import Policy

# First one set wins: ours, then what each hosting environment exports to hooks.
PUSHER_VARIABLES = (
    "GIT_EVIDENCE_PUSHER",  # set by the admin's wrapper, or by hand
    "GL_USERNAME",  # GitLab
    "GL_USER",  # gitolite
    "GITEA_PUSHER_NAME",  # Gitea / Forgejo
    "GITHUB_USER_LOGIN",  # GitHub Enterprise Server
    "REMOTE_USER",  # smart HTTP behind a web server with authentication
)


CLIENT = "client clone"  # the source of a client hook's identity: no name


class Identity(NamedTuple):
    name: str | None  # None: anonymous
    source: str  # where the name came from
    trusted_clone: bool = False  # a client clone marked `evidence.trusted`

    def evidence_writer(self, policy: Policy) -> bool:
        return self.trusted_clone or (
            self.name is not None and self.name in policy.evidence_writers
        )

    def ledger_writer(self, policy: Policy) -> bool:
        return self.trusted_clone or (self.name is not None and self.name in policy.ledger_writers)

    def lock_writer(self, policy: Policy) -> bool:
        return self.trusted_clone or (self.name is not None and self.name in policy.lock_writers)

    def verdict_writer(self, policy: Policy) -> bool:
        return self.trusted_clone or (
            self.name is not None and self.name in policy.verdict_writer_names
        )

    def reviewer(self, policy: Policy) -> bool:
        """Whether this identity's push accepts a hold: a reviewer, or a
        person's own clone marked trusted."""
        return self.trusted_clone or (self.name is not None and self.name in policy.review_names)

    @property
    def accepter(self) -> str:
        """How a report names this identity when its push accepts a hold."""
        return self.name if self.name is not None else "this trusted clone"

    def describe(self) -> str:
        if self.trusted_clone:
            return f"{self.name or 'this clone'} (trusted clone)"
        if self.name is None and self.source == CLIENT:
            return "this clone"
        return self.name if self.name is not None else "anonymous"


def server_pusher(environ: Mapping[str, str]) -> Identity:
    for variable in PUSHER_VARIABLES:
        value = environ.get(variable, "").strip()
        if value:
            return Identity(value, variable)
    return Identity(None, "no pusher variable set")


def client_identity(trusted: bool, as_name: str | None = None) -> Identity:
    """Client hooks have no authenticated identity: untrusted unless the clone says so
    (``git config evidence.trusted true``); ``--as NAME`` judges as a named pusher."""
    if as_name is not None:
        return Identity(as_name, "--as")
    return Identity(None, CLIENT, trusted_clone=trusted)


# Who a line of the ledger or the retry quota names as its writer, when not given with
# --writer: the clone's own setting, then the pusher variables.
WRITER_KEY = "evidence.writer"


def line_writer(
    given: str | None, configured: str | None, environ: Mapping[str, str]
) -> tuple[str | None, str]:
    """``(name, where it came from)``: ``--writer``, else ``git config evidence.writer``,
    else ``GIT_EVIDENCE_PUSHER`` (then the other pusher variables); ``(None, "")`` when
    none says."""
    if given:
        return given, "--writer"
    if configured:
        return configured, f"git config {WRITER_KEY}"
    pusher = server_pusher(environ)
    return pusher.name, pusher.source if pusher.name else ""
