"""One pytest session under the evidence plugin: the collection check, the
retry protocol, the tally of what happened (where the labels and quota come from is
``sources.py``; how a test's attempts become its reports, ``story.py``; what it adds
to reports and JUnit, ``reporting.py``).

The protocol follows pytest-rerunfailures' (``pytest_runtest_protocol``, one report per
attempt, ``execution_count`` on the item), with two differences: whether to run again is
decided after the call and before the teardown, so an attempt that will be retried keeps
its module and session fixtures; and the reports of a test are logged once its attempts
are over, so each carries the test's final story (label, attempts, what happened).
"""

from __future__ import annotations

import os
import random
import shutil
import sys
import tempfile
from collections.abc import Sequence
from typing import Any

import pytest
from _pytest.runner import call_and_report

from git_evidence.plugin.reporting import (
    CHANGED,
    FLAKY,
    FLICKER,
    QUOTA,
    RERUN,
    RETRIED_FAILED,
    Hits,
    Status,
    append_line,
    junit,
    junit_child,
)
from git_evidence.plugin.retries import Retried, retry_log_line
from git_evidence.plugin.sources import RetryBudget, Sources, read_sources
from git_evidence.plugin.story import Story, Teller
from git_evidence.policy.labels import (
    INVARIANT,
    KINDS,
    NONDETERMINISTIC,
    kind_for,
)

MAX_LISTED = 50
OURS = (RERUN, CHANGED)  # the outcomes the plugin gives a report
# what a nondeterministic test's note says of its retries, as the judge counts them
SPENT = {FLAKY: "passed", RETRIED_FAILED: "failed", QUOTA: "quota"}


class EvidenceRun:
    """The plugin's hooks for one session (registered only when the plugin is asked
    for)."""

    def __init__(self, config: pytest.Config, seed: int) -> None:
        self.config = config
        self.seed = seed
        self.strict = bool(config.getoption("evidence_strict"))
        workerinput = getattr(config, "workerinput", None)
        shared = workerinput.get("git_evidence") if workerinput else None
        self.sources = Sources.from_worker_input(shared) if shared else read_sources(config)
        self.kinds = self.sources.labels.kinds
        self.junit = bool(getattr(config.option, "xmlpath", None))
        self.budget = RetryBudget(self.sources.remaining, shared["slots"] if shared else None)
        self.teller = Teller(seed, self.junit, self.strict, self.sources, self.budget)
        self.slots: str | None = None  # the controller's slot directory under xdist
        self.worker_input: dict[str, Any] = {}  # what it sends every worker
        self.hits_file = os.environ.get("EVIDENCE_HITS_FILE") or None
        self.retries_file = os.environ.get("EVIDENCE_RETRIES_FILE") or None
        self.hypothesis_seed: tuple[Any, Any] | None = None  # (module, the seed it had)
        self.notable: list[tuple[str, int, str]] = []  # (node id, attempts, note)
        self.retries_used = 0
        self.status: Status | None = None
        # Who tallies what the tests did: this process when it runs them alone; under
        # xdist the controller, from the reports the workers send (never a worker).
        self.tally_here = workerinput is None and getattr(config.option, "dist", "no") == "no"
        if workerinput is None and not self.tally_here:
            config.pluginmanager.register(_Controller(self), "git_evidence_controller")
        option = config.option
        # --setup-show and friends keep pytest's own protocol: there is nothing to retry
        self.own_protocol = not any(
            getattr(option, name, False) for name in ("setupshow", "setuponly", "setupplan")
        )
        # every attempt starts from the same state of `random`, as pytest-randomly does
        random.seed(seed)
        self.random_state = random.getstate()

    # -- start ------------------------------------------------------------------------

    def pytest_report_header(self, config: pytest.Config) -> list[str]:
        labels, src = self.sources.labels, self.sources
        lines = [f"evidence: seed {self.seed}, labels from {labels.source} ({labels.digest})"]
        retries = f"up to {src.retries} retries per nondeterministic test, {src.quota_phrase()}"
        lines.append(f"evidence: {src.base_note + '; ' if src.base_note else ''}{retries}")
        return lines

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller: every worker gets the same seed, labels and quota."""
        if self.slots is None:
            self.slots = tempfile.mkdtemp(prefix="git-evidence-retries-")
            self.worker_input = {
                **self.sources.worker_input(),
                "seed": self.seed,
                "slots": self.slots,
            }
        node.workerinput["git_evidence"] = self.worker_input

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        xml = junit(self.config)
        if xml is not None:
            xml.add_global_property("evidence.seed", self.seed)
            xml.add_global_property("evidence.labels", self.sources.labels.source)
            xml.add_global_property("evidence.labels_digest", self.sources.labels.digest)
            xml.add_global_property("evidence.quota_remaining", self.sources.remaining)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """For ``git evidence judge``'s scorecard: the labels this session enforced and
        the retries it used, one line appended to ``EVIDENCE_RETRIES_FILE`` by the
        process that tallied them (under xdist the controller, once the workers are
        done)."""
        if self.retries_file is None or getattr(self.config, "workerinput", None) is not None:
            return
        tests = [
            Retried(node, NONDETERMINISTIC, attempts, SPENT[note])
            for node, attempts, note in self.notable
            if note in SPENT
        ]
        line = retry_log_line(
            self.sources.labels.digest, self.sources.remaining, self.retries_used, tests
        )
        append_line(self.retries_file, line.decode())

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self.slots is not None:
            shutil.rmtree(self.slots, ignore_errors=True)
        if self.hypothesis_seed is not None:
            core, saved = self.hypothesis_seed
            core.global_force_seed = saved

    # -- collection -------------------------------------------------------------------

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(
        self, session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
    ) -> None:
        """Every collected test needs a row; a marker must agree with it. Anything
        else is one collection error listing them all, and nothing runs."""
        kinds = self.sources.labels.kinds
        missing: list[str] = []
        disagree: list[str] = []
        for item in items:
            kind = kind_for(kinds, item.nodeid)
            if kind is None:
                missing.append(item.nodeid)
                continue
            # keywords hold every marker name of the item and its parents: a dict
            # lookup per node, where get_closest_marker walks generators
            marker = item.get_closest_marker("evidence") if "evidence" in item.keywords else None
            if marker is not None:
                shown = marker.args[0] if marker.args else marker.kwargs.get("kind")
                if shown != kind:
                    disagree.append(f"{item.nodeid}: marked {shown!r}, sealed label {kind!r}")
        self._seed_hypothesis()
        if not missing and not disagree:
            return
        report = pytest.CollectReport(
            self.sources.labels_path, "failed", self._labels_error(missing, disagree), []
        )
        session.ihook.pytest_collectreport(report=report)
        items[:] = []

    def _labels_error(self, missing: Sequence[str], disagree: Sequence[str]) -> str:
        source = self.sources.labels.source
        parts = []
        if missing:
            parts.append(f"{len(missing)} collected test(s) have no row in {source}:")
            parts += [f"  {node}" for node in missing[:MAX_LISTED]]
            if len(missing) > MAX_LISTED:
                parts.append(f"  … and {len(missing) - MAX_LISTED} more")
        if disagree:
            parts.append(f"{len(disagree)} evidence marker(s) disagree with {source}:")
            parts += [f"  {line}" for line in disagree[:MAX_LISTED]]
        parts.append(
            "To fix: an evidence writer adds or corrects the rows (`node id<TAB>"
            f"{'|'.join(KINDS)}`) in a commit of their own (`git evidence labels check` "
            "lists them); a marker only repeats the sealed label"
        )
        return "evidence: " + "\n".join(parts)

    def _seed_hypothesis(self) -> None:
        """Hypothesis draws from ``global_force_seed`` when it is set. Its module is
        imported by the test modules that use it, so this runs after collection (and
        again before each test, for a lazy import)."""
        if self.hypothesis_seed is not None or "hypothesis" not in sys.modules:
            return
        from hypothesis import core

        self.hypothesis_seed = (core, core.global_force_seed)
        core.global_force_seed = self.seed  # type: ignore[assignment]

    # -- running ------------------------------------------------------------------------

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(
        self, item: pytest.Item, nextitem: pytest.Item | None
    ) -> bool | None:
        nodeid = item.nodeid
        label = kind_for(self.kinds, nodeid)
        if label is None or not self.own_protocol:
            return None
        if self.hypothesis_seed is None and "hypothesis" in sys.modules:
            self._seed_hypothesis()
        ihook = item.ihook
        location = item.location
        ihook.pytest_runtest_logstart(nodeid=nodeid, location=location)
        story = Story(label)
        while self._attempt(item, nextitem, story):
            pass
        logged = self.teller.reports(nodeid, story)
        if self.tally_here and (story.note or len(story.attempts) > 1):
            for report in logged:
                self.tally(report)
        for report in logged:
            ihook.pytest_runtest_logreport(report=report)
        if self.hits_file and story.hits is not None:
            append_line(self.hits_file, f"{nodeid} {story.hits}\n")
        ihook.pytest_runtest_logfinish(nodeid=nodeid, location=location)
        return True

    def _attempt(self, item: pytest.Item, nextitem: pytest.Item | None, story: Story) -> bool:
        """One run of setup, call and teardown; True when another attempt follows."""
        number = len(story.attempts) + 1
        item.execution_count = number  # type: ignore[attr-defined]
        request = getattr(item, "_request", None)
        if request is False:  # a re-run: pytest cleared the request after the last one
            item._initrequest()  # type: ignore[attr-defined]
        again = False
        try:
            random.setstate(self.random_state)
            reports = [call_and_report(item, "setup", log=False)]
            if reports[0].passed:
                if self.hits_file and "hypothesis" in sys.modules:
                    with Hits(item) as hits:
                        reports.append(call_and_report(item, "call", log=False))
                    if hits.count is not None:
                        story.hits = hits.count  # the last attempt's count stands
                else:
                    reports.append(call_and_report(item, "call", log=False))
            session = item.session
            if session.shouldfail or session.shouldstop:
                nextitem = None  # the session ends: no retry, and everything is torn down
            elif len(reports) == 2 and reports[1].failed:
                again = self._again(story, reports[1], number)
            if again:
                reports.append(_teardown_keeping_scopes(item, nextitem))
            else:
                reports.append(call_and_report(item, "teardown", log=False, nextitem=nextitem))
            if again and reports[-1].failed:  # a teardown error ends the retries
                again = False
                rest = call_and_report(item, "teardown", log=False, nextitem=nextitem)
                if rest.failed:
                    reports.append(rest)
        finally:
            if request is not None:
                item._request = False  # type: ignore[attr-defined]
                item.funcargs = None  # type: ignore[attr-defined]
        story.attempts.append(reports)
        return again

    def _again(self, story: Story, call: pytest.TestReport, number: int) -> bool:
        if hasattr(call, "wasxfail"):
            return False
        if story.label == INVARIANT:
            return number == 1  # one run to tell a flicker from a failure; never spent
        if story.label != NONDETERMINISTIC or number > self.sources.retries:
            return False
        if self.budget.take():
            return True
        story.note = QUOTA
        return False

    # -- reporting (the controller under xdist) ---------------------------------------

    def tally(self, report: pytest.TestReport) -> None:
        """Count a report before pytest logs it: retries spent, what to list at the
        end, the JUnit children; our outcomes get their own letters."""
        outcome = report.outcome
        if outcome in OURS and self.status is None:
            self.status = Status()
            self.config.pluginmanager.register(self.status, "git_evidence_status")
        if outcome == RERUN:
            if getattr(report, "evidence_label", "") == NONDETERMINISTIC:
                self.retries_used += 1  # an invariant's second run is never spent
            junit_child(self.config, report, getattr(report, "evidence_tag", "rerunFailure"))
        elif outcome == CHANGED:
            junit_child(self.config, report, "skipped")
        note = getattr(report, "evidence_note", "")
        if note and report.when == "teardown":
            self.notable.append((report.nodeid, getattr(report, "evidence_attempts", 1), note))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.notable and not self.retries_used:
            return
        write = terminalreporter.write_line
        terminalreporter.section("git evidence")
        src = self.sources
        if src.granted:
            write(
                f"seed {self.seed}; retries used: {self.retries_used} of {src.remaining} left "
                f"in {src.quota_source}"
            )
        else:
            write(f"seed {self.seed}; retries used: {self.retries_used}; {src.quota_phrase()}")
        refused = (
            "not retried: no retry was ever granted"
            if src.granted == 0
            else "not retried: the retry quota is used up"
        )
        what = {
            FLAKY: "passed on a retry (nondeterministic)",
            RETRIED_FAILED: "failed every retry (nondeterministic)",
            QUOTA: refused,
            FLICKER: "flicker on an invariant (a failure)",
            CHANGED: "changed behaviour (characterization)"
            + (", a failure under --evidence-strict" if self.strict else ""),
        }
        for node, attempts, note in self.notable:
            write(f"{what.get(note, note)}: {node} ({attempts} attempt{'s' * (attempts != 1)})")
        if self.retries_used:
            xml = getattr(self.config.option, "xmlpath", None) or "FILE"
            hint = "" if xml != "FILE" else " (the --junitxml of this run)"
            write(f"CI records what was spent: git evidence quota spend --from-junit {xml}{hint}")


class _Controller:
    """Under xdist, the controller sees the workers' reports here."""

    def __init__(self, run: EvidenceRun) -> None:
        self.run = run

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # nearly every report is an ordinary test's, as pytest made it: nothing to count
        if report.outcome in OURS or "evidence_note" in report.__dict__:
            self.run.tally(report)


def _teardown_keeping_scopes(item: pytest.Item, nextitem: pytest.Item | None) -> pytest.TestReport:
    """The teardown of an attempt that will be retried: only the test's own fixtures
    go. The higher scopes (module, session) are held aside from pytest's setup stack
    while it tears down, then put back, as pytest-rerunfailures does."""
    stack = item.session._setupstate.stack
    held = {node: state for node, state in stack.items() if node is not item}
    for node in held:
        del stack[node]
    try:
        return call_and_report(item, "teardown", log=False, nextitem=nextitem)
    finally:
        left = dict(stack)
        stack.clear()
        stack.update(held)
        stack.update(left)
