"""Real servers for the tests: nginx + fcgiwrap serving git-http-backend with basic
authentication, and sshd + gitolite. Each binds 127.0.0.1 on a free port and is
stopped when the session ends. `.ci/run` installs the packages; without them the
tests fail under CI and skip, loudly, elsewhere."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = "/usr/bin/python3"
HTTP_USERS = {
    "alice": "alice-pw",
    "ci-bot": "ci-pw",
    "agent-bot": "agent-pw",
    # a GitHub Actions job token, as git sends it (basic auth, user x-access-token)
    "x-access-token": "ghs-job-token",
}


def need(*binaries: str) -> dict[str, str]:
    found = {}
    for name in binaries:
        path = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin:/sbin")
        if path is None:
            message = (
                f"LOUD SKIP: {name} is not installed (apt-get install nginx-light "
                "fcgiwrap openssh-server gitolite3; .ci/run does)"
            )
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
        found[name] = path
    return found


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(check: object, what: str, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if callable(check) and check():
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not come up within {seconds} s")


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def start(argv: list[str], log: Path) -> subprocess.Popen[bytes]:
    """A server in a process group of its own, so that `stop` ends what it forks too
    (fcgiwrap's workers, nginx's worker, sshd's per-connection children)."""
    with open(log, "wb") as stderr:
        return subprocess.Popen(
            argv, stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True
        )


def stop(proc: subprocess.Popen[bytes], seconds: float = 10.0) -> None:
    """End ``proc``'s whole process group: TERM, then KILL what is left."""
    group = proc.pid  # start_new_session: the leader's pid is the group's id
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=seconds)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(group, signal.SIGKILL)
    proc.wait()


@dataclass
class HttpGit:
    port: int
    repos: Path
    root: Path

    def url(self, user: str, repo: str) -> str:
        return f"http://{user}:{HTTP_USERS[user]}@127.0.0.1:{self.port}/{repo}"


NGINX_CONF = """
worker_processes 1;
{user}
error_log {root}/error.log;
pid {root}/nginx.pid;
events {{ worker_connections 64; }}
http {{
  access_log off;
  client_body_temp_path {root}/tmp-body;
  fastcgi_temp_path {root}/tmp-fastcgi;
  proxy_temp_path {root}/tmp-proxy;
  uwsgi_temp_path {root}/tmp-uwsgi;
  scgi_temp_path {root}/tmp-scgi;
  server {{
    listen 127.0.0.1:{port};
    client_max_body_size 0;
    location / {{
      auth_basic "git";
      auth_basic_user_file {root}/htpasswd;
      include /etc/nginx/fastcgi_params;
      fastcgi_param SCRIPT_FILENAME {backend};
      fastcgi_param GIT_PROJECT_ROOT {repos};
      fastcgi_param GIT_HTTP_EXPORT_ALL "";
      fastcgi_param REMOTE_USER $remote_user;
      fastcgi_param PATH_INFO $uri;
      fastcgi_param HOME {root};
      fastcgi_param GIT_CONFIG_NOSYSTEM 1;
      fastcgi_param PYTHONPATH {project};
      fastcgi_pass unix:{root}/fcgi.sock;
    }}
  }}
}}
"""


@contextlib.contextmanager
def serve_http(root: Path, repos: Path, nginx: str, fcgiwrap: str) -> Iterator[int]:
    """nginx + fcgiwrap serving git-http-backend for ``repos`` on a free 127.0.0.1
    port, with basic authentication for HTTP_USERS; yields the port."""
    backend = (
        Path(
            subprocess.run(
                ["git", "--exec-path"], capture_output=True, text=True, check=True
            ).stdout.strip()
        )
        / "git-http-backend"
    )
    (root / "htpasswd").write_text("".join(f"{u}:{{PLAIN}}{p}\n" for u, p in HTTP_USERS.items()))
    port = free_port()
    (root / "nginx.conf").write_text(
        NGINX_CONF.format(
            root=root,
            port=port,
            repos=repos,
            backend=backend,
            project=PROJECT,
            user="user root;" if os.geteuid() == 0 else "",
        )
    )
    fcgi = start([fcgiwrap, "-c", "2", "-s", f"unix:{root}/fcgi.sock"], root / "fcgi.log")
    try:
        server = start(
            [nginx, "-p", str(root), "-c", str(root / "nginx.conf"), "-g", "daemon off;"],
            root / "nginx.log",
        )
        try:
            wait_for(lambda: (root / "fcgi.sock").exists(), "fcgiwrap")
            wait_for(lambda: port_open(port), "nginx")
            yield port
        finally:
            stop(server)
    finally:
        stop(fcgi)


@pytest.fixture(scope="session")
def http_git(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpGit]:
    """Smart HTTP with basic auth for alice, ci-bot and agent-bot; REMOTE_USER reaches
    the hooks as git-http-backend passes it on."""
    bins = need("nginx", "fcgiwrap")
    root = tmp_path_factory.mktemp("http")
    repos = root / "repos"
    repos.mkdir()
    with serve_http(root, repos, bins["nginx"], bins["fcgiwrap"]) as port:
        yield HttpGit(port, repos, root)


@dataclass
class Gitolite:
    user: str
    home: Path
    port: int
    keys: dict[str, Path]

    def ssh_env(self, who: str) -> dict[str, str]:
        return {
            "GIT_SSH_COMMAND": (
                f"ssh -i {self.keys[who]} -p {self.port} -o IdentitiesOnly=yes "
                "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR "
                "-o BatchMode=yes"
            )
        }

    def url(self, repo: str) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}/{repo}"

    def repo_dir(self, repo: str) -> Path:
        return self.home / "repositories" / f"{repo}.git"

    def protect(self, repo: str) -> None:
        """Install the hooks as the git user's admin would: the system Python, with the
        package on its path (this Python need not be readable by that user)."""
        hooks = self.repo_dir(repo) / "hooks"
        for hook in ("pre-receive", "post-receive"):
            path = hooks / hook
            path.write_text(
                f"#!/bin/sh\nPYTHONPATH={self.home.parent / 'lib'} "
                f'exec {SYSTEM_PYTHON} -m git_evidence {hook} "$@"\n'
            )
            path.chmod(0o755)


SSHD_CONF = """
Port {port}
ListenAddress 127.0.0.1
HostKey {root}/hostkey
PidFile {root}/sshd.pid
AuthorizedKeysFile .ssh/authorized_keys
AllowUsers {user}
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
PermitUserEnvironment no
LogLevel ERROR
"""

GITOLITE_CONF = """
repo gitolite-admin
    RW+ = admin
repo t/[a-z0-9_-]+
    C   = alice agent-bot
    RW+ = alice agent-bot
"""


def _as(user: str, home: Path, *cmd: str) -> None:
    subprocess.run(
        ["runuser", "-u", user, "--", "env", f"HOME={home}", "PATH=/usr/bin:/bin", *cmd],
        check=True,
        capture_output=True,
        cwd=home,
    )


@pytest.fixture(scope="session")
def gitolite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gitolite]:
    """gitolite3 behind sshd on 127.0.0.1, users alice and agent-bot; GL_USER names
    the pusher to the hooks. Needs root (a dedicated system user is created)."""
    bins = need("sshd", "gitolite", "ssh-keygen", "runuser", "useradd")
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.fail(f"{SYSTEM_PYTHON} is missing: the git user needs a Python of its own")
    if os.geteuid() != 0:
        message = "LOUD SKIP: the gitolite test creates a system user and needs root"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    # Not under pytest's own temporary tree: that is private to root (0700), and the
    # gitolite user must reach its home.
    root = Path(tempfile.mkdtemp(prefix="git-evidence-gitolite-"))
    root.chmod(0o755)
    home = root / "home"
    shutil.copytree(
        PROJECT / "git_evidence",
        root / "lib" / "git_evidence",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    user = f"evgl{os.getpid()}"
    # "*": no password, yet not locked (sshd without PAM refuses locked accounts)
    subprocess.run(
        [
            bins["useradd"],
            "--home-dir",
            str(home),
            "--create-home",
            "-p",
            "*",
            "--shell",
            "/bin/sh",
            user,
        ],
        check=True,
        capture_output=True,
    )
    try:
        keys = {}
        for who in ("admin", "alice", "agent-bot"):
            key = root / f"{who}-key"
            subprocess.run(
                [bins["ssh-keygen"], "-q", "-t", "ed25519", "-N", "", "-C", who, "-f", str(key)],
                check=True,
            )
            keys[who] = key
        pub = home / "admin.pub"
        shutil.copy(f"{keys['admin']}.pub", pub)
        os.chmod(pub, 0o644)
        _as(user, home, "gitolite", "setup", "-pk", str(pub))
        (home / ".gitolite" / "conf" / "gitolite.conf").write_text(GITOLITE_CONF)
        for who in ("alice", "agent-bot"):
            shutil.copy(f"{keys[who]}.pub", home / ".gitolite" / "keydir" / f"{who}.pub")
        subprocess.run(["chown", "-R", f"{user}:{user}", str(home)], check=True)
        _as(user, home, "gitolite", "setup")
        subprocess.run(
            [bins["ssh-keygen"], "-q", "-t", "ed25519", "-N", "", "-f", str(root / "hostkey")],
            check=True,
        )
        port = free_port()
        (root / "sshd.conf").write_text(SSHD_CONF.format(port=port, root=root, user=user))
        Path("/run/sshd").mkdir(exist_ok=True)
        sshd = start([bins["sshd"], "-D", "-e", "-f", str(root / "sshd.conf")], root / "sshd.log")
        try:
            wait_for(lambda: port_open(port), "sshd")
            yield Gitolite(user, home, port, keys)
        finally:
            stop(sshd)
    finally:
        subprocess.run(["userdel", user], check=False, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)
