"""The arguments of the commands CI runs (``judge``, ``ci``, ``freeze``, ``labels``,
``quota``): their options, help and descriptions, for ``arguments.py``'s parser. Apart
so that neither list grows past what one reader takes in; loaded only when a command
line is parsed."""

from __future__ import annotations

import argparse

from git_evidence.cli.options import (
    add_draft,
    add_format,
    add_max_findings,
    add_rev,
)


def _shard(text: str) -> tuple[int, int]:
    index, sep, count = text.partition("/")
    if not (sep and index.isdigit() and count.isdigit()) or not 1 <= int(index) <= int(count):
        raise argparse.ArgumentTypeError(f"expected I/N with 1 <= I <= N (2/4), not {text!r}")
    return int(index), int(count)


def add_ci(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "ci",
        help="judge a pull or merge request (or a push) in GitHub Actions or GitLab CI",
        description="Read the request from the CI system (GitHub Actions: the event in "
        "$GITHUB_EVENT_PATH; GitLab CI: the CI_MERGE_REQUEST_* and CI_COMMIT_* variables), "
        "judge base..head as the request's author with the policy of the base (never the "
        "head's), and print the forge's format. With $GITHUB_TOKEN, a pull request is "
        "judged against the base it has now (asked of the REST API) and a private "
        "repository's head is fetched with the token. Exit 0: allowed; 1: refused; 2: "
        "could not decide.",
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
    add_max_findings(p)


def add_judge(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
    add_draft(p)
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
    p.add_argument(
        "--keep",
        action="store_true",
        help="keep the workspace and each run's stdout and stderr (its path on stderr)",
    )
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
    add_rev(p)
    add_format(p)


def add_freeze(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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


def add_labels(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
