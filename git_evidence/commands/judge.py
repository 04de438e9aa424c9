"""``git evidence judge [CANDIDATE] [--patch FILE] …``: classify a candidate's test
results, on a machine the candidate cannot write. The command line becomes one
``judgement.Request``; ``judgement.judge`` runs the judgement and publishes its
``Verdict``; the verdict's record is printed in the format asked for, and its ``exit``
is the command's."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from git_evidence.core.records import canonical_json
from git_evidence.forge import formats, output
from git_evidence.judge.judgement import judge
from git_evidence.judge.request import Request
from git_evidence.judge.text import to_text
from git_evidence.plumbing.git import Git


def run(args: argparse.Namespace) -> int:
    verdict = judge(Git(), request(args))
    _print(verdict.as_json(), args.format)
    return verdict.exit


def request(args: argparse.Namespace) -> Request:
    return Request(
        candidate=args.candidate,
        patch=args.patch,
        base=args.base,
        policy=args.policy,
        properties=tuple(args.property or ()),
        command=tuple(getattr(args, "command_argv", None) or ()),
        repeat=args.repeat,
        seeds=args.seeds,
        seed=tuple(args.seed or ()),
        jobs=args.jobs,
        shard=args.shard,
        merge=tuple(args.merge or ()),
        out=args.out,
        log=args.log,
        note=args.note,
        keep=args.keep,
        verbose=bool(getattr(args, "verbose", False)),
    )


def _print(record: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        sys.stdout.write(canonical_json(record).decode() + "\n")
    elif fmt in formats.FORMATS:
        output.emit_record(record, fmt, sys.stdout)
    else:
        sys.stdout.write(to_text(record))
