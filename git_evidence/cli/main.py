"""Command line: ``git evidence <command>`` (also ``git-evidence``,
``python -m git_evidence``). Exit 0 allowed, 1 refused, 2 could not decide.

Every command follows the conventions of docs/cli.md, whoever adds it: ``-q``, ``-v``,
``--format text|json`` and a description come from ``options.apply_conventions``
(what each command accepts is ``arguments.py``); errors, ``-q``, a closed pipe and
crashes are handled here, once."""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from types import SimpleNamespace
from typing import TYPE_CHECKING, TextIO, cast

from git_evidence.cli.names import HOOKS, TABLE, module_of

# Only the error types load before a command is chosen (argparse when a command line
# is parsed): `--help` and the non-judging commands do not pay for the judging
# machinery, nor a hook for the parser.
from git_evidence.core.errors import (
    EXIT_BROKEN_PIPE,
    EXIT_ERROR,
    INTERNAL_ERROR,
    INTERNAL_HINT,
    PREFIX,
    USAGE_HINT,
    CommandLineError,
    EvidenceError,
    NotARepository,
    UsageError,
)
from git_evidence.gate import time_budget
from git_evidence.terminal import console

if TYPE_CHECKING:
    import argparse

    from git_evidence.gate.report import Rendering, Report
    from git_evidence.policy.identity import Identity

    # What a command's ``run`` gives back: an exit status (it printed what it had to
    # say), or a report with how to render it, which is written here.
    Outcome = int | tuple[Report, Rendering]

# The forge formats (forge/formats.py's FORMATS), named here so that an error before the
# command loads still knows them.
FORGE_FORMATS = frozenset({"sarif", "github", "codequality"})


def _command(name: str) -> Callable[[argparse.Namespace], Outcome]:
    # Each command imports only what it needs, so hooks start fast.
    module = importlib.import_module(module_of(name))
    run: Callable[[argparse.Namespace], Outcome] = module.run
    return run


def main(argv: Sequence[str] | None = None) -> int:
    # Text that cannot be encoded (a lone surrogate from a hostile ledger line or a
    # non-UTF-8 argument) is printed escaped, never a crash of a reader or a hook.
    for stream in (sys.stdout, sys.stderr):
        if isinstance(stream, io.TextIOWrapper):
            stream.reconfigure(errors="backslashreplace")
    try:
        return _main(list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:
        # The reader went away (`git evidence policy | head -1`): end quietly.
        console.silence()
        return EXIT_BROKEN_PIPE


def _main(words: list[str]) -> int:
    time_budget.PROGRESS.restart()  # one command a process; a caller may run several
    try:
        args = _parse(words)
    except UsageError as exc:
        return _failed(exc, None, _format_given(words))
    except SystemExit as done:  # --help, --version: flushed here, where a pipe closed
        sys.stdout.flush()  # early is still caught
        return done.code if isinstance(done.code, int) else EXIT_ERROR
    fmt: str = getattr(args, "format", "text")
    try:
        with console.holding(args.quiet) as held:
            held.code = _run(args, fmt)
        sys.stdout.flush()
        return held.code
    except BrokenPipeError:
        raise
    except EvidenceError as exc:
        writing = time_budget.PROGRESS.stage == "writing the report"
        time_budget.stop()
        if writing and args.command in HOOKS:  # the budget may have cut a line short
            sys.stderr.write("\n")
        return _failed(exc, args, fmt)
    except KeyboardInterrupt:
        time_budget.stop()
        console.say("interrupted; nothing was allowed")
        return EXIT_ERROR
    except Exception as exc:  # a hook never shows a raw traceback, never allows
        time_budget.stop()
        return _crashed(exc, args, fmt)
    finally:
        time_budget.stop()


def hook_args(words: Sequence[str]) -> argparse.Namespace | None:
    """The namespace of a command whose row in the table (cli/names.py) has a fast
    one, when its words allow: a hook as git (or an agent) starts it, its name then at
    most git's positional arguments and the row's flags; `check` given only ranges.
    Else None (parse): importing argparse and building the parser cost ~10 ms of every
    push (gettext and locale, the terminal's size)."""
    row = TABLE.get(words[0]) if words else None
    if row is None or row.fast is None:
        return None
    values: dict[str, object] = dict(row.fast)
    given: list[str] = []
    for word in words[1:]:
        name, eq, value = word.partition("=")
        if word in row.flags:
            values[row.flags[word]] = True
        elif eq and name in row.values and value:
            values[row.values[name]] = value
        elif word.startswith("-") or (row.rest and not word):
            return None
        else:
            given.append(word)
    if row.rest:
        if not given:
            return None
        values[row.rest] = given
    else:
        if len(given) > len(row.positionals):
            return None
        missing: list[None] = [None] * (len(row.positionals) - len(given))
        values.update(zip(row.positionals, [*given, *missing], strict=True))
    # The attributes a parsed Namespace has; commands only read them.
    fast = SimpleNamespace(command=words[0], quiet=False, verbose=False, **values)
    return cast("argparse.Namespace", fast)


def _parse(words: list[str]) -> argparse.Namespace:
    fast = hook_args(words)
    if fast is not None:
        return fast
    from git_evidence.cli import arguments

    return arguments.parse(words)


def _format_given(words: list[str]) -> str:
    """``--format`` as written, for an error found before the words parse."""
    for word, after in zip(words, [*words[1:], ""], strict=True):
        if word == "--format" and after in ("text", "json", *sorted(FORGE_FORMATS)):
            return after
        if word.startswith("--format="):
            return word.partition("=")[2]
    return "text"


def _run(args: argparse.Namespace, fmt: str) -> int:
    hook = args.command in HOOKS
    wrap = fmt == "json" and getattr(args, "text_only", False)
    with console.capturing_stdout(wrap) as lines, _progress(args.command):
        result = _command(args.command)(args)
    if isinstance(result, int):
        code = result
    else:
        report, rendering = result
        code = report.exit_code
        # An armed time budget (pre-receive) also bounds rendering and writing.
        time_budget.PROGRESS.stage = "writing the report"
        if not _silent(args, fmt, report, rendering):
            _emit(report, fmt, sys.stderr if hook else sys.stdout, rendering)
    if wrap:  # a command that renders only text: its lines and exit status, as JSON
        import json

        print(json.dumps({"exit": code, "output": lines}, indent=1))
    return code


def _silent(args: argparse.Namespace, fmt: str, report: Report, rendering: Rendering) -> bool:
    """A hook that allows with nothing to remark (no hold on its way to review, no
    proposal; on the server, no note either) says nothing, unless asked to (``-v``, or
    ``git config evidence.verbose true``, read only then): an ordinary push prints no
    ``remote:`` line."""
    server = args.command == "pre-receive"
    client = TABLE[args.command].client_hook
    if (not client and not server) or fmt != "text" or args.verbose:
        return False
    if report.exit_code != 0 or any(v.findings for v in report.decisions):
        return False
    if server and (report.notes or rendering.notes):
        return False
    from git_evidence.plumbing.git import Git

    return not Git().config_bool("evidence.verbose")


def _progress(command: str) -> AbstractContextManager[object]:
    """A judgement outside a hook may take a while: say how far it got, on a terminal."""
    if not TABLE[command].watched:
        return contextlib.nullcontext()
    from git_evidence.gate.time_budget import PROGRESS
    from git_evidence.terminal import progress

    return progress.watching(PREFIX, PROGRESS.describe)


def _failed(exc: EvidenceError, args: argparse.Namespace | None, fmt: str) -> int:
    """Say why the command could not decide: JSON in one shape (a judgement adds who
    it was for), or text: a hook's report, else one line and the fix."""
    command = args.command if args is not None else None
    hook = command in HOOKS
    if args is not None and not hook and not _in_repository(args):
        exc = NotARepository(_where(args))  # the cause, not its symptom
    fix = exc.fix or _hint(exc.rule)
    judging = args is not None and TABLE[args.command].judging
    who = _error_identity(args) if args is not None and judging else None
    if fmt == "json":
        extra = {} if who is None else {"pusher": who.name}
        doc = console.error_json(exc.rule, exc.message, fix or USAGE_HINT, **extra)
        (sys.stderr if hook else sys.stdout).write(doc + "\n")
    elif fmt in FORGE_FORMATS and not hook:
        from git_evidence.gate.report import Report
        from git_evidence.policy.identity import Identity
        from git_evidence.rules.findings import error_finding

        finding = error_finding(exc.rule, exc.message, fix or USAGE_HINT)
        anyone = who or Identity(None, "client clone")
        _emit(Report(anyone, None, error=finding), fmt, sys.stdout)
    elif who is not None and (hook or not isinstance(exc, UsageError)):
        from git_evidence.gate.report import Report
        from git_evidence.rules.findings import error_finding

        finding = error_finding(exc.rule, exc.message, fix)
        _emit(Report(who, None, error=finding), fmt, sys.stderr)
    else:
        if isinstance(exc, CommandLineError):
            sys.stderr.write(exc.usage)
        line = f"{exc.rule}: {exc.message}"
        if who is not None and not isinstance(exc, NotARepository):
            # whom the judgement was for; a usage error stops it before anything is judged
            line += f" ({who.describe()}; nothing judged)"
        console.say(line + (f"\n  To fix: {fix}" if fix else ""))
    return EXIT_ERROR


def _hint(rule: str) -> str:
    if rule == UsageError.rule:
        return ""  # the message says it; `rules` and JSON give the general hint
    from git_evidence.commands.rules import hint_for

    return hint_for(rule)


def _in_repository(args: argparse.Namespace) -> bool:
    from git_evidence.plumbing.git import Git

    where = getattr(args, "repo", None)
    if where is not None and not os.path.isdir(where):
        return False
    try:
        return Git(cwd=where).is_repository()
    except EvidenceError:  # git itself cannot run: the error already says so
        return True


def _where(args: argparse.Namespace) -> str:
    where = getattr(args, "repo", None)
    if where is not None:
        return str(where)
    try:
        return os.getcwd()
    except OSError:
        return "."


def _crashed(exc: Exception, args: argparse.Namespace, fmt: str) -> int:
    import traceback

    from git_evidence.cli import crashlog

    trace = traceback.format_exc()
    log = crashlog.save(trace)
    where = f"full trace in {log}" if log else "the trace could not be saved"
    what = " ".join(f"{type(exc).__name__}: {exc}".split())  # one line, whatever it says
    message = f"internal error, refusing: {what} ({where})"
    if args.verbose:
        sys.stderr.write(trace)
    if fmt == "json":
        stream = sys.stderr if args.command in HOOKS else sys.stdout
        stream.write(console.error_json(INTERNAL_ERROR, message, INTERNAL_HINT) + "\n")
    else:
        console.say(message)
    return EXIT_ERROR


def _error_identity(args: argparse.Namespace) -> Identity:
    """Who a judgement that could not finish was for: the server's pusher, the name
    given with ``--as``, else this clone (its trust is not read: git may be what
    failed)."""
    from git_evidence.policy.identity import Identity, server_pusher

    if args.command == "pre-receive":
        return server_pusher(os.environ)
    as_name = getattr(args, "as_name", None)
    if as_name is not None:
        return Identity(as_name, "--as")
    return Identity(None, "client clone")


def _emit(report: Report, fmt: str, stream: TextIO, rendering: Rendering | None = None) -> None:
    from git_evidence.gate.report import PLAIN, WIDTH, to_json, to_text

    shown = PLAIN if rendering is None else rendering
    if fmt in FORGE_FORMATS:
        from git_evidence.forge import output

        output.emit_report(report, fmt, stream, rendering=shown)
        return

    pushed = fmt == "text" and stream is sys.stderr and console.gitlab()
    # GitLab shows a hook's message to the pusher only on lines with its prefix; the
    # lines are narrower by as much, so that they still fit 80 columns under `remote: `.
    narrower = len(console.GITLAB_PREFIX) if pushed else 0
    text = (
        to_json(report, shown) + "\n"
        if fmt == "json"
        else to_text(report, shown, width=WIDTH - narrower)
    )
    if pushed:
        text = console.for_pusher(text)
    stream.write(text)


if __name__ == "__main__":
    raise SystemExit(main())
