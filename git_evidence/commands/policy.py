"""``git evidence policy``: the policy in force, where it came from, its digest."""

from __future__ import annotations

import argparse
import json

from git_evidence.context import chosen_policy, server_policy
from git_evidence.git import Git


def run(args: argparse.Namespace) -> int:
    git = Git()
    if args.server and not args.base:
        policy = server_policy(git, git.refs())
    else:
        policy = chosen_policy(git, args.base)
    doc = {"source": policy.source, "digest": policy.digest, **policy.as_dict()}
    if args.format == "json":
        print(json.dumps(doc, indent=1))
        return 0
    print(f"source: {policy.source}\ndigest: {policy.digest}")
    for table, body in policy.as_dict().items():
        print(f"[{table}]")
        for key, value in body.items():
            print(f"{key} = {json.dumps(value)}")
    return 0
