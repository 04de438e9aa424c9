"""Pushes through gitolite over ssh: gitolite authenticates the key and names the
pusher in GL_USER; git evidence is the repository's pre-receive."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.pushes import refused, remote
from helpers.repos import SEED, Work, git
from helpers.servers import Gitolite

POLICY = '[identities]\nevidence_writers = ["alice"]\nlock_writers = ["alice"]\n'


@pytest.fixture
def repo(gitolite: Gitolite, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A wild repo created by alice's first push (the seed), then protected."""
    name = "t/" + request.node.name.lower().replace("_", "-")[:40]
    seed = Work(tmp_path / "seed")
    git(tmp_path, "init", "-q", str(seed.path))
    seed.commit("seed", {**SEED, ".git-evidence.toml": POLICY})
    pushed = seed.git(
        "push",
        "-q",
        gitolite.url(name),
        "HEAD:refs/heads/main",
        env=gitolite.ssh_env("alice"),
        check=False,
    )
    assert pushed.returncode == 0, pushed.stderr
    gitolite.protect(name)
    return str(name)


def clone(gitolite: Gitolite, name: str, who: str, tmp_path: Path) -> Work:
    work = Work(tmp_path / who)
    git(tmp_path, "clone", "-q", gitolite.url(name), str(work.path), env=gitolite.ssh_env(who))
    return work


def test_gitolite_agent_product_push_is_allowed_and_evidence_refused(
    gitolite: Gitolite,
    repo: str,
    tmp_path: Path,
) -> None:
    agent = clone(gitolite, repo, "agent-bot", tmp_path)
    agent.commit("fix", {"src/app.py": "fixed\n"})
    ok = agent.push("origin", "HEAD:main", env=gitolite.ssh_env("agent-bot"))
    assert ok.returncode == 0, ok.stderr
    assert "git-evidence: allowed" not in remote(ok)  # quiet when it allows
    agent.commit("golden", {"tests/goldens/out.txt": "moved\n"})
    bad = agent.push("origin", "HEAD:main", env=gitolite.ssh_env("agent-bot"))
    assert refused(bad, "evidence-untrusted")
    assert "agent-bot may not change evidence" in remote(bad)


def test_gitolite_alice_evidence_push_is_allowed(
    gitolite: Gitolite,
    repo: str,
    tmp_path: Path,
) -> None:
    alice = clone(gitolite, repo, "alice", tmp_path)
    alice.commit("golden", {"tests/goldens/out.txt": "v2\n"})
    result = alice.push("origin", "HEAD:main", env=gitolite.ssh_env("alice"))
    assert result.returncode == 0, result.stderr
    # allowed at all says the key is alice's: an agent's evidence push is refused
    assert "refused" not in remote(result)


def test_gitolite_client_cannot_send_its_identity_over_ssh(
    gitolite: Gitolite, repo: str, tmp_path: Path
) -> None:
    agent = clone(gitolite, repo, "agent-bot", tmp_path)
    agent.commit("golden", {"tests/goldens/out.txt": "moved\n"})
    env = gitolite.ssh_env("agent-bot")
    env["GIT_SSH_COMMAND"] += " -o SetEnv=GIT_EVIDENCE_PUSHER=alice -o SendEnv=GL_USER"
    result = agent.push("origin", "HEAD:main", env={**env, "GL_USER": "alice"})
    assert refused(result, "evidence-untrusted")
    assert "agent-bot may not change evidence" in remote(result)
