"""A push as this clone's ``pre-push`` judges it before it leaves: against what the
clone knows of the remote (its remote-tracking refs), as the server would. The hook's
command reads its arguments, input and environment and calls ``outgoing``.

Under the pre-commit framework there is no input: pre-commit exports the first pushed
ref as ``PRE_COMMIT_*`` variables (and no from/to refs when the push carries a root
commit). Then the local branch named, or HEAD, is judged, and the report says so."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from git_evidence.core.errors import PolicyError, UsageError
from git_evidence.core.facts import RefUpdate
from git_evidence.core.oids import zero_oid
from git_evidence.gate import pipeline
from git_evidence.gate.ranges import parse_push_lines
from git_evidence.plumbing.context import client_view
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy.identity import client_identity
from git_evidence.rules.table import CLIENT_POLICY_FIX

if TYPE_CHECKING:
    from git_evidence.gate.report import Rendering, Report


def outgoing(
    git: Git,
    remote: str | None,
    lines: bytes | None,
    env: Mapping[str, str],
    *,
    say: Callable[[str], None] | None,
    max_findings: int | None,
) -> tuple[Report, Rendering]:
    """The push git describes in ``lines`` to ``remote`` (None for both: the push the
    pre-commit framework describes in ``env``), judged and how to show it. Notes refs
    are let through, said once: through ``say`` when given, else as a report note."""
    notes: list[str] = []
    if lines is None:
        remote, updates, notes = _from_pre_commit(git, env)
    else:
        updates = parse_push_lines(lines)
    # Notes (the locks, the verdicts) are the server's to decide: who may write them is
    # known only there. Let them through, saying so once.
    notes_refs = [u.ref for u in updates if u.ref.startswith(NOTES_NAMESPACE)]
    if notes_refs:
        updates = [u for u in updates if not u.ref.startswith(NOTES_NAMESPACE)]
        notice = (
            f"{', '.join(notes_refs)}: notes are decided by the server (its lock and "
            "verdict writers), not by this hook"
        )
        if say is None:
            notes.append(notice)
        else:
            say(notice)
    refs = git.refs()
    try:
        policy = resolve(git, refs=refs, remote=remote).policy
    except PolicyError as exc:
        exc.fix = (
            f"{CLIENT_POLICY_FIX}; when the remote's base branch carries the broken "
            "file, every push is refused there too: its admin recovers it (docs/policy.md: "
            "Recovering from a broken base policy)"
        )
        raise
    who = client_identity(git.config_bool("evidence.trusted"))
    view = client_view(remote, refs, policy)
    if not view.notes:
        notes.append(_no_lock(git, remote, policy.notes_ref))
    report = pipeline.decide(git, updates, policy, view, who, entry="pre-push", notes=notes)
    return report, pipeline.rendering(git, report, max_findings)


NOTES_NAMESPACE = "refs/notes/"


def _no_lock(git: Git, remote: str | None, notes_ref: str) -> str:
    """Why this clone has no lock to check against: the server has none yet (the
    fetch refspec is there), or nothing fetches it."""
    if remote is not None:
        fetched = git.config_all(f"remote.{remote}.fetch")
        sources = [spec.lstrip("+").split(":", 1)[0] for spec in fetched]
        if any(
            src == notes_ref or (src.endswith("*") and notes_ref.startswith(src[:-1]))
            for src in sources
        ):
            return (
                f"no lock fetched from {remote} yet: `git fetch {remote}` brings its "
                f"{notes_ref} once it has one (its post-receive pins the first on the "
                "next accepted push to its base branch); the server checks the fixtures "
                "against its base meanwhile"
            )
    return (
        f"no lock fetched ({notes_ref} is missing here): the lock "
        "is not checked before the server does it; `git evidence install` "
        "adds the fetch refspec, then `git fetch`"
    )


def _from_pre_commit(
    git: Git, env: Mapping[str, str]
) -> tuple[str | None, list[RefUpdate], list[str]]:
    """The push the pre-commit framework describes (``PRE_COMMIT_*``), which passes only
    its first ref and none for a root commit: that ref, else the local branch, else
    HEAD, judged as a push to the remote's branch, and a note saying so."""
    remote = env.get("PRE_COMMIT_REMOTE_NAME") or ("origin" if "origin" in git.remotes() else None)
    target = env.get("PRE_COMMIT_REMOTE_BRANCH") or ""
    to_ref = env.get("PRE_COMMIT_TO_REF") or ""
    local = env.get("PRE_COMMIT_LOCAL_BRANCH") or ""
    source = to_ref or local or "HEAD"
    new = git.resolve_commit(source)
    if new is None:
        raise UsageError(
            f"cannot resolve {source!r} to a commit",
            fix="run it from git's pre-push hook or pre-commit's pre-push stage",
        )
    if not target:
        target = git.head_branch() or "refs/heads/HEAD"
    ref = target if target.startswith("refs/") else f"refs/heads/{target}"
    if to_ref:
        how = "PRE_COMMIT_TO_REF"
    elif local:
        how = "the local branch (pre-commit passed no from/to refs: a root commit)"
    else:
        how = "HEAD (no push information was given)"
    note = (
        f"judged {source} ({new[:12]}) as a push to {ref} on "
        f"{remote or 'the remote'}, from {how}; pre-commit passes only the first "
        "pushed ref, the server judges the others"
    )
    old = (
        git.resolve_commit(f"refs/remotes/{remote}/{ref.removeprefix('refs/heads/')}")
        if remote
        else None
    )
    return remote, [RefUpdate(old or zero_oid(new), new, ref)], [note]
