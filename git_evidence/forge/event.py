"""What a CI job is asked to judge, read from the CI system: GitHub Actions (the event
payload at ``$GITHUB_EVENT_PATH``) or GitLab CI (its predefined variables). Pure: the
environment and the payload's bytes in, one ``Request`` out, or a ``UsageError`` that
names the variable or field and what to set.

* GitHub, ``pull_request`` / ``pull_request_target``: base ``pull_request.base.sha``,
  head ``pull_request.head.sha``, judged as ``pull_request.user.login`` (the request's
  author), the target ``refs/heads/<pull_request.base.ref>``; the head can be fetched
  from ``refs/pull/<number>/head``. When the event's ``sender.login`` (who pushed or
  reopened) is someone else, the request is judged as both and the stricter decision
  holds: an agent's commits on a person's pull request are still an agent's.
* GitHub, ``push``: ``before..after`` on ``ref``, as ``sender.login`` (else
  ``pusher.name``).
* GitLab, merge request pipelines (``CI_MERGE_REQUEST_IID`` set): base
  ``CI_MERGE_REQUEST_DIFF_BASE_SHA``, head ``CI_MERGE_REQUEST_SOURCE_BRANCH_SHA`` in a
  merged results pipeline else ``CI_COMMIT_SHA``, target
  ``refs/heads/$CI_MERGE_REQUEST_TARGET_BRANCH_NAME``, as ``GITLAB_USER_LOGIN`` (who
  started the pipeline: GitLab gives no variable for the merge request's author); the
  head can be fetched from ``CI_MERGE_REQUEST_REF_PATH``.
* GitLab, other pipelines: ``CI_COMMIT_BEFORE_SHA..CI_COMMIT_SHA`` on the branch or tag,
  as ``GITLAB_USER_LOGIN``.

A base of all zeros (a new branch) is no base: the range is judged against the policy's
base branch, as ``check`` judges a branch."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final, NamedTuple

from git_evidence.core.errors import UsageError
from git_evidence.core.oids import is_oid, is_zero

GITHUB: Final = "github"
GITLAB: Final = "gitlab"
PULL_EVENTS = ("pull_request", "pull_request_target")


class Request(NamedTuple):
    forge: str  # github | gitlab
    kind: str  # pull_request | merge_request | push
    base: str | None  # None: judged against the policy's base branch
    head: str
    target: str  # the ref the request would update: it decides protection
    login: str | None  # whom it is judged as
    source: str  # where that login came from
    also: tuple[tuple[str, str], ...] = ()  # (login, source) judged too; stricter wins
    fetch: tuple[str, ...] = ()  # refs of the remote the head can be fetched from
    number: int | None = None  # the pull request's number (GitHub): to ask its base now
    retargeted: str | None = None  # the base branch the event says it had before

    def describe(self) -> str:
        what = {"pull_request": "pull request", "merge_request": "merge request"}.get(
            self.kind, self.kind
        )
        return f"{self.forge} {what} into {self.target}"


# What tells the forge and the event, in the order they are read (docs/forges.md lists
# every variable `ci` reads).
GITHUB_EVENT = ("GITHUB_ACTIONS", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH")
GITLAB_EVENT = ("GITLAB_CI", "CI_MERGE_REQUEST_IID", "CI_COMMIT_BRANCH", "CI_COMMIT_TAG")


def seen(environ: Mapping[str, str], names: tuple[str, ...]) -> str:
    """What the variables ``names`` hold here, for an error that says what it read."""
    return ", ".join(
        f"{name}={environ[name]!r}" if environ.get(name) else f"{name} unset" for name in names
    )


def detect(environ: Mapping[str, str], read: Callable[[str], bytes]) -> Request:
    """The request of this CI job; ``read`` reads a file (the GitHub event payload)."""
    if environ.get("GITHUB_ACTIONS") == "true":
        return github_request(environ, read)
    if environ.get("GITLAB_CI") == "true":
        return gitlab_request(environ)
    github_like = any(environ.get(name) for name in GITHUB_EVENT[1:])
    raise UsageError(
        "not in a CI job this command knows: it needs GITHUB_ACTIONS or GITLAB_CI set to "
        f"'true' (read: {seen(environ, GITHUB_EVENT[:1] + GITLAB_EVENT[:1])})",
        fix=(
            "set GITHUB_ACTIONS=true beside GITHUB_EVENT_NAME and GITHUB_EVENT_PATH to "
            "judge that event, "
            if github_like
            else ""
        )
        + "run it as a step of a GitHub Actions or GitLab CI job, or judge the range "
        "with `git evidence check BASE..HEAD --as NAME`",
    )


def github_request(environ: Mapping[str, str], read: Callable[[str], bytes]) -> Request:
    name = environ.get("GITHUB_EVENT_NAME", "")
    path = environ.get("GITHUB_EVENT_PATH", "")
    missing = [
        v for v, value in (("GITHUB_EVENT_NAME", name), ("GITHUB_EVENT_PATH", path)) if not value
    ]
    if missing:
        raise UsageError(
            f"GitHub Actions, but {' and '.join(missing)} {'is' if len(missing) == 1 else 'are'}"
            f" not set (read: {seen(environ, GITHUB_EVENT)})",
            fix="run it as a step of the job (the runner sets both), or set "
            "GITHUB_EVENT_NAME to the event (pull_request_target, pull_request, push) and "
            "GITHUB_EVENT_PATH to its payload's file",
        )
    try:
        event = json.loads(read(path))
    except OSError as exc:
        raise UsageError(f"cannot read the event payload {path}: {exc.strerror}") from None
    except ValueError as exc:
        raise UsageError(f"{path}: the event payload is not JSON: {exc}") from None
    if not isinstance(event, dict):
        raise UsageError(f"{path}: the event payload is not a JSON object")
    sender = _text(event, path, "sender", "login", required=False)
    if name in PULL_EVENTS:
        pull = "pull_request"
        base = _sha(event, path, pull, "base", "sha")
        head = _sha(event, path, pull, "head", "sha")
        branch = _needed(event, path, pull, "base", "ref")
        login = _needed(event, path, pull, "user", "login")
        number = _field(event, path, pull, "number", required=False)
        also = ((sender, "sender.login"),) if sender and sender != login else ()
        fetch = (f"refs/pull/{number}/head",) if isinstance(number, int) else ()
        # `edited` with `changes.base`: the base branch changed; pull_request.base is
        # the new one, changes.base.ref.from the old
        was = _field(event, path, "changes", "base", "ref", "from", required=False)
        return Request(
            GITHUB,
            "pull_request",
            base,
            head,
            _branch_ref(branch),
            login,
            "pull_request.user.login",
            also,
            fetch,
            number if isinstance(number, int) else None,
            was if isinstance(was, str) else None,
        )
    if name == "push":
        before = _sha(event, path, "before")
        after = _sha(event, path, "after")
        ref = _needed(event, path, "ref")
        if is_zero(after):
            raise UsageError(
                f"{path}: the push deleted {ref}: nothing to judge",
                fix="run the job on pushes that bring commits (on: push: with branches)",
            )
        pusher, source = sender, "sender.login"
        if not pusher:
            pusher, source = _text(event, path, "pusher", "name", required=False), "pusher.name"
        return Request(
            GITHUB, "push", None if is_zero(before) else before, after, ref, pusher, source
        )
    raise UsageError(
        f"the workflow runs on {name} (GITHUB_EVENT_NAME): only pull_request, "
        "pull_request_target and push bring a range to judge",
        fix="trigger the job on pull_request_target (the fence) or push",
    )


def gitlab_request(environ: Mapping[str, str]) -> Request:
    login = environ.get("GITLAB_USER_LOGIN") or None
    head = _variable(environ, "CI_COMMIT_SHA")
    if environ.get("CI_MERGE_REQUEST_IID"):
        base = _variable(environ, "CI_MERGE_REQUEST_DIFF_BASE_SHA")
        source = environ.get("CI_MERGE_REQUEST_SOURCE_BRANCH_SHA", "")
        if source:  # a merged results pipeline: CI_COMMIT_SHA is the merge commit
            head = _variable(environ, "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA")
        target = _variable(environ, "CI_MERGE_REQUEST_TARGET_BRANCH_NAME", sha=False)
        fetch = tuple(r for r in (environ.get("CI_MERGE_REQUEST_REF_PATH", ""),) if r)
        return Request(
            GITLAB,
            "merge_request",
            base,
            head,
            _branch_ref(target),
            login,
            "GITLAB_USER_LOGIN",
            (),
            fetch,
        )
    before = environ.get("CI_COMMIT_BEFORE_SHA", "")
    if environ.get("CI_COMMIT_TAG"):
        ref = "refs/tags/" + environ["CI_COMMIT_TAG"]
    elif environ.get("CI_COMMIT_BRANCH"):
        ref = _branch_ref(environ["CI_COMMIT_BRANCH"])
    else:
        raise UsageError(
            "GitLab CI, but neither CI_MERGE_REQUEST_IID nor CI_COMMIT_BRANCH nor "
            "CI_COMMIT_TAG is set: not a merge request, branch or tag pipeline (read: "
            f"{seen(environ, GITLAB_EVENT)})",
            fix="run the job in merge request pipelines "
            "(rules: - if: $CI_PIPELINE_SOURCE == 'merge_request_event')",
        )
    if before and not is_oid(before):
        raise UsageError(f"CI_COMMIT_BEFORE_SHA is not a commit id: {before!r}")
    old = None if not before or is_zero(before) else before
    return Request(GITLAB, "push", old, head, ref, login, "GITLAB_USER_LOGIN")


def _branch_ref(name: str) -> str:
    return name if name.startswith("refs/") else f"refs/heads/{name}"


def _variable(environ: Mapping[str, str], name: str, *, sha: bool = True) -> str:
    value = environ.get(name, "").strip()
    if not value:
        raise UsageError(f"{name} is not set", fix="run it in a merge request pipeline")
    if sha and not is_oid(value):
        raise UsageError(f"{name} is not a commit id: {value!r}")
    return value


def _field(event: Any, path: str, *keys: str, required: bool = True) -> Any:
    value = event
    for depth, key in enumerate(keys):
        if not isinstance(value, dict) or value.get(key) is None:
            if not required:
                return None
            where = ".".join(keys[: depth + 1])
            raise UsageError(
                f"{path}: the event payload has no {where}",
                fix="run the job on the events it reads (pull_request_target, push)",
            )
        value = value[key]
    return value


def _text(event: Any, path: str, *keys: str, required: bool = True) -> str | None:
    value = _field(event, path, *keys, required=required)
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise UsageError(f"{path}: {'.'.join(keys)} is not a non-empty string")
    return value.strip()


def _needed(event: Any, path: str, *keys: str) -> str:
    return _text(event, path, *keys) or ""


def _sha(event: Any, path: str, *keys: str) -> str:
    value = _needed(event, path, *keys)
    if not is_oid(value):
        raise UsageError(f"{path}: {'.'.join(keys)} is not a commit id: {value!r}")
    return value
