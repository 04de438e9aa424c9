"""``git evidence policy``: the policy in force, where it came from (the ref and the
commit it was read from), its digest, and every key as TOML one can paste back
(``--policy FILE`` shows a draft instead). Warns when HEAD's policy file is not the one
in force: a committed policy rules nothing until it reaches the base branch."""

from __future__ import annotations

import argparse
import json
import sys

from git_evidence.core.errors import PREFIX
from git_evidence.plumbing.context import policy_in_waiting
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.policy.render import policy_toml

# What the TOML below the header is for: a file, or a draft to try.
TOML_INTRO = "# as TOML: paste it into .git-evidence.toml, or try it with --policy FILE"


def run(args: argparse.Namespace) -> int:
    git = Git()
    found = resolve(git, draft=args.policy, at=args.base, server=bool(args.server))
    policy, ref, rev = found
    waiting = None if args.server or args.base else policy_in_waiting(git, found)
    read_from = None if ref is None else {"ref": ref, "commit": rev}
    if args.format == "json":
        doc = {
            "source": policy.source,
            "read_from": read_from,
            "digest": policy.digest,
            "warnings": [waiting] if waiting else [],
            **policy.as_dict(),
        }
        print(json.dumps(doc, indent=1))
        return 0
    if waiting:
        print(f"{PREFIX}: {waiting}", file=sys.stderr)
    print(f"source: {policy.source}")
    if ref is not None:
        print(f"read from: {ref} at {rev[:12] if rev else 'no commit'}")
    print(f"digest: {policy.digest}")
    print(f"\n{TOML_INTRO}")
    print(policy_toml(policy), end="")
    return 0
