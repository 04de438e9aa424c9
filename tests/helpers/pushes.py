"""What a push printed: the remote's lines, whether a rule refused it, the server's
tip."""

from __future__ import annotations

import subprocess

from helpers.repos import Work

AGENT = "agent-bot"


CLASSES = ("product", "fixture", "oracle", "freeze_ledger", "policy", "test", "neutral", "other")


def remote(result: subprocess.CompletedProcess[str]) -> str:
    """What the hook said, as git relayed it: `remote: ` prefixes and git's padding
    removed, wrapped lines joined."""
    lines: list[str] = []
    for line in result.stderr.splitlines():
        if not line.startswith("remote: "):
            continue
        text = line[len("remote: ") :].rstrip()
        if (
            text.startswith("    ")
            and lines
            and not text.lstrip().startswith(tuple(f"{k}:" for k in CLASSES))
        ):
            lines[-1] += " " + text.strip()
        else:
            lines.append(text)
    return "\n".join(lines)


def refused(result: subprocess.CompletedProcess[str], rule: str) -> bool:
    return result.returncode != 0 and f"\n{rule}: " in "\n" + remote(result)


def server_tip(work: Work, ref: str = "refs/heads/main") -> str:
    return work.git("ls-remote", "origin", ref).stdout.split("\t")[0]
