"""A CI job's judgement of one request (``git evidence ci``): the commits it needs
fetched into the job's clone, the policy of the base (never the head's), and the range
judged as the request's author against the ref the request targets.

* **What is judged.** A pull/merge request is judged as a push of its head that creates
  the target ref would be, with the range cut at the base: the commits of
  ``base..head``, the endpoint ``merge-base(base, head)`` → head, every rule that a
  push to the target meets. So the target's protection decides what a hold does: into
  a protected branch (``[rules].protected``) it blocks, into another branch it is
  reported for review. A push event is judged as the push it was (``before`` → after
  on its ref): a force push to a protected ref is a non-fast-forward.
* **Whom.** The login the CI system gives (event.py), or ``--as NAME``. When the
  event names a second login (GitHub's ``sender``), the range is judged as both and the
  stricter decision holds.
* **Shallow clones.** A base or head the clone lacks is fetched from ``origin`` (by id,
  then from the request's own ref); in a shallow clone the history is deepened until
  base and head meet (50, 200, 1000 commits, then all of it). ``--no-fetch`` turns that
  into an error that names the setting: ``fetch-depth: 0`` (actions/checkout) or
  ``GIT_DEPTH: 0`` (GitLab CI). The lock notes are fetched too when the clone has none.
  Fetching reads git objects only: nothing of the head is checked out or run."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from git_evidence.core.errors import UsageError
from git_evidence.core.facts import RefUpdate, RefView
from git_evidence.core.oids import Oid, zero_oid
from git_evidence.forge.current import current_base, token_env
from git_evidence.forge.event import GITHUB, Request, detect
from git_evidence.forge.job_summary import code
from git_evidence.gate import pipeline
from git_evidence.gate.checking import default_base, freezes
from git_evidence.gate.report import Rendering, Report, join
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy.identity import Identity
from git_evidence.rules.table import SEVERITY

REMOTE = "origin"
# The name the range's bottom goes by in the view of the refs: never a ref the request
# updates, so that the range is cut there whatever the target is.
CUT = "refs/evidence-ci/base"
FETCHED = "refs/evidence-ci/fetched"
SHALLOW_DEPTH = 50
DEEPEN = (50, 200, 1000)
FULL_HISTORY = (
    "give the job the whole history: `fetch-depth: 0` on actions/checkout (GitHub), "
    "`GIT_DEPTH: 0` in the job's variables (GitLab)"
)


class Judged(NamedTuple):
    report: Report
    who: Identity
    bottom: Oid | None  # where the range was cut (None: the whole history of head)
    head: Oid


class Job(NamedTuple):
    """A CI job's judgement, ready to print: the request, what was judged, how much of
    it is shown, the paths the head no longer has, and the words the forge formats
    take (who was judged, the command that reproduces it)."""

    request: Request
    judged: Judged
    rendering: Rendering
    gone: frozenset[str]
    context: Mapping[str, str]


def judge_job(
    environ: Mapping[str, str],
    read: Callable[[str], bytes],
    *,
    as_name: str | None,
    fetch: bool,
    max_findings: int | None,
) -> Job:
    """The request the CI job runs for (read from ``environ`` and the event file
    ``read`` opens), its current base asked of the forge, judged (``judge_request``)."""
    request = detect(environ, read)
    request, notes = current_base(request, environ)
    git = Git(env=token_env(environ) if request.forge == GITHUB else None)
    judged = judge_request(git, request, as_name=as_name, fetch=fetch, notes=notes)
    rendering = pipeline.rendering(git, judged.report, max_findings)
    span = f"{judged.bottom}..{judged.head}" if judged.bottom else judged.head
    command = ["git", "evidence", "check", span]
    if judged.who.name is not None:
        command += ["--as", judged.who.name]
    context = {
        "who": f"{code(judged.who.describe())} ({judged.who.source}), for the {request.describe()}",
        "reproduce": shlex.join(command),
    }
    gone = gone_paths(git, judged.head, judged.report)
    return Job(request, judged, rendering, gone, context)


def judge_request(
    git: Git,
    request: Request,
    *,
    as_name: str | None,
    fetch: bool,
    notes: Sequence[str] = (),
) -> Judged:
    """``request`` judged as each pusher it names, the stricter report kept; ``notes``:
    what the caller learnt before (where the base came from), said first."""
    said = [*notes, *_ensure_commits(git, request, fetch)]
    refs = git.refs()
    head = Oid(request.head)
    base = Oid(request.base) if request.base and git.resolve_commit(request.base) else None
    if request.base and base is None:  # a push whose old tip is gone (a force push)
        said.append(
            f"{request.base[:12]}, the tip before the push, is not on {REMOTE} any more "
            "(a force push): judged against the base branch"
        )
    policy = resolve(git, at=base, refs=refs, remote=REMOTE).policy
    wants_notes = fetch and policy.notes_ref not in refs and _has_remote(git)
    if wants_notes and git.fetch_ref(REMOTE, policy.notes_ref, policy.notes_ref):
        refs = git.refs()
    bottom = base or default_base(git, refs, policy.base)
    view = RefView({CUT: bottom} if bottom else {}, bottom, policy.notes_ref in refs)
    if request.kind == "push" and base is not None:
        update = RefUpdate(base, head, request.target)
    elif request.kind == "push" and request.base and policy.is_protected(request.target):
        update = RefUpdate(Oid(request.base), head, request.target)  # not an ancestor
    else:
        update = RefUpdate(zero_oid(head), head, request.target)
    people = [_identity(request.login, request.source, request.forge, as_name)]
    if as_name is None:
        people += [_identity(login, source, request.forge, None) for login, source in request.also]
    frozen = freezes(git, policy, head, bottom)
    reports = [pipeline.decide(git, [update], policy, view, who) for who in people]
    chosen = max(reports, key=lambda r: SEVERITY[r.decision])  # the first of the worst
    also = [
        f"also judged as {other.who.describe()} ({other.who.source}): {other.decision}"
        for other in reports
        if other is not chosen
    ]
    report = join(chosen.who, policy, [chosen], before=said, after=[*frozen, *also])
    return Judged(report, chosen.who, bottom, head)


def _identity(login: str | None, source: str, forge: str, as_name: str | None) -> Identity:
    if as_name is not None:
        return Identity(as_name, "--as")
    if login is None:
        return Identity(None, f"{forge}: no login in the event")
    return Identity(login, f"{forge} {source}")


def _has_remote(git: Git) -> bool:
    return REMOTE in git.remotes()


def _ensure_commits(git: Git, request: Request, fetch: bool) -> list[str]:
    """Fetch what the judgement needs and the clone lacks; what was fetched, as notes."""
    wanted = {"head": request.head, **({"base": request.base} if request.base else {})}
    found = git.peel_all(list(wanted.values()))
    missing = {name: sha for name, sha in wanted.items() if found[sha] is None}
    notes: list[str] = []
    if missing and not fetch:
        what = ", ".join(f"the {name} {sha[:12]}" for name, sha in missing.items())
        raise UsageError(f"{what}: not in this clone (--no-fetch)", fix=FULL_HISTORY)
    shallow = git.is_shallow()
    if missing:
        if not _has_remote(git):
            raise UsageError(
                f"the {' and '.join(missing)} of the request is not in this clone and it "
                f"has no remote {REMOTE} to fetch from",
                fix=FULL_HISTORY,
            )
        depth = SHALLOW_DEPTH if shallow else None
        done = git.fetch(REMOTE, sorted(set(missing.values())), depth=depth)
        still = [s for s, c in git.peel_all(list(missing.values())).items() if c is None]
        if still and request.fetch:
            specs = [f"+{ref}:{FETCHED}/{i}" for i, ref in enumerate(request.fetch)]
            done = git.fetch(REMOTE, specs, depth=depth)
            still = [s for s, c in git.peel_all(still).items() if c is None]
        if request.head in still or (request.base in still and request.kind != "push"):
            why = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise UsageError(
                f"could not fetch {', '.join(s[:12] for s in still)} from {REMOTE}"
                + (f": {why[-1]}" if why else ""),
                fix=FULL_HISTORY,
            )
        notes.append(f"fetched {', '.join(n for n, s in missing.items() if s not in still)}")
    if shallow and request.base and git.resolve_commit(request.base):
        notes += _deepen(git, request.base, request.head, fetch)
    return notes


def _deepen(git: Git, base: str, head: str, fetch: bool) -> list[str]:
    """In a shallow clone, more history until base and head meet."""
    if git.merge_base(base, head) is not None:
        return []
    if not fetch:
        raise UsageError(
            "this shallow clone does not reach the merge-base of the request's base and "
            "head (--no-fetch)",
            fix=FULL_HISTORY,
        )
    for step in DEEPEN:
        git.fetch(REMOTE, [base, head], deepen=step)
        if git.merge_base(base, head) is not None:
            return [f"deepened the shallow clone by {step} commits to reach the merge-base"]
    git.unshallow(REMOTE)
    return ["fetched the whole history to find the merge-base of base and head"]


def gone_paths(git: Git, head: str, report: Report) -> frozenset[str]:
    """The paths the findings name that the head no longer has: deleted files (or the
    old names of renamed ones), which the forge formats say are deleted."""
    named = sorted(
        {p for v in report.decisions for f in v.findings for ps in f.paths.values() for p in ps}
    )
    if not named:
        return frozenset()
    present: set[str] = set()
    for start in range(0, len(named), 1000):  # within any command line's length
        present.update(path for _, _, path in git.ls_tree(head, named[start : start + 1000]))
    return frozenset(named) - present
