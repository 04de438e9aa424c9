"""A forge as ``git evidence ci`` meets it in a job: a real remote repository (no hooks:
on a forge no server hook runs), a developer's (or agent's) clone, a fresh clone per
job, and the event payloads the forges document (tests/forge/data/forge/) filled with
the real commits."""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

from helpers.repos import Work, clone_of, evidence, git, make_remote

DATA = Path(__file__).parent.parent / "forge" / "data" / "forge"
AGENT = "copilot-swe-agent"
PERSON = "alice"  # an evidence writer in the seed's policy
WORKFLOW = ".github/workflows/evidence.yml"


class Forge:
    """A remote as the forge holds it, a developer's (or agent's) clone, and the CI
    job's clone made fresh for each run."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.remote = make_remote(root)
        self.work = clone_of(root, self.remote)
        self.base = self.work.head()
        self.summary = root / "summary.md"
        self.runs = 0

    def job(self, *clone_args: str) -> Path:
        self.runs += 1
        path = self.root / f"job{self.runs}"
        git(self.root, "clone", "-q", *clone_args, f"file://{self.remote}", str(path))
        return path

    def pull_request(
        self,
        head: str,
        *,
        author: str = AGENT,
        sender: str | None = None,
        base: str | None = None,
        target: str = "main",
        job: Path | None = None,
        args: tuple[str, ...] = (),
        payload_file: str = "github-pull_request_target.json",
        values: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        # A fork's head is on the forge only under refs/pull/N/head, which no clone fetches.
        self.work.git("push", "-q", "-f", "origin", f"{head}:refs/pull/7/head")
        payload = fill(
            payload_file,
            **(values or {}),
            HEAD_SHA=head,
            BASE_SHA=base or self.base,
            BASE_REF=target,
            BEFORE_SHA=self.base,
            AUTHOR_LOGIN=author,
            SENDER_LOGIN=sender or author,
        )
        event = self.root / "event.json"
        event.write_text(payload)
        job_env = {
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": "pull_request_target",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_STEP_SUMMARY": str(self.summary),
            **(env or {}),
        }
        return evidence(job or self.job(), "ci", *args, env=job_env)


def fill(name: str, **values: str) -> str:
    """A stored payload with its ``"@NAME@"`` placeholders filled (``@FORCED@`` as JSON)."""
    text = (DATA / name).read_text()
    for key, value in values.items():
        quoted = value if value in ("true", "false") else json.dumps(value)
        text = text.replace(f'"@{key}@"', quoted)
    json.loads(text)  # still the documented shape, as JSON
    return text


def printed_commands(out: str) -> list[str]:
    """The workflow commands, up to the text report the runner takes as plain text."""
    lines = []
    for line in out.splitlines():
        if line.startswith("::stop-commands::"):
            break
        lines.append(line)
    return lines


def branch(work: Work, files: dict[str, str], message: str = "agent change") -> str:
    work.git("checkout", "-q", "-B", "topic", "origin/main")
    return work.commit(message, files)


class Api:
    """``GET /repos/OWNER/NAME/pulls/N`` answered with ``base``; what was asked, kept."""

    def __init__(self) -> None:
        self.base: dict[str, str] = {}
        self.status = 200
        self.asked: list[tuple[str, str | None]] = []
        api = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                api.asked.append((self.path, self.headers.get("Authorization")))
                body = json.dumps({"number": 7, "base": api.base}).encode()
                self.send_response(api.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    def env(self, token: str = "ghs_job_token") -> dict[str, str]:
        return {
            "GITHUB_API_URL": self.url,
            "GITHUB_REPOSITORY": "octo-org/octo-repo",
            "GITHUB_TOKEN": token,
        }


@contextlib.contextmanager
def serving() -> Iterator[Api]:
    """An ``Api`` answering on a free 127.0.0.1 port while the block runs."""
    served = Api()
    thread = threading.Thread(target=served.server.serve_forever, daemon=True)
    thread.start()
    try:
        yield served
    finally:
        served.server.shutdown()
        served.server.server_close()
        thread.join()
