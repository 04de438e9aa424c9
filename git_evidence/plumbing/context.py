"""Where a judgement stands: the policy in force and the refs it is judged against,
on the server (its current refs) or on a client (what it knows of the remote)."""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING

from git_evidence.core.errors import PolicyError, UsageError
from git_evidence.core.oids import Oid
from git_evidence.plumbing import policy_cache
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.repo_dirs import head_target
from git_evidence.policy.parsing import BASE_SOURCE, load_at, parse_policy, read_sealed
from git_evidence.policy.schema import POLICY_FILE, Policy

if TYPE_CHECKING:  # imported where they are built: reading the policy needs neither
    from git_evidence.core.facts import RefUpdate, RefView

DEFAULT_BASE = "refs/heads/main"


def sealed_policy(git: Git) -> Policy | None:
    path = git.config_get("evidence.policyFile")
    return read_sealed(path) if path else None


def policy_at(git: Git, rev: str | None, cached: bool = True) -> Policy:
    """The policy ``rev`` carries (the defaults when it has none), parsed once per blob
    (``policy_cache.py``). ``cached=False`` for a reader that must not trust what the
    git directory keeps (the guard: the agent it judges can write there)."""
    if not rev:
        return load_at(None, rev)
    found = git.blob_and_id_at(rev, POLICY_FILE)
    if found is None:
        return load_at(None, rev)
    blob, data = found
    kept = policy_cache.get(git, blob, BASE_SOURCE) if cached else None
    if kept is not None:
        return kept
    policy = load_at(data, rev)
    if cached:
        policy_cache.put(git, blob, policy)
    return policy


def server_policy(git: Git, refs: dict[str, Oid]) -> Policy:
    """Sealed file, else the file at the tip of the base branch as the server has it
    before this push. The first read is from the branch HEAD names (the default
    branch); when that policy names another base, the policy there is the one."""
    sealed = sealed_policy(git)
    if sealed is not None:
        return sealed
    head = head_target(git) or DEFAULT_BASE
    policy = policy_at(git, refs.get(head))
    if policy.base != head and policy.base in refs:
        again = policy_at(git, refs[policy.base])
        if again.base != policy.base:
            raise PolicyError(
                again.source,
                f"the policy on {policy.base} names {again.base} as base; they must agree",
                key="rules.base",
            )
        policy = again
    return policy


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
        server_policy(git, after)
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


def tracking_ref(remote: str | None, ref: str, refs: dict[str, Oid]) -> str | None:
    """``refs/heads/X`` on ``remote`` → ``refs/remotes/<remote>/X`` when this clone has
    it."""
    if remote is None or not ref.startswith("refs/heads/"):
        return None
    name = f"refs/remotes/{remote}/{ref[len('refs/heads/') :]}"
    return name if name in refs else None


def client_policy_rev(git: Git, remote: str | None, refs: dict[str, Oid]) -> Oid | None:
    """Where a client reads the policy: the remote's base branch as last fetched, else
    the local base branch, else HEAD."""
    return _client_policy_ref(git, remote, refs)[1]


def _client_policy_ref(
    git: Git, remote: str | None, refs: dict[str, Oid]
) -> tuple[str, Oid | None]:
    for candidate in (
        tracking_ref(remote or "origin", DEFAULT_BASE, refs),
        DEFAULT_BASE if DEFAULT_BASE in refs else None,
    ):
        if candidate:
            return candidate, refs[candidate]
    return "HEAD", git.resolve_commit("HEAD")


def client_policy(
    git: Git, remote: str | None, refs: dict[str, Oid], cached: bool = True
) -> Policy:
    return client_policy_read(git, remote, refs, cached)[0]


def client_policy_read(
    git: Git, remote: str | None, refs: dict[str, Oid], cached: bool = True
) -> tuple[Policy, str | None, Oid | None]:
    """The client's policy, and the ref and commit it was read from (``None, None``
    for a sealed file)."""
    sealed = sealed_policy(git)
    if sealed is not None:
        return sealed, None, None
    ref, rev = _client_policy_ref(git, remote, refs)
    policy = policy_at(git, rev, cached)
    tracked = tracking_ref(remote or "origin", policy.base, refs)
    if policy.base != DEFAULT_BASE and (tracked or policy.base in refs):
        ref = tracked or policy.base
        rev = refs[ref]
        policy = policy_at(git, rev, cached)
    return policy, ref, rev


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


def chosen_policy(git: Git, base: str | None, draft: str | None = None) -> Policy:
    """``--policy FILE`` when given, else the policy at ``--base REF``, else where a
    client reads it."""
    if draft:
        return draft_policy(draft)
    if base:
        return policy_at(git, require_commit(git, base))
    return client_policy(git, None, git.refs())


DRAFT_SOURCE = "draft policy {path} (not in force)"


def draft_policy(path: str) -> Policy:
    """``--policy FILE``: a policy tried before it is in force. Read from the file as
    given (relative to the current directory); its errors name the file, and every
    report names it as a draft."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise UsageError(
            f"cannot read the draft policy {path}: {exc.strerror}",
            fix="name a policy file (e.g. --policy .git-evidence.toml)",
        ) from None
    return parse_policy(data, path)._replace(source=DRAFT_SOURCE.format(path=path))


def is_draft(policy: Policy) -> bool:
    """Whether ``policy`` came from ``--policy FILE`` rather than from where it is in
    force."""
    return policy.source.startswith("draft policy ")


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


def chosen_policy_read(
    git: Git, base: str | None, draft: str | None = None, *, server: bool = False
) -> tuple[Policy, str | None, Oid | None]:
    """``chosen_policy`` (or with ``server`` the pre-receive's), and the ref and commit
    it was read from (``None, None`` for a draft or a sealed file; with ``--base REF``
    the ref is REF as given)."""
    if draft:
        return draft_policy(draft), None, None
    if base:
        commit = require_commit(git, base)
        return policy_at(git, commit), base, commit
    refs = git.refs()
    if not server:
        return client_policy_read(git, None, refs)
    policy = server_policy(git, refs)
    if policy.source.startswith("sealed:"):
        return policy, None, None
    return policy, policy.base, refs.get(policy.base)


def policy_in_waiting(git: Git, policy: Policy, ref: str | None, rev: Oid | None) -> str | None:
    """A warning when HEAD's policy file differs from the one in force (read from
    ``ref`` at ``rev``): a committed change is not in force until it reaches the base
    branch. None when they agree, or when the policy is a draft or sealed."""
    if ref is None or ref == "HEAD" or is_draft(policy):
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
