"""What a git command writes, for the guard's shell reader (``shell_writes.py``): the
paths ``checkout``, ``restore``, ``rm`` and ``mv`` name; the whole work tree for the
commands that rewrite it (``clean``, ``checkout -f``, ``switch -f``, ``read-tree -u``,
``reset --hard``) and a new tree's directory (``worktree add``); and the commands that
change what guards the session rather than a file (``git config`` of the policy's and
the hooks' keys, ``update-ref``, a writing ``symbolic-ref``, ``git evidence
install``; a writing ``git notes``, ``git evidence lock`` and ``freeze add``, which
write the lock's and the ledger's records). Pure: words in, paths as written out."""

from __future__ import annotations

import posixpath
import re
from typing import Final, NamedTuple

from git_evidence.guard.shell_args import non_options
from git_evidence.guard.shell_words import expand


class Written(NamedTuple):
    """A path a command writes, as the command wrote it."""

    path: str
    how: str  # the operation: "rm", "sed -i", "> redirection", "python -c", …
    cwd: str  # where `cd` took the command ("": where it started; may be absolute)
    # A command that changes what guards the session rather than a file it names (a
    # `git config` of the policy's keys, `update-ref`, `git evidence install`): ``path``
    # is empty, ``how`` says what.
    control: bool = False


_GIT_VALUE_OPTIONS: Final = frozenset({"-c", "--git-dir", "--work-tree", "--namespace"})
_CHECKOUT_VALUES: Final = frozenset(
    {"-b", "-B", "--orphan", "-s", "--source", "--conflict", "--pathspec-from-file"}
)


def git_writes(args: list[str], cwd: str) -> list[Written]:
    """What ``git ARGS`` run in ``cwd`` writes."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "-C" and i + 1 < len(args):
            cwd = posixpath.join(cwd, args[i + 1]) if cwd else args[i + 1]
            i += 2
        else:
            i += 2 if args[i] in _GIT_VALUE_OPTIONS else 1
    if i >= len(args):
        return []
    verb, rest = args[i], args[i + 1 :]
    paths: list[str] = []
    staged_only = ("--staged" in rest or "-S" in rest) and not (
        "--worktree" in rest or "-W" in rest
    )
    forced = {"-f", "--force", "--discard-changes"} & set(rest)
    if verb == "restore" and staged_only:
        paths = []  # the index alone: the work tree is not written
    elif verb in ("checkout", "restore") and not forced:
        paths = (
            rest[rest.index("--") + 1 :] if "--" in rest else non_options(rest, _CHECKOUT_VALUES)
        )
    elif (verb == "rm" and "--cached" not in rest) or verb == "mv":
        paths = non_options(rest, frozenset())
    else:
        control = _git_control(verb, rest)
        if control is not None:
            return [Written("", control, cwd, control=True)]
        paths = _git_tree_writes(verb, rest)
    return [Written(p, f"git {verb}", cwd) for path in paths for p in expand(path)]


# The keys whose value moves where the policy is read or switches hooks off.
_CONTROL_KEYS: Final = re.compile(r"(?:evidence|include|includeif)\.|core\.hookspath$", re.I)
_CONFIG_WRITES: Final = frozenset(
    {
        "--add",
        "--replace-all",
        "--unset",
        "--unset-all",
        "--rename-section",
        "--remove-section",
        "-e",
        "--edit",
    }
)
_CONFIG_READS: Final = frozenset(
    {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list", "--get-color"}
)
_CONFIG_VALUES: Final = frozenset({"-f", "--file", "--blob", "--type", "--default", "--comment"})


_NOTES_VALUES: Final = frozenset({"--ref"})
_NOTES_WRITES: Final = frozenset({"add", "append", "copy", "edit", "merge", "remove", "prune"})


def _git_control(verb: str, rest: list[str]) -> str | None:
    """What a git command changes of the guard's or the hooks' own control, or None:
    ``update-ref``, a ``symbolic-ref`` that writes, ``git config`` writing a key of
    ``evidence.*``, ``include.*``, ``includeIf.*`` or ``core.hooksPath`` (or editing the
    file whole), ``git evidence install`` (a person refreshes the guard's pin)."""
    if verb == "update-ref":
        return "git update-ref"
    if verb == "symbolic-ref" and len(non_options(rest, frozenset({"-m"}))) >= 2:
        return "git symbolic-ref"
    if verb == "evidence" and "install" in rest[:3]:
        return "git evidence install"
    # The lock and the freeze ledger are written by their writers, never the agent:
    # a note on the notes ref, `lock` (which writes one), `freeze add` (the ledger).
    if verb == "evidence" and "lock" in rest[:3]:
        return "git evidence lock"
    if verb == "evidence" and "freeze" in rest[:3] and "add" in rest[:4]:
        return "git evidence freeze add"
    if verb == "notes" and set(non_options(rest, _NOTES_VALUES)[:1]) & _NOTES_WRITES:
        return "git notes"
    if verb != "config":
        return None
    words = list(rest)
    if words and words[0] in ("set", "unset", "edit", "rename-section", "remove-section"):
        sub, words = words[0], words[1:]
        if sub == "edit":
            return "git config edit"
        keys = non_options(words, _CONFIG_VALUES)[:1]
    elif words and words[0] in ("get", "list"):
        return None
    else:
        operands = non_options(words, _CONFIG_VALUES)
        if any(w in ("-e", "--edit") for w in words):
            return "git config --edit"
        writes = any(w in _CONFIG_WRITES for w in words) or len(operands) >= 2
        if not writes or any(w in _CONFIG_READS for w in words):
            return None
        keys = operands[:1]
    named = [k for k in keys if _CONTROL_KEYS.match(k)]
    return f"git config {named[0]}" if named else None


def _git_tree_writes(verb: str, rest: list[str]) -> list[str]:
    """What git commands that write the work tree as a whole write: the directory they
    run in (``git clean``, ``checkout -f``, ``switch -f``, ``read-tree -u``,
    ``reset --hard``), or the paths they are limited to; ``worktree add`` its path."""
    limited = rest[rest.index("--") + 1 :] if "--" in rest else []
    if verb == "clean" and not {"-n", "--dry-run"} & set(rest):
        flags = "".join(w[1:] for w in rest if w.startswith("-") and not w.startswith("--"))
        if "n" in flags:
            return []
        return limited or non_options(rest, frozenset({"-e", "--exclude"})) or ["."]
    forced = {"-f", "--force", "--discard-changes"} & set(rest)
    if verb in ("checkout", "switch") and forced:
        return limited or ["."]
    if verb == "read-tree" and {"-u", "--reset"} & set(rest) and "-u" in rest:
        return ["."]
    if verb == "reset" and {"--hard", "--merge", "--keep"} & set(rest):
        return ["."]
    if verb == "worktree" and rest[:1] == ["add"]:
        operands = non_options(rest[1:], frozenset({"-b", "-B", "--reason"}))
        return operands[:1]
    return []
