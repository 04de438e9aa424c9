"""The policy in force, parsed once per blob: every hook and command reads the same
``.git-evidence.toml`` blob again and again, and parsing it (the TOML reader's import,
the parse, the validation) costs more than the git process that reads it.

A policy that parsed is kept under ``<git common dir>/git-evidence/policies-v1/<blob
id>`` in ``marshal`` form (plain tuples, sets and strings; loading it runs no code),
with its digest, so that a report names it without hashing. A
blob id names its content, so an entry can never describe another file. An entry
also records the size and modification time of the modules that parse and validate a
policy, so an upgrade (or an edit of a development tree) that makes validation
stricter never takes a policy the new code would refuse. A policy that does not parse
is never kept: its error is found and worded again each time. Only a process that can
write the git directory adds an entry (on a server, its own hooks); anyone who can
write there can rewrite the hooks themselves, so the hooks and commands trust no one
new. The guard is the exception: the agent it judges can write the git directory of
its own work tree, so it reads the committed file every time (``cached=False``).

Apart from ``context.py``, which says which blob is the policy in force, because this
is about files of the repository's own and what is safe to keep in them."""

from __future__ import annotations

import contextlib
import marshal
import os
from typing import TYPE_CHECKING, Any

from git_evidence.core.oids import Oid
from git_evidence.plumbing.repo_dirs import common_dir
from git_evidence.policy.properties import JudgeConfig, JudgeProperty
from git_evidence.policy.schema import Policy, knows_digest

if TYPE_CHECKING:  # the guard loads its pinned values without git
    from git_evidence.plumbing.git import Git

CACHE_DIR = "policies-v1"
# The modules whose code decides what a policy file means.
_MODULES = ("policy/parsing.py", "policy/schema.py", "policy/properties.py")


def signature() -> tuple[Any, ...]:
    """What a kept policy is stamped with: the record's fields and the size and time
    of the modules that validate a policy (empty when they cannot be read)."""
    return _signature()


def _signature() -> tuple[Any, ...]:
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    stats = []
    for module in _MODULES:
        try:
            info = os.stat(os.path.join(package, module))
        except OSError:
            return ()
        stats.append((module, info.st_size, info.st_mtime_ns))
    return (CACHE_DIR, Policy._fields, JudgeConfig._fields, JudgeProperty._fields, *stats)


def _path(git: Git, blob: Oid) -> str:
    return os.path.join(common_dir(git), "git-evidence", CACHE_DIR, blob)


def to_plain(policy: Policy) -> tuple[Any, ...]:
    """``policy`` as values ``marshal`` writes: its judge section and properties as
    plain tuples, its path globs as a plain dict."""
    judge = policy.judge
    properties = tuple(tuple(p) for p in judge.properties)
    plain_judge = tuple(
        properties if name == "properties" else value
        for name, value in zip(JudgeConfig._fields, judge, strict=True)
    )
    return tuple(
        dict(policy.paths) if name == "paths" else plain_judge if name == "judge" else value
        for name, value in zip(Policy._fields, policy, strict=True)
    )


def from_plain(values: tuple[Any, ...]) -> Policy:
    policy = Policy(*values)
    judge = JudgeConfig(*policy.judge)
    properties = tuple(JudgeProperty(*p) for p in judge.properties)
    return policy._replace(judge=judge._replace(properties=properties))


def get(git: Git, blob: Oid, source: str) -> Policy | None:
    """The policy kept for ``blob``, read as from ``source``; None when none is kept
    (or what is kept was written by other code or cannot be read)."""
    try:
        with open(_path(git, blob), "rb") as handle:
            signature, values, digest = marshal.load(handle)
        if signature != _signature() or not signature:
            return None
        policy = from_plain(values)._replace(source=source, origin="base")
        knows_digest(policy, digest)
        return policy
    except (OSError, EOFError, ValueError, TypeError):
        return None


def entry_bytes(policy: Policy) -> bytes | None:
    """What is kept for ``policy``: the code's signature, its plain values and its
    digest; None when there is nothing to keep (no signature, or a value marshal
    cannot write)."""
    signature = _signature()
    if not signature:
        return None
    try:
        record: Any = (signature, to_plain(policy), policy.digest)
        return marshal.dumps(record)
    except ValueError:
        return None


def put(git: Git, blob: Oid, policy: Policy) -> None:
    """Keep ``policy`` (parsed from ``blob``) for the next process: best effort, a git
    directory this process cannot write keeps nothing."""
    data = entry_bytes(policy)
    if data is None:
        return
    path = _path(git, blob)
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "wb") as handle:
            handle.write(data)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
