"""``git evidence pre-receive``: the server hook. Reads every ``<old> <new> <ref>``
line first, then judges each update against the server's current refs."""

from __future__ import annotations

import argparse
import os
import sys

from git_evidence import gate
from git_evidence.context import server_policy, server_view
from git_evidence.git import Git
from git_evidence.identity import server_pusher
from git_evidence.ranges import parse_receive_lines
from git_evidence.report import Report


def run(args: argparse.Namespace) -> Report:
    updates = parse_receive_lines(sys.stdin.buffer.read())
    git = Git()
    refs = git.refs()
    policy = server_policy(git, refs)
    return gate.judge(git, updates, policy, server_view(refs, policy), server_pusher(os.environ))
