"""A private repository: the job's clone keeps no credentials (``persist-credentials:
false``), so ``ci`` fetches the head (``refs/pull/N/head``) with the job's token,
handed to git through the environment and written nowhere. A real smart HTTP server
with basic authentication stands for the forge."""

from __future__ import annotations

from pathlib import Path

from helpers.forge_jobs import AGENT, fill, serving
from helpers.repos import Work, evidence, git, make_remote
from helpers.servers import HttpGit

TOKEN = "ghs-job-token"


def _job(http_git: HttpGit, tmp_path: Path) -> tuple[Path, str, str]:
    """A private remote with an agent's head under refs/pull/7/head only, and a job's
    clone whose origin carries no credentials; the event payload that names the head."""
    name = f"private-{tmp_path.name}.git"
    make_remote(http_git.repos, name=name)
    work = Work(tmp_path / "agent")
    git(tmp_path, "clone", "-q", http_git.url("alice", name), str(work.path))
    base = work.head()
    head = work.commit("agent change", {"src/app.py": "x = 2\n"})
    work.git("push", "-q", "origin", f"{head}:refs/pull/7/head")
    job = tmp_path / "job"
    git(tmp_path, "clone", "-q", http_git.url("alice", name), str(job))
    plain = f"http://127.0.0.1:{http_git.port}/{name}"
    git(job, "remote", "set-url", "origin", plain)  # persist-credentials: false
    event = tmp_path / "event.json"
    event.write_text(
        fill(
            "github-pull_request_target.json",
            HEAD_SHA=head,
            BASE_SHA=base,
            BASE_REF="main",
            BEFORE_SHA=base,
            AUTHOR_LOGIN=AGENT,
            SENDER_LOGIN=AGENT,
        )
    )
    return job, str(event), f"http://127.0.0.1:{http_git.port}"


def _env(event: str, **extra: str) -> dict[str, str]:
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request_target",
        "GITHUB_EVENT_PATH": event,
        "GIT_TERMINAL_PROMPT": "0",
        **extra,
    }


def test_the_head_of_a_private_repository_is_fetched_with_the_jobs_token(
    http_git: HttpGit, tmp_path: Path
) -> None:
    job, event, server = _job(http_git, tmp_path)
    with serving() as api:
        api.base = {"ref": "main", "sha": git(job, "rev-parse", "origin/main").stdout.strip()}
        env = _env(event, GITHUB_SERVER_URL=server, **api.env(TOKEN))
        result = evidence(job, "ci", "--format", "json", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert '"fetched head"' in result.stdout
    # the token was never written into the clone
    assert TOKEN not in (job / ".git" / "config").read_text()
    assert "extraheader" not in (job / ".git" / "config").read_text()


def test_without_the_token_the_private_head_cannot_be_fetched(
    http_git: HttpGit, tmp_path: Path
) -> None:
    job, event, server = _job(http_git, tmp_path)
    result = evidence(job, "ci", env=_env(event, GITHUB_SERVER_URL=server))
    assert result.returncode == 2, result.stdout
    assert "could not fetch" in result.stderr
