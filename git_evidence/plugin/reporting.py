"""What a test run under the evidence plugin reports beyond pytest's own: its
outcomes and notes, the sections it adds to a report, Surefire-style JUnit children,
and the Hypothesis hits it writes."""

from __future__ import annotations

import os
from typing import Any

import pytest

# report.outcome values of our own: an attempt that is run again, and a
# characterization test whose behaviour changed (neither passes nor fails the session)
RERUN, CHANGED = "rerun", "changed"
# what happened to a test, in reports and in JUnit (`<property name="evidence">`)
FLAKY, RETRIED_FAILED, QUOTA, FLICKER = "flaky", "failed-after-retries", "quota", "flicker"


class Status:
    """The progress letters of our outcomes (registered once one appears)."""

    def pytest_report_teststatus(
        self, report: pytest.TestReport
    ) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
        if report.outcome == RERUN:
            return RERUN, "R", ("RERUN", {"yellow": True})
        if report.outcome == CHANGED:
            return CHANGED, "C", ("CHANGED", {"yellow": True})
        return None


def add_section(report: pytest.TestReport, title: str, text: str) -> None:
    longrepr: Any = report.longrepr
    if hasattr(longrepr, "addsection"):
        longrepr.addsection(f"evidence: {title}", text)
    else:
        report.sections.append((f"evidence: {title}", text))


def append_line(path: str, line: str) -> None:
    # one write with O_APPEND: xdist workers append to the same file
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


class Hits:
    """Counts the examples a Hypothesis test runs to an outcome (an ``assume`` that
    rejects is not a hit), through the documented ``.hypothesis.inner_test`` hook;
    ``count`` stays None for a test that is not a Hypothesis test."""

    def __init__(self, item: pytest.Item) -> None:
        self.handle: Any = getattr(getattr(item, "obj", None), "hypothesis", None)
        self.inner: Any = getattr(self.handle, "inner_test", None)
        self.count: int | None = None

    def __enter__(self) -> Hits:
        if self.inner is None:
            return self
        from hypothesis.errors import UnsatisfiedAssumption

        inner = self.inner
        self.count = 0

        def counted(*args: Any, **kwargs: Any) -> Any:
            try:
                result = inner(*args, **kwargs)
            except UnsatisfiedAssumption:
                raise
            except BaseException:
                self.count = (self.count or 0) + 1
                raise
            self.count = (self.count or 0) + 1
            return result

        self.handle.inner_test = counted
        return self

    def __exit__(self, *exc: object) -> None:
        if self.inner is not None:
            self.handle.inner_test = self.inner


def junit(config: pytest.Config) -> Any:
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - pytest without junitxml
        return None
    return config.stash.get(xml_key, None)


def exception_name(longrepr: object) -> str:
    """The exception's type as pytest's traceback names it on its last line."""
    entries = getattr(getattr(longrepr, "reprtraceback", None), "reprentries", None) or []
    location = getattr(entries[-1], "reprfileloc", None) if entries else None
    name = str(getattr(location, "message", "") or "failure")
    return name if name.replace(".", "_").isidentifier() else "failure"


def junit_child(config: pytest.Config, report: pytest.TestReport, tag: str) -> None:
    """Surefire's flaky style: each failed attempt before the last is a
    ``<flakyFailure>`` (the test passed in the end) or ``<rerunFailure>`` (it did not)
    inside the test's one ``<testcase>``; a changed characterization is ``<skipped>``."""
    xml = junit(config)
    if xml is None:
        return
    from xml.etree import ElementTree

    crash = getattr(report.longrepr, "reprcrash", None)
    text = str(report.longrepr)
    message = (crash.message if crash is not None else text).strip().split("\n", 1)[0]
    if tag == "skipped":
        node = ElementTree.Element(tag, type="evidence.changed", message=f"changed: {message}")
        node.text = text
    else:
        node = ElementTree.Element(tag, type=exception_name(report.longrepr), message=message)
        trace = ElementTree.SubElement(node, "stackTrace")
        trace.text = text
        if report.capstdout:
            ElementTree.SubElement(node, "system-out").text = report.capstdout
        if report.capstderr:
            ElementTree.SubElement(node, "system-err").text = report.capstderr
    xml.node_reporter(report).append(node)
