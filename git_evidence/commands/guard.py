"""``git evidence guard``: the agent's own hook. Reads one pre-tool-use event on stdin
(Claude Code's ``PreToolUse``, Gemini CLI's ``BeforeTool``), or judges ``--path P…``
for any other agent's hook, and denies a write to evidence, runner configuration or
existing test code: exit 2 and one line on stderr, or with ``--json`` Claude Code's
deny answer on stdout and exit 0. It allows in silence (exit 0).

It runs before every tool call, so it is cheap: no argparse (``cli.hook_args``),
nothing imported before it is needed, no git when the call writes no path, and
otherwise three git processes started at once (see ``_Ahead``), and one
``cat-file --batch-check`` more when whether a test file exists decides."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING

from git_evidence.core.errors import GitError, UsageError
from git_evidence.guard import tool_calls
from git_evidence.guard.tool_calls import Target
from git_evidence.terminal import console

if TYPE_CHECKING:
    import argparse
    import subprocess

    from git_evidence.core.oids import Oid
    from git_evidence.plumbing.git import Git
    from git_evidence.policy.schema import Policy

GLOB_CHARS = frozenset("*?[")
PROJECT_VARS = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR")  # set by each agent for its hooks
MAX_GLOB_MATCHES = 10_000  # a shell word's matches judged; past that, the word as written


def run(args: argparse.Namespace) -> int:
    as_json = bool(args.json) or args.format == "json"
    if args.paths:
        cwd = os.getcwd()
        found = [Target(path, "--path") for path in args.paths]
        where = args.repo or cwd
    else:
        if sys.stdin.isatty():
            raise UsageError(
                "guard reads one hook event on stdin (an agent starts it so)",
                fix="name the paths instead: git evidence guard --path P…",
            )
        event = tool_calls.parse_event(sys.stdin.buffer.read())
        cwd = os.path.abspath(event.cwd) if event.cwd else os.getcwd()
        found = tool_calls.targets(event)
        # The agent names the project it guards for its hooks; the agent's own `cd`
        # (the event's cwd follows it) does not take the session out of it.
        where = args.repo or next((os.environ[n] for n in PROJECT_VARS if os.environ.get(n)), cwd)
    if not found or not os.path.isdir(where):
        return 0
    with _Ahead(where) as ahead:
        _import_the_policy()  # meanwhile git answers on the other core
        top = ahead.top()
        if top is None:  # no work tree: nothing there is evidence
            if args.verbose:
                console.say(f"guard allowed: {where} is not in a git work tree")
            return 0
        resolved = [(t, p) for t, p in _resolved(found, cwd, top) if p is not None]
        if not resolved:
            return 0
        policy, git, _refs, base = ahead.policy(top)
        denials = tool_calls.judge(resolved, policy, lambda paths: ahead.existing(git, base, paths))
    if not denials:
        if args.verbose:
            shown = ", ".join(tool_calls.show(p) for _t, p in resolved)
            console.say(f"guard allowed: {shown} (policy: {policy.source})")
        return 0
    line = tool_calls.deny_line(denials)
    if as_json:
        print(tool_calls.deny_json(line))
        return 0
    sys.stderr.write(line + "\n")
    return tool_calls.DENY_EXIT


def _import_the_policy() -> None:
    """What reading the policy imports, and its TOML parser (policy.py imports that
    only when a file is parsed)."""
    import git_evidence.plumbing.context  # noqa: F401

    if sys.version_info >= (3, 11):
        import tomllib  # noqa: F401


class _Ahead:
    """What every judged call asks git, asked at once by threads of their own while
    this process imports the policy (git answers on the other core meanwhile): where
    the top of the work tree is (``rev-parse``); the sealed policy file (``git config
    evidence.policyFile``); and, through one ``cat-file --batch``, the refs the client
    hooks read the policy from (``origin``'s main, main, else HEAD) and the policy file
    of the first, by its commit's id.

    ``in_force.resolve`` decides with these answers: it reads no other ref unless
    the policy names another base branch, and then it is asked again with every ref."""

    def __init__(self, where: str) -> None:
        import threading

        from git_evidence.plumbing.batch import CatFile
        from git_evidence.plumbing.git import Git

        self._git = Git(cwd=where)
        self._cat = CatFile(self._git)
        self._top: subprocess.CompletedProcess[bytes] | None = None
        self._sealed: str | None = None
        self._refs: dict[str, Oid] = {}  # the refs resolve reads, those that exist
        # commit id → its policy file's blob id and bytes
        self._blobs: dict[str, tuple[Oid, bytes] | None] = {}
        self._errors: list[Exception | None] = [None] * 3
        self._threads = [threading.Thread(target=self._ask, args=(n,)) for n in range(3)]
        for thread in self._threads:
            thread.start()

    def __enter__(self) -> _Ahead:
        return self

    def __exit__(self, *exc: object) -> None:
        for thread in self._threads:
            thread.join()
        with contextlib.suppress(OSError):  # it ended already (outside a repository)
            self._cat.close()

    def _ask(self, which: int) -> None:
        try:
            if which == 0:
                self._top = self._git.attempt("rev-parse", "--show-toplevel")
            elif which == 1:
                from git_evidence.plumbing.in_force import SEALED_KEY

                self._sealed = self._git.config_get(SEALED_KEY)
            else:
                self._policy_blob()
        except Exception as exc:  # raised again where the answer is asked for
            self._errors[which] = exc

    def _policy_blob(self) -> None:
        from git_evidence.plumbing.in_force import client_refs
        from git_evidence.policy.schema import POLICY_FILE

        for name in client_refs(None):
            if name == "HEAD" and self._refs:
                break  # HEAD is read only when neither main is there
            named = self._cat.get(name)
            if named is None:
                continue
            if name != "HEAD":
                self._refs[name] = named[0]
            if not self._blobs:
                blob = self._cat.get(f"{named[0]}:{POLICY_FILE}")
                self._blobs[named[0]] = (blob[0], blob[2]) if blob and blob[1] == "blob" else None

    def top(self) -> str | None:
        """The real path of the work tree holding ``where``; None when there is none
        (not a repository, a bare one). Any other failure of git is an error: nothing
        is allowed."""
        self._threads[0].join()
        done = self._top
        if done is None:
            raise self._errors[0] or GitError(["git", "rev-parse"], 128, b"", b"")
        if done.returncode == 0:
            return os.path.realpath(os.fsdecode(done.stdout.rstrip(b"\n")))
        if b"not a git repository" in done.stderr or b"must be run in a work tree" in done.stderr:
            return None
        raise GitError(list(done.args), done.returncode, done.stdout, done.stderr)

    def policy(self, top: str) -> tuple[Policy, Git, dict[str, Oid], Oid | None]:
        """The policy in force (``in_force.resolve``), a git for ``top`` that has the
        answers already, the refs it was read with, and the commit it was read from."""
        from git_evidence.plumbing.git import Git
        from git_evidence.plumbing.in_force import DEFAULT_BASE, SEALED_KEY, resolve
        from git_evidence.policy.schema import POLICY_FILE

        for thread in self._threads[1:]:
            thread.join()
        for error in self._errors[1:]:
            if error is not None:
                raise error
        sealed, blobs = self._sealed, self._blobs

        class Answered(Git):
            def config_get(self, key: str) -> str | None:
                return sealed if key == SEALED_KEY else super().config_get(key)

            def blob_and_id_at(self, rev: str, path: str) -> tuple[Oid, bytes] | None:
                if path == POLICY_FILE and rev in blobs:  # a commit's file never changes
                    return blobs[rev]
                return super().blob_and_id_at(rev, path)

        git = Answered(cwd=top)
        refs = self._refs
        found = resolve(git, refs=refs, cached=False)
        if found.policy.base != DEFAULT_BASE:  # it reads that branch's refs too: ask them all
            refs = git.refs()
            found = resolve(git, refs=refs, cached=False)
        return found.policy, git, refs, found.rev

    def existing(self, git: Git, base: Oid | None, paths: list[str]) -> set[str]:
        """Which of ``paths`` are test code already: in HEAD or at the base (where the
        policy is read), spelled as given or as a disk that folds case spells it."""
        from git_evidence.plumbing import batch

        top = git.cwd or "."
        revs = ["HEAD"]
        if base is not None:
            revs.append(base)
        specs: list[str] = []
        owners: list[str] = []
        for path in paths:
            spellings = {path}
            if os.path.lexists(os.path.join(top, path)):
                spelled = tool_calls.disk_spelling(top, path, os.listdir)
                if spelled is not None:
                    spellings.add(spelled)
            for spelling in sorted(spellings):
                for rev in revs:
                    specs.append(f"{rev}:{spelling}")
                    owners.append(path)
        # --batch-check: a test file's bytes are never read, however large it is.
        hits = batch.check(git, specs)
        return {owner for owner, hit in zip(owners, hits, strict=True) if hit is not None}


def _resolved(found: list[Target], cwd: str, top: str) -> list[tuple[Target, str | None]]:
    out: list[tuple[Target, str | None]] = []
    for target in found:
        for one in _globbed(target, cwd):
            out.append((one, tool_calls.resolve(one, cwd, top, os.path.realpath)))
    return out


def _globbed(target: Target, cwd: str) -> list[Target]:
    """A shell word with a wildcard as the paths the shell would give (as written
    when nothing matches, as the shell does)."""
    if not target.shell or not GLOB_CHARS & set(target.given):
        return [target]
    import glob

    pattern = os.path.join(tool_calls.directory(target, cwd), os.path.expanduser(target.given))
    matches = glob.glob(pattern)[:MAX_GLOB_MATCHES]
    return [target._replace(given=m, cwd="") for m in matches] or [target]
