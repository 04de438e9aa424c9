"""The commands of ``git evidence``, by name, once: ``COMMANDS``, in the order
``--help`` lists them. The parser (arguments.py) adds these and no other, in this order;
the entry point (main.py) runs each from the module of its name, ``-`` spelled ``_``
(``pre-commit`` is ``commands/pre_commit.py``).

A leaf of its own so that both read it and neither imports the other: a hook that git
starts knows its command without loading the parser, or argparse."""

from __future__ import annotations

COMMANDS = (
    "init",
    "check",
    "classify",
    "policy",
    "pre-commit",
    "pre-push",
    "pre-receive",
    "post-receive",
    "lock",
    "show-lock",
    "verify",
    "install",
    "guard",
    "doctor",
    "split",
    "freeze",
    "judge",
    "show-verdict",
    "ci",
    "labels",
    "quota",
    "rules",
)


def module_of(command: str) -> str:
    """The module that runs ``command`` (one of ``COMMANDS``): its ``run(args)``."""
    if command not in COMMANDS:
        raise KeyError(f"no command {command!r}")
    return "git_evidence.commands." + command.replace("-", "_")
