"""Command line: ``git evidence <command>`` (also ``git-evidence``,
``python -m git_evidence``). Exit 0 allowed, 1 refused, 2 could not decide."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TextIO

from git_evidence import __version__

# Only argparse and the error types load before a command is chosen: `--help` and the
# non-judging commands do not pay for the judging machinery.
from git_evidence.errors import EXIT_ERROR, PREFIX, EvidenceError

if TYPE_CHECKING:
    from git_evidence.report import Report

HOOKS = frozenset({"pre-commit", "pre-push", "pre-receive", "post-receive"})
JUDGING = frozenset({"check", "verify", "pre-commit", "pre-push", "pre-receive"})


def _add_format(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: text)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="git evidence",
        description="Refuse commits and pushes that mix product edits with evidence "
        "edits (fixtures, goldens, oracles, the freeze ledger, the policy). "
        "Exit 0: allowed; 1: refused (hold or reject); 2: could not decide.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    p = sub.add_parser("check", help="judge a range as the server would (default: upstream..HEAD)")
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
    _add_format(p)

    p = sub.add_parser("classify", help="print each path's class and the glob that matched")
    p.add_argument("paths", nargs="+", metavar="PATH")
    p.add_argument("--base", metavar="REF", help="read the policy at REF")
    _add_format(p)

    p = sub.add_parser("policy", help="print the policy in force, its source and digest")
    p.add_argument("--base", metavar="REF", help="read the policy at REF")
    p.add_argument(
        "--server",
        action="store_true",
        help="resolve it as pre-receive does in this (bare) repository",
    )
    _add_format(p)

    p = sub.add_parser("pre-commit", help="hook: judge the staged change against HEAD")
    _add_format(p)

    p = sub.add_parser(
        "pre-push",
        help="hook: judge what a push sends (stdin as git "
        "gives it; or PRE_COMMIT_* variables under pre-commit)",
    )
    p.add_argument("remote", nargs="?", help="remote name (from git)")
    p.add_argument("url", nargs="?", help="remote URL (from git)")
    _add_format(p)

    p = sub.add_parser(
        "pre-receive",
        help="server hook: judge every ref update of a push (stdin: <old> <new> <ref>)",
    )
    _add_format(p)

    p = sub.add_parser(
        "post-receive", help="server hook: pin the lock on new tips of protected branches"
    )

    p = sub.add_parser("lock", help="pin REV's fixture tree as a lock note (trusted side)")
    p.add_argument("rev", nargs="?", default="HEAD", metavar="REV")

    p = sub.add_parser("show-lock", help="print the lock in force at REV and where it lives")
    p.add_argument("rev", nargs="?", default="HEAD", metavar="REV")
    _add_format(p)

    p = sub.add_parser(
        "verify",
        help="compare REV (or the working tree) with the lock in force, and check its range",
    )
    p.add_argument("rev", nargs="?", default="HEAD", metavar="REV")
    p.add_argument(
        "--worktree",
        action="store_true",
        help="compare the files on disk (untracked and ignored ones too)",
    )
    p.add_argument("--base", metavar="REF", help="the protected base for the range check")
    _add_format(p)

    p = sub.add_parser(
        "install",
        help="write the hooks into this repository (client) or a bare repository (--server)",
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

    p = sub.add_parser(
        "doctor",
        help="report what is installed in this (bare) repository, "
        "the policy in force, the pusher identity, and what is missing",
    )
    p.add_argument("--repo", metavar="DIR", help="repository (default: current)")

    _add_freeze(sub)
    _add_labels(sub)
    sub.add_parser("rules", help="list every rule id with its fix")
    return parser


COMMAND_MODULES = {
    "check": "check",
    "classify": "classify",
    "policy": "policy",
    "pre-commit": "pre_commit",
    "pre-push": "pre_push",
    "pre-receive": "pre_receive",
    "install": "install",
    "post-receive": "post_receive",
    "lock": "lock",
    "show-lock": "show_lock",
    "verify": "verify",
    "freeze": "freeze",
    "doctor": "doctor",
    "labels": "labels",
    "quota": "quota",
}


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
        help="the failure's fingerprint (default: a digest of the failing run's output)",
    )
    a.add_argument("--reason", default="", help="why, for people reading the ledger")
    a.add_argument(
        "--hours", type=int, help="window length (default and maximum: [ledger].max_window_hours)"
    )
    a.add_argument(
        "--timeout", type=float, default=600.0, metavar="S", help="seconds one run may take (600)"
    )
    a.add_argument(
        "--writer",
        help="the ledger writer recorded (default: the pusher variables, as the server reads them)",
    )
    a.add_argument(
        "--ci",
        action="store_true",
        help="this runs in CI: allowed where the writer is not known locally",
    )
    a.add_argument("argv", nargs=argparse.REMAINDER, metavar="-- CMD…")

    lst = verbs.add_parser("list", help="what is frozen, until when, why")
    which = lst.add_mutually_exclusive_group()
    which.add_argument("--active", action="store_true")
    which.add_argument("--expired", action="store_true")
    _add_format(lst)

    st = verbs.add_parser("status", help="exit 0 only when a matching freeze is in force")
    st.add_argument("test_id", metavar="TEST_ID")
    st.add_argument("--fingerprint")


def _add_labels(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``labels`` and ``quota`` (SPEC §12)."""
    p = sub.add_parser("labels", help="the sealed test labels: check them, or start a file")
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)
    c = verbs.add_parser(
        "check", help="collected tests without a row, rows without a test, duplicates"
    )
    c.add_argument("--rev", metavar="REV", help="check the file at REV (default: the working tree)")
    _add_format(c)
    i = verbs.add_parser("init", help="write a starting file (every test invariant) to review")
    for parser in (c, i):
        parser.add_argument("pytest_args", nargs=argparse.REMAINDER, metavar="-- PYTEST_ARGS")

    p = sub.add_parser("quota", help="the retry quota: status, spend (CI), grant")
    verbs = p.add_subparsers(dest="verb", metavar="VERB", required=True)
    st = verbs.add_parser("status", help="retries remaining, and the latest spends")
    st.add_argument("--rev", metavar="REV", help="read the file at REV (default: working tree)")
    _add_format(st)
    sp = verbs.add_parser("spend", help="append the retries a run used, from its JUnit XML (CI)")
    sp.add_argument("--from-junit", required=True, metavar="FILE", help="the run's JUnit XML")
    sp.add_argument("--candidate", default="HEAD", metavar="REV", help="the commit tested")
    sp.add_argument("--writer", help="the ledger writer recorded (default: the pusher variables)")
    sp.add_argument("--ci", action="store_true", help="the writer is not known locally")
    gr = verbs.add_parser(
        "grant", help="append retries for nondeterministic tests (evidence writer)"
    )
    gr.add_argument("amount", type=int, metavar="N")
    gr.add_argument("--reason", required=True, help="why, for people reading the file")
    gr.add_argument("--writer", help="the evidence writer recorded")


def _command(name: str) -> Callable[[argparse.Namespace], Report | int]:
    # Each command imports only what it needs, so hooks start fast.
    if name not in COMMAND_MODULES:
        return _rules
    module = importlib.import_module(f"git_evidence.commands.{COMMAND_MODULES[name]}")
    run: Callable[[argparse.Namespace], Report | int] = module.run
    return run


def _rules(args: argparse.Namespace) -> int:
    from git_evidence.rules import RULES

    for rule, (decision, hint) in RULES.items():
        print(f"{rule} ({decision or 'per [rules]'}): {hint}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    fmt = getattr(args, "format", "text")
    hook = args.command in HOOKS
    out = sys.stderr if hook else sys.stdout
    try:
        result = _command(args.command)(args)
        if isinstance(result, int):
            return result
        _emit(result, fmt, out)
        return result.exit_code
    except EvidenceError as exc:
        from git_evidence.rules import RULES

        fix = exc.fix or RULES.get(exc.rule, ("", ""))[1]
        if args.command in JUDGING:
            from git_evidence.identity import Identity
            from git_evidence.report import Report
            from git_evidence.rules import error_finding

            report = Report(
                Identity(None, "no pusher read"),
                None,
                error=error_finding(exc.rule, exc.message, fix),
            )
            _emit(report, fmt, sys.stderr if hook or fmt == "text" else out)
        else:
            print(f"{PREFIX}: {exc.rule}: {exc.message}\n  To fix: {fix}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print(f"{PREFIX}: interrupted; nothing was allowed", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # a hook never shows a raw traceback, never allows
        log = _save_trace()
        print(
            f"{PREFIX}: internal error, refusing: {type(exc).__name__}: {exc}\n"
            f"{PREFIX}: full trace in {log}",
            file=sys.stderr,
        )
        return EXIT_ERROR


def _emit(report: Report, fmt: str, stream: TextIO) -> None:
    from git_evidence.report import to_json, to_text

    text = to_json(report) + "\n" if fmt == "json" else to_text(report)
    if fmt == "text" and os.environ.get("GL_ID") and stream is sys.stderr:
        # GitLab shows a hook's message to the pusher only on lines with this prefix.
        text = "".join(f"GL-HOOK-ERR: {line}" for line in text.splitlines(keepends=True))
    stream.write(text)


def _save_trace() -> str:
    import tempfile
    import traceback

    directory = os.path.join(tempfile.gettempdir(), "git-evidence")
    try:
        os.makedirs(directory, exist_ok=True)
        fd, path = tempfile.mkstemp(prefix="crash-", suffix=".log", dir=directory)
        with os.fdopen(fd, "w") as handle:
            handle.write(traceback.format_exc())
        return path
    except OSError:
        return "(could not be written)"


if __name__ == "__main__":
    raise SystemExit(main())
