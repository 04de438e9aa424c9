"""Where a judgement stands: the refs it is judged against, on the server (its current
refs) or on a client (what it knows of the remote). Which policy is in force is
``in_force.py``'s one answer."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from git_evidence.core.errors import PolicyError, UsageError
from git_evidence.core.oids import Oid
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import InForce, policy_at, resolve, tracking_ref
from git_evidence.policy.schema import POLICY_FILE, Policy

if TYPE_CHECKING:  # imported where they are built: reading the policy needs neither
    from git_evidence.core.facts import RefUpdate, RefView

__all__ = ["policy_at"]  # what a commit carries, for readers of a given commit


def policy_after_push(
    git: Git, refs: Mapping[str, Oid], updates: Sequence[RefUpdate]
) -> str | None:
    """Why the server could not read its policy once ``updates`` are applied (the
    policies of two branches that disagree on the base, say), or None."""
    after = dict(refs)
    for update in updates:
        if update.is_delete:
            after.pop(update.ref, None)
        else:
            after[update.ref] = update.new
    try:
        resolve(git, refs=after, server=True)
    except PolicyError as exc:
        return exc.message
    return None


def server_view(refs: dict[str, Oid], policy: Policy) -> RefView:
    from git_evidence.core.facts import RefView

    protected = {r: oid for r, oid in refs.items() if policy.is_protected(r)}
    return RefView(protected, refs.get(policy.base), policy.notes_ref in refs)


def server_aliases(
    git: Git, refs: Mapping[str, Oid], symrefs: Mapping[str, str], updates: Sequence[RefUpdate]
) -> dict[str, str]:
    """Symbolic refs on this server (``symrefs``: those that resolve, listed with
    ``refs``) → the ref each finally names. A pushed ref the ref list lacks may be a
    dangling symbolic ref (its target does not exist yet): those are asked one by one."""
    aliases = dict(symrefs)
    for update in updates:
        if update.ref not in refs and update.ref not in aliases:
            target = git.symref_target(update.ref)
            if target is not None and target != update.ref:
                aliases[update.ref] = target
    return aliases


def judged_refs(
    updates: Sequence[RefUpdate], aliases: Mapping[str, str], guarded: Collection[str]
) -> tuple[list[RefUpdate], list[str]]:
    """Each update as the ref it really moves: git updates the ref a
    pushed symbolic ref names, so that ref's rules apply (protection, fast-forward,
    base, the notes ref, deletion). A ref that a ``guarded`` symbolic ref (a protected
    ref, the notes ref) names is judged as that guarded ref. Also returns one line per
    update so judged, for the report."""
    from git_evidence.core.facts import RefUpdate

    guarding: dict[str, str] = {}
    for name in sorted(guarded):
        target = aliases.get(name)
        if target is not None and target not in guarded:
            guarding.setdefault(target, name)
    judged: list[RefUpdate] = []
    notes: list[str] = []
    for update in updates:
        target = aliases.get(update.ref, update.ref)
        ref = guarding.get(target, target)
        if ref != update.ref:
            how = (
                f"is a symbolic ref to {target}"
                if target != update.ref
                else f"is what the symbolic ref {ref} names"
            )
            notes.append(f"{update.ref} {how} on this server: judged as {ref}")
            update = RefUpdate(update.old, update.new, ref)
        judged.append(update)
    return judged, notes


class ServerPush(NamedTuple):
    refs: dict[str, Oid]  # the server's refs before the push
    policy: Policy  # the server's policy in force
    view: RefView
    updates: list[RefUpdate]  # each as the ref it really moves (``judged_refs``)
    notes: list[str]  # one line per update judged as another ref


def server_push(git: Git, updates: Sequence[RefUpdate]) -> ServerPush:
    """A push as this server takes it, for ``pre-receive`` to judge and
    ``post-receive`` to pin: the refs, the policy in force, the protected refs' view,
    and each update as the ref it really moves (a symbolic ref's target; a protected
    ref or the notes ref a guarded symbolic ref names)."""
    refs, symrefs = git.refs_and_symrefs()
    policy = resolve(git, refs=refs, server=True).policy
    view = server_view(refs, policy)
    aliases = server_aliases(git, refs, symrefs, updates)
    judged, notes = judged_refs(updates, aliases, {*view.protected, policy.notes_ref})
    return ServerPush(refs, policy, view, judged, notes)


def client_view(remote: str | None, refs: dict[str, Oid], policy: Policy) -> RefView:
    """The server's refs as this clone last saw them: its remote-tracking refs, else
    (a push to a URL, or a remote never fetched) the local branches of the same names,
    the best guess of what the server already holds."""
    # The server's names this clone knows: its own refs, and its remote-tracking
    # branches of `remote` named as the server names them.
    names = {r: None for r in refs if not r.startswith("refs/remotes/")}
    tracking = f"refs/remotes/{remote}/"
    if remote is not None:
        for ref in refs:
            if ref.startswith(tracking) and not ref.endswith("/HEAD"):
                names["refs/heads/" + ref[len(tracking) :]] = None
    protected: dict[str, Oid] = {}
    for ref in names:
        if not policy.is_protected(ref):
            continue
        known = tracking_ref(remote, ref, refs) or (ref if ref in refs else None)
        if known:
            protected[ref] = refs[known]
    from git_evidence.core.facts import RefView

    base = tracking_ref(remote, policy.base, refs) or (policy.base if policy.base in refs else None)
    return RefView(protected, refs[base] if base else None, policy.notes_ref in refs)


def open_repo(path: str | None) -> Git:
    """The repository at ``path`` (default: here), or a clear error."""
    git = Git(cwd=path)
    if git.run("rev-parse", "--git-dir", ok_codes=(0, 128))[0] != 0:
        raise UsageError(
            f"{path or os.getcwd()} is not a git repository",
            fix="run it inside the repository, or pass --repo DIR",
        )
    return git


def require_commit(git: Git, rev: str) -> Oid:
    oid = git.resolve_commit(rev)
    if oid is None:
        raise UsageError(f"{rev!r} does not name a commit")
    return oid


def local_base(git: Git, policy: Policy, refs: dict[str, Oid]) -> tuple[Oid | None, str]:
    """Where a local test run reads sealed evidence: the merge-base of
    ``HEAD`` with the base branch as this clone knows it (origin's copy, else the local
    branch). Returns the commit (None when there is none) and how it was found."""
    head = git.resolve_commit("HEAD")
    ref = tracking_ref("origin", policy.base, refs) or (
        policy.base if policy.base in refs else None
    )
    if head is None or ref is None:
        missing = "HEAD has no commit" if head is None else f"no {policy.base} here"
        return None, missing
    base = git.merge_base(head, refs[ref])
    if base is None:
        return None, f"HEAD shares no history with {ref}"
    return base, f"merge-base of HEAD and {ref}"


def sealed_labels(git: Git) -> tuple[bytes, str] | None:
    """The labels file sealed outside the repository (``git config
    evidence.labelsFile``), which wins over the base's, and its source."""
    sealed = git.config_get("evidence.labelsFile")
    if not sealed:
        return None
    try:
        with open(sealed, "rb") as handle:
            return handle.read(), f"sealed:{sealed}"
    except OSError as exc:
        raise UsageError(
            f"cannot read the sealed labels file {sealed}: {exc.strerror}",
            fix="fix or unset `git config evidence.labelsFile`",
        ) from None


def labels_bytes(git: Git, policy: Policy, base: str | None) -> tuple[bytes | None, str]:
    """The labels file in force and where it came from: a sealed file wins, else the
    base's ``[labels].path`` (None when the base has none)."""
    sealed = sealed_labels(git)
    if sealed is not None:
        return sealed
    source = f"base:{policy.labels_path}"
    return (git.blob_at(base, policy.labels_path) if base else None), source


def policy_in_waiting(git: Git, found: InForce) -> str | None:
    """A warning when HEAD's policy file differs from the one in force (read from
    ``found.ref`` at ``found.rev``): a committed change is not in force until it reaches
    the base branch. None when they agree, or when the policy is a draft or sealed."""
    policy, ref, rev = found
    if ref is None or ref == "HEAD" or found.origin not in ("base", "default"):
        return None
    head = git.resolve_commit("HEAD")
    if head is None or head == rev:
        return None
    ours = git.blob_at(head, POLICY_FILE)
    theirs = git.blob_at(rev, POLICY_FILE) if rev else None
    if ours == theirs:
        return None
    where = f"{ref} at {rev[:12]}" if rev else ref
    if ours is None:
        return (
            f"warning: HEAD has no {POLICY_FILE}, but the policy in force is read from "
            f"{where}: removing it takes effect only when that reaches {policy.base}"
        )
    return (
        f"warning: HEAD's {POLICY_FILE} differs from the policy in force (read from {where}): "
        f"not in force until it reaches {policy.base}; try it first with --policy "
        f"{POLICY_FILE}"
    )
