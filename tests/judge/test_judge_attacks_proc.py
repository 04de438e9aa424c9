"""Hostile attacks on the judge's sandbox, part two: processes (a daemon that would
outlive its run, the judge's PID, ``/proc``), ``/dev/shm``, the network and the host's
sockets, the files the judge reads back from a run, and one property in the suite that
tries every escape at once and reports what it reached (see test_judge_attacks)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers.judge_attacks import (
    KIT,
    armed,
    assert_accepted_and_unchanged,
    assert_blocked,
    attack,
    home,
    host_state,
)
from helpers.judge_repos import APP, FAST, KEPT, Repo, alive, markers, running


@pytest.fixture
def target(repo: Repo) -> Repo:
    return armed(repo)


def unique(prefix: str) -> str:
    return f"{prefix}{os.getpid()}.{time.time_ns() % 10**9}"


def left_running(marker: str) -> list[int]:
    return [pid for pid in running(marker) if alive(pid)]


@pytest.fixture
def listener() -> Iterator[socket.socket]:
    """A TCP listener on every host address: no run may connect to it."""
    server = socket.socket()
    server.bind(("0.0.0.0", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


def connected(server: socket.socket) -> bool:
    try:
        server.accept()[0].close()
    except BlockingIOError:
        return False
    return True


def host_address() -> str | None:
    """The address the host's default route leaves by (no packet is sent)."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.1", 9))
        address: str = probe.getsockname()[0]
        return address
    except OSError:
        return None
    finally:
        probe.close()


CONNECT = """
import socket


def connect(family, address):
    with socket.socket(family) as client:
        client.settimeout(1)
        client.connect(address)
        return address
"""


# -- processes ---------------------------------------------------------------------------

DAEMON = """
import signal, time
for number in (signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
    signal.signal(number, signal.SIG_IGN)
time.sleep(60)
"""


def daemon_code(marker: str) -> str:
    """Fork twice, setsid, ignore every catchable signal, sleep with ``marker`` in argv;
    the run ends only once the daemon is up (its pid in daemon.local)."""
    return f"""
readable, writable = os.pipe()
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.write(writable, str(os.getpid()).encode())
        os.execv(sys.executable, [sys.executable, "-c", {DAEMON!r}, {marker!r}])
    os._exit(0)
os.close(writable)
with open("daemon.local", "a") as handle:
    handle.write(os.read(readable, 32).decode() + "\\n")
"""


def test_a_double_forked_setsid_daemon_does_not_outlive_the_judge(target: Repo) -> None:
    marker = unique("daemon-")
    before = host_state(target)
    _, doc, kept = attack(target, daemon_code(marker) + "reach('the run', lambda: fail('ended'))")
    assert len(markers(kept, "daemon.local")) == 2  # each run's daemon was up
    assert left_running(marker) == []
    assert_blocked(kept)
    assert_accepted_and_unchanged(doc, target, before)


def test_a_run_cannot_see_or_kill_the_judge(target: Repo) -> None:
    code = f"""
JUDGE = {os.getpid()}  # the judge runs in this test's process
pids = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
reach("more than the run in /proc", lambda: pids if len(pids) > 4 or JUDGE in pids else fail(pids))
reach("signal 0 to the judge", lambda: os.kill(JUDGE, 0))
reach("kill -9 the judge", lambda: os.kill(JUDGE, signal.SIGKILL))
reach("the judge in /proc once lifted", lambda: (umount("/proc"), existing(f"/proc/{{JUDGE}}")))
reach("kill -9 it then", lambda: os.kill(JUDGE, signal.SIGKILL))
"""
    before = host_state(target)
    result, doc, kept = attack(target, "import signal\n" + code)
    assert_blocked(kept, 5)
    assert result.returncode == 0  # the judge lived to give its verdict
    assert_accepted_and_unchanged(doc, target, before)


def test_proc_names_neither_the_repository_nor_the_log(target: Repo, tmp_path: Path) -> None:
    log = tmp_path / "logs" / "judge.log"
    log.parent.mkdir()
    code = f"""
HIDDEN = [bytes.fromhex(h) for h in {[os.fsencode(p).hex() for p in (target.path, log)]!r}]


def named():
    out = []
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        for what in ("cmdline", "environ"):
            try:
                data = open(f"/proc/{{pid}}/{{what}}", "rb").read()
            except OSError:
                continue
            out += [(pid, what, h) for h in HIDDEN if h in data]
    return out if out else fail("no hidden path in /proc")


reach("a hidden path in /proc/*/cmdline or environ", named)
"""
    result, doc, kept = attack(target, code, "--log", str(log), own=True)
    assert str(log) in result.args  # the judge's own command line names it
    assert_blocked(kept)
    assert doc["class"] == "accept", doc["reason"]


# -- /dev/shm and the network -----------------------------------------------------------


def test_a_file_written_to_dev_shm_stays_in_the_sandbox(target: Repo) -> None:
    shm = Path("/dev/shm")
    if not shm.is_dir():
        pytest.skip("no /dev/shm on this host")
    host_only, written = shm / unique("ge-host-"), shm / unique("ge-run-")
    host_only.write_text("the host's\n")
    code = f"""
HOST, RUN = {str(host_only)!r}, {str(written)!r}
open(RUN, "w").write("from the run")
reach("the host's /dev/shm", lambda: existing(HOST))
reach("the host's /dev/shm, uncovered", lambda: (uncover(HOST), open(RUN, "w").write("x")))
"""
    try:
        _, doc, kept = attack(target, code)
        assert_blocked(kept, 2)
        assert not written.exists()
        assert doc["class"] == "accept", doc["reason"]
    finally:
        host_only.unlink()
        if written.exists():
            written.unlink()


def test_a_run_cannot_connect_to_a_listener_on_the_host(
    target: Repo, listener: socket.socket
) -> None:
    port = listener.getsockname()[1]
    addresses = ["127.0.0.1", *filter(None, [host_address()])]
    code = CONNECT + "".join(
        f"reach('connect to {a}:{port}', lambda: connect(socket.AF_INET, ({a!r}, {port})))\n"
        for a in addresses
    )
    _, doc, kept = attack(target, code)
    assert_blocked(kept, len(addresses))
    assert not connected(listener)
    assert doc["class"] == "accept" and doc["sandbox"]["network"] is False, doc["reason"]


def test_a_listener_a_run_binds_is_not_reachable_from_the_host(
    target: Repo, tmp_path: Path
) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    code = f"""
import socket, time
server = socket.socket()
server.bind(("127.0.0.1", {port}))
server.listen(8)
server.settimeout(0.05)
open("bound.local", "a").write("bound\\n")
peers, deadline = [], time.time() + 10
while time.time() < deadline and not os.path.exists("go.local"):
    try:
        peers.append(server.accept()[1])
    except OSError:
        pass
reach("a connection from the host", lambda: peers if peers else fail("nobody came"))
"""
    argv = ["judge", "--format", "json", "--keep", "--", sys.executable, "-c", KIT + code]
    proc = subprocess.Popen(
        [sys.executable, "-m", "git_evidence", *argv],
        cwd=target.path,
        env={**os.environ, **FAST, "TMPDIR": str(scratch)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 15
    while not list(scratch.glob("*/ws-1/bound.local")) and time.monotonic() < deadline:
        time.sleep(0.02)
    [bound] = scratch.glob("*/ws-1/bound.local")
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        host_connected = True
    except OSError:
        host_connected = False
    (bound.parent / "go.local").write_text("go\n")
    out, err = proc.communicate(timeout=30)
    KEPT.append(Path(err.split("workspace kept in ", 1)[1].split()[0]))
    assert not host_connected
    assert_blocked(KEPT[-1])
    assert json.loads(out)["class"] == "accept"


def unix_listener(address: str) -> socket.socket:
    server = socket.socket(socket.AF_UNIX)
    server.bind(address)
    server.listen(8)
    server.setblocking(False)
    return server


def test_a_host_service_on_an_abstract_unix_socket_is_not_reachable(target: Repo) -> None:
    name = "\0" + unique("ge-abstract-")
    with unix_listener(name) as server:
        code = CONNECT + f"reach('abstract socket', lambda: connect(socket.AF_UNIX, {name!r}))"
        _, doc, kept = attack(target, code)
        assert_blocked(kept)
        assert not connected(server)
    assert doc["class"] == "accept", doc["reason"]


def test_a_host_service_on_a_unix_socket_outside_the_hidden_folders_is_not_reachable(
    target: Repo,
) -> None:
    # the kind of /run/docker.sock or a database's socket: on the read-only root file
    # system, outside every folder the sandbox hides
    folder = Path("/var/tmp") / unique("ge-socket-")
    folder.mkdir()
    path = str(folder / "service.sock")
    try:
        with unix_listener(path) as server:
            code = CONNECT + f"reach('{path}', lambda: connect(socket.AF_UNIX, {path!r}))"
            _, doc, kept = attack(target, code)
            assert not connected(server)
            assert_blocked(kept)
        assert doc["class"] == "accept", doc["reason"]
    finally:
        os.unlink(path)
        folder.rmdir()


# -- what the judge reads back from a run ------------------------------------------------


def test_a_fifo_planted_as_the_runs_hits_file_does_not_hang_the_judge(
    target: Repo, tmp_path: Path
) -> None:
    code = "import os; os.mkfifo(os.environ['EVIDENCE_HITS_FILE'])"
    CMD = (sys.executable, "-c")
    proc = subprocess.Popen(
        [sys.executable, "-m", "git_evidence", "judge", "--format", "json", "--", *CMD, code],
        cwd=target.path,
        env={**os.environ, **FAST, "TMPDIR": str(tmp_path)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, _ = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the judge hangs opening the FIFO the run left as its hits file")
    assert json.loads(out)["class"] in ("accept", "property_fail", "undecided")


def test_a_link_planted_as_the_runs_hits_file_does_not_read_the_judges_files(
    target: Repo,
) -> None:
    secret = home() / "notes.txt"  # hidden from the run: the judge must not read it for it
    secret.write_text("deploy-token-7c3e91 42\n")
    code = f"import os; os.symlink({str(secret)!r}, os.environ['EVIDENCE_HITS_FILE'])"
    result, doc = target.judge("--", sys.executable, "-c", code)
    assert doc["class"] == "accept", doc["reason"]
    assert "deploy-token-7c3e91" not in result.stdout


# -- every escape at once, from a property in the suite ----------------------------------

BATTERY = """
REPO, HOME, LOG, SHM, PORT, JUDGE, MARK = {params}
caps = [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0]
pids = [p for p in os.listdir("/proc") if p.isdigit()]
reach("capabilities", lambda: caps if int(caps, 16) else fail("none"))
reach("the repository from /proc/1/cwd", lambda: existing(os.readlink("/proc/1/cwd") + "/.git"))
reach("the judge in /proc", lambda: pids if len(pids) > 4 or str(JUDGE) in pids else fail(pids))
reach("the user's HOME", lambda: existing(os.path.expanduser("~/.gitconfig")))
reach("the loopback", lambda: connect(socket.AF_INET, ("127.0.0.1", PORT)))
reach("kill the judge", lambda: os.kill(JUDGE, 9))
with open("daemon-code.local", "w") as handle:
    handle.write({daemon!r})
reach("a daemon's end", lambda: (exec(open("daemon-code.local").read()), fail("ended"))[1])
reach("the log", lambda: append_existing(LOG, "forged"))
reach("a nested namespace", lambda: nested())
reach("lift /proc", lambda: (umount("/proc"), existing(f"/proc/{{JUDGE}}")))
reach("the repository's config", lambda: append_existing(uncover(REPO + "/.git/config"), "[x]"))
reach("the user's gitconfig", lambda: append_existing(uncover(HOME + "/.gitconfig"), "[x]"))
reach("the log, uncovered", lambda: append_existing(uncover(LOG), "forged"))
reach("the host's /dev/shm", lambda: open(SHM, "w").close() or existing(SHM + ".host"))
"""

NESTED = """
def nested():
    pid = os.fork()
    if pid == 0:  # a user and mount namespace of its own, then lift what hides HOME
        try:
            code = _LIBC.unshare(0x10000000 | 0x00020000)
            os._exit(3 if code else 0 if os.path.exists(uncover(HOME + "/.gitconfig")) else 4)
        finally:
            os._exit(5)
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return "lifted" if code == 0 else fail(f"exit {code}")
"""


def test_a_property_trying_every_escape_reports_each_one_blocked(
    target: Repo, tmp_path: Path, listener: socket.socket
) -> None:
    log = tmp_path / "logs" / "judge.log"
    log.parent.mkdir()
    log.write_text("{}\n")
    shm, marker = f"/dev/shm/{unique('ge-battery-')}", unique("battery-")
    Path(shm + ".host").write_text("host\n")
    params = (
        str(target.path),
        str(home()),
        str(log),
        shm,
        listener.getsockname()[1],
        os.getpid(),
        marker,
    )
    battery = BATTERY.format(params=repr(params), daemon=daemon_code(marker))
    target.product(KIT + CONNECT + NESTED + battery + "\n\n" + APP)
    before = host_state(target)
    try:
        _, doc, kept = target.judge_kept("--property", "suite", "--log", str(log))
        lines = assert_blocked(kept, 14)
        assert len(lines) == 2 * 14  # both runs of the suite tried all
        assert left_running(marker) == [] and not Path(shm).exists()
        assert not connected(listener)
        assert_accepted_and_unchanged(doc, target, before)
        assert log.read_text().splitlines()[0] == "{}" and "forged" not in log.read_text()
    finally:
        Path(shm + ".host").unlink()
        if Path(shm).exists():
            os.unlink(shm)
