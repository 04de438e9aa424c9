"""What each command accepts: the parser of ``git evidence`` and every command's
arguments, help and description (the man page is tested against it).

Loaded only when a command line is parsed: a hook that git starts with its usual
arguments is given its namespace by ``cli.hook_args`` and never pays for argparse.
Over 300 lines on purpose: one place lists every command's arguments."""

from __future__ import annotations

import argparse
from typing import Any, cast

from git_evidence import __version__
from git_evidence.cli import arguments_ci
from git_evidence.cli.names import COMMANDS
from git_evidence.cli.options import (
    Parser,
    add_draft,
    add_dry_run,
    add_format,
    add_max_findings,
    add_rev,
    apply_conventions,
)
from git_evidence.core.errors import UsageError


def parse(words: list[str]) -> argparse.Namespace:
    """The namespace of a command line; ``UsageError`` or the parser's own error
    (``CommandLineError``) when it does not parse, ``SystemExit`` for --help/--version."""
    tail: list[str] | None = None
    command = next((word for word in words if not word.startswith("-")), None)
    if command == "judge" and "--" in words:
        # `judge [CANDIDATE] … -- CMD…`: argparse cannot tell CMD from CANDIDATE
        cut = words.index("--")
        words, tail = words[:cut], words[cut + 1 :]
    parser = build_parser(only=command)
    args, extra = parser.parse_known_args(words)
    if extra:  # said by the command's own parser: its usage, its --help
        _chosen_parser(parser, args).error(f"unrecognized arguments: {' '.join(extra)}")
    if tail is not None:
        if not tail:
            raise UsageError("nothing after `--`", fix="git evidence judge … -- CMD ARGS…")
        args.command_argv = tail
    return args


def _chosen_parser(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> argparse.ArgumentParser:
    """The parser of the command ``args`` ran (``freeze add``'s, not the top one)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            child = action.choices.get(getattr(args, action.dest, None) or "")
            if child is not None:
                return _chosen_parser(child, args)
    return parser


class _Skipped:
    """What a command's parser is while another command is parsed: every call
    (``add_argument``, ``add_subparsers``, ``add_parser``…) does nothing and returns it."""

    def __getattr__(self, name: str) -> Any:
        return self._nothing

    def _nothing(self, *args: object, **kwargs: object) -> _Skipped:
        return self


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or with ``only``, of that command alone (the others
    are not built: building all of them costs a command some 15 ms). An ``only`` that
    names no command gets the whole parser, so its error lists every choice."""
    return _build(only if only in COMMANDS else None)


def _build(only: str | None) -> Parser:
    parser = Parser(
        prog="git evidence",
        description="Refuse commits and pushes that mix product edits with evidence "
        "edits (fixtures, goldens, oracles, the freeze ledger, the policy). "
        "Exit 0: allowed; 1: refused (hold or reject); 2: could not decide.",
        epilog="Every command takes -q, -v and --format text|json; "
        "`git evidence COMMAND --help` describes it, `man git-evidence` all of them.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    # Typed as plain parsers so that helpers adding commands need not know the class;
    # each is a Parser (argparse makes subparsers of the parent's class).
    sub = cast(
        "argparse._SubParsersAction[argparse.ArgumentParser]",
        parser.add_subparsers(dest="command", metavar="COMMAND", required=True),
    )
    # Every command is added through here, in the order of names.COMMANDS, and only
    # ``only``'s is built.
    real = sub.add_parser
    added: list[str] = []

    def add_parser(name: str, **kwargs: Any) -> Any:
        added.append(name)
        if name not in COMMANDS:
            raise RuntimeError(f"the parser adds {name!r}, which cli/names.py does not list")
        return real(name, **kwargs) if only in (None, name) else _Skipped()

    setattr(sub, "add_parser", add_parser)  # noqa: B010 (an instance's method)

    p = sub.add_parser(
        "init",
        help="write a draft .git-evidence.toml from the repository's layout, and say "
        "what it would have done to the last commits",
        description="Read the files at the tip of the default branch and write a draft "
        ".git-evidence.toml, every glob under a comment saying why it was chosen; print "
        "what the draft classifies and how `check` judges the last commits of the "
        "branch under it (allowed, held, refused, by rule). Exit 0 when the draft was "
        "written or printed; 2 when it could not be (a policy file exists: --force).",
    )
    p.add_argument(
        "--commits",
        type=_positive,
        default=300,
        metavar="N",
        help="judge the last N first-parent commits of the default branch (default: 300)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the draft and its figures, and write nothing",
    )
    p.add_argument("--force", action="store_true", help="overwrite an existing .git-evidence.toml")
    add_format(p)

    p = sub.add_parser(
        "check",
        help="judge a range as the server would (default: upstream..HEAD)",
        description="Judge ranges as the server's pre-receive would, with the policy of "
        "the base. Exit 0: allowed; 1: refused; 2: could not decide.",
    )
    p.add_argument(
        "ranges", nargs="*", metavar="RANGE", help="`A..B` or a revision (judged against --base)"
    )
    p.add_argument(
        "--base",
        metavar="REF",
        help="what the range is judged against, "
        "and where the policy is read (default: upstream, else the "
        "remote's base branch, else the local one)",
    )
    p.add_argument(
        "--as",
        dest="as_name",
        metavar="NAME",
        help="judge as this pusher name against the policy's identities",
    )
    add_draft(p)
    add_format(p, forge=True)
    add_max_findings(p)

    p = sub.add_parser(
        "classify",
        help="print each path's class and the glob that matched",
        description="Print each path's class and the glob (or structural reason) that "
        "matched. Paths are relative to the current directory, as in git; `:/PATH` is "
        "relative to the top of the repository.",
    )
    p.add_argument(
        "paths", nargs="+", metavar="PATH", help="a path (it need not exist), as git takes it"
    )
    p.add_argument("--base", metavar="REF", help="read the policy at REF")
    add_draft(p)
    add_format(p)

    p = sub.add_parser(
        "policy",
        help="print the policy in force, its source and digest",
        description="Print the policy in force (every key, defaults included), where it "
        "was read and its digest. Exit 2 when it does not parse, naming file, line, key.",
    )
    p.add_argument("--base", metavar="REF", help="read the policy at REF")
    p.add_argument(
        "--server",
        action="store_true",
        help="resolve it as pre-receive does in this (bare) repository",
    )
    add_draft(p)
    add_format(p)

    p = sub.add_parser(
        "pre-commit",
        help="hook: judge the staged change against HEAD",
        description="Client hook: judge the staged change against HEAD (during a merge, "
        "only what differs from every parent). Report on stderr.",
    )
    add_format(p)

    p = sub.add_parser(
        "pre-push",
        help="hook: judge what a push sends (stdin as git "
        "gives it; or PRE_COMMIT_* variables under pre-commit)",
        description="Client hook: judge the pushed refs against the remote-tracking refs. "
        "Reads `<local ref> <local oid> <remote ref> <remote oid>` lines on stdin. "
        "Report on stderr.",
    )
    p.add_argument("remote", nargs="?", help="remote name (from git)")
    p.add_argument("url", nargs="?", help="remote URL (from git)")
    add_format(p)
    add_max_findings(p)

    p = sub.add_parser(
        "pre-receive",
        help="server hook: judge every ref update of a push (stdin: <old> <new> <ref>)",
        description="Server hook: judge every ref update of a push against the server's "
        "refs; a refusal refuses the whole push. Report on stderr.",
    )
    add_format(p)
    add_max_findings(p)

    p = sub.add_parser(
        "post-receive",
        help="server hook: pin the lock on new tips of protected branches",
        description="Server hook: pin the lock on every first-parent commit a push "
        "brought to a protected branch whose lock roots changed, and on the new tip.",
    )

    p = sub.add_parser(
        "lock",
        help="pin REV's fixture tree as a lock note (trusted side)",
        description="Pin REV's fixture tree as a lock note and print the pin digest; "
        "with --push, publish it. Shows progress on a terminal when it takes a while.",
    )
    add_rev(p)
    p.add_argument(
        "--push",
        nargs="?",
        const="origin",
        metavar="REMOTE",
        help="publish it: fetch REMOTE's notes (default origin), pin, push the notes ref, "
        "retrying when the remote's notes moved meanwhile",
    )
    add_draft(p)
    add_format(p)

    p = sub.add_parser(
        "show-lock",
        help="print the lock in force at REV and where it lives",
        description="Print the lock in force at REV (the note on its nearest "
        "first-parent ancestor) and where it lives; -v lists every pinned file. "
        "Exit 1 when no lock is in force.",
    )
    add_rev(p)
    add_format(p)

    p = sub.add_parser(
        "verify",
        help="compare REV (or the working tree) with the lock in force, and check its range",
        description="Compare REV (or the files on disk) with the lock in force, then check "
        "the range from the protected base. Exit 0 only when everything matches.",
    )
    add_rev(p)
    p.add_argument(
        "--worktree",
        action="store_true",
        help="compare the files on disk (untracked and ignored ones too)",
    )
    p.add_argument("--base", metavar="REF", help="the protected base for the range check")
    add_draft(p)
    add_format(p)

    p = sub.add_parser(
        "install",
        help="write the hooks into this repository (client) or a bare repository (--server)",
        description="Write the client hooks (pre-commit, pre-push) and the locks' fetch "
        "refspec, or with --server the server hooks. A hook git evidence did not write "
        "is left alone (exit 2, with the lines to add to it) unless --force.",
    )
    p.add_argument(
        "--server", action="store_true", help="install pre-receive into this bare repository"
    )
    p.add_argument(
        "--force", action="store_true", help="replace a hook that git evidence did not write"
    )
    p.add_argument("--repo", metavar="DIR", help="repository (default: current)")
    p.add_argument(
        "--policy",
        metavar="FILE",
        help="with --server: seal this policy file (git config evidence.policyFile)",
    )
    add_dry_run(p)
    p.add_argument(
        "--agent",
        choices=("claude",),
        help="instead of git's hooks, merge `git evidence guard` into the agent's "
        "settings (claude: .claude/settings.json, every entry kept)",
    )
    add_format(p)

    p = sub.add_parser(
        "guard",
        help="agent hook: deny a tool call that would write evidence, runner "
        "configuration or existing test code (stdin: one PreToolUse event)",
        description="An agent's pre-tool-use hook: read one event on stdin (Claude "
        "Code's PreToolUse, Gemini CLI's BeforeTool) and deny a write to evidence, "
        "runner configuration or existing test code under the policy in force (the "
        "base's, never the working tree's). Exit 0: allowed, silently; 2: denied, one "
        "line on stderr (or bad input).",
    )
    p.add_argument(
        "--path",
        dest="paths",
        nargs="+",
        action="extend",
        metavar="P",
        help="judge these paths (relative to the current directory) instead of an "
        "event on stdin: the same decision for any agent's hook",
    )
    p.add_argument(
        "--json",
        action="store_true",
        help="deny with Claude Code's JSON answer on stdout "
        "(hookSpecificOutput.permissionDecision) and exit 0",
    )
    p.add_argument(
        "--repo",
        metavar="DIR",
        help="the repository to guard (default: $CLAUDE_PROJECT_DIR or "
        "$GEMINI_PROJECT_DIR, else the event's cwd, else the current directory)",
    )
    p.add_argument(
        "--pinned",
        metavar="DIGEST",
        help="judge under the policy `install --agent` pinned, which must have this "
        "digest (the installed hook passes it); a pin missing or changed denies every "
        "write in the work tree",
    )
    add_format(p, help="output format (default: text); json is --json")

    p = sub.add_parser(
        "doctor",
        help="report what is installed in this (bare) repository, "
        "the policy in force, the pusher identity, and what is missing",
        description="Report what is installed in a (bare) repository, the policy in "
        "force, the pusher identity, the recommended settings and the lock. Exit 1 while "
        "something is missing.",
    )
    p.add_argument("--repo", metavar="DIR", help="repository (default: current)")
    add_format(p)

    p = sub.add_parser(
        "split",
        help="make a mixed commit two: its evidence changes alone and the rest alone "
        "(from git objects; the working tree and index are not touched)",
    )
    p.add_argument("rev", nargs="?", metavar="REV", help="the commit to split (default: HEAD)")
    p.add_argument(
        "--range",
        metavar="BASE..TOP",
        help="split every mixed commit of the range (TOP: HEAD or a branch)",
    )
    p.add_argument(
        "--order",
        choices=("evidence-first", "product-first"),
        default="evidence-first",
        help="which half comes first (default: evidence-first)",
    )
    p.add_argument(
        "--evidence-branch",
        metavar="NAME",
        help="put the evidence commit on a new branch NAME from the commit's parent; "
        "the current branch keeps the product commit",
    )
    add_draft(p)
    add_dry_run(p)
    add_format(p)

    arguments_ci.add_freeze(sub)
    arguments_ci.add_judge(sub)
    arguments_ci.add_ci(sub)
    arguments_ci.add_labels(sub)
    p = sub.add_parser(
        "rules",
        help="list every rule id with its decision and fix",
        description="List every rule id with its decision and how to fix it; the fields "
        "a finding fills in (<commit>, <base>, …) are explained below the list.",
    )
    add_format(p)
    if tuple(added) != COMMANDS:
        raise RuntimeError(f"the parser adds {added}, cli/names.py lists {list(COMMANDS)}")
    apply_conventions(parser)
    return parser


def _positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected a number of commits above 0, not {text!r}")
    return int(text)
