"""Gathered facts → the one decide pass (``rules/decide.py``) → a ``Report``: the step
every entry point ends its judgement with, pre-commit's included. Apart from
``pipeline.py`` so that pre-commit, which gathers the staged change without the push's
stream, endpoint, lock or ledger, decides without loading them."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from git_evidence.gate.report import Report
from git_evidence.rules import decide as rules

if TYPE_CHECKING:
    from git_evidence.core.facts import PushFacts
    from git_evidence.policy.identity import Identity
    from git_evidence.policy.schema import Policy


def decide(
    push: PushFacts,
    policy: Policy,
    who: Identity,
    notes: Sequence[str] = (),
    after: Sequence[str] = (),
) -> Report:
    """The one decide pass over gathered facts, as a report (a push's caller pauses the
    cyclic collector around gathering and deciding: ``acyclic``). ``notes``: what the
    caller learnt before deciding (the refs it let through, a missing lock), said before
    the pass's own notes; ``after``: what it says after them (the freezes in force).
    The report is built with them once, never amended afterwards."""
    decided = rules.decide(push, policy, who)
    return Report(
        who,
        policy,
        tuple(decided.decisions),
        notes=(*notes, *decided.notes, *after),
        staged=push.entry == "pre-commit",
    )


@contextlib.contextmanager
def acyclic() -> Iterator[None]:
    """The cyclic collector paused. A judgement allocates acyclic data (tuples, strings,
    dicts and lists of them): the collector would only rescan every live summary again
    and again on a large push (a quarter of a second of 15,000 commits). It resumes
    afterwards."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()
