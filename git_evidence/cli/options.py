"""The options every command takes, and the parser they hang on.

Commands are added with plain ``sub.add_parser(…)``; ``apply_conventions`` then walks
the finished parser and gives each one what it lacks: ``-q``/``-v``, ``--format``, a
description. A new command gets the conventions without asking for them."""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any, NoReturn

from git_evidence.core.errors import CommandLineError

QUIET_HELP = "print nothing when the command ends allowed (exit 0); all of it otherwise"
VERBOSE_HELP = "say more: details the command has, and the full trace of an internal error"
FORMAT_HELP = "output format (default: text); errors in JSON too, one shape, exit 2"
WRAPPED_FORMAT_HELP = (
    "output format (default: text); json gives the exit status and the text lines "
    "(`exit`, `output`); errors in JSON too, one shape, exit 2"
)


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage errors are ``usage-error``s: printed (or put
    in JSON) like every other error, exit 2."""

    def error(self, message: str) -> NoReturn:
        raise CommandLineError(message, usage=self.format_usage(), prog=self.prog)

    def _print_message(self, message: str, file: Any = None) -> None:
        # A help or usage nobody reads any more (`--help | head -1` once `head` is
        # gone) is dropped, as argparse itself does from Python 3.11 on; on 3.10 the
        # write would raise and the command end as a closed pipe (141).
        with contextlib.suppress(OSError):
            super()._print_message(message, file)


# What a forge reads (forge/formats.py): SARIF, GitHub workflow commands with a job
# summary, GitLab Code Quality JSON.
FORGE_FORMATS = ("sarif", "github", "codequality")
FORGE_FORMAT_HELP = (
    "output format (default: text): json; sarif (SARIF 2.1.0); github (workflow-command "
    "annotations, and a Markdown summary appended to $GITHUB_STEP_SUMMARY when set); "
    "codequality (GitLab Code Quality JSON). Errors in JSON too, one shape, exit 2"
)


def add_format(
    parser: argparse.ArgumentParser,
    help: str = FORMAT_HELP,
    *,
    forge: bool = False,
    default: str = "text",
    extra: tuple[str, ...] = (),
) -> None:
    """``--format text|json`` for a command that renders JSON itself; ``forge``: the
    forge formats too; ``extra``: formats of the command's own (``ci``'s ``auto``)."""
    choices = (*extra, "text", "json", *(FORGE_FORMATS if forge else ()))
    if forge and help == FORMAT_HELP:
        help = FORGE_FORMAT_HELP
    parser.add_argument("--format", choices=choices, default=default, help=help)


def apply_conventions(parser: argparse.ArgumentParser) -> None:
    """``-q``/``-v`` on the top parser and every command (before or after the command
    name); ``--format`` on every command that lacks it, marked ``text_only`` so the
    command line wraps its text in JSON; a description where a command has only help."""
    _add_quiet_verbose(parser, False)
    _walk(parser)


def subcommands(
    parser: argparse.ArgumentParser,
) -> Iterator[tuple[str, str | None, argparse.ArgumentParser]]:
    """``(name, help, parser)`` of each command under ``parser`` (aliases once)."""
    for action in parser._actions:
        if not isinstance(action, argparse._SubParsersAction):
            continue
        helps = {a.dest: a.help for a in action._choices_actions}
        seen: set[int] = set()
        for name, child in action.choices.items():
            if id(child) not in seen:
                seen.add(id(child))
                yield name, helps.get(name), child


def _walk(parser: argparse.ArgumentParser) -> None:
    children = list(subcommands(parser))
    for _name, help, child in children:
        if not child.description and help:
            child.description = help[:1].upper() + help[1:] + "."
        # SUPPRESS: absent unless given here, so a value given before the command
        # name is not overwritten by this parser's default.
        _add_quiet_verbose(child, argparse.SUPPRESS)
        _walk(child)
        if not list(subcommands(child)) and "--format" not in child._option_string_actions:
            add_format(child, WRAPPED_FORMAT_HELP)
            child.set_defaults(text_only=True)


def _add_quiet_verbose(parser: argparse.ArgumentParser, default: object) -> None:
    taken = parser._option_string_actions
    if "-q" not in taken and "--quiet" not in taken:
        parser.add_argument("-q", "--quiet", action="store_true", default=default, help=QUIET_HELP)
    if "-v" not in taken and "--verbose" not in taken:
        parser.add_argument(
            "-v", "--verbose", action="store_true", default=default, help=VERBOSE_HELP
        )


# -- argument kinds several commands share -------------------------------------------

REV_HELP = "a commit: a hash, branch, tag or any revision git understands (default: HEAD)"


def add_rev(parser: argparse.ArgumentParser) -> None:
    """The optional ``REV`` a command reads (default HEAD)."""
    parser.add_argument("rev", nargs="?", default="HEAD", metavar="REV", help=REV_HELP)


def add_draft(parser: argparse.ArgumentParser) -> None:
    """``--policy FILE``: try a policy before it is in force (never on a hook)."""
    parser.add_argument(
        "--policy",
        metavar="FILE",
        help="use this policy file instead of the one in force, to try it before it "
        "reaches the base branch; every report says `draft policy FILE (not in force)`",
    )


def add_dry_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would change, and change nothing",
    )


def count_findings(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a number of findings (0: all), not {text!r}")
    return int(text)


def add_max_findings(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-findings",
        type=count_findings,
        metavar="N",
        help="text: show the first N findings in full and count the rest per rule "
        "(default: git config evidence.maxFindings, else 20; 0: all); JSON lists all",
    )
