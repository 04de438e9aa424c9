"""The time budget: a hook that would run past ``rules.time_budget_s`` stops and
refuses (rule ``time-budget``), never hangs and never allows. Hosts kill slow hooks
(GitHub Enterprise Server after 5 s for all of them together); saying why is better.

The budget counts from the start of the hook's process and bounds the whole run,
rendering and writing the report included: the alarm goes off a small margin before
the budget is spent, so that the refusal is written and the process gone by then."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from types import FrameType

from git_evidence.core.errors import EvidenceError

# Kept back from the budget for writing the refusal and leaving (seconds; at most a
# tenth of a small budget).
MARGIN_S = 0.1


class TimeBudgetExceeded(EvidenceError):
    rule = "time-budget"


def process_start() -> float:
    """``time.monotonic()`` at the start of this process: Linux records it in
    /proc/self/stat (field 22, in clock ticks since boot, as CLOCK_BOOTTIME counts);
    elsewhere, now (this module is imported as the command line starts)."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as handle:
            stat = handle.read()
        # Fields after the command name (which may hold spaces): state is field 3.
        ticks = int(stat.rsplit(b")", 1)[1].split()[19])
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if 0 <= age < 60 else now


class Progress:
    """How far a judgement got, for the message when the budget runs out."""

    def __init__(self) -> None:
        self.restart()

    def restart(self) -> None:
        """A command begins: nothing judged yet (the clock counts from the process's
        start, as git started it)."""
        self.stage = "starting"
        self.commits = 0
        self.listed: Callable[[], int] | None = None  # commits of the ranges listed so far
        self.pusher = ""  # who pushed, as the report names them
        self.started = process_start()

    def describe(self) -> str:
        total = f" of the range's {self.listed():,}" if self.listed is not None else ""
        who = f"; pushed by {self.pusher}" if self.pusher else ""
        return f"{self.stage}; {self.commits:,}{total} commits judged{who}"


PROGRESS = Progress()


def start(seconds: float) -> None:
    """Arm (or re-arm, counting from the process's start) the budget."""
    margin = min(MARGIN_S, seconds / 10)
    remaining = seconds - margin - (time.monotonic() - PROGRESS.started)

    def expire(signum: int, frame: FrameType | None) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0)
        elapsed = time.monotonic() - PROGRESS.started
        raise TimeBudgetExceeded(
            f"judging stopped at the time budget of {seconds:g} s ({elapsed:.2f} s after "
            f"the hook started): {PROGRESS.describe()}",
            fix="nothing was allowed; split the push (fewer commits per push), or raise "
            "[rules].time_budget_s if the host allows it",
        )

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(remaining, 0.001))


def stop() -> None:
    """Disarm the budget (nothing happens when it was never armed)."""
    signal.setitimer(signal.ITIMER_REAL, 0)
