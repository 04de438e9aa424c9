"""How many examples each property test draws. The default run (``python -m pytest``)
draws a fifth of each test's count, enough to exercise every strategy; the full count
runs with ``HYPOTHESIS_PROFILE=full``, as ``.ci/run``'s coverage step and
``bench/mutation.py`` set it. The profile is chosen once, when the tests load, on top
of the one hypothesis chose itself (its ``ci`` profile under CI)."""

from __future__ import annotations

import os

from hypothesis import settings

FULL = "full"
QUICK = "quick"
PROFILE = FULL if os.environ.get("HYPOTHESIS_PROFILE") == FULL else QUICK
SHARE = 5  # the default run draws 1 / SHARE of each count
FLOOR = 20  # ...and never fewer than this

# A test that names no count draws hypothesis's own (100), or its share by default.
_inherited = settings.get_profile(settings.get_current_profile_name())
settings.register_profile(FULL, parent=_inherited, max_examples=100)
settings.register_profile(QUICK, parent=_inherited, max_examples=100 // SHARE)
settings.load_profile(PROFILE)


def examples(full: int) -> int:
    """The examples to draw for a test whose full count is ``full``."""
    if PROFILE == FULL:
        return full
    return min(full, max(full // SHARE, FLOOR))
