"""The documentation works as written: the CI freeze job runs on a real repository,
the nginx example passes `nginx -t`, and the ssh and gitolite setups of the hosting
guides hold against a real sshd. Snippets are read from the guides themselves, so a
guide that drifts fails here."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers.pushes import refused, remote
from helpers.repos import PROJECT, SEED, Work, evidence, git, make_server
from helpers.servers import (
    SSHD_CONF,
    SYSTEM_PYTHON,
    _as,
    free_port,
    need,
    port_open,
    start,
    stop,
    wait_for,
)

DOCS = PROJECT / "docs"
GUIDES = DOCS / "hosting"
FREEZE_JOB = DOCS / "ci-freeze-job.sh"
TEST_ID = "tests/test_app.py::test_app"
# Fails the first time it runs for a seed, then passes: a flake on every seed.
# (it remembers its first run in its workspace: the only place a sandboxed run can write)
FLAKY = '#!/bin/sh\nm="flaked-$EVIDENCE_SEED"\n[ -e "$m" ] && exit 0\n: > "$m"\nexit 1\n'
# The variables some CI exports; the job must not need any of them.
CI_VARIABLES = ("CI", "CI_JOB_URL", "CI_JOB_ID", "CI_COMMIT_SHA", "GITHUB_RUN_ID")


def fenced(guide: Path, contains: str) -> str:
    """The one fenced block of ``guide`` whose text contains ``contains``, dedented
    (blocks inside list items are indented)."""
    blocks = re.findall(
        r"^([ \t]*)```[\w-]*\n(.*?)^\1```", guide.read_text(encoding="utf-8"), re.M | re.S
    )
    found = [textwrap.dedent(body) for _indent, body in blocks if contains in body]
    assert len(found) == 1, f"{guide.name}: {len(found)} blocks contain {contains!r}"
    return found[0]


# -- docs/ci-freeze-job.sh ---------------------------------------------------------


@dataclass
class Job:
    server: Path
    work: Work
    bin: Path

    def run(self, shell: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        full = {k: v for k, v in os.environ.items() if k not in CI_VARIABLES}
        full.update(PATH=f"{self.bin}{os.pathsep}{os.environ['PATH']}", FREEZE_RUNS="2")
        full.update(env)
        return subprocess.run(
            [shell, str(FREEZE_JOB), *args],
            cwd=self.work.path,
            env=full,
            capture_output=True,
            text=True,
            check=False,
        )


@pytest.fixture
def job(tmp_path: Path) -> Job:
    """A protected server with no notes ref yet, a CI clone of it, `git-evidence` on
    PATH running this source tree, and a flaky command."""
    server = make_server(tmp_path)
    work = Work(tmp_path / "ci")
    git(tmp_path, "clone", "-q", f"file://{server}", str(work.path))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    launcher = bin_dir / "git-evidence"
    launcher.write_text(f'#!/bin/sh\nexec {sys.executable} -m git_evidence "$@"\n')
    launcher.chmod(0o755)
    (tmp_path / "flaky").write_text(FLAKY)
    (tmp_path / "flaky").chmod(0o755)
    return Job(server, work, bin_dir)


def pin_main(job: Job, tmp_path: Path, then_product_commit: bool = False) -> None:
    """A lock writer (ci-bot in the seed policy) pins main and publishes the note;
    optionally a product-only commit follows, left without a note of its own (the
    lock in force for it is then the one on its parent)."""
    writer = Work(tmp_path / "writer")
    git(tmp_path, "clone", "-q", str(job.server), str(writer.path))
    assert evidence(writer.path, "lock", "origin/main").returncode == 0
    pushed = writer.push("origin", "refs/notes/evidence", pusher="ci-bot")
    assert pushed.returncode == 0, pushed.stderr
    if then_product_commit:
        writer.commit("product", {"src/app.py": "print('hello again')\n"})
        pushed = writer.push("origin", "HEAD:main", pusher="agent-bot")
        assert pushed.returncode == 0, pushed.stderr
        git(job.server, "notes", "--ref", "evidence", "remove", "--ignore-missing", "main")


def test_freeze_job_parses_as_posix_sh() -> None:
    for shell in ("sh", "bash"):
        assert subprocess.run([shell, "-n", str(FREEZE_JOB)], check=False).returncode == 0


def test_freeze_job_without_notes_on_the_server_fails_only_at_the_missing_lock(
    job: Job, tmp_path: Path
) -> None:
    assert git(job.server, "for-each-ref", "refs/notes").stdout == ""
    result = job.run("bash", TEST_ID, "--", str(tmp_path / "flaky"))
    assert result.returncode == 2, result.stderr
    assert "unbound variable" not in result.stderr
    assert "couldn't find remote ref" not in result.stderr
    assert "has no refs/notes/evidence yet" in result.stderr
    assert "no lock in force at HEAD" in result.stderr
    assert git(job.server, "rev-list", "--count", "main").stdout.strip() == "1"


@pytest.mark.parametrize("shell", ["sh", "bash"])
def test_freeze_job_in_a_shallow_clone_freezes_and_pushes_the_ledger_alone(
    job: Job, tmp_path: Path, shell: str
) -> None:
    # The tip has no note: only the full history shows the lock in force.
    pin_main(job, tmp_path, then_product_commit=True)
    shallow = Work(tmp_path / "shallow")
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{job.server}", str(shallow.path))
    ci = Job(job.server, shallow, job.bin)
    result = ci.run(
        shell,
        TEST_ID,
        "--",
        str(tmp_path / "flaky"),
        GIT_EVIDENCE_PUSHER="ci-bot",  # what the server authenticates the push as
        GITHUB_SERVER_URL="https://github.example",
        GITHUB_REPOSITORY="team/app",
        GITHUB_RUN_ID="77",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "froze tests/test_app.py::test_app" in result.stdout
    assert "remote:" not in result.stderr  # an allowed push that pins nothing is quiet
    assert git(job.server, "rev-list", "--count", "main").stdout.strip() == "3"
    changed = git(job.server, "diff-tree", "--no-commit-id", "--name-only", "-r", "main")
    assert changed.stdout.split() == ["tests/freeze.jsonl"]
    ledger = git(job.server, "show", "main:tests/freeze.jsonl").stdout
    assert '"writer":"ci-bot"' in ledger
    assert "https://github.example/team/app/actions/runs/77" in ledger


def test_freeze_job_leaves_the_ledger_alone_when_the_test_always_passes(
    job: Job, tmp_path: Path
) -> None:
    pin_main(job, tmp_path)
    result = job.run("bash", TEST_ID, "--", "true")
    assert result.returncode == 1
    assert "passed every run: nothing to freeze" in result.stdout
    assert git(job.server, "rev-list", "--count", "main").stdout.strip() == "1"


# -- docs/hosting/smart-http.md ------------------------------------------------------


def test_smart_http_nginx_server_block_passes_nginx_t(tmp_path: Path) -> None:
    bins = need("nginx", "openssl")
    subprocess.run(
        [
            *(bins["openssl"], "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1"),
            *("-subj", "/CN=git.example.com", "-keyout", str(tmp_path / "key.pem")),
            *("-out", str(tmp_path / "cert.pem")),
        ],
        check=True,
        capture_output=True,
    )
    server = fenced(GUIDES / "smart-http.md", "fastcgi_pass")
    server = server.replace("/etc/ssl/certs/git.example.com.pem", str(tmp_path / "cert.pem"))
    server = server.replace("/etc/ssl/private/git.example.com.key", str(tmp_path / "key.pem"))
    assert str(tmp_path) in server, "the guide's certificate paths changed"
    conf = tmp_path / "nginx.conf"
    conf.write_text(f"pid {tmp_path}/nginx.pid;\nevents {{}}\nhttp {{\n{server}}}\n")
    result = subprocess.run(
        [bins["nginx"], "-t", "-p", str(tmp_path), "-c", str(conf), "-e", str(tmp_path / "err")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr


# -- real sshd hosts for the ssh and gitolite guides ---------------------------------


@dataclass
class SshHost:
    """A throwaway system account behind sshd on 127.0.0.1, with a key per person and
    a copy of this source tree it can read (for its hooks)."""

    user: str
    home: Path
    root: Path
    port: int

    def ssh(self, who: str) -> str:
        return (
            f"ssh -i {self.root / who}-key -p {self.port} -o IdentitiesOnly=yes -o BatchMode=yes "
            "-o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
        )

    def env(self, who: str) -> dict[str, str]:
        return {"GIT_SSH_COMMAND": self.ssh(who)}

    def public_key(self, who: str) -> str:
        return (self.root / f"{who}-key.pub").read_text().strip()

    def hook(self, hook: str) -> str:
        """A server hook as the account's admin writes it: a Python that account can
        read, with this source tree on its path."""
        lib = self.root / "lib"
        return f"#!/bin/sh\nPYTHONPATH={lib} exec {SYSTEM_PYTHON} -m git_evidence {hook}\n"


def as_root_or_skip(what: str) -> None:
    if os.geteuid() != 0:
        message = f"LOUD SKIP: {what} creates a system user and needs root"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)


@contextlib.contextmanager
def system_account(name: str, shell: str, people: tuple[str, ...]) -> Iterator[SshHost]:
    """The account, its keys and the copied source; the caller sets up the account,
    then starts sshd with `serve_ssh`. Not under pytest's temporary tree: that is
    private to root, and the account must reach its home."""
    bins = need("ssh-keygen", "useradd")
    as_root_or_skip(f"the {name} guide test")
    root = Path(tempfile.mkdtemp(prefix=f"git-evidence-{name}-"))
    root.chmod(0o755)
    shutil.copytree(
        PROJECT / "git_evidence",
        root / "lib" / "git_evidence",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    user = f"ev{name[:4]}{os.getpid()}"
    home = root / "home"
    # "*": no password, yet not locked (sshd without PAM refuses locked accounts)
    useradd = [bins["useradd"], "--home-dir", str(home), "--create-home", "-p", "*"]
    subprocess.run([*useradd, "--shell", shell, user], check=True, capture_output=True)
    try:
        for who in people:
            key = root / f"{who}-key"
            subprocess.run(
                [bins["ssh-keygen"], "-q", "-t", "ed25519", "-N", "", "-C", who, "-f", str(key)],
                check=True,
            )
        yield SshHost(user, home, root, free_port())
    finally:
        subprocess.run(["userdel", user], check=False, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


@contextlib.contextmanager
def serve_ssh(host: SshHost) -> Iterator[None]:
    sshd = need("sshd")["sshd"]
    config = host.root / "sshd.conf"
    config.write_text(SSHD_CONF.format(port=host.port, root=host.root, user=host.user))
    hostkey = [need("ssh-keygen")["ssh-keygen"], "-q", "-t", "ed25519", "-N", ""]
    subprocess.run([*hostkey, "-f", str(host.root / "hostkey")], check=True)
    Path("/run/sshd").mkdir(exist_ok=True)
    server = start([sshd, "-D", "-e", "-f", str(config)], host.root / "sshd.log")
    try:
        wait_for(lambda: port_open(host.port), "sshd")
        yield
    finally:
        stop(server)  # the whole group: per-connection children too


# -- docs/hosting/plain-ssh.md: git-shell, the per-key wrapper, seed then protect -----

INLINE = 'command="GIT_EVIDENCE_PUSHER=alice git-shell -c \\"$SSH_ORIGINAL_COMMAND\\""'


@pytest.fixture(scope="module")
def ssh_host() -> Iterator[SshHost]:
    """An account whose login shell is git-shell, the guide's wrapper in
    ~/git-shell-commands, the guide's authorized_keys lines, plus one key with the
    inline form the guide warns against."""
    guide = GUIDES / "plain-ssh.md"
    git_shell = need("git-shell")["git-shell"]
    with system_account("ssh", git_shell, ("alice", "agent-bot", "inline")) as host:
        commands = host.home / "git-shell-commands"
        commands.mkdir()
        wrapper = commands / "evidence-push"
        wrapper.write_text(fenced(guide, "SSH_ORIGINAL_COMMAND"))
        wrapper.chmod(0o755)
        lines = []
        for line in fenced(guide, 'command="evidence-push').splitlines():
            options, _, rest = line.partition(" ssh-ed25519 ")
            owner = rest.split()[-1].split("@")[0]
            lines.append(f"{options} {host.public_key(owner)}")
        lines.append(f"{INLINE},restrict {host.public_key('inline')}")
        (host.home / ".ssh").mkdir()
        (host.home / ".ssh" / "authorized_keys").write_text("\n".join(lines) + "\n")
        subprocess.run(["chown", "-R", f"{host.user}:", str(host.home / ".ssh")], check=True)
        with serve_ssh(host):
            yield host


@pytest.fixture
def ssh_repo(ssh_host: SshHost, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The guide's order: an empty bare repository, seeded by a push from a work
    clone (with alice's key), then protected. Returns its URL."""
    path = ssh_host.home / f"{request.node.name.lower()[:40]}.git"
    _as(ssh_host.user, ssh_host.home, "git", "init", "-q", "--bare", str(path))
    url = f"ssh://{ssh_host.user}@127.0.0.1:{ssh_host.port}{path}"
    seed = Work(tmp_path / "seed")
    git(tmp_path, "init", "-q", str(seed.path))
    seed.commit("seed", SEED)
    pushed = seed.push(url, "HEAD:refs/heads/main", env=ssh_host.env("alice"))
    assert pushed.returncode == 0, pushed.stderr
    for hook in ("pre-receive", "post-receive"):
        (path / "hooks" / hook).write_text(ssh_host.hook(hook))
        (path / "hooks" / hook).chmod(0o755)
    return url


def golden_change(host: SshHost, url: str, who: str, tmp_path: Path) -> Work:
    work = Work(tmp_path / who)
    git(tmp_path, "clone", "-q", url, str(work.path), env=host.env(who))
    work.commit("golden", {"tests/goldens/out.txt": f"changed by {who}\n"})
    return work


def test_ssh_agent_key_pushing_evidence_is_refused_in_its_owners_name(
    ssh_host: SshHost, ssh_repo: str, tmp_path: Path
) -> None:
    work = golden_change(ssh_host, ssh_repo, "agent-bot", tmp_path)
    result = work.push("origin", "HEAD:main", env=ssh_host.env("agent-bot"))
    assert refused(result, "evidence-untrusted")
    assert "agent-bot may not change evidence" in remote(result)


def test_ssh_writer_key_pushing_evidence_is_allowed(
    ssh_host: SshHost, ssh_repo: str, tmp_path: Path
) -> None:
    work = golden_change(ssh_host, ssh_repo, "alice", tmp_path)
    result = work.push("origin", "HEAD:main", env=ssh_host.env("alice"))
    assert result.returncode == 0, result.stderr
    # allowed at all says the key is alice's: an agent's evidence push is refused
    assert "refused" not in remote(result)


def test_ssh_key_asking_the_wrapper_for_another_name_is_refused(ssh_host: SshHost) -> None:
    result = subprocess.run(
        [*ssh_host.ssh("agent-bot").split(), f"{ssh_host.user}@127.0.0.1", "evidence-push alice"],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,  # without the wrapper's check, it would call itself without end
    )
    assert result.returncode != 0
    assert "this key may only push and fetch" in result.stderr


def test_ssh_inline_pusher_in_forced_command_is_refused_by_git_shell(
    ssh_host: SshHost, ssh_repo: str, tmp_path: Path
) -> None:
    clone = git(
        tmp_path,
        "clone",
        "-q",
        ssh_repo,
        str(tmp_path / "w"),
        env=ssh_host.env("inline"),
        check=False,
    )
    assert clone.returncode != 0
    assert "unrecognized command" in clone.stderr


# -- docs/hosting/gitolite.md: common hooks and a sealed policy for wild repos --------

GITOLITE_POLICY = '[identities]\nevidence_writers = ["alice"]\nlock_writers = ["alice"]\n'


@pytest.fixture(scope="module")
def gitolite_common() -> Iterator[SshHost]:
    """gitolite3 set up as the guide's "every repository" section says: its rc lines
    (LOCAL_CODE, GIT_CONFIG_KEYS), both hooks in ~/local/hooks/common, `gitolite setup
    --hooks-only`, and its `repo t/...` block sealing a policy."""
    guide = GUIDES / "gitolite.md"
    need("gitolite")
    with system_account("gitolite", "/bin/sh", ("admin", "alice", "agent-bot")) as host:
        policy = host.root / "policy.toml"
        policy.write_text(GITOLITE_POLICY)
        policy.chmod(0o644)
        admin = host.home / "admin.pub"
        admin.write_text(host.public_key("admin") + "\n")
        admin.chmod(0o644)
        _as(host.user, host.home, "gitolite", "setup", "-pk", str(admin))
        rc_file = host.home / ".gitolite.rc"
        rc = rc_file.read_text()
        for line in fenced(guide, "LOCAL_CODE").splitlines():
            key = line.split("=>")[0].strip()
            rc, count = re.subn(rf"^\s*#?\s*{key}\s*=>.*$", f"    {line}", rc, count=1, flags=re.M)
            assert count == 1, f"{key} is not in gitolite's rc file"
        rc_file.write_text(rc)
        common = host.home / "local" / "hooks" / "common"
        common.mkdir(parents=True)
        for hook in ("pre-receive", "post-receive"):
            (common / hook).write_text(host.hook(hook))
            (common / hook).chmod(0o755)
        wild = fenced(guide, "config evidence.policyFile")
        (host.home / ".gitolite" / "conf" / "gitolite.conf").write_text(
            "repo gitolite-admin\n    RW+ = admin\n"
            + wild.replace("/etc/git-evidence/policy.toml", str(policy))
        )
        for who in ("alice", "agent-bot"):
            (host.home / ".gitolite" / "keydir" / f"{who}.pub").write_text(
                host.public_key(who) + "\n"
            )
        subprocess.run(["chown", "-R", f"{host.user}:", str(host.home)], check=True)
        _as(host.user, host.home, "gitolite", "setup")
        _as(host.user, host.home, "gitolite", "setup", "--hooks-only")
        with serve_ssh(host):
            yield host


def test_gitolite_common_hooks_guard_a_wild_repo_from_its_first_push(
    gitolite_common: SshHost, tmp_path: Path
) -> None:
    host = gitolite_common
    name = "t/wild-from-first-push"
    url = f"ssh://{host.user}@127.0.0.1:{host.port}/{name}"
    seed = Work(tmp_path / "seed")
    git(tmp_path, "init", "-q", str(seed.path))
    # as the guide says: evidence and product in separate commits, by an evidence writer
    evidence_files = {".git-evidence.toml": GITOLITE_POLICY, "tests/goldens/out.txt": "golden\n"}
    seed.commit("evidence", {**evidence_files, "tests/fixtures/a.json": '{"a": 1}\n'})
    seed.commit("product", {"src/app.py": "print('hello')\n"})
    first = seed.push(url, "HEAD:refs/heads/main", env=host.env("alice"))
    assert first.returncode == 0, first.stderr
    # the hooks ran on the repository's first push: its first lock is pinned
    assert "git-evidence: pinned refs/heads/main at" in remote(first)
    hooks = host.home / "repositories" / f"{name}.git" / "hooks"
    assert (hooks / "pre-receive").is_symlink() and (hooks / "post-receive").is_symlink()

    agent = Work(tmp_path / "agent")
    git(tmp_path, "clone", "-q", url, str(agent.path), env=host.env("agent-bot"))
    agent.commit("golden", {"tests/goldens/out.txt": "moved\n"})
    result = agent.push("origin", "HEAD:main", env=host.env("agent-bot"))
    assert refused(result, "evidence-untrusted")
    assert "agent-bot may not change evidence" in remote(result)
