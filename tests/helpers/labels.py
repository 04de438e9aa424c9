"""A labels file, good and broken, and why the broken one is refused."""

from __future__ import annotations

LABELS = "tests/evidence-labels.tsv"


GOOD = "# node id<TAB>kind\ntests/test_app.py::test_app\tinvariant\n"


BROKEN = GOOD + "tests/test_app.py::test_net\tflaky\n"  # line 3: an unknown kind


WHY = "unknown kind 'flaky'; expected one of invariant, characterization, nondeterministic"
