"""The time budget: a hook that would judge past ``rules.time_budget_s`` stops and
refuses (rule ``time-budget``), never hangs and never allows. Hosts kill slow hooks
(GitHub Enterprise Server after 5 s for all of them together); saying why is better."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from types import FrameType

from git_evidence.errors import EvidenceError


class TimeBudgetExceeded(EvidenceError):
    rule = "time-budget"


class Progress:
    """How far a judgement got, for the message when the budget runs out."""

    def __init__(self) -> None:
        self.stage = "starting"
        self.commits = 0
        self.listed: Callable[[], int] | None = None  # commits listed so far
        self.started = time.monotonic()

    def describe(self) -> str:
        total = f" of {self.listed()} listed" if self.listed is not None else ""
        return f"{self.stage}; {self.commits}{total} commits judged"


PROGRESS = Progress()


def start(seconds: float) -> None:
    """Arm (or re-arm, counting from the hook's start) the budget."""
    remaining = seconds - (time.monotonic() - PROGRESS.started)

    def expire(signum: int, frame: FrameType | None) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        raise TimeBudgetExceeded(
            f"judging stopped at the time budget of {seconds:g} s: {PROGRESS.describe()}",
            fix="nothing was allowed; split the push (fewer commits per push), or raise "
            "[rules].time_budget_s if the host allows it",
        )

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(remaining, 0.001))


def stop() -> None:
    signal.setitimer(signal.ITIMER_REAL, 0)
