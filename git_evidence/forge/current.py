"""The base a GitHub pull request has now, asked of the forge's REST API: a request is
judged against its current base, not the one an older event names.

An event's payload is the request as it was when the event fired, and a re-run of a
job reads the same payload: a pull request opened against an unprotected branch and
then retargeted at ``main`` would pass again if an old run were re-run. So with the
job's token (``GITHUB_TOKEN``, which the action passes), ``ci`` reads
``GET $GITHUB_API_URL/repos/$GITHUB_REPOSITORY/pulls/NUMBER`` and judges against its
``base.ref`` and ``base.sha``. Without a token it judges the event's base and says so;
with one that the forge refuses, it cannot decide (exit 2) and names the permission
(``pull-requests: read``). Only the base is taken: the run's head is the commit its
check is attached to.

The same token lets the job's clone fetch the head of a private repository
(``refs/pull/N/head``) although the checkout did not keep its credentials
(``persist-credentials: false``): ``token_env`` hands git the header through the
environment of ``ci``'s own git commands (``GIT_CONFIG_COUNT``), for the job's server
only, and nothing is written to the clone's configuration."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from git_evidence.core.errors import UsageError
from git_evidence.core.oids import is_oid
from git_evidence.forge.event import GITHUB, Request

TOKEN = "GITHUB_TOKEN"
API = "GITHUB_API_URL"
REPOSITORY = "GITHUB_REPOSITORY"
SERVER = "GITHUB_SERVER_URL"
DEFAULT_API = "https://api.github.com"
TIMEOUT = 30.0
PERMISSION = (
    "give the job `permissions: pull-requests: read` and pass the token to the step "
    "(`env: GITHUB_TOKEN: ${{ github.token }}`, as the action does)"
)

if TYPE_CHECKING:  # urllib.request is imported when the API is asked, not at start
    import urllib.request

Opener = Callable[["urllib.request.Request"], Any]


def _open(request: urllib.request.Request) -> Any:
    import urllib.request

    return urllib.request.urlopen(request, timeout=TIMEOUT)


def current_base(
    request: Request, environ: Mapping[str, str], opener: Opener = _open
) -> tuple[Request, list[str]]:
    """``request`` with the base the pull request has now, and notes saying what moved."""
    if request.forge != GITHUB or request.kind != "pull_request" or request.number is None:
        return request, []
    notes = []
    branch = request.target.removeprefix("refs/heads/")
    if request.retargeted is not None and request.retargeted != branch:
        notes.append(f"the base changed from {request.retargeted} to {branch}")
    token = environ.get(TOKEN, "").strip()
    if not token:
        notes.append(f"judged against the event's base: no {TOKEN} to ask for the current one")
        return request, notes
    repository = environ.get(REPOSITORY, "").strip()
    if not repository:
        raise UsageError(f"{REPOSITORY} is not set", fix="run it as a step of the job")
    api = environ.get(API, "").strip().rstrip("/") or DEFAULT_API
    url = f"{api}/repos/{repository}/pulls/{request.number}"
    data = _get(url, token, opener)
    base = data.get("base") if isinstance(data, dict) else None
    ref = base.get("ref") if isinstance(base, dict) else None
    sha = base.get("sha") if isinstance(base, dict) else None
    if not isinstance(ref, str) or not ref or not isinstance(sha, str) or not is_oid(sha):
        raise UsageError(f"{url}: the answer has no base.ref and base.sha", fix=PERMISSION)
    if ref != branch:
        notes.append(
            f"the pull request's base is now {ref} (the event said {branch}): judged against {ref}"
        )
    return request._replace(base=sha, target=f"refs/heads/{ref}"), notes


def _get(url: str, token: str, opener: Opener) -> Any:
    import urllib.error
    import urllib.request

    asked = urllib.request.Request(
        url,
        headers={
            "Accept": "application/vnd.github+json",
            "Authorization": f"Bearer {token}",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": "git-evidence",
        },
    )
    try:
        with opener(asked) as answer:
            return json.loads(answer.read())
    except urllib.error.HTTPError as exc:
        raise UsageError(
            f"cannot read the pull request's current base from {url}: HTTP {exc.code}",
            fix=PERMISSION,
        ) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", None) or exc
        raise UsageError(
            f"cannot read the pull request's current base from {url}: {reason}",
            fix=f"check that the job can reach {API}",
        ) from None
    except ValueError:
        raise UsageError(f"{url}: the answer is not JSON", fix=PERMISSION) from None


def token_env(environ: Mapping[str, str]) -> dict[str, str] | None:
    """``environ`` plus git settings that send the job's token to the job's server
    (``http.<GITHUB_SERVER_URL>/.extraheader``), or None when there is no token or
    server. Held in this process's environment only, never in a file."""
    token = environ.get(TOKEN, "").strip()
    server = environ.get(SERVER, "").strip().rstrip("/")
    if not token or not server.startswith(("https://", "http://")):
        return None
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode("ascii")
    env = dict(environ)
    try:
        count = int(env.get("GIT_CONFIG_COUNT", "0") or "0")
    except ValueError:
        count = 0
    env[f"GIT_CONFIG_KEY_{count}"] = f"http.{server}/.extraheader"
    env[f"GIT_CONFIG_VALUE_{count}"] = f"AUTHORIZATION: basic {basic}"
    env["GIT_CONFIG_COUNT"] = str(count + 1)
    return env
