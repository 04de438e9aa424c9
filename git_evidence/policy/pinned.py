"""The agent guard's own copy of the policy, pinned when a person installs the guard
(``git evidence install --agent claude``): the policy in force then, with a header that
says where it was read, kept in a file under the common git directory; its digest is
written into the hook's own command line (``git evidence guard --pinned=sha256:…``) in
the agent's settings, which the guard always protects.

So no tool call of the agent moves the guard's policy: it cannot change the command
line, and a pinned file that was changed, removed or cannot be read no longer matches
that digest, so every write in the work tree is denied until a person installs again.
Reading it starts no git process. Pure: bytes in, a ``Policy`` out; the install
command writes the file and ``plumbing/in_force.py`` reads it."""

from __future__ import annotations

import re
from typing import Final, NamedTuple

from git_evidence.core.errors import PolicyError
from git_evidence.policy.parsing import PINNED_SOURCE, parse_policy
from git_evidence.policy.schema import Policy

PIN_DIR: Final = "git-evidence"  # under the common git directory
PIN_FILE: Final = "guard-policy.toml"
# The same policy parsed, as plain values (``policy_cache``'s form, ``marshal``): read
# instead of parsing the TOML when its own digest matches and the code that validates
# a policy is the one that wrote it; otherwise the TOML is parsed.
VALUES_FILE: Final = "guard-policy.values"
FLAG: Final = "--pinned"
REPAIR: Final = "a person runs `git evidence install --agent claude` in the work tree"
_HEADER: Final = (
    "# The policy `git evidence guard` judges with, pinned by `git evidence install\n"
    "# --agent`: run that again (a person, not the agent) to take the policy in force.\n"
    "# read from: {read_from}\n"
)
_READ_FROM: Final = re.compile(rb"^# read from: (.*) at ([0-9a-f]{40}|[0-9a-f]{64})$", re.M)


class Pin(NamedTuple):
    path: str  # the pinned file
    digest: str  # "sha256:<hex>", as the hook's command line names it
    values_digest: str = ""  # the digest of VALUES_FILE beside it, when the line names one


def from_flag(directory: str, value: str) -> Pin:
    """The pin a hook's ``--pinned=DIGEST[,VALUES_DIGEST]`` names, in ``directory``."""
    digest_, _comma, values = value.partition(",")
    return Pin(f"{directory}/{PIN_FILE}", digest_, values)


def flag_value(pin_digest: str, values_digest: str) -> str:
    return f"{pin_digest},{values_digest}"


def pin_bytes(policy: bytes, read_from: str) -> bytes:
    """The pinned file: the header, then the policy's bytes as they were."""
    return _HEADER.format(read_from=read_from).encode() + policy


def digest(data: bytes) -> str:
    """``sha256:<hex>`` of ``data``: the interpreter's own SHA-256 when it has one
    (``hashlib`` loads OpenSSL first, a millisecond of every guarded tool call)."""
    import importlib

    for name in ("_sha2", "_sha256"):  # the module's name since Python 3.12, before
        try:
            sha256 = importlib.import_module(name).sha256
            break
        except (ImportError, AttributeError):
            continue
    else:  # pragma: no cover
        from hashlib import sha256
    return "sha256:" + str(sha256(data).hexdigest())


def pinned_commit(data: bytes) -> tuple[str, str] | None:
    """The ref and commit the pinned policy was read from, when it came from one."""
    found = _READ_FROM.search(data[:4096])
    if found is None:
        return None
    return found.group(1).decode("utf-8", "replace"), found.group(2).decode()


def parse_pinned(data: bytes | None, pin: Pin, why: str = "") -> Policy:
    """The pinned policy, or a ``PolicyError`` that says how to repair it: ``data``
    None when the file could not be read (``why``), or bytes its digest refuses."""
    checked = verify(data, pin, why)
    source = PINNED_SOURCE.format(path=pin.path)
    try:
        return parse_policy(checked, source)._replace(origin="pinned")
    except PolicyError as exc:
        exc.fix = REPAIR
        raise


def verify(data: bytes | None, pin: Pin, why: str = "") -> bytes:
    """``data``, when it is the pinned file the hook names; else the ``PolicyError``
    that fails the guard closed."""
    source = PINNED_SOURCE.format(path=pin.path)
    if data is None:
        raise _broken(source, f"the guard's pinned policy cannot be read ({why})")
    if digest(data) != pin.digest:
        raise _broken(source, "the guard's pinned policy is not the one its hook names")
    return data


def _broken(source: str, message: str) -> PolicyError:
    error = PolicyError(source, f"{message}: every write in the work tree is denied")
    error.fix = REPAIR
    return error
