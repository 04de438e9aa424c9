"""How far long work got, on one line of a terminal's stderr.

Nothing is shown when stderr is not a terminal (a hook's stderr goes to git, a CI
log is a file: both want results, not carriage returns), and nothing in the first
second, so quick commands never flicker. The line is erased when the work ends, so
what the command prints next starts on a clean line."""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

DELAY_S = 1.0  # work shorter than this shows nothing
INTERVAL_S = 0.1  # at most ten redraws a second
ERASE = "\r\033[K"  # back to column 0, clear to the end of the line
WIDTH = 79


class Progress:
    """Call it with what is happening now (``progress("seed 3 run 2/10")``), or
    ``count(done, total)``; ``close()`` (or the ``with`` block's end) erases it."""

    def __init__(
        self,
        label: str,
        *,
        stream: TextIO | None = None,
        delay: float = DELAY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.label = label
        self.stream = sys.stderr if stream is None else stream
        self.delay = delay
        self.clock = clock
        self.started = clock()
        self.enabled = _is_terminal(self.stream)
        self.shown = False
        self._last = float("-inf")
        self._lock = threading.Lock()

    def __call__(self, text: str) -> None:
        if not self.enabled:
            return
        with self._lock:
            now = self.clock()
            if now - self.started < self.delay or now - self._last < INTERVAL_S:
                return
            self._last = now
            text = text.strip()
            line = f"{self.label}: {text}" if self.label else text
            self.stream.write(ERASE + line[:WIDTH])
            self.stream.flush()
            self.shown = True

    def count(self, done: int, total: int) -> None:
        self(f"{done}/{total}")

    def clear(self) -> None:
        """Erase the line, before printing something that must stay."""
        with self._lock:
            if self.shown:
                self.stream.write(ERASE)
                self.stream.flush()
                self.shown = False

    def close(self) -> None:
        self.clear()
        self.enabled = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@contextmanager
def watching(
    label: str,
    describe: Callable[[], str],
    *,
    stream: TextIO | None = None,
    delay: float = DELAY_S,
) -> Iterator[Progress]:
    """Show ``describe()`` every tick while the block runs, for work that reports how
    far it got in a shared place (``time_budget.PROGRESS``) rather than by calling back.
    The ticking thread starts only on a terminal."""
    progress = Progress(label, stream=stream, delay=delay)
    stop = threading.Event()
    ticker: threading.Thread | None = None
    if progress.enabled:

        def tick() -> None:
            while not stop.wait(INTERVAL_S):
                try:
                    text = describe()
                except Exception:  # read mid-update; the next tick reads it again
                    continue
                progress(text)

        ticker = threading.Thread(target=tick, name="git-evidence-progress", daemon=True)
        ticker.start()
    try:
        yield progress
    finally:
        stop.set()
        if ticker is not None:
            ticker.join()
        progress.close()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream
        return False
