"""Which policy is in force: the one answer, ``resolve``, for every hook, command and
judge. A draft tried with ``--policy FILE`` wins; else the file sealed outside the
repository (``git config evidence.policyFile``); else the policy a commit carries — the
commit asked for (``--base REF``, a job's base), or on the server the tip of the base
branch before the push, or on a client the base branch as this clone knows it
(the remote's copy, else the local branch, else ``HEAD``) — its file, or the built-in
defaults when it has none. The agent's installed guard asks for the copy pinned when a
person installed it (``policy/pinned.py``), origin ``pinned``: that reads one file and
starts no git, and nothing the agent can write (git config, refs, the index) moves it.

What comes back is an ``InForce``: the policy, where it came from (``origin``, a closed
set), and the ref and commit it was read from. Callers ask ``origin``; nothing else
reads a policy's ``source`` text to learn where it came from."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, NamedTuple

from git_evidence.core.errors import PolicyError, UsageError
from git_evidence.core.oids import Oid, is_oid
from git_evidence.policy.parsing import (
    BASE_SOURCE,
    DRAFT_SOURCE,
    PINNED_SOURCE,
    load_at,
    parse_policy,
    read_sealed,
)
from git_evidence.policy.schema import POLICY_FILE, Origin, Policy

if TYPE_CHECKING:  # a pinned policy is read without git: its modules load when asked
    from git_evidence.plumbing.git import Git
    from git_evidence.policy.pinned import Pin  # the guard's alone: loaded when asked

DEFAULT_BASE = "refs/heads/main"
SEALED_KEY = "evidence.policyFile"


class InForce(NamedTuple):
    policy: Policy
    # The ref and the commit it was read from: None for a draft, a sealed file or a
    # pinned copy; the ref is "HEAD" when a client had no base branch, ``at`` as given.
    ref: str | None = None
    rev: Oid | None = None

    @property
    def origin(self) -> Origin:
        return self.policy.origin


def client_refs(remote: str | None) -> tuple[str, str, str]:
    """Where a client looks for the policy first, first found first: the remote's base
    branch as last fetched, the local base branch, ``HEAD``."""
    return (f"refs/remotes/{remote or 'origin'}/main", DEFAULT_BASE, "HEAD")


def resolve(
    git: Git | None,
    *,
    pinned: Pin | None = None,
    draft: str | None = None,
    at: str | None = None,
    refs: Mapping[str, Oid] | None = None,
    remote: str | None = None,
    server: bool = False,
    cached: bool = True,
) -> InForce:
    """The policy in force. ``draft``: a ``--policy FILE`` tried before it is in force.
    ``at``: the policy the commit ``at`` names carries (``--base REF``, a job's base; a
    commit id is taken as it is), unless a sealed file wins. Otherwise read where the
    ``server`` reads it, or a client (``remote``: the remote whose tracking refs stand
    for the server). ``refs``: every ref, when the caller has them; otherwise a
    server lists them, and a client asks only the few it reads, of the object reader
    that then reads the policy (no ``for-each-ref``). ``cached=False`` for a reader
    that must not trust what the git directory keeps. ``pinned``: the agent guard's
    pinned copy, which alone is read then (``git`` may be None: no git is asked)."""
    if pinned is not None:
        return _pinned(pinned)
    if git is None:
        raise ValueError("resolve: a git repository, or a pinned policy")
    if draft:
        return InForce(draft_policy(draft))
    path = git.config_get(SEALED_KEY)
    if path:
        return InForce(read_sealed(path))
    if at:
        commit = Oid(at) if is_oid(at) else git.resolve_commit(at)
        if commit is None:
            raise UsageError(f"{at!r} does not name a commit")
        return InForce(policy_at(git, commit, cached), at, commit)
    if server:
        return _server(git, git.refs() if refs is None else refs)
    return _client(git, remote, AskedRefs(git) if refs is None else refs, cached)


def policy_at(git: Git, rev: str | None, cached: bool = True) -> Policy:
    """The policy ``rev`` carries (the defaults when it has none), parsed once per blob
    (``policy_cache.py``). ``cached=False`` for a reader that must not trust what the
    git directory keeps."""
    if not rev:
        return load_at(None, rev)
    found = git.blob_and_id_at(rev, POLICY_FILE)
    if found is None:
        return load_at(None, rev)
    blob, data = found
    from git_evidence.plumbing import policy_cache

    kept = policy_cache.get(git, blob, BASE_SOURCE) if cached else None
    if kept is not None:
        return kept
    policy = load_at(data, rev)
    if cached:
        policy_cache.put(git, blob, policy)
    return policy


def tracking_ref(remote: str | None, ref: str, refs: Mapping[str, Oid]) -> str | None:
    """``refs/heads/X`` on ``remote`` → ``refs/remotes/<remote>/X`` when this clone has
    it."""
    if remote is None or not ref.startswith("refs/heads/"):
        return None
    name = f"refs/remotes/{remote}/{ref[len('refs/heads/') :]}"
    return name if name in refs else None


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
    policy = parse_policy(data, path)
    return policy._replace(source=DRAFT_SOURCE.format(path=path), origin="draft")


def _pinned(pin: Pin) -> InForce:
    """The guard's pinned policy, and the ref and commit it was read from when it was
    pinned; a ``PolicyError`` naming the repair when it cannot be read or was changed.
    Its parsed values first, when their digest and the validating code match."""
    from git_evidence.policy.pinned import parse_pinned, pinned_commit, verify

    try:
        with open(pin.path, "rb") as handle:
            data: bytes | None = handle.read()
        why = ""
    except OSError as exc:
        data, why = None, exc.strerror or type(exc).__name__
    verify(data, pin, why)  # the file a person pinned, whichever form is read
    kept = _pinned_values(pin) if pin.values_digest else None
    if kept is not None:
        return kept
    policy = parse_pinned(data, pin, why)
    read_from = pinned_commit(data or b"")
    if read_from is None:
        return InForce(policy)
    return InForce(policy, read_from[0], Oid(read_from[1]))


def _pinned_values(pin: Pin) -> InForce | None:
    import marshal

    from git_evidence.plumbing import policy_cache
    from git_evidence.policy.pinned import VALUES_FILE, digest

    try:
        with open(os.path.join(os.path.dirname(pin.path), VALUES_FILE), "rb") as handle:
            data = handle.read()
        if digest(data) != pin.values_digest:
            return None
        stamp, plain, ref, rev = marshal.loads(data)
        if stamp != policy_cache.signature() or not stamp:
            return None
        policy = policy_cache.from_plain(plain)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    source = PINNED_SOURCE.format(path=pin.path)
    policy = policy._replace(source=source, origin="pinned")
    return InForce(policy, ref, Oid(rev) if rev else None)


def pinned_values(policy: Policy, read_from: tuple[str, str] | None) -> bytes:
    """The pinned policy as the values the guard loads (``_pinned_values``)."""
    import marshal

    from git_evidence.plumbing import policy_cache

    ref, rev = read_from or (None, None)
    return marshal.dumps((policy_cache.signature(), policy_cache.to_plain(policy), ref, rev))


def _server(git: Git, refs: Mapping[str, Oid]) -> InForce:
    """The file at the tip of the base branch as the server has it before this push.
    The first read is from the branch HEAD names (the default branch); when that policy
    names another base, the policy there is the one."""
    from git_evidence.plumbing.repo_dirs import head_target

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
    return InForce(policy, policy.base, refs.get(policy.base))


def _client(git: Git, remote: str | None, refs: Mapping[str, Oid], cached: bool) -> InForce:
    ref, rev = _first_client_ref(git, remote, refs)
    policy = policy_at(git, rev, cached)
    tracked = tracking_ref(remote or "origin", policy.base, refs)
    if policy.base != DEFAULT_BASE and (tracked or policy.base in refs):
        ref = tracked or policy.base
        rev = refs[ref]
        policy = policy_at(git, rev, cached)
    return InForce(policy, ref, rev)


class AskedRefs(Mapping[str, Oid]):
    """The refs a client reads, each asked when first wanted of the one object reader
    (``cat-file --batch``, the ``lookups.live`` block's when there is one) that also
    reads the policy: the two or three names ``client_refs`` and ``tracking_ref``
    build (and ``check``'s notes ref), where listing every ref is a process of its own.
    Only full names under ``refs/`` are asked; one git does not find as it is is looked
    for under ``refs/`` too, as git reads a ref name, so only a ref the clone's owner
    made could answer for it. Not iterable: a caller that needs every ref lists them."""

    def __init__(self, git: Git) -> None:
        self._git = git
        self._known: dict[str, Oid | None] = {}

    def _get(self, name: str) -> Oid | None:
        if name not in self._known:
            from git_evidence.plumbing.batch import CatFile

            with CatFile(self._git) as cat:
                hit = cat.get(name)
            self._known[name] = hit[0] if hit is not None else None
        return self._known[name]

    def __getitem__(self, name: str) -> Oid:
        found = self._get(name)
        if found is None:
            raise KeyError(name)
        return found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.startswith("refs/") and self._get(name) is not None

    def __iter__(self) -> Iterator[str]:
        raise TypeError("the refs a client asks one by one cannot be listed")

    def __len__(self) -> int:
        raise TypeError("the refs a client asks one by one cannot be counted")


def _first_client_ref(
    git: Git, remote: str | None, refs: Mapping[str, Oid]
) -> tuple[str, Oid | None]:
    for candidate in client_refs(remote)[:2]:
        if candidate in refs:
            return candidate, refs[candidate]
    if isinstance(refs, AskedRefs):  # the reader that asked the refs answers HEAD too
        from git_evidence.plumbing.batch import CatFile

        with CatFile(git) as cat:
            hit = cat.get("HEAD^{commit}")
        return "HEAD", hit[0] if hit is not None and hit[1] == "commit" else None
    return "HEAD", git.resolve_commit("HEAD")
