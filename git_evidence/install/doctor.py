"""What fits where the gate runs, checked (``git evidence doctor``). On a bare
repository (a server): the server hooks, the policy in force, whether a pusher identity
is visible, the settings that seal the gate, the lock, and the branches holding commits
the gate would refuse if they were pushed today. In a clone: the client hooks
(installed, chained, or run by the pre-commit framework), each remote's fetch refspec
for the locks and verdicts, the policy the hooks judge by, and the locks fetched.

``examine`` yields each check as it is found, so what came before a failure stays said;
``commands/doctor.py`` prints them."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Literal, NamedTuple

from git_evidence.core.errors import EvidenceError
from git_evidence.core.oids import Oid
from git_evidence.gate.checking import check_range
from git_evidence.install.hooks import (
    CLIENT_HOOKS,
    MARKER,
    RECOMMENDED,
    SERVER_HOOKS,
    notes_refspecs,
)
from git_evidence.install.repository import FRAMEWORK_MARKER
from git_evidence.lock import store
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy.identity import PUSHER_VARIABLES, server_pusher
from git_evidence.policy.schema import Policy


class Check(NamedTuple):
    state: Literal["ok", "warning", "missing"]
    text: str


def examine(git: Git, environ: Mapping[str, str]) -> Iterator[Check]:
    """The checks of ``git``'s repository, a server's or a clone's, in order;
    ``environ`` is where a server's pusher identity would be read."""
    if not git.is_bare():
        yield Check("ok", "a clone: checking its client hooks, refspecs and policy")
        yield from _client(git)
        return
    yield Check("ok", "a bare repository: checking its server hooks, policy and branches")
    yield from _hooks(git, SERVER_HOOKS, "git evidence install --server")
    refs = git.refs()
    try:
        policy = resolve(git, refs=refs, server=True).policy
    except EvidenceError as exc:
        yield Check("missing", f"a policy that parses: {exc.message} (every push is refused)")
        return
    yield Check("ok", f"policy from {policy.source}, {policy.digest}")
    for role in ("evidence_writers", "ledger_writers", "lock_writers"):
        names = sorted(getattr(policy, role))
        yield Check(
            "ok" if names else "warning",
            f"{role}: {', '.join(names) if names else 'none: nobody may push that kind'}",
        )
    who = server_pusher(environ)
    if who.name:
        yield Check("ok", f"pusher identity visible here: {who.name} (from {who.source})")
    else:
        yield Check(
            "warning",
            "no pusher variable in this environment "
            f"({', '.join(PUSHER_VARIABLES)}): pushes that reach the hook like this are "
            "anonymous, trusted for nothing; check what your server exports to hooks",
        )
    for key, why in RECOMMENDED.items():
        if git.config_bool(key):
            yield Check("ok", f"{key} = true")
        else:
            yield Check("warning", f"{key} is not true ({why}): git config {key} true")
    yield _lock(git, refs, policy)
    yield from _refused_branches(git, refs, policy)


def _lock(git: Git, refs: Mapping[str, Oid], policy: Policy) -> Check:
    tip = refs.get(policy.base)
    if tip is None:
        return Check("warning", f"{policy.base} does not exist yet: nothing is pinned")
    if policy.notes_ref not in refs:
        return Check(
            "warning" if not policy.lock_required else "missing",
            f"no locks ({policy.notes_ref} is missing): post-receive pins the next push "
            f"to {policy.base}, or a lock writer runs git evidence lock",
        )
    found = store.find_lock(git, policy.notes_ref, tip)
    if found:
        return Check("ok", f"lock in force at {policy.base}: note on {found.commit[:12]}")
    return Check("warning", f"no lock in force at {policy.base}")


def _hooks(git: Git, names: tuple[str, ...], install: str) -> Iterator[Check]:
    hooks = git.git_path("hooks")
    for name in names:
        path = os.path.join(hooks, name)
        if not os.path.exists(path):
            yield Check("missing", f"{name} hook ({path}): run {install}")
            continue
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
        if not os.access(path, os.X_OK):
            yield Check("missing", f"{name} hook is not executable: chmod +x {path}")
        elif MARKER in text:
            yield Check("ok", f"{name} hook installed by git evidence ({path})")
        elif "git_evidence" in text or "git-evidence" in text:
            yield Check("ok", f"{name} hook chains git evidence ({path})")
        elif FRAMEWORK_MARKER in text and _framework_runs_us(git):
            yield Check("ok", f"{name} hook runs git evidence through the pre-commit framework")
        else:
            yield Check(
                "missing",
                f"{name} hook exists but does not run git evidence ({path}): "
                f"{install} prints the lines to add",
            )


def _framework_runs_us(git: Git) -> bool:
    """Whether the work tree's pre-commit framework configuration names git evidence."""
    top = git.toplevel()
    if top is None:
        return False
    try:
        with open(os.path.join(top, ".pre-commit-config.yaml"), errors="replace") as handle:
            return "git-evidence" in handle.read()
    except OSError:
        return False


def _client(git: Git) -> Iterator[Check]:
    """A clone: its hooks, each remote's notes refspec, the policy its hooks judge by,
    the locks fetched. Server hooks and settings are the server's to check."""
    yield from _hooks(git, CLIENT_HOOKS, "git evidence install")
    refs = git.refs()
    try:
        policy, ref, rev = resolve(git, refs=refs)
    except EvidenceError as exc:
        yield Check("missing", f"a policy that parses: {exc.message} (every commit is refused)")
        return
    where = f" ({ref} at {rev[:12]})" if ref and rev else ""
    yield Check("ok", f"policy from {policy.source}{where}, {policy.digest}")
    wanted = notes_refspecs([policy.notes_ref, policy.judge.notes_ref])
    remotes = git.remotes()
    if not remotes:
        yield Check("warning", "no remote: the hooks judge against the local branches")
    for remote in remotes:
        specs = git.config_all(f"remote.{remote}.fetch")
        absent = [spec for spec in wanted if spec not in specs]
        if absent:
            yield Check(
                "missing",
                f"{remote} does not fetch {' and '.join(absent)} (locks and verdicts): "
                "run git evidence install",
            )
        else:
            yield Check("ok", f"{remote} fetches the locks and verdicts")
    trusted = git.config_bool("evidence.trusted")
    yield Check(
        "ok",
        "this clone is trusted (evidence.trusted): its hooks judge as an evidence writer"
        if trusted
        else "this clone is untrusted: its hooks judge as a pusher who may not write evidence",
    )
    if policy.notes_ref in refs or any(r.startswith("refs/remotes/") for r in refs):
        fetched = policy.notes_ref in refs
        yield Check(
            "ok" if fetched else "warning",
            f"locks fetched ({policy.notes_ref})"
            if fetched
            else f"no locks fetched yet ({policy.notes_ref}): git fetch brings them",
        )


def _refused_branches(git: Git, refs: Mapping[str, Oid], policy: Policy) -> Iterator[Check]:
    """Each branch whose commits beyond the base branch the gate would refuse if they
    were pushed today, by a pusher who may not write evidence (``check``'s judgement
    of the range): kept from before the gate, they could not be pushed again."""
    base = refs.get(policy.base)
    anonymous = server_pusher({})
    for ref in sorted(r for r in refs if r.startswith("refs/heads/") and r != policy.base):
        tip = git.resolve_commit(refs[ref])
        if tip is None:
            continue
        bottom = git.merge_base(base, tip) if base else None
        if bottom == tip:
            continue
        report = check_range(git, refs, policy, anonymous, bottom, tip, ref)
        blocking = [f for d in report.decisions for f in d.findings if f.blocking]
        if not blocking:
            continue
        commits = len({f.commit for f in blocking if f.commit})
        rules = ", ".join(sorted({f.rule for f in blocking}))
        span = f"{bottom[:12]}..{ref.removeprefix('refs/heads/')}" if bottom else ref
        held = (
            f"{ref} holds what the gate would refuse today ({rules}; {commits} commit(s) of {span})"
        )
        if policy.is_protected(ref):
            yield Check(
                "warning", f"{held}: protected, so a push to it judges only its new commits"
            )
        else:
            yield Check(
                "warning",
                f"{held}: not protected, so every push to it judges them again and is "
                "refused; list it in [rules].protected if its history stands, else split it",
            )
