"""What a tool call of the agent's session is denied, read from the file system and
git: the paths it writes, globs expanded as the shell would and links followed
(``judge``); what guards the session (``guard/control.py``); the class of each path
under the policy in force and, for a test path, whether it exists already; and
whether a settings file's change would switch the guard off (``settings_change``).
The impure half of the guard: the pure rules are tool_calls.py and control.py.

Installed by ``git evidence install --agent``, the guard runs ``--pinned=DIGEST``: the
policy is the copy pinned then (``policy/pinned.py``), read from one file, no git
started unless whether a test file exists decides (one ``cat-file --batch-check``).
Started without a pin (by hand, ``--path``), it reads the policy where the client
hooks read it, with three git processes started at once (see ``_Ahead``)."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING

from git_evidence.guard import tool_calls
from git_evidence.guard.hard_links import other_names
from git_evidence.guard.tool_calls import Denial, Target

if TYPE_CHECKING:
    from git_evidence.core.oids import Oid
    from git_evidence.plumbing.git import Git
    from git_evidence.policy.schema import Policy

GLOB_CHARS = frozenset("*?[")
MAX_GLOB_MATCHES = 10_000  # a shell word's matches judged; past that, the word as written


def judge(
    found: list[Target], cwd: str, where: str, pinned: str | None
) -> tuple[list[Denial], str]:
    """The denials of the writes ``found`` (relative to ``cwd``) in the session of the
    project at ``where``, under the policy pinned at install (``pinned``: its digest)
    or, without one, where the client hooks read it; and what allowed the rest."""
    from git_evidence.guard import control

    files = [t for t in found if not t.control]
    written = [(t, r) for t in _globbed_all(files, cwd) if (r := _real(t, cwd)) is not None]
    denials: list[Denial]
    if not written:  # a command that changes no file (`git config …`): nothing to read
        denials, why = [], "no file written"
    elif pinned:
        denials, why = _pinned(written, where, pinned)
    else:
        denials, why = _unpinned(written, where)
    return denials + control.control_denials(found), why


def settings_change(
    event: tool_calls.Event, project: str, pinned: str | None
) -> tuple[object, str]:
    """The settings file a ``ConfigChange`` event names, and why its change would
    switch the guard off ("" when it would not)."""
    from git_evidence.guard.agent_settings import CLAUDE_SETTINGS, config_change, pinned_command

    path = event.input.get("file_path")
    text = None
    if isinstance(path, str) and path:
        try:
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
        except (OSError, UnicodeDecodeError):
            text = None
    ours = bool(project) and isinstance(path, str) and _same_file(path, project, CLAUDE_SETTINGS)
    command = pinned_command(pinned) if pinned else ""
    return path, config_change(event.input.get("source"), text, ours and bool(command), command)


def _same_file(path: str, project: str, name: str) -> bool:
    return os.path.realpath(path) == os.path.realpath(os.path.join(project, name))


def _pinned(written: list[tuple[Target, str]], where: str, digest: str) -> tuple[list[Denial], str]:
    """The denials under the policy pinned at install, and what allowed the rest: the
    work tree found from the files git keeps, the pinned file read, no git process
    unless whether a test file exists decides."""
    from git_evidence.plumbing.in_force import resolve
    from git_evidence.plumbing.repo_dirs import work_tree_of
    from git_evidence.policy.pinned import PIN_DIR, from_flag

    tree = work_tree_of(where) if os.path.isdir(where) else None
    top, dirs = (tree[0], list(tree[1:])) if tree else (None, [])
    denials = _guarded(written, top, dirs)
    resolved = _in_tree(written, top)
    if top is None or not resolved:
        return denials, "nothing written in a git work tree"
    found = resolve(None, pinned=from_flag(os.path.join(dirs[-1], PIN_DIR), digest))
    revs = ["HEAD", *([found.rev] if found.rev else [])]

    def existing(paths: list[str]) -> set[str]:
        from git_evidence.plumbing.git import Git

        return _existing(Git(cwd=top), revs, paths)

    return tool_calls.judge(resolved, found.policy, existing) + denials, _allowed(
        resolved, found.policy
    )


def _unpinned(written: list[tuple[Target, str]], where: str) -> tuple[list[Denial], str]:
    """The denials under the policy where the client hooks read it (the guard started
    without a pin), and what allowed the rest."""
    from git_evidence.plumbing.repo_dirs import work_tree_of

    if not os.path.isdir(where):
        return _guarded(written, None, []), f"{where} is not a directory"
    with _Ahead(where) as ahead:
        _import_the_policy()  # meanwhile git answers on the other core
        top = ahead.top()
        tree = work_tree_of(top) if top is not None else None
        denials = _guarded(written, top, list(tree[1:]) if tree else [])
        if top is None:  # no work tree: nothing there is evidence
            return denials, f"{where} is not in a git work tree"
        resolved = _in_tree(written, top)
        if not resolved:
            return denials, "nothing written in the work tree"
        policy, git, _refs, base = ahead.policy(top)
        revs = ["HEAD", *([base] if base else [])]
        judged = tool_calls.judge(resolved, policy, lambda paths: _existing(git, revs, paths))
    return judged + denials, _allowed(resolved, policy)


def _allowed(resolved: list[tuple[Target, str]], policy: Policy) -> str:
    shown = ", ".join(tool_calls.show(p) for _t, p in resolved)
    return f"{shown} (policy: {policy.source})"


def _guarded(written: list[tuple[Target, str]], top: str | None, dirs: list[str]) -> list[Denial]:
    """The denials of writes to what guards the session (``guard/control.py``)."""
    from git_evidence.guard import control

    hooks = None
    if dirs:
        try:
            with open(os.path.join(dirs[-1], "config"), "rb") as handle:
                hooks = control.hooks_path(handle.read())
        except OSError:
            pass
    guarded = control.protected(top, dirs, os.path.expanduser("~"), os.environ, hooks)
    real = {g.path: os.path.realpath(g.path) for g in guarded}
    shown = {}
    for _target, path in written:
        inside = _relative(path, top) if top is not None else None
        if inside is not None:
            shown[path] = inside or "."
    return control.denials(written, guarded, real, shown)


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
        self._top: str | None = None
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
                self._top = self._git.toplevel()
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
        if self._errors[0] is not None:
            raise self._errors[0]
        return None if self._top is None else os.path.realpath(self._top)

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


def _existing(git: Git, revs: list[str], paths: list[str]) -> set[str]:
    """Which of ``paths`` are test code already: in one of ``revs`` (HEAD, and the
    commit the policy was read from), spelled as given or as a disk that folds case
    spells it."""
    from git_evidence.plumbing import batch

    top = git.cwd or "."
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


def _globbed_all(found: list[Target], cwd: str) -> list[Target]:
    return [one for target in found for one in _globbed(target, cwd)]


def _real(target: Target, cwd: str) -> str | None:
    """Where a write to ``target`` lands, absolute, its links followed; None when it
    names nothing (the tool fails by itself)."""
    if "\0" in target.given or not target.given:
        return None
    return os.path.realpath(
        os.path.join(tool_calls.directory(target, cwd), os.path.expanduser(target.given))
    )


def _relative(real: str, top: str) -> str | None:
    """``real`` as a path of the work tree at ``top`` ("" the top), None outside it."""
    relative = os.path.relpath(real, top)
    if relative == ".":
        return ""
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return None
    return relative.replace(os.sep, "/")


def _in_tree(written: list[tuple[Target, str]], top: str | None) -> list[tuple[Target, str]]:
    if top is None:
        return []
    inside = [(t, r) for t, real in written if (r := _relative(real, top)) is not None]
    return inside + other_names(inside, top)


def _globbed(target: Target, cwd: str) -> list[Target]:
    """A shell word with a wildcard as the paths the shell would give (as written
    when nothing matches, as the shell does)."""
    if not target.shell or not GLOB_CHARS & set(target.given):
        return [target]
    import glob

    pattern = os.path.join(tool_calls.directory(target, cwd), os.path.expanduser(target.given))
    matches = glob.glob(pattern)[:MAX_GLOB_MATCHES]
    return [target._replace(given=m, cwd="") for m in matches] or [target]
