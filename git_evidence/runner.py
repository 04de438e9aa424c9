"""The one place that runs commands other than git: a test command run ``repeat`` times
for each seed, with a timeout, its outcome captured (SPEC §11.4-5). Used by ``judge``
and ``freeze add``.

Each run starts in a process group of its own, so a timeout, Ctrl-C or SIGTERM stops
the command and everything it started (``kill_running``). A run's outcome is its exit
code and, with JUnit, the map test id → passed/failed/error/skipped; its output's
sha256 is recorded, never compared.

Over 300 lines on purpose: process groups, timeouts, interrupts and JUnit are what a
safe run takes."""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from concurrent.futures import Future

from git_evidence.errors import EvidenceError
from git_evidence.properties import JUNIT_PLACEHOLDER
from git_evidence.records import canonical_json, digest

TIMEOUT = "timeout"
PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"
FAILING = frozenset({FAILED, ERROR})
JUNIT_MAX_BYTES = 64 << 20
CLAIM_MAX_BYTES = 16 << 20  # hits and retries files
HASH_SEED_MOD = 2**32  # PYTHONHASHSEED accepts 0 … 4294967295

Code = int | str  # an exit code, or TIMEOUT


class CannotStart(EvidenceError):
    """The command could not be started at all: nothing can be decided (exit 2)."""

    rule = "cannot-start"


class CaseResult(NamedTuple):
    """One JUnit ``<testcase>``: its outcome and, when it failed, how."""

    outcome: str
    type: str = ""
    message: str = ""


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
) -> Run:
    """One run: argv with ``{junitxml}`` replaced by a fresh path, in its own process
    group, stdin closed, output to files in ``scratch`` (a pipe could fill and stall
    the command)."""
    name = os.path.join(scratch, f"run-{next(_NAMES)}")
    hits_file, junit_file, retries_file = f"{name}.hits", f"{name}.xml", f"{name}.retries"
    full_env = {
        **env,
        "EVIDENCE_SEED": str(seed),
        "PYTHONHASHSEED": str(seed % HASH_SEED_MOD),
        "EVIDENCE_RUN": str(run),
        "EVIDENCE_HITS_FILE": hits_file,
        "EVIDENCE_RETRIES_FILE": retries_file,
    }
    if cwd is not None:
        full_env["PWD"] = cwd
    command = [a.replace(JUNIT_PLACEHOLDER, junit_file) for a in argv] if junit else list(argv)
    if _STOP.is_set():
        raise KeyboardInterrupt
    with tempfile.TemporaryFile(dir=scratch) as out, tempfile.TemporaryFile(dir=scratch) as err:
        start = time.monotonic()
        try:
            proc = subprocess.Popen(
                command,
                cwd=cwd,
                env=full_env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
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
            # writer could otherwise change the fixtures after the last hash.
            _kill_group(proc)
            proc.wait()
            with _LIVE_LOCK:
                _LIVE.discard(proc)
        duration = time.monotonic() - start
        output = _output_digest(out, err)
    tests, problem = _read_junit(junit_file) if junit else (None, None)
    return Run(
        seed,
        run,
        code,
        output,
        round(duration, 3),
        tests,
        problem,
        _read_hits(hits_file),
        _read_claim(retries_file),
    )


def _output_digest(out: IO[bytes], err: IO[bytes]) -> str:
    sha = hashlib.sha256()
    for index, handle in enumerate((out, err)):
        handle.seek(0)
        if index:
            sha.update(b"\0")
        while chunk := handle.read(1 << 20):
            sha.update(chunk)
    return "sha256:" + sha.hexdigest()


def run_chain(
    chain: Chain,
    *,
    cwd: str | None,
    env: Mapping[str, str],
    scratch: str,
    extra_args: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
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
) -> list[list[Run]]:
    """Every chain's runs, in the order of ``chains``. With several workspaces, up to
    that many chains run at once, each in a workspace no other running chain uses."""
    if len(workspaces) <= 1 or len(chains) <= 1:
        where = workspaces[0] if workspaces else None
        return [
            run_chain(
                c, cwd=where, env=env, scratch=scratch, extra_args=extra_args(c), progress=progress
            )
            for c in chains
        ]
    from concurrent.futures import ThreadPoolExecutor  # only --jobs pays for it

    free: queue.Queue[str] = queue.Queue()
    for path in workspaces:
        free.put(path)

    def task(chain: Chain) -> list[Run]:
        where = free.get()
        try:
            return run_chain(
                chain,
                cwd=where,
                env=env,
                scratch=scratch,
                extra_args=extra_args(chain),
                progress=progress,
            )
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


# -- outcomes --------------------------------------------------------------------------


def _read_claim(path: str) -> bytes | None:
    """What the run wrote to one of its files (at most 16 MiB), None when nothing."""
    try:
        with open(path, "rb") as handle:
            return handle.read(CLAIM_MAX_BYTES)
    except OSError:
        return None


def _read_hits(path: str) -> dict[str, int]:
    """Lines ``ID N`` or a bare ``N`` the run appended; anything else is ignored (a
    hits line is a claim the run makes, never trusted to be more than a count)."""
    data = _read_claim(path)
    if data is None:
        return {}
    hits: dict[str, int] = {}
    for raw in data.decode("utf-8", "replace").splitlines():
        parts = raw.split()
        if not parts:
            continue
        key, count = ("", parts[0]) if len(parts) == 1 else (" ".join(parts[:-1]), parts[-1])
        if count.isdigit() and count.isascii():
            hits[key] = hits.get(key, 0) + int(count)
    return hits


def _read_junit(path: str) -> tuple[dict[str, CaseResult] | None, str | None]:
    try:
        size = os.path.getsize(path)
        if size > JUNIT_MAX_BYTES:
            return None, f"the JUnit XML is {size} bytes, more than {JUNIT_MAX_BYTES}"
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError:
        return None, "the run wrote no JUnit XML"
    try:
        return parse_junit(data), None
    except ValueError as exc:
        return None, f"the JUnit XML is unreadable: {exc}"


def parse_junit(data: bytes) -> dict[str, CaseResult]:
    """Test id (``classname::name``) → outcome, from JUnit XML (pytest's, Surefire's).
    A test listed twice keeps its worst outcome. ValueError when it is not JUnit."""
    import xml.etree.ElementTree as ElementTree  # only JUnit properties pay for it

    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise ValueError("a DOCTYPE or ENTITY declaration (refused: JUnit needs neither)")
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise ValueError(str(exc)) from None
    if root.tag not in ("testsuites", "testsuite"):
        raise ValueError(f"the root element is <{root.tag}>, not <testsuites> or <testsuite>")
    rank = {PASSED: 0, SKIPPED: 1, FAILED: 2, ERROR: 3}
    tests: dict[str, CaseResult] = {}
    for case in root.iter("testcase"):
        name = case.get("name", "")
        classname = case.get("classname", "")
        test_id = f"{classname}::{name}" if classname else name
        found = CaseResult(PASSED)
        for child in case:
            if child.tag in ("failure", "error"):
                message = child.get("message") or (child.text or "")
                found = CaseResult(
                    FAILED if child.tag == "failure" else ERROR, child.get("type", ""), message
                )
                break
            if child.tag == "skipped":
                found = CaseResult(SKIPPED)
        known = tests.get(test_id)
        if known is None or rank[found.outcome] > rank[known.outcome]:
            tests[test_id] = found
    return tests
