"""One test's story under the plugin: its attempts, and the reports that tell them
once they are over (the failed calls of earlier attempts as reruns, a flicker, a
refused retry, changed behaviour), each carrying the test's final properties for
JUnit. Apart from ``session.py``, which runs the attempts (the retry protocol) and
tallies what the reports say."""

from __future__ import annotations

import pytest

from git_evidence.plugin.reporting import (
    CHANGED,
    FLAKY,
    FLICKER,
    QUOTA,
    RERUN,
    RETRIED_FAILED,
    add_section,
)
from git_evidence.plugin.sources import RetryBudget, Sources
from git_evidence.policy.labels import CHARACTERIZATION, INVARIANT, NONDETERMINISTIC


class Story:
    """The attempts of one test and what they add up to."""

    __slots__ = ("attempts", "hits", "label", "note")

    def __init__(self, label: str) -> None:
        self.label = label
        self.attempts: list[list[pytest.TestReport]] = []
        self.note = ""  # FLAKY, RETRIED_FAILED, QUOTA, FLICKER, CHANGED or ""
        self.hits: int | None = None


class Teller:
    """How one session tells a story: its seed, whether JUnit XML is written, whether
    changed behaviour fails (``--evidence-strict``), and the quota that refused a
    retry."""

    __slots__ = ("budget", "junit", "seed", "sources", "strict")

    def __init__(
        self, seed: int, junit: bool, strict: bool, sources: Sources, budget: RetryBudget
    ) -> None:
        self.seed, self.junit, self.strict = seed, junit, strict
        self.sources, self.budget = sources, budget

    def reports(self, nodeid: str, story: Story) -> list[pytest.TestReport]:
        """The reports to log: the failed calls of earlier attempts (as reruns, or for
        a flicker the first failure), then the last attempt's. The teardown carries the
        test's properties (JUnit reads them there) when JUnit XML is written or
        something happened; an ordinary test's reports stay as pytest made them (under
        xdist every attribute is one more thing to send to the controller)."""
        attempts = story.attempts
        final = attempts[-1]
        call = final[1] if final[1].when == "call" else None
        logged = final
        notable = (
            len(attempts) > 1
            or bool(story.note)
            or (story.label == CHARACTERIZATION and call is not None and call.failed)
        )
        if notable:
            logged = self._story(story, call)
        elif not self.junit and story.hits is None:
            return logged
        properties = [
            *final[-1].user_properties,
            ("test_id", nodeid),
            ("seed", self.seed),
            ("label", story.label),
            ("attempts", len(attempts)),
        ]
        if story.note:
            properties.append(("evidence", story.note))
        if story.hits is not None:
            properties.append(("hits", story.hits))
        for report in logged:
            if report.when == "teardown":
                report.user_properties = properties
                if notable:
                    report.evidence_note = story.note  # type: ignore[attr-defined]
                    report.evidence_attempts = len(attempts)  # type: ignore[attr-defined]
        return logged

    def _story(self, story: Story, call: pytest.TestReport | None) -> list[pytest.TestReport]:
        """Retries, a flicker, a refused retry or changed behaviour: which reports
        tell it, each with a section saying what happened."""
        attempts, final = story.attempts, story.attempts[-1]
        passed_in_end = call is not None and call.passed
        failures = [r for a in attempts[:-1] for r in a if r.when == "call" and r.failed]
        logged: list[pytest.TestReport]
        if story.label == INVARIANT and failures and passed_in_end:
            story.note = FLICKER
            first = attempts[0]
            add_section(
                first[1],
                "flicker on an invariant",
                f"failed, then passed on attempt 2 with the same seed ({self.seed}): the test "
                "is nondeterministic but labelled invariant, so the failure stands. Fix the "
                "test, or have an evidence writer relabel it.",
            )
            logged = [first[0], first[1], *final[2:]]
        else:
            if failures and story.label == NONDETERMINISTIC and story.note != QUOTA:
                story.note = FLAKY if passed_in_end else RETRIED_FAILED
            tag = "flakyFailure" if story.note == FLAKY else "rerunFailure"
            for report in failures:
                report.outcome = RERUN  # type: ignore[assignment]
                report.evidence_tag = tag  # type: ignore[attr-defined]
                report.evidence_label = story.label  # type: ignore[attr-defined]
            logged = [*failures, *final]
            if story.note == QUOTA and call is not None:
                if self.sources.granted == 0:
                    why = f"no retry was ever granted ({self.sources.quota_source})"
                else:
                    why = (
                        f"no retry is left in the quota ({self.budget.remaining} at the start "
                        f"of this session, {self.sources.quota_source})"
                    )
                add_section(
                    call,
                    "retry refused",
                    f"{why}, so the failure stands. An evidence writer grants retries "
                    "(`git evidence quota grant N --reason TEXT`).",
                )
            if story.label == CHARACTERIZATION and call is not None and call.failed:
                story.note = CHANGED
                add_section(
                    call,
                    "changed behaviour",
                    "this characterization test records what the product does; it now does "
                    "something else. A person reviews the change"
                    + ("; --evidence-strict makes it a failure." if self.strict else "."),
                )
                if not self.strict and not hasattr(call, "wasxfail"):
                    call.outcome = CHANGED  # type: ignore[assignment]
        return logged
