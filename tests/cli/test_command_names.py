"""The commands are listed once (``cli/names.py``): the parser adds exactly those, in
that order, and the entry point runs each from the module its name names."""

from __future__ import annotations

import importlib

import pytest
from helpers.repos import PROJECT

from git_evidence.cli import arguments
from git_evidence.cli.names import COMMANDS, TABLE, module_of
from git_evidence.cli.options import subcommands


def test_the_parser_adds_the_listed_commands_in_their_order() -> None:
    assert [name for name, _, _ in subcommands(arguments.build_parser())] == list(COMMANDS)


def test_each_command_runs_from_the_module_of_its_name_and_every_module_is_a_command() -> None:
    for command in COMMANDS:
        assert callable(importlib.import_module(module_of(command)).run), command
    assert module_of("pre-commit") == "git_evidence.commands.pre_commit"
    modules = {path.stem for path in (PROJECT / "git_evidence" / "commands").glob("*.py")} - {
        "__init__"
    }
    assert modules == {command.replace("-", "_") for command in COMMANDS}


def test_a_name_the_list_lacks_is_no_command() -> None:
    with pytest.raises(KeyError, match="no command 'pre_commit'"):
        module_of("pre_commit")
    # an unknown command gets the whole parser, so its error lists every choice
    assert len(list(subcommands(arguments.build_parser(only="nosuch")))) == len(COMMANDS)


def test_a_parser_that_adds_a_command_the_list_lacks_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(arguments, "COMMANDS", tuple(c for c in COMMANDS if c != "rules"))
    with pytest.raises(RuntimeError, match=r"'rules', which cli/names\.py does not list"):
        arguments.build_parser()
    monkeypatch.setattr(arguments, "COMMANDS", (*COMMANDS, "later"))
    with pytest.raises(RuntimeError, match=r"cli/names\.py lists"):
        arguments.build_parser()


def test_every_hook_has_a_row_with_a_fast_namespace_and_at_most_gits_arguments() -> None:
    hooks = {name for name, row in TABLE.items() if row.hook}
    assert hooks == {"pre-commit", "pre-push", "pre-receive", "post-receive", "guard"}
    for name in hooks:
        row = TABLE[name]
        assert row.fast is not None and not row.rest, name
        assert len(row.positionals) <= 2, name  # git gives pre-push a remote and a URL


def test_the_table_says_which_commands_are_client_hooks_take_ranges_judge_or_watch() -> None:
    assert {n for n, row in TABLE.items() if row.client_hook} == {"pre-commit", "pre-push"}
    assert all(TABLE[n].hook for n, row in TABLE.items() if row.client_hook)
    assert {n for n, row in TABLE.items() if row.rest} == {"check"}
    assert {n for n, row in TABLE.items() if row.watched} == {"check", "verify"}
    judging = {n for n, row in TABLE.items() if row.judging}
    assert judging == {"check", "verify", "pre-commit", "pre-push", "pre-receive", "ci"}
