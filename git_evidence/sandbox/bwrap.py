"""The judge's sandbox: every run of a candidate's command (``judge``, ``freeze add``)
inside bubblewrap (``bwrap``), so the candidate runs with none of the judge's reach.

Inside a run: new user, mount, PID, IPC, UTS and cgroup namespaces, and a network
namespace of its own unless ``[judge].network = true``; the root file system read-only;
the run's workspace read-write except its lock roots, bound read-only (and every
directory above them inside the workspace is a mount point, so it cannot be renamed
away and replaced); a fresh ``/tmp``, ``/dev`` and ``HOME``; ``/proc`` of the new PID
namespace only. Hidden under an empty tmpfs: the repository's work tree and git
directory, the real ``HOME`` and ``$XDG_RUNTIME_DIR``, and the folders a CI job keeps
its secrets in (``judge/held.py``); covered by an empty file: the ``--out`` and
``--log`` files (their folder stays) and GitHub's step command files. What the runs
need to start — the interpreter, its virtual environment and Python installation, the
git evidence package, every program the command line names — is bound back read-only
wherever it lives, under a hidden folder too (``needs.py``); never anything under the
git directory. ``--die-with-parent`` and the PID namespace end every process of a run
when its command exits.

The options reach bwrap through a file descriptor (``--args``), so the sandbox's own
``/proc/1/cmdline`` names none of the hidden paths (only the command follows them)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from git_evidence.core.errors import EvidenceError
from git_evidence.sandbox import needs

PACKAGE = "bubblewrap"
# What stands over the root's read-only bind: anything the command needs below these
# is bound back.
_FRESH = ("/tmp", "/var/tmp", "/run", "/var/run", "/dev/shm")
_MASKED = ("/tmp", "/var/tmp", "/run", "/var/run", "/dev", "/proc")
SANDBOX_HOME = "/tmp/home"


class SandboxUnavailable(EvidenceError):
    """bwrap is missing or cannot make its namespaces: nothing can be judged safely."""

    rule = "cannot-start"


class Sandbox(NamedTuple):
    """How every run of one judgement is held. ``kind`` "none" wraps nothing."""

    kind: str  # "bwrap" or "none"
    bwrap: str = ""
    network: bool = False
    hidden: tuple[str, ...] = ()  # real folders hidden under an empty tmpfs
    visible: tuple[str, ...] = ()  # real paths bound back read-only
    readonly: tuple[str, ...] = ()  # workspace-relative directories bound read-only
    extra_ro: tuple[str, ...] = ()  # paths outside the workspace the runs read (labels)
    hidden_files: tuple[str, ...] = ()  # real files covered by an empty one (outputs)
    masked: tuple[str, ...] = ()  # workspace-relative paths no run may load (plugins)

    @property
    def on(self) -> bool:
        return self.kind == "bwrap"

    def as_json(self) -> dict[str, object]:
        return {"kind": self.kind, "network": self.network if self.on else True}


def prepare(
    kind: str,
    *,
    network: bool,
    hidden: Iterable[str],
    sealed: Iterable[str] = (),
    hidden_files: Iterable[str] = (),
    repository: Sequence[str] = (),
    commands: Iterable[Sequence[str]],
    readonly: Sequence[str],
    extra_ro: Sequence[str] = (),
    env: Mapping[str, str],
) -> Sandbox:
    """The sandbox of one judgement; bwrap is found and tried once here, so a machine
    that cannot sandbox says so before anything runs. ``hidden`` folders (the
    repository's work tree, HOME, the runtime directory) are covered, and what the runs
    need that lives under them is bound back (``needs.py``); ``sealed`` folders (the
    git directory) are covered and nothing under them is ever bound back;
    ``hidden_files`` (``--out``, ``--log``) are covered file by file, so the folder
    that holds them (and the virtual environment beside them) stays as it is."""
    if kind == "none":
        return Sandbox("none")
    found = shutil.which("bwrap", path=env.get("PATH") or os.defpath)
    if found is None:
        raise SandboxUnavailable(
            "bwrap is not installed: the judge runs every candidate in a bubblewrap sandbox",
            fix=f"install the {PACKAGE} package (apt-get install {PACKAGE}), or, to run the "
            'candidate with your own rights, set [judge] sandbox = "none" in the policy',
        )
    closed = _hidden(sealed)
    hide = tuple(dict.fromkeys((*_hidden(hidden), *closed)))
    needed = needs.runner_needs()
    for argv in commands:
        needed += needs.command_needs(argv, env)
    needed += needs.path_needs(env)
    # what those environments put on sys.path from elsewhere, never the repository's
    environments = [_real(n) for n in needed if os.path.isfile(os.path.join(n, "pyvenv.cfg"))]
    environments += [_real(p) for p in (sys.prefix, sys.base_prefix)]
    needed += [p for p in needs.site_needs(environments) if not _under_any(_real(p), repository)]
    masked = (*hide, *_MASKED)
    visible = tuple(
        sorted(
            dict.fromkeys(
                p
                for p in (_real(n) for n in needed)
                if p != "/"
                and os.path.exists(p)
                and _under_any(p, masked)
                and not _under_any(p, closed)
            ),
            key=lambda p: p.count("/"),
        )
    )
    # an output file under a hidden folder is covered already, unless bound back
    files = tuple(
        dict.fromkeys(
            p
            for p in (_real(f) for f in hidden_files)
            if os.path.isfile(p) and (not _under_any(p, hide) or _under_any(p, visible))
        )
    )
    box = Sandbox(
        "bwrap",
        found,
        network,
        hide,
        visible,
        tuple(readonly),
        tuple(_real(p) for p in extra_ro),
        files,
    )
    _probe(box)
    return box


def _real(path: str) -> str:
    return os.path.realpath(os.path.abspath(path))


def _hidden(paths: Iterable[str]) -> tuple[str, ...]:
    out = []
    for path in paths:
        real = _real(path)
        if real == "/":
            raise EvidenceError(
                f"cannot hide {path!r} from the candidate: it is the root directory",
                fix="run with a HOME that is not /, and judge a repository that is not /",
            )
        if os.path.isdir(real):
            out.append(real)
    return tuple(dict.fromkeys(out))


def _under_any(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def wrap(box: Sandbox, workspace: str, run_dir: str) -> list[str]:
    """bwrap's options for one run (NUL-separated on a descriptor: ``--args``; the
    command follows them on bwrap's own command line). ``workspace`` and ``run_dir``
    are read-write."""
    args = [
        # bwrap started by root keeps root's capabilities inside unless told: with them
        # a run could remount the read-only binds writable
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
    ]
    if not box.network:
        args.append("--unshare-net")
    args += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    # fresh and empty: /tmp, and the folders where services keep their sockets (a
    # read-only bind does not stop connect(): /run/docker.sock, the system bus)
    for folder in _FRESH:
        if os.path.isdir(folder) and not os.path.islink(folder):
            args += ["--tmpfs", folder]
    for path in box.hidden:
        args += ["--tmpfs", path]
    # what the runs need, bound back (outermost first); then covered again: a hidden
    # folder inside one of them, and the output files
    for path in box.visible:
        args += ["--ro-bind", path, path]
    for path in box.hidden:
        if any(path != v and _under_any(path, [v]) for v in box.visible):
            args += ["--tmpfs", path]
    for path in box.hidden_files:
        args += ["--ro-bind", "/dev/null", path]
    args += ["--dir", SANDBOX_HOME]
    space = _real(workspace)
    args += ["--bind", space, space]
    args += readonly_roots(space, box.readonly)
    for rel in box.masked:
        # a link is covered where it leads, when that is inside the workspace
        target = _real(os.path.join(space, rel))
        if not _under_any(target, [space]) or target == space:
            continue
        if os.path.isdir(target):
            args += ["--tmpfs", target, "--remount-ro", target]
        elif os.path.isfile(target):
            args += ["--ro-bind", "/dev/null", target]
    for path in box.extra_ro:
        args += ["--ro-bind", path, path]
    run = _real(run_dir)
    args += ["--bind", run, run, "--chdir", space]
    return args


def readonly_roots(space: str, roots: Sequence[str]) -> list[str]:
    """The lock roots bound read-only, each directory above them (inside the
    workspace) a mount point of its own: a mount point cannot be renamed or removed, so
    a run cannot move ``tests/`` aside and put a doctored ``tests/fixtures`` in its
    place. Every directory above is bound once, before any root: a bind of ``tests/``
    after the read-only ``tests/fixtures`` would cover it with a writable copy. A root
    that is missing, or a link, or under a link, is left as it is (the drift check
    sees it)."""
    above: list[str] = []
    bound: list[str] = []
    for relative in roots:
        parts = [p for p in relative.split("/") if p]
        chain = [os.path.join(space, *parts[:depth]) for depth in range(1, len(parts) + 1)]
        if not parts or any(os.path.islink(p) or not os.path.isdir(p) for p in chain):
            continue
        above += chain[:-1]
        bound.append(chain[-1])
    out: list[str] = []
    for path in sorted(set(above) - set(bound), key=lambda p: p.count("/")):
        out += ["--bind", path, path]
    # deepest last: a root inside another root stays read-only under it
    for path in sorted(set(bound), key=lambda p: p.count("/")):
        out += ["--ro-bind", path, path]
    return out


def env_for(box: Sandbox, env: Mapping[str, str]) -> dict[str, str]:
    """The run's environment inside the sandbox: a fresh HOME and TMPDIR, no runtime
    directory of the user's."""
    if not box.on:  # the run has the judge's rights anyway: its HOME, its TMPDIR
        return {**{k: os.environ[k] for k in ("HOME", "TMPDIR") if k in os.environ}, **env}
    out = {k: v for k, v in env.items() if k != "XDG_RUNTIME_DIR"}
    out["HOME"] = SANDBOX_HOME
    out["TMPDIR"] = "/tmp"
    return out


def open_args(args: Sequence[str]) -> int:
    """A descriptor holding ``args`` NUL-separated, read from its start (for
    ``bwrap --args FD``); the caller closes it."""
    fd = os.memfd_create("bwrap-args", 0)
    os.write(fd, b"".join(os.fsencode(a) + b"\0" for a in args))
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _probe(box: Sandbox) -> None:
    """One empty run: bwrap must be able to make every namespace it will be asked for."""
    scratch = os.path.realpath(os.environ.get("TMPDIR") or "/tmp")
    args = wrap(box._replace(readonly=(), extra_ro=()), scratch, scratch)
    fd = open_args(args)
    try:
        done = subprocess.run(
            [box.bwrap, "--args", str(fd), "--", "true"],
            pass_fds=(fd,),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"bwrap did not start: {exc}", fix=_FIX) from None
    finally:
        os.close(fd)
    if done.returncode != 0:
        why = done.stderr.decode("utf-8", "replace").strip().splitlines()
        said = why[-1] if why else f"exit {done.returncode}"
        if userns_restricted() or "uid map: Permission denied" in said:
            raise SandboxUnavailable(
                f"bwrap cannot make its sandbox here: {said}: AppArmor restricts "
                "unprivileged user namespaces on this machine "
                f"(kernel.apparmor_restrict_unprivileged_userns = 1; Ubuntu 24.04 and later, "
                "GitHub's ubuntu-latest runners)",
                fix=apparmor_fix(box.bwrap),
            )
        raise SandboxUnavailable(f"bwrap cannot make its sandbox here: {said}", fix=_FIX)


APPARMOR_SWITCH = "/proc/sys/kernel/apparmor_restrict_unprivileged_userns"


def userns_restricted() -> bool:
    """Whether AppArmor restricts unprivileged user namespaces here (the switch is on)."""
    try:
        with open(APPARMOR_SWITCH, encoding="ascii") as handle:
            return handle.read().strip() == "1"
    except (OSError, ValueError):
        return False


def apparmor_fix(program: str) -> str:
    """The remedy: an AppArmor profile that lets ``program`` (bwrap) alone make user
    namespaces, loaded as root; on a throwaway CI machine, the switch turned off."""
    profile = (
        "abi <abi/4.0>,\\ninclude <tunables/global>\\n"
        f"profile bwrap {program} flags=(unconfined) {{\\n  userns,\\n}}\\n"
    )
    return (
        "let bubblewrap alone make user namespaces: "
        f"printf '{profile}' | sudo tee /etc/apparmor.d/bwrap >/dev/null && sudo "
        "apparmor_parser -r /etc/apparmor.d/bwrap (or, on a throwaway CI machine: sudo "
        "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0), then judge again "
        '(see "GitHub\'s runners" in docs/sandbox.md); or, to run the candidate with '
        'your own rights, set [judge] sandbox = "none" in the policy'
    )


_FIX = (
    "bwrap needs user namespaces (as root, or kernel.unprivileged_userns_clone=1 / an "
    f"AppArmor profile that allows them; the {PACKAGE} package), or, to run the candidate "
    'with your own rights, set [judge] sandbox = "none" in the policy'
)
