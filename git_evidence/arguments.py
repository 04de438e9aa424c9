"""What each command accepts: the parser of ``git evidence`` and every command's
arguments, help and description (the man page is tested against it).

Loaded only when a command line is parsed: a hook that git starts with its usual
arguments is given its namespace by ``cli.hook_args`` and never pays for argparse.
Over 300 lines on purpose: one place lists every command's arguments."""

from __future__ import annotations

import argparse
from typing import Any, cast

from git_evidence import __version__
from git_evidence.errors import UsageError
from git_evidence.options import Parser, add_format, apply_conventions, subcommands

REV_HELP = "a commit: a hash, branch, tag or any revision git understands (default: HEAD)"


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


def _add_rev(parser: argparse.ArgumentParser) -> None:
    """The optional ``REV`` a command reads (default HEAD)."""
    parser.add_argument("rev", nargs="?", default="HEAD", metavar="REV", help=REV_HELP)


def _add_draft(parser: argparse.ArgumentParser) -> None:
    """``--policy FILE``: try a policy before it is in force (never on a hook)."""
    parser.add_argument(
        "--policy",
        metavar="FILE",
        help="use this policy file instead of the one in force, to try it before it "
        "reaches the base branch; every report says `draft policy FILE (not in force)`",
    )


def _add_dry_run(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print what would change, and change nothing",
    )


def _count(text: str) -> int:
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"expected a number of findings (0: all), not {text!r}")
    return int(text)


def _add_max_findings(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-findings",
        type=_count,
        metavar="N",
        help="text: show the first N findings in full and count the rest per rule "
        "(default: git config evidence.maxFindings, else 20; 0: all); JSON lists all",
    )


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
    parser = _build(only)
    if only is not None and only not in {name for name, _, _ in subcommands(parser)}:
        return _build(None)
    return parser


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
    if only is not None:
        real = sub.add_parser

        def add_parser(name: str, **kwargs: Any) -> Any:
            return real(name, **kwargs) if name == only else _Skipped()

        setattr(sub, "add_parser", add_parser)  # noqa: B010 (an instance's method)

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
    _add_draft(p)
    add_format(p, forge=True)
    _add_max_findings(p)

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
    _add_draft(p)
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
    _add_draft(p)
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
    _add_max_findings(p)

    p = sub.add_parser(
        "pre-receive",
        help="server hook: judge every ref update of a push (stdin: <old> <new> <ref>)",
        description="Server hook: judge every ref update of a push against the server's "
        "refs; a refusal refuses the whole push. Report on stderr.",
    )
    add_format(p)
    _add_max_findings(p)

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
    _add_rev(p)
    p.add_argument(
        "--push",
        nargs="?",
        const="origin",
        metavar="REMOTE",
        help="publish it: fetch REMOTE's notes (default origin), pin, push the notes ref, "
        "retrying when the remote's notes moved meanwhile",
    )
    _add_draft(p)
    add_format(p)

    p = sub.add_parser(
        "show-lock",
        help="print the lock in force at REV and where it lives",
        description="Print the lock in force at REV (the note on its nearest "
        "first-parent ancestor) and where it lives; -v lists every pinned file. "
        "Exit 1 when no lock is in force.",
    )
    _add_rev(p)
    add_format(p)

    p = sub.add_parser(
        "verify",
        help="compare REV (or the working tree) with the lock in force, and check its range",
        description="Compare REV (or the files on disk) with the lock in force, then check "
        "the range from the protected base. Exit 0 only when everything matches.",
    )
    _add_rev(p)
    p.add_argument(
        "--worktree",
        action="store_true",
        help="compare the files on disk (untracked and ignored ones too)",
    )
    p.add_argument("--base", metavar="REF", help="the protected base for the range check")
    _add_draft(p)
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
    _add_dry_run(p)
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
    _add_draft(p)
    _add_dry_run(p)
    add_format(p)

    _add_freeze(sub)
    _add_judge(sub)
    _add_ci(sub)
    _add_labels(sub)
    p = sub.add_parser(
        "rules",
        help="list every rule id with its decision and fix",
        description="List every rule id with its decision and how to fix it; the fields "
        "a finding fills in (<commit>, <base>, …) are explained below the list.",
    )
    add_format(p)
    apply_conventions(parser)
    return parser


def _shard(text: str) -> tuple[int, int]:
    index, sep, count = text.partition("/")
    if not (sep and index.isdigit() and count.isdigit()) or not 1 <= int(index) <= int(count):
        raise argparse.ArgumentTypeError(f"expected I/N with 1 <= I <= N (2/4), not {text!r}")
    return int(index), int(count)


def _add_ci(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "ci",
        help="judge a pull or merge request (or a push) in GitHub Actions or GitLab CI",
        description="Read the request from the CI system (GitHub Actions: the event in "
        "$GITHUB_EVENT_PATH; GitLab CI: the CI_MERGE_REQUEST_* and CI_COMMIT_* variables), "
        "judge base..head as the request's author with the policy of the base (never the "
        "head's), and print the forge's format. Exit 0: allowed; 1: refused; 2: could not "
        "decide.",
    )
    p.add_argument(
        "--as",
        dest="as_name",
        metavar="NAME",
        help="judge as this name instead of the login the CI system gives",
    )
    p.add_argument(
        "--codequality",
        metavar="FILE",
        help="also write GitLab Code Quality JSON to FILE (default on GitLab: "
        "gl-code-quality-report.json; '-' for none)",
    )
    p.add_argument(
        "--no-fetch",
        action="store_true",
        help="never fetch: a base or head the clone lacks is an error naming the setting "
        "to change (fetch-depth: 0, GIT_DEPTH: 0)",
    )
    add_format(
        p,
        "output format (default auto: github in GitHub Actions, text in GitLab CI); "
        "text, json, sarif, github, codequality. Errors in JSON too, one shape, exit 2",
        forge=True,
        default="auto",
        extra=("auto",),
    )
    _add_max_findings(p)


def _add_judge(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "judge",
        help="classify a candidate's test results: evidence first, then the properties "
        "in a workspace the candidate cannot write (CI)",
        description="Exit 0: accept or flake_frozen; 1: any other class; 2: could not "
        "decide. Everything after `--` is an ad-hoc property `cli`.",
    )
    p.add_argument("candidate", nargs="?", metavar="CANDIDATE", help="commit (default: HEAD)")
    p.add_argument("--patch", metavar="FILE", help="judge this patch applied to the base")
    p.add_argument(
        "--base",
        metavar="REF",
        help="the base (default: merge-base of CANDIDATE with [rules].base); the policy, "
        "pin and ledger are read there",
    )
    _add_draft(p)
    p.add_argument("--property", action="append", metavar="ID", help="run only these properties")
    p.add_argument("--repeat", type=int, metavar="N", help="runs per seed (at least 2)")
    seeds = p.add_mutually_exclusive_group()
    seeds.add_argument("--seeds", type=int, metavar="K", help="seeds per property")
    seeds.add_argument(
        "--seed", type=int, action="append", metavar="S", help="this seed (repeatable)"
    )
    p.add_argument("--jobs", type=int, default=1, metavar="J", help="runs at once (1)")
    p.add_argument("--out", metavar="FILE", help="write the verdict record here")
    p.add_argument("--note", action="store_true", help="store the verdict as a note on CANDIDATE")
    p.add_argument("--log", metavar="FILE", help="append one JSON line per judgement")
    p.add_argument("--keep", action="store_true", help="keep the workspace (its path on stderr)")
    scale = p.add_mutually_exclusive_group()
    scale.add_argument(
        "--shard",
        type=_shard,
        metavar="I/N",
        help="run shard I of N of the (property, seed) pairs (a deterministic split) and "
        "write a partial record, for --merge",
    )
    scale.add_argument(
        "--merge",
        nargs="+",
        metavar="PART",
        help="combine the partial records of every shard into the verdict record; nothing runs",
    )
    p.set_defaults(command_argv=[])
    add_format(p, forge=True)

    p = sub.add_parser("show-verdict", help="print the verdict noted on REV")
    _add_rev(p)
    add_format(p)


def _add_freeze(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("freeze", help="the freeze ledger: add (CI), list, status")
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)

    a = verbs.add_parser("add", help="reproduce a flake and append a freeze (CI)")
    a.add_argument("--test", required=True, metavar="ID", help="the test id to freeze")
    a.add_argument("--runs", type=int, required=True, metavar="N", help="runs per seed")
    a.add_argument("--seeds", type=int, default=1, metavar="K", help="seeds to try (1)")
    a.add_argument("--seed", type=int, default=0, metavar="S", help="first seed (0)")
    a.add_argument(
        "--fingerprint",
        metavar="F",
        help="the failure's fingerprint (default: the one judge computes, of the exit "
        "code or the test's JUnit failure)",
    )
    a.add_argument(
        "--reason", default="", metavar="TEXT", help="why, for people reading the ledger"
    )
    a.add_argument(
        "--hours",
        type=int,
        metavar="H",
        help="window length (default and maximum: [ledger].max_window_hours)",
    )
    a.add_argument(
        "--timeout", type=float, default=600.0, metavar="S", help="seconds one run may take (600)"
    )
    a.add_argument(
        "--writer",
        metavar="NAME",
        help="the ledger writer recorded (default: git config evidence.writer, else "
        "GIT_EVIDENCE_PUSHER)",
    )
    a.add_argument(
        "--rev",
        default="HEAD",
        metavar="REV",
        help="the revision whose tree is exported and run (HEAD); never the working tree",
    )
    a.add_argument(
        "--ci",
        action="store_true",
        help="this runs in CI: allowed where the writer is not known locally",
    )
    a.add_argument(
        "argv",
        nargs=argparse.REMAINDER,
        metavar="-- CMD…",
        help="the test command, run with EVIDENCE_SEED and PYTHONHASHSEED set",
    )

    lst = verbs.add_parser("list", help="what is frozen, until when, why")
    which = lst.add_mutually_exclusive_group()
    which.add_argument("--active", action="store_true", help="only freezes in force now")
    which.add_argument("--expired", action="store_true", help="only freezes past their window")
    add_format(lst)

    st = verbs.add_parser("status", help="exit 0 only when a matching freeze is in force")
    st.add_argument(
        "test_id", metavar="TEST_ID", help="the test id, as freeze add --test recorded it"
    )
    st.add_argument(
        "--fingerprint", metavar="F", help="only a freeze of this failure fingerprint counts"
    )
    add_format(st)


def _add_labels(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``labels`` and ``quota``."""
    p = sub.add_parser("labels", help="the sealed test labels: check them, or start a file")
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)
    c = verbs.add_parser(
        "check", help="collected tests without a row, rows without a test, duplicates"
    )
    c.add_argument("--rev", metavar="REV", help="check the file at REV (default: the working tree)")
    add_format(c)
    i = verbs.add_parser("init", help="write a starting file (every test invariant) to review")
    for parser in (c, i):
        parser.add_argument(
            "--python",
            metavar="PATH",
            help="the project's Python, which runs its pytest (default: the first `python` "
            "on PATH that imports pytest)",
        )
        parser.add_argument(
            "pytest_args",
            nargs=argparse.REMAINDER,
            metavar="-- PYTEST_ARGS",
            help="arguments for the pytest collection (after --)",
        )

    p = sub.add_parser("quota", help="the retry quota: status, spend (CI), grant")
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)
    st = verbs.add_parser("status", help="retries remaining, and the latest spends")
    st.add_argument("--rev", metavar="REV", help="read the file at REV (default: working tree)")
    add_format(st)
    sp = verbs.add_parser("spend", help="append the retries a run used, from its JUnit XML (CI)")
    sp.add_argument("--from-junit", required=True, metavar="FILE", help="the run's JUnit XML")
    sp.add_argument("--candidate", default="HEAD", metavar="REV", help="the commit tested")
    sp.add_argument(
        "--writer",
        metavar="NAME",
        help="the ledger writer recorded (default: git config evidence.writer, else "
        "GIT_EVIDENCE_PUSHER)",
    )
    sp.add_argument("--ci", action="store_true", help="the writer is not known locally")
    gr = verbs.add_parser(
        "grant", help="append retries for nondeterministic tests (evidence writer)"
    )
    gr.add_argument("amount", type=int, metavar="N", help="how many retries to grant")
    gr.add_argument("--reason", required=True, help="why, for people reading the file")
    gr.add_argument(
        "--writer",
        metavar="NAME",
        help="the evidence writer recorded (default: git config evidence.writer, else "
        "GIT_EVIDENCE_PUSHER)",
    )
