"""The one place that runs commands other than git: a test command run ``repeat`` times
for each seed, with a timeout, its outcome captured. Used by ``judge``
and ``freeze add``.

Each run starts in a process group of its own, so a timeout, Ctrl-C or SIGTERM stops
the command and everything it started (``kill_running``). A run's outcome is its exit
code and, with JUnit, the map test id → passed/failed/error/skipped; its output's
sha256 is recorded, never compared.

Over 300 lines on purpose: process groups, timeouts, interrupts and JUnit are what a
safe run takes."""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from concurrent.futures import Future

from git_evidence.core.errors import EvidenceError
from git_evidence.core.records import canonical_json, digest
from git_evidence.policy.properties import JUNIT_PLACEHOLDER
from git_evidence.sandbox import bwrap
from git_evidence.sandbox.outcomes import (
    FAILING,
    CaseResult,
    output_digest,
    output_tail,
    read_claim,
    read_hits,
    read_junit,
)

TIMEOUT = "timeout"
HASH_SEED_MOD = 2**32  # PYTHONHASHSEED accepts 0 … 4294967295

Code = int | str  # an exit code, or TIMEOUT


class CannotStart(EvidenceError):
    """The command could not be started at all: nothing can be decided (exit 2)."""

    rule = "cannot-start"


@dataclass(frozen=True)
class Run:
    seed: int
    run: int  # 1, 2, … within its seed
    code: Code
    output: str  # sha256: of stdout \0 stderr
    duration_s: float
    tests: Mapping[str, CaseResult] | None = None  # JUnit, when asked for and readable
    junit_error: str | None = None
    hits: Mapping[str, int] = field(default_factory=dict)  # id ("" for a bare N) → hits
    # what the evidence plugin wrote to EVIDENCE_RETRIES_FILE (None: nothing), read
    # by the judge's scorecard
    retry_log: bytes | None = None
    # where the plugin saw the workspace's packages imported from (EVIDENCE_ORIGINS_FILE)
    origins: bytes | None = None
    # a failing run's last output (OUTPUT_TAIL_MAX bytes at most): the run's own words
    tail: str | None = None

    @property
    def failed(self) -> bool:
        return (
            self.code != 0
            or self.junit_error is not None
            or any(t.outcome in FAILING for t in (self.tests or {}).values())
        )

    @property
    def outcomes(self) -> dict[str, str] | None:
        return None if self.tests is None else {k: v.outcome for k, v in self.tests.items()}

    @property
    def outcome_digest(self) -> str:
        """What two runs of one seed must agree on: exit code and JUnit map."""
        return digest(canonical_json({"code": self.code, "tests": self.outcomes}))

    @property
    def total_hits(self) -> int:
        return sum(self.hits.values())


@dataclass(frozen=True)
class Chain:
    """The runs of one seed, made one after the other (EVIDENCE_RUN 1, 2, …)."""

    argv: tuple[str, ...]
    seed: int
    repeat: int
    timeout_s: float
    junit: bool = False
    env: Mapping[str, str] = field(default_factory=dict)  # EVIDENCE_FIXTURE, …
    label: str = ""  # for progress lines


# -- running ---------------------------------------------------------------------------

_LIVE: set[subprocess.Popen[bytes]] = set()
_LIVE_LOCK = threading.Lock()
_STOP = threading.Event()
_NAMES = itertools.count(1)


def kill_running() -> None:
    """Stop every command still running, with the processes it started."""
    _STOP.set()
    with _LIVE_LOCK:
        procs = list(_LIVE)
    for proc in procs:
        _kill_group(proc)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """SIGTERM behaves as Ctrl-C while commands run (KeyboardInterrupt in this thread),
    and either one stops every running command before it propagates."""
    _STOP.clear()
    previous = None
    in_main = threading.current_thread() is threading.main_thread()
    if in_main:
        previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        yield
    except BaseException:
        kill_running()
        raise
    finally:
        if in_main:
            signal.signal(signal.SIGTERM, previous)


def _expire(proc: subprocess.Popen[bytes], expired: threading.Event) -> None:
    expired.set()
    _kill_group(proc)


def _terminated(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


class Held(NamedTuple):
    """How every run of a judgement is held: the sandbox, and the workspace's import
    roots put first on PYTHONPATH (workspace-relative)."""

    box: bwrap.Sandbox = bwrap.Sandbox("none")
    pythonpath: tuple[str, ...] = ()


UNHELD = Held()


def run_once(
    argv: Sequence[str],
    *,
    seed: int,
    run: int,
    cwd: str | None,
    env: Mapping[str, str],
    timeout_s: float,
    scratch: str,
    junit: bool = False,
    held: Held = UNHELD,
) -> Run:
    """One run: argv with ``{junitxml}`` replaced by a fresh path, in its own process
    group (and sandbox), stdin closed, output to files in ``scratch`` (a pipe could
    fill and stall the command). The run's own files (hits, JUnit, retries, import
    origins) are in a folder of its own, the only one it can write besides its
    workspace."""
    folder = os.path.join(scratch, f"run-{next(_NAMES)}")
    os.mkdir(folder)
    name = os.path.join(folder, "run")
    hits_file, junit_file, retries_file = f"{name}.hits", f"{name}.xml", f"{name}.retries"
    origins_file = f"{name}.origins"
    full_env = {
        **compose_env(env, cwd, held),
        "EVIDENCE_SEED": str(seed),
        "PYTHONHASHSEED": str(seed % HASH_SEED_MOD),
        "EVIDENCE_RUN": str(run),
        "EVIDENCE_HITS_FILE": hits_file,
        "EVIDENCE_RETRIES_FILE": retries_file,
    }
    if cwd is not None:
        full_env["EVIDENCE_ORIGINS_FILE"] = origins_file
    command = [a.replace(JUNIT_PLACEHOLDER, junit_file) for a in argv] if junit else list(argv)
    if _STOP.is_set():
        raise KeyboardInterrupt
    fds: tuple[int, ...] = ()
    if held.box.on:
        if cwd is None:
            raise EvidenceError("a sandboxed run needs a workspace")
        fds = (bwrap.open_args(bwrap.wrap(held.box, cwd, folder)),)
        full_env = bwrap.env_for(held.box, full_env)
        command = [held.box.bwrap, "--args", str(fds[0]), "--", *command]
    try:
        outcome = _started(command, cwd, full_env, fds, timeout_s, folder)
    finally:
        for fd in fds:
            os.close(fd)
    code, output, duration, tail = outcome
    tests, problem = read_junit(junit_file, cwd) if junit else (None, None)
    done = Run(
        seed,
        run,
        code,
        output,
        round(duration, 3),
        tests,
        problem,
        read_hits(hits_file),
        read_claim(retries_file),
        read_claim(origins_file),
    )
    return replace(done, tail=tail) if done.failed else done


def compose_env(env: Mapping[str, str], cwd: str | None, held: Held) -> dict[str, str]:
    """What every run in ``cwd`` gets besides its seed and files: the workspace as
    ``PWD`` and ``EVIDENCE_WORKSPACE``, its import roots first on ``PYTHONPATH``."""
    out = dict(env)
    if cwd is None:
        return out
    out["PWD"] = cwd
    out["EVIDENCE_WORKSPACE"] = cwd
    if held.pythonpath:
        roots = [os.path.normpath(os.path.join(cwd, p)) for p in held.pythonpath]
        rest = env.get("PYTHONPATH")
        out["PYTHONPATH"] = os.pathsep.join([*roots, *([rest] if rest else [])])
    return out


def _started(
    command: list[str],
    cwd: str | None,
    env: Mapping[str, str],
    fds: tuple[int, ...],
    timeout_s: float,
    name: str,
) -> tuple[Code, str, float, str]:
    """Start, wait (killing the group at the deadline), and digest the output, kept in
    ``name.stdout`` and ``name.stderr`` (outside the run's reach); its tail."""
    with open(f"{name}.stdout", "w+b") as out, open(f"{name}.stderr", "w+b") as err:
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                command,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                pass_fds=fds,
            )
        except OSError as exc:
            raise CannotStart(
                f"cannot start {command[0]!r}: {exc.strerror or exc}",
                fix="check the command (an argv list; the program on PATH, or a path "
                "relative to the workspace root)",
            ) from None
        with _LIVE_LOCK:
            _LIVE.add(proc)
        # A timer kills the group at the deadline while this thread blocks in waitpid:
        # Popen.wait(timeout) would poll with sleeps of up to 50 ms a run.
        expired = threading.Event()
        timer = threading.Timer(timeout_s, _expire, (proc, expired))
        timer.daemon = True
        timer.start()
        code: Code
        try:
            code = proc.wait()
            if expired.is_set():
                code = TIMEOUT
        finally:
            timer.cancel()
            # Whatever it left running in its group stops with it: a background
            # writer could otherwise change the fixtures after the last hash. (In the
            # sandbox, the PID namespace ends with its first process anyway.)
            _kill_group(proc)
            proc.wait()
            with _LIVE_LOCK:
                _LIVE.discard(proc)
        duration = time.monotonic() - start
        return code, output_digest(out, err), duration, output_tail(out, err)


def run_chain(
    chain: Chain,
    *,
    cwd: str | None,
    env: Mapping[str, str],
    scratch: str,
    extra_args: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
    held: Held = UNHELD,
) -> list[Run]:
    runs = []
    for number in range(1, chain.repeat + 1):
        if progress is not None:
            progress(f"{chain.label} seed {chain.seed} run {number}/{chain.repeat}")
        runs.append(
            run_once(
                [*chain.argv, *extra_args],
                seed=chain.seed,
                run=number,
                cwd=cwd,
                env={**env, **chain.env},
                timeout_s=chain.timeout_s,
                scratch=scratch,
                junit=chain.junit,
                held=held,
            )
        )
    return runs


def run_chains(
    chains: Sequence[Chain],
    workspaces: Sequence[str],
    *,
    env: Mapping[str, str],
    scratch: str,
    extra_args: Callable[[Chain], Sequence[str]] = lambda chain: (),
    progress: Callable[[str], None] | None = None,
    held: Held = UNHELD,
) -> list[list[Run]]:
    """Every chain's runs, in the order of ``chains``. With several workspaces, up to
    that many chains run at once, each in a workspace no other running chain uses."""

    def one(chain: Chain, where: str | None) -> list[Run]:
        return run_chain(
            chain,
            cwd=where,
            env=env,
            scratch=scratch,
            extra_args=extra_args(chain),
            progress=progress,
            held=held,
        )

    if len(workspaces) <= 1 or len(chains) <= 1:
        where = workspaces[0] if workspaces else None
        return [one(c, where) for c in chains]
    from concurrent.futures import ThreadPoolExecutor  # only --jobs pays for it

    free: queue.Queue[str] = queue.Queue()
    for path in workspaces:
        free.put(path)

    def task(chain: Chain) -> list[Run]:
        where = free.get()
        try:
            return one(chain, where)
        finally:
            free.put(where)

    pool = ThreadPoolExecutor(max_workers=len(workspaces), thread_name_prefix="judge-run")
    futures: list[Future[list[Run]]] = [pool.submit(task, c) for c in chains]
    try:
        return [f.result() for f in futures]
    except BaseException:
        kill_running()
        for f in futures:
            f.cancel()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
