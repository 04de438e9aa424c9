"""What the benchmark scripts share: a git runner, byte-compiling the package, and
measuring one process tree (wall time, CPU time, peak memory)."""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
ROOT = HERE.parent
NOTES = "refs/notes/evidence"
IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


def git(
    repo: Path, *args: str, env: dict[str, str] | None = None, input: bytes | None = None
) -> str:
    """Run git in ``repo``; its stripped output."""
    done = subprocess.run(
        ["git", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        env={**os.environ, **(env or {})},
        input=input,
    )
    return done.stdout.decode().strip()


def compile_package() -> None:
    """Measure the package as an install leaves it: byte-compiled (pip compiles on
    install; a PYTHONDONTWRITEBYTECODE environment would otherwise recompile each run).
    Every ``python -m git_evidence`` this process starts imports this source tree, not
    a copy installed in the interpreter's site-packages (PYTHONPATH)."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(ROOT / "git_evidence")],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p
    )


def installed_python() -> str:
    """An interpreter with the package installed the way a user's install leaves it:
    a fresh virtualenv (no other package's start-up files, no editable finder, no
    coverage hook) with this source tree copied into its site-packages and
    byte-compiled. Rebuilt on each call, so it always holds the tree being measured.
    Everyday rows measure this, not the developer's environment, whose start-up files
    cost more than the operations under test."""
    venv = WORK / "installed"
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    target = Path(purelib) / "git_evidence"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(ROOT / "git_evidence", target, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run(
        [str(python), "-m", "compileall", "-q", str(target)], check=True, stdout=subprocess.DEVNULL
    )
    return str(python)


def tree_memory_kib(pid: int) -> tuple[int, int]:
    """(PSS, RSS) of a process and all its descendants, in KiB. PSS counts a page
    shared by several processes of the tree (the mapped pack) once in all; RSS counts
    it in every process that maps it."""
    pss = rss = 0
    stack = [pid]
    while stack:
        current = stack.pop()
        try:
            with open(f"/proc/{current}/smaps_rollup") as handle:
                for line in handle:
                    if line.startswith("Pss:"):
                        pss += int(line.split()[1])
                    elif line.startswith("Rss:"):
                        rss += int(line.split()[1])
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as handle:
                    stack.extend(int(c) for c in handle.read().split())
        except (FileNotFoundError, ProcessLookupError, ValueError):
            continue
    return pss, rss


class Run(NamedTuple):
    """One measured process tree."""

    wall: float  # seconds
    cpu: float  # user + system seconds of the process and every descendant it waited for
    pss_kib: int  # peak PSS of the tree (0 when not sampled)
    rss_kib: int  # peak sum of RSS over the tree (0 when not sampled)
    code: int
    stdout_bytes: int
    stderr: bytes


def measure(
    cmd: Sequence[str],
    cwd: Path,
    stdin: bytes | None = None,
    *,
    ok: Sequence[int] = (0,),
    sample: bool = False,
    keep_stdout: bool = False,
    env: dict[str, str] | None = None,
) -> Run:
    """Run ``cmd`` once. CPU time is the growth of RUSAGE_CHILDREN across the run (a
    child's figure includes the descendants it waited for: git's processes under the
    hook). With ``sample``, the tree's PSS and RSS are sampled every 2 ms by a thread
    (timing runs do not sample, so the sampler does not slow them). stdout goes to
    /dev/null unless ``keep_stdout`` (then only its size is kept); stderr is kept."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with tempfile.TemporaryFile() as err_file, tempfile.TemporaryFile() as out_file:
        start = time.perf_counter()
        proc = subprocess.Popen(
            list(cmd),
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=out_file if keep_stdout else subprocess.DEVNULL,
            stderr=err_file,
            env=None if env is None else {**os.environ, **env},
        )
        peak_pss = peak_rss = 0
        done = threading.Event()

        def watch() -> None:
            nonlocal peak_pss, peak_rss
            while not done.is_set():
                pss, rss = tree_memory_kib(proc.pid)
                peak_pss, peak_rss = max(peak_pss, pss), max(peak_rss, rss)
                time.sleep(0.002)

        sampler = threading.Thread(target=watch)
        if sample:
            sampler.start()
        proc.communicate(stdin)
        wall = time.perf_counter() - start
        done.set()
        if sample:
            sampler.join()
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        err_file.seek(0)
        stderr = err_file.read()
        stdout_bytes = out_file.tell() if keep_stdout else 0
    if proc.returncode not in ok:
        raise SystemExit(f"{list(cmd)} exited {proc.returncode}: {stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(wall, cpu, peak_pss, peak_rss, proc.returncode, stdout_bytes, stderr)


def alternate(
    runs: int, ours: Callable[[], Run], theirs: Callable[[], Run]
) -> tuple[list[Run], list[Run]]:
    """``runs`` measurements of each, alternating, so drift in the machine's load
    falls on both sides."""
    a: list[Run] = []
    b: list[Run] = []
    for _ in range(runs):
        a.append(ours())
        b.append(theirs())
    return a, b


def median_of(runs: Sequence[Run], field: str) -> float:
    return statistics.median(float(getattr(r, field)) for r in runs)


def fastest(runs: Sequence[Run], field: str = "wall") -> float:
    """The least of a field: on a busy machine, the best estimate of the uncontended
    figure (medians also carry the neighbours' load)."""
    return min(float(getattr(r, field)) for r in runs)


def spread(runs: Sequence[Run], field: str = "wall") -> str:
    """``min-max`` of a field, to show how noisy the medians are."""
    values = [float(getattr(r, field)) for r in runs]
    return f"{min(values) * 1000:.0f}-{max(values) * 1000:.0f} ms"


def commit_changing(repo: Path, parent: str, changes: dict[str, bytes], message: str) -> str:
    """A commit on top of ``parent`` with ``changes`` (path → new bytes) applied
    (plumbing: a temporary index, no checkout)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = {"GIT_INDEX_FILE": os.path.join(tmp, "index"), **IDENTITY}
        git(repo, "read-tree", parent, env=env)
        for path, data in changes.items():
            blob = git(repo, "hash-object", "-w", "--stdin", input=data)
            git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", env=env)
        tree = git(repo, "write-tree", env=env)
        return git(repo, "commit-tree", tree, "-p", parent, "-m", message, env=env)


def machine_note() -> str:
    load = os.getloadavg()
    return (
        f"{os.cpu_count()} CPUs, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; "
        f"python {sys.version.split()[0]}, {git(ROOT, 'version')}"
    )


def profile(
    cmd: Sequence[str],
    cwd: Path,
    stdin: bytes | None,
    out: Path,
    *,
    top: int = 30,
    ok: Sequence[int] = (0, 1),
    env: dict[str, str] | None = None,
) -> None:
    """Run a ``python -m ...`` command once under cProfile (into ``out``) and print
    the ``top`` entries by cumulative time. cProfile's per-call overhead inflates many
    small calls: read the proportions, not the seconds."""
    import pstats

    assert cmd[0] == sys.executable and cmd[1] == "-m", "profile a `python -m` command"
    run = measure(
        [sys.executable, "-m", "cProfile", "-o", str(out), *cmd[1:]], cwd, stdin, ok=ok, env=env
    )
    print(f"profile ({run.wall * 1000:.0f} ms under cProfile) written to {out}")
    pstats.Stats(str(out)).sort_stats("cumulative").print_stats(top)
