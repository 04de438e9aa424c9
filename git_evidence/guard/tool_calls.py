"""The agent's own hook (``git evidence guard``): one pre-tool-use event → the paths
the tool call would write → deny or allow, under the policy in force.

Pure: the file system is reached through the callback the command gives (where a path
leads once its links are followed) and the question it answers (which test paths exist
already); git is the command's business.

What is denied is what the fence would refuse or hold for an untrusted pusher:
evidence (fixture, oracle, freeze ledger, policy — the policy file always), runner
configuration (unless ``[rules].other_path = "allow"``) and existing test code (unless
``[rules].test_edit = "allow"``). A test file the agent adds is allowed, and so is
everything else: product, neutral, other paths, paths outside the repository."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, NamedTuple

from git_evidence.core.errors import PREFIX, UsageError

if TYPE_CHECKING:
    from git_evidence.core.paths import Classifier, Match
    from git_evidence.policy.schema import Policy

# The tools that write one file, as each agent names them, and the field naming it:
# Claude Code's, then Gemini CLI's (`write_file`, `replace`).
FILE_TOOLS: Final[Mapping[str, str]] = {
    "Write": "file_path",
    "Edit": "file_path",
    "MultiEdit": "file_path",
    "NotebookEdit": "notebook_path",
    "write_file": "file_path",
    "replace": "file_path",
}
# The tools that run a shell command, and the field holding it.
SHELL_TOOLS: Final[Mapping[str, str]] = {"Bash": "command", "run_shell_command": "command"}
# The events that come before a tool runs (Claude Code's, Gemini CLI's).
EVENTS: Final = frozenset({"PreToolUse", "BeforeTool"})
# Claude Code's event when a settings file changes during the session: read as the
# "tool" of that name, its input the event itself (``source``, ``file_path``).
CONFIG_CHANGE: Final = "ConfigChange"
READ_ONLY = "the evidence path is read-only for this session"
# What Claude Code and Gemini CLI take as "do not run this tool call" (stderr is the
# reason they give the agent); any other non-zero status lets the call run.
DENY_EXIT: Final = 2
FIXES: Final[Mapping[str, str]] = {
    "evidence-untrusted": "leave it as it is: an evidence writer changes evidence, "
    "in a commit of its own",
    "test-edit": "leave the tests that exist as they are; add a new test file instead",
    "other-path": "leave it as it is: runner configuration changes how every test runs",
    "guard-control": "leave it as it is: what guards this session is a person's to "
    "change, outside the session",
}
WIRE_IT = "wire `git evidence guard` to the PreToolUse event, or name paths with --path"


class Event(NamedTuple):
    tool: str
    input: Mapping[str, object]
    cwd: str | None  # the directory the agent is in


class Target(NamedTuple):
    """A path a tool call writes, as the call names it."""

    given: str
    how: str  # the tool, or the shell operation ("rm", "sed -i", "> redirection")
    cwd: str = ""  # what it is relative to: "" the event's directory, else relative to it
    shell: bool = False  # named in a shell command: a glob in it is the shell's
    # a command that changes what guards the session (``git config evidence.…``,
    # ``update-ref``, ``git evidence install``), not a file: ``given`` says which
    control: bool = False


class Denial(NamedTuple):
    rule: str  # the fence's rule for that path: evidence-untrusted, other-path, test-edit
    path: str  # repository-relative ("" is the top)
    klass: str
    what: str  # why that class ("runner configuration", "above evidence root tests/…")
    how: str


def parse_event(data: bytes) -> Event:
    """One hook event, or a ``UsageError`` that says what is wrong with it."""
    if not data.strip():
        raise UsageError(f"no hook event on stdin; {WIRE_IT}")
    try:
        doc = json.loads(data)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"the hook event on stdin is not JSON ({exc.msg}, line {exc.lineno} "
            f"column {exc.colno}); {WIRE_IT}"
        ) from None
    except ValueError:  # not UTF-8
        raise UsageError(f"the hook event on stdin is not UTF-8 JSON; {WIRE_IT}") from None
    if not isinstance(doc, dict):
        raise UsageError(f"the hook event on stdin is not a JSON object; {WIRE_IT}")
    name = doc.get("hook_event_name")
    if name == CONFIG_CHANGE:
        cwd = doc.get("cwd")
        return Event(CONFIG_CHANGE, doc, cwd if isinstance(cwd, str) and cwd else None)
    if name is not None and name not in EVENTS:
        raise UsageError(f"the hook event is {name!r}, not one before a tool runs; {WIRE_IT}")
    tool = doc.get("tool_name")
    if not isinstance(tool, str) or not tool:
        raise UsageError(f"the hook event names no tool (`tool_name`); {WIRE_IT}")
    cwd = doc.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise UsageError("the hook event's `cwd` is not a string")
    given = doc.get("tool_input")
    if (tool in FILE_TOOLS or tool in SHELL_TOOLS) and not isinstance(given, dict):
        raise UsageError(f"the {tool} event has no `tool_input` object")
    return Event(tool, given if isinstance(given, dict) else {}, cwd or None)


def targets(event: Event, variables: Mapping[str, str] | None = None) -> list[Target]:
    """The paths the tool call writes; none for a tool that writes no file (``Read``,
    ``Grep``, a tool this hook does not know). ``variables``: the values of the shell
    variables the guard knows (``CLAUDE_PROJECT_DIR``, ``HOME``)."""
    field = FILE_TOOLS.get(event.tool)
    if event.tool == CONFIG_CHANGE:
        return []  # judged by agent_settings.config_change, not as a write
    if field is not None:
        path = _text(event, field, empty=False)
        found = [Target(path, event.tool)]
        edits = event.input.get("edits")  # MultiEdit: one file, several edits
        for edit in edits if isinstance(edits, list) else ():
            other = edit.get(field) if isinstance(edit, dict) else None
            if isinstance(other, str) and other and other != path:
                found.append(Target(other, event.tool))
        return found
    field = SHELL_TOOLS.get(event.tool)
    if field is None:
        return []
    from git_evidence.guard.shell_writes import written_paths  # only a shell command needs it

    command = _text(event, field, empty=True)
    where = event.input.get("dir_path")  # Gemini CLI: where the command runs
    base = where if isinstance(where, str) else ""
    return [
        Target(
            w.how if w.control else w.path,
            w.how,
            os.path.join(base, w.cwd) if base else w.cwd,
            shell=True,
            control=w.control,
        )
        for w in written_paths(command, variables=variables)
    ]


def _text(event: Event, field: str, *, empty: bool) -> str:
    value = event.input.get(field)
    if not isinstance(value, str) or (not value and not empty):
        raise UsageError(f"the {event.tool} event has no `{field}` (tool_input.{field})")
    return value


def directory(target: Target, cwd: str) -> str:
    """The directory ``target`` is relative to, from the event's ``cwd`` (absolute)."""
    return os.path.join(cwd, os.path.expanduser(target.cwd)) if target.cwd else cwd


def resolve(target: Target, cwd: str, top: str, real: Callable[[str], str]) -> str | None:
    """The repository-relative path a write to ``target`` lands on (``cwd``: the
    event's directory, absolute), its links followed as the file system follows them
    (``real`` is ``os.path.realpath`` for the command; ``..`` after a link is taken
    from where the link leads); ``""`` for the top itself; None outside ``top`` (a
    real path)."""
    if "\0" in target.given or not target.given:
        return None  # nothing is written there: the tool fails by itself
    full = os.path.join(directory(target, cwd), os.path.expanduser(target.given))
    relative = os.path.relpath(real(full), top)
    if relative == ".":
        return ""
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return None
    return relative.replace(os.sep, "/")


def judge(
    paths: Sequence[tuple[Target, str]],
    policy: Policy,
    existing: Callable[[list[str]], set[str]],
) -> list[Denial]:
    """The denials for ``(target, repository path)`` pairs; ``existing`` says which
    of some test paths exist already (it is asked once, and only when needed)."""
    from git_evidence.core.paths import EVIDENCE_CLASSES, OTHER, TEST, is_runner_config

    classifier = policy.classifier()
    matches = [(target, path, _strictest(classifier, path)) for target, path in paths]
    tests = [path for _t, path, match in matches if match.klass == TEST]
    present = existing(tests) if tests and policy.test_edit != "allow" else set()
    denials: list[Denial] = []
    for target, path, match in matches:
        if match.klass in EVIDENCE_CLASSES:
            denials.append(
                Denial("evidence-untrusted", path, match.klass, match.reason, target.how)
            )
        elif match.klass == OTHER and is_runner_config(path) and policy.other_path != "allow":
            denials.append(Denial("other-path", path, OTHER, "runner configuration", target.how))
        elif match.klass == TEST and path in present:
            denials.append(Denial("test-edit", path, TEST, "existing test code", target.how))
    return denials


# Letters that a case-folding file system may take for an ASCII ``i``: the dotted
# capital I (and its folded form, ``i`` with a combining dot) and the dotless i.
_LOOSE_I: Final = str.maketrans({"\u0130": "i", "\u0131": "i", "\u0307": None})


def _strictest(classifier: Classifier, path: str) -> Match:
    """The class of ``path``, and when a letter in it folds to ``i`` on some file
    system (``tests/fİxtures``), of that spelling too: the protected one wins."""
    from git_evidence.core.paths import EVIDENCE_CLASSES

    match = classifier.structural(path)
    if path.isascii() or match.klass in EVIDENCE_CLASSES:
        return match
    loose = path.translate(_LOOSE_I)
    if loose == path:
        return match
    other = classifier.structural(loose)
    return other if other.klass in EVIDENCE_CLASSES or match.klass == "other" else match


def disk_spelling(top: str, path: str, listdir: Callable[[str], list[str]]) -> str | None:
    """How ``path`` is spelled on a disk that folds case (``Tests/A.py`` names the
    tree's ``tests/a.py`` there): each component as the directory lists it, an exact
    name first, else the one that folds alike; None when a component is not there."""
    from git_evidence.core.path_globs import fold_path

    current, parts = top, []
    for part in path.split("/"):
        try:
            names = listdir(current)
        except OSError:
            return None
        if part not in names:
            folded = fold_path(part)
            part = next((n for n in names if fold_path(n) == folded), "")
            if not part:
                return None
        parts.append(part)
        current = os.path.join(current, part)
    return "/".join(parts)


def show(path: str) -> str:
    """A repository path for one line of text (the top is ``.``)."""
    if not path:
        return "."
    return path if path.isprintable() else json.dumps(path)


def deny_line(denials: Sequence[Denial]) -> str:
    """The one line that says why: rule, path, class, and that it is read-only."""
    first = denials[0]
    why = f"class {first.klass}" + (f", {first.what}" if first.what else "")
    more = f" (and {len(denials) - 1} more)" if len(denials) > 1 else ""
    return (
        f"{PREFIX}: {first.rule}: {show(first.path)}: {why} ({first.how}): {READ_ONLY}; "
        f"{FIXES[first.rule]}{more}"
    )


def deny_json(line: str) -> str:
    """Claude Code's PreToolUse answer that denies the call (read on exit 0)."""
    return json.dumps(
        {
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": line,
            }
        }
    )
