"""Pushes over real smart HTTP (nginx + fcgiwrap + git-http-backend, basic auth): the
pusher is who the web server authenticated (REMOTE_USER)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.pushes import refused, remote
from helpers.repos import Work, evidence, git, make_server
from helpers.servers import HttpGit

NOTES = "refs/notes/evidence"


@pytest.fixture
def served(http_git: HttpGit, request: pytest.FixtureRequest) -> str:
    name = request.node.name.replace("[", "-").replace("]", "") + ".git"
    make_server(http_git.repos, name=name)
    return str(name)


def clone_as(http_git: HttpGit, repo: str, user: str, tmp_path: Path) -> Work:
    work = Work(tmp_path / user)
    git(tmp_path, "clone", "-q", http_git.url(user, repo), str(work.path))
    return work


def test_agent_product_only_push_over_http_is_allowed(
    http_git: HttpGit,
    served: str,
    tmp_path: Path,
) -> None:
    agent = clone_as(http_git, served, "agent-bot", tmp_path)
    agent.commit("fix", {"src/app.py": "fixed\n"})
    result = agent.push("origin", "HEAD:main")
    assert result.returncode == 0, result.stderr
    assert "git-evidence: allowed" not in remote(result)  # quiet when it allows


def test_agent_evidence_push_over_http_is_refused(
    http_git: HttpGit,
    served: str,
    tmp_path: Path,
) -> None:
    agent = clone_as(http_git, served, "agent-bot", tmp_path)
    agent.commit("golden", {"tests/goldens/out.txt": "moved\n"})
    result = agent.push("origin", "HEAD:main")
    assert refused(result, "evidence-untrusted")
    assert "agent-bot may not change evidence" in remote(result)


def test_alice_evidence_only_push_over_http_is_allowed(
    http_git: HttpGit,
    served: str,
    tmp_path: Path,
) -> None:
    alice = clone_as(http_git, served, "alice", tmp_path)
    alice.commit("golden", {"tests/goldens/out.txt": "v2\n"})
    result = alice.push("origin", "HEAD:main")
    assert result.returncode == 0, result.stderr
    assert "pinned refs/heads/main" in remote(result)


def test_alice_mixed_commit_over_http_is_refused(
    http_git: HttpGit,
    served: str,
    tmp_path: Path,
) -> None:
    alice = clone_as(http_git, served, "alice", tmp_path)
    alice.commit("mixed", {"src/app.py": "bug\n", "tests/goldens/out.txt": "v2\n"})
    assert refused(alice.push("origin", "HEAD:main"), "mixed-commit")


def test_ci_bot_notes_push_over_http_is_allowed(
    http_git: HttpGit,
    served: str,
    tmp_path: Path,
) -> None:
    ci = clone_as(http_git, served, "ci-bot", tmp_path)
    assert evidence(ci.path, "lock", "origin/main").returncode == 0
    result = ci.push("origin", NOTES)
    assert result.returncode == 0, result.stderr


def test_agent_notes_push_over_http_is_refused(
    http_git: HttpGit,
    served: str,
    tmp_path: Path,
) -> None:
    agent = clone_as(http_git, served, "agent-bot", tmp_path)
    assert evidence(agent.path, "lock", "origin/main").returncode == 0
    assert refused(agent.push("origin", NOTES), "notes-forge")


def test_the_client_cannot_choose_its_http_identity(
    http_git: HttpGit,
    served: str,
    tmp_path: Path,
) -> None:
    agent = clone_as(http_git, served, "agent-bot", tmp_path)
    agent.commit("golden", {"tests/goldens/out.txt": "moved\n"})
    result = agent.push(
        "origin", "HEAD:main", pusher="alice", env={"REMOTE_USER": "alice", "GL_USER": "alice"}
    )
    assert refused(result, "evidence-untrusted")
    assert "agent-bot may not change evidence" in remote(result)
