"""The commands of ``git evidence``, one row each (``TABLE``, in the order ``--help``
lists them): its name, and what the entry point needs to know of it before it runs —
whether git or an agent starts it (a hook: no parser when its words allow, its report
on stderr), whether it is a hook of a person's clone (silent when it allows), whether
it judges for someone (an error names whom), whether it shows progress on a terminal,
and the namespace it gets without the parser. The parser (arguments.py) adds these
commands and no other, in this order; the entry point (main.py) reads every row and
runs each command from the module of its name, ``-`` spelled ``_`` (``pre-commit`` is
``commands/pre_commit.py``).

A leaf of its own so that both read it and neither imports the other: a hook that git
starts knows its command without loading the parser, or argparse. Its rows are plain
slotted objects: a ``NamedTuple`` class would cost every hook's start ~0.2 ms."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

_NONE: Mapping[str, str] = {}


class Command:
    """One command's row.

    ``fast``: the parser's defaults, for a start without the parser when the words
    allow; None: always parsed. A hook may be given at most ``positionals`` words (git's
    own arguments), the ``flags`` (flag → the attribute it sets true) and the
    ``values`` as ``--NAME=VALUE`` (option → the attribute it sets). ``rest``: the
    attribute that takes every word instead, when no word is an option (``check``
    given only ranges)."""

    __slots__ = (
        "client_hook",
        "fast",
        "flags",
        "hook",
        "judging",
        "name",
        "positionals",
        "rest",
        "values",
        "watched",
    )

    def __init__(
        self,
        name: str,
        *,
        hook: bool = False,
        client_hook: bool = False,
        judging: bool = False,
        watched: bool = False,
        fast: Mapping[str, object] | None = None,
        positionals: tuple[str, ...] = (),
        flags: Mapping[str, str] = _NONE,
        values: Mapping[str, str] = _NONE,
        rest: str = "",
    ) -> None:
        self.name = name
        self.hook = hook or client_hook
        self.client_hook = client_hook
        self.judging = judging
        self.watched = watched
        self.fast = fast
        self.positionals = positionals
        self.flags = flags
        self.values = values
        self.rest = rest


# The fast namespaces are the parser's defaults; tests/cli/test_cli_hook_args.py holds
# them equal. Importing argparse and building the parser cost ~10 ms of every push.
TABLE: dict[str, Command] = {
    row.name: row
    for row in (
        Command("init"),
        Command(
            "check",
            judging=True,
            watched=True,
            rest="ranges",  # what a reviewer or a script runs on every commit
            fast={
                "base": None,
                "as_name": None,
                "policy": None,
                "format": "text",
                "max_findings": None,
            },
        ),
        Command("classify"),
        Command("policy"),
        Command("pre-commit", client_hook=True, judging=True, fast={"format": "text"}),
        Command(
            "pre-push",
            client_hook=True,
            judging=True,
            positionals=("remote", "url"),
            fast={"format": "text", "max_findings": None},
        ),
        Command(
            "pre-receive", hook=True, judging=True, fast={"format": "text", "max_findings": None}
        ),
        Command("post-receive", hook=True, fast={"format": "text", "text_only": True}),
        Command("lock"),
        Command("show-lock"),
        Command("verify", judging=True, watched=True),
        Command("install"),
        Command(
            "guard",
            hook=True,  # started by an agent, whose settings may add `--json`, `--pinned=`
            flags={"--json": "json"},
            values={"--pinned": "pinned"},
            fast={"format": "text", "json": False, "paths": None, "repo": None, "pinned": None},
        ),
        Command("doctor"),
        Command("split"),
        Command("freeze"),
        Command("judge"),
        Command("show-verdict"),
        Command("ci", judging=True),
        Command("labels"),
        Command("quota"),
        Command("rules"),
    )
}
COMMANDS = tuple(TABLE)
HOOKS = frozenset(name for name, row in TABLE.items() if row.hook)


def module_of(command: str) -> str:
    """The module that runs ``command`` (one of ``COMMANDS``): its ``run(args)``."""
    if command not in TABLE:
        raise KeyError(f"no command {command!r}")
    return "git_evidence.commands." + command.replace("-", "_")
