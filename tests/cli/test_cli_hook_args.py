"""Hooks started as git starts them skip the parser: their namespace must be exactly
the one the parser gives, or a hook would run with other options than documented."""

from __future__ import annotations

import pytest

from git_evidence.cli.arguments import build_parser
from git_evidence.cli.main import hook_args
from git_evidence.cli.names import HOOKS, TABLE

AS_GIT_STARTS_THEM = [
    ["pre-commit"],
    ["pre-receive"],
    ["post-receive"],
    ["pre-push"],
    ["pre-push", "origin"],
    ["pre-push", "origin", "ssh://git@example.com/r.git"],
    ["pre-push", "origin", "/srv/git/r.git"],
    ["guard"],
    ["guard", "--json"],
    ["guard", "--pinned=sha256:aa,sha256:bb"],
    ["guard", "--json", "--pinned=sha256:aa"],
    ["check", "HEAD~1..HEAD"],
    ["check", "main..feature", "HEAD"],
]


def test_every_hook_has_a_fast_namespace() -> None:
    assert {name for name, row in TABLE.items() if row.fast is not None and not row.rest} == HOOKS


@pytest.mark.parametrize("words", AS_GIT_STARTS_THEM, ids=" ".join)
def test_the_fast_namespace_equals_the_parsers(words: list[str]) -> None:
    fast = hook_args(words)
    assert fast is not None
    assert vars(fast) == vars(build_parser().parse_args(words))


@pytest.mark.parametrize(
    "words",
    [
        ["pre-receive", "-q"],
        ["pre-receive", "--format", "json"],
        ["-v", "pre-commit"],
        ["pre-commit", "extra"],
        ["pre-push", "a", "b", "c"],
        ["pre-push", "origin", "--max-findings", "3"],
        ["guard", "--path", "tests/fixtures/a.json"],
        ["guard", "--json", "-v"],
        ["guard", "extra"],
        ["guard", "--pinned", "sha256:aa"],
        ["guard", "--pinned="],
        ["check"],
        ["check", "HEAD", "--base", "main"],
        ["check", "-"],
        [],
    ],
    ids=lambda words: " ".join(words) or "nothing",
)
def test_options_or_extra_words_go_through_the_parser(words: list[str]) -> None:
    assert hook_args(words) is None
