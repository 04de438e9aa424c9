"""One pytest session under the evidence plugin: where its labels and quota come from,
the collection check, the retry protocol, and what it reports (SPEC §12).

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
from dataclasses import dataclass
from typing import Any

import pytest
from _pytest.runner import call_and_report

from git_evidence import labels as labels_mod
from git_evidence import quota as quota_mod
from git_evidence.errors import EvidenceError
from git_evidence.labels import CHARACTERIZATION, INVARIANT, KINDS, NONDETERMINISTIC, Labels

DEFAULT_RETRIES = 2
MAX_LISTED = 50
# report.outcome values of our own: an attempt that is run again, and a
# characterization test whose behaviour changed (neither passes nor fails the session)
RERUN, CHANGED = "rerun", "changed"
# what happened to a test, in reports and in JUnit (`<property name="evidence">`)
FLAKY, RETRIED_FAILED, QUOTA, FLICKER = "flaky", "failed-after-retries", "quota", "flicker"


@dataclass
class Sources:
    """What the run enforces and where each part came from."""

    labels: Labels
    labels_path: str  # shown as the node id of a labels error
    remaining: int  # retries the quota has left
    quota_source: str
    retries: int  # per nondeterministic test
    base_note: str = ""

    def worker_input(self) -> dict[str, Any]:
        return {
            "kinds": dict(self.labels.kinds),
            "labels_source": self.labels.source,
            "labels_digest": self.labels.digest,
            "labels_path": self.labels_path,
            "remaining": self.remaining,
            "quota_source": self.quota_source,
            "retries": self.retries,
        }

    @classmethod
    def from_worker_input(cls, data: dict[str, Any]) -> Sources:
        labels = Labels(data["kinds"], data["labels_source"], data["labels_digest"])
        return cls(
            labels,
            data["labels_path"],
            data["remaining"],
            data["quota_source"],
            data["retries"],
        )


def read_sources(config: pytest.Config) -> Sources:
    """Labels and quota: files named by the option or by ``git evidence judge``'s
    variables, else the repository (a sealed labels file, else the base revision: the
    merge-base of HEAD with ``rules.base``) — never the working tree."""
    labels_file = _one_path(config, "evidence_labels", "EVIDENCE_LABELS_FILE")
    quota_file = _one_path(config, "evidence_quota", "EVIDENCE_QUOTA_FILE")
    try:
        if labels_file is not None:
            return _from_files(labels_file, quota_file)
        return _from_repository(str(config.rootpath), quota_file)
    except EvidenceError as exc:
        fix = f"\n  To fix: {exc.fix}" if exc.fix else ""
        raise pytest.UsageError(f"evidence: {exc.message}{fix}") from None


def _one_path(config: pytest.Config, option: str, variable: str) -> str | None:
    given = config.getoption(option)
    env = os.environ.get(variable) or None
    if given and env and os.path.abspath(given) != os.path.abspath(env):
        flag = "--" + option.replace("_", "-")
        raise pytest.UsageError(f"evidence: {flag} {given} and {variable}={env} disagree")
    return given or env


def _read(path: str, what: str) -> bytes:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError as exc:
        raise pytest.UsageError(
            f"evidence: cannot read the {what} {path}: {exc.strerror}"
        ) from None


def _from_files(labels_file: str, quota_file: str | None) -> Sources:
    source = f"file:{labels_file}"
    labels = labels_mod.parse_labels(_read(labels_file, "labels file"), source)
    remaining, quota_source = _quota(
        _read(quota_file, "retry quota") if quota_file else None,
        f"file:{quota_file}" if quota_file else "no quota file",
    )
    retries = os.environ.get("EVIDENCE_RETRIES", str(DEFAULT_RETRIES))
    if not retries.isdigit() or not 0 <= int(retries) <= 10:
        raise pytest.UsageError(f"evidence: EVIDENCE_RETRIES={retries!r} is not 0 to 10")
    return Sources(labels, labels_file, remaining, quota_source, int(retries))


def _from_repository(root: str, quota_file: str | None) -> Sources:
    from git_evidence.context import client_policy, local_base, open_repo, sealed_labels
    from git_evidence.errors import UsageError
    from git_evidence.git import CatFile

    try:
        git = open_repo(root)
    except UsageError:
        raise EvidenceError(
            f"{root} is not in a git repository: there is no base to read the labels from",
            fix="run pytest in the repository, or give the labels with --evidence-labels PATH "
            "(git evidence judge sets EVIDENCE_LABELS_FILE)",
        ) from None
    refs = git.refs()
    policy = client_policy(git, None, refs)
    base, how = local_base(git, policy, refs)
    blobs: dict[str, bytes | None] = {policy.labels_path: None, policy.quota_path: None}
    if base is not None:
        with CatFile(git) as cat:  # both files through one process
            for path in blobs:
                hit = cat.get(f"{base}:{path}")
                blobs[path] = hit[2] if hit is not None and hit[1] == "blob" else None
    data, source = sealed_labels(git) or (blobs[policy.labels_path], f"base:{policy.labels_path}")
    if data is None:
        where = f"at {base[:12]} ({how})" if base else f"to read ({how})"
        raise EvidenceError(
            f"no labels file {policy.labels_path} {where}",
            fix="write one with `git evidence labels init`, have a person review it, and "
            "commit it alone (an evidence writer pushes it)",
        )
    labels = labels_mod.parse_labels(data, source)
    quota_data: bytes | None
    if quota_file:
        quota_data, quota_source = _read(quota_file, "retry quota"), f"file:{quota_file}"
    else:
        quota_data, quota_source = blobs[policy.quota_path], f"base:{policy.quota_path}"
    remaining, quota_source = _quota(quota_data, quota_source)
    note = f"base {base[:12]} ({how})" if base else ""
    return Sources(labels, policy.labels_path, remaining, quota_source, policy.retries, note)


def _quota(data: bytes | None, source: str) -> tuple[int, str]:
    if data is None:
        return 0, f"{source} (none: no retries)" if source.startswith("base:") else source
    entries, problems = quota_mod.parse_quota(data)
    if problems:
        first = problems[0]
        raise pytest.UsageError(f"evidence: {source}:{first.line}: {first.message}")
    return max(0, quota_mod.remaining(entries)), source


class Budget:
    """Retries the session may still use. Under xdist the workers share it through a
    directory of numbered slots: creating a slot file with O_EXCL is atomic, so two
    workers never take the same retry."""

    def __init__(self, remaining: int, slots: str | None = None) -> None:
        self.remaining = remaining
        self.slots = slots
        self.used = 0

    def take(self) -> bool:
        if self.slots is None:
            if not quota_mod.retry_allowed(self.remaining, self.used + 1):
                return False
            self.used += 1
            return True
        for number in range(self.remaining):
            try:
                fd = os.open(os.path.join(self.slots, str(number)), os.O_CREAT | os.O_EXCL)
            except FileExistsError:
                continue
            os.close(fd)
            self.used += 1
            return True
        return False


class Story:
    """The attempts of one test and what they add up to."""

    __slots__ = ("attempts", "hits", "label", "note")

    def __init__(self, label: str) -> None:
        self.label = label
        self.attempts: list[list[pytest.TestReport]] = []
        self.note = ""  # FLAKY, RETRIED_FAILED, QUOTA, FLICKER, CHANGED or ""
        self.hits: int | None = None


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
        self.budget = Budget(self.sources.remaining, shared["slots"] if shared else None)
        self.slots: str | None = None  # the controller's slot directory under xdist
        self.hits_file = os.environ.get("EVIDENCE_HITS_FILE") or None
        self.hypothesis_seed: tuple[Any, Any] | None = None  # (module, the seed it had)
        self.notable: list[tuple[str, int, str]] = []  # (node id, attempts, note)
        self.retries_used = 0
        self.status: _Status | None = None
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
        quota = f"quota {src.remaining} left ({src.quota_source})"
        retries = f"up to {src.retries} retries per nondeterministic test, {quota}"
        lines.append(f"evidence: {src.base_note + '; ' if src.base_note else ''}{retries}")
        return lines

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """xdist controller: every worker gets the same seed, labels and quota."""
        if self.slots is None:
            self.slots = tempfile.mkdtemp(prefix="git-evidence-retries-")
        node.workerinput["git_evidence"] = {
            **self.sources.worker_input(),
            "seed": self.seed,
            "slots": self.slots,
        }

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        xml = _junit(self.config)
        if xml is not None:
            xml.add_global_property("evidence.seed", self.seed)
            xml.add_global_property("evidence.labels", self.sources.labels.source)
            xml.add_global_property("evidence.labels_digest", self.sources.labels.digest)
            xml.add_global_property("evidence.quota_remaining", self.sources.remaining)

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
            kind = kinds.get(item.nodeid)
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
        label = self.kinds.get(nodeid)
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
        logged = self._reports(nodeid, story)
        if self.tally_here and (story.note or len(story.attempts) > 1):
            for report in logged:
                self.tally(report)
        for report in logged:
            ihook.pytest_runtest_logreport(report=report)
        if self.hits_file and story.hits is not None:
            _append(self.hits_file, f"{nodeid} {story.hits}\n")
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
                    with _Hits(item, story):
                        reports.append(call_and_report(item, "call", log=False))
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

    # -- what the attempts add up to --------------------------------------------------

    def _reports(self, nodeid: str, story: Story) -> list[pytest.TestReport]:
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
            _add_section(
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
                _add_section(
                    call,
                    "retry refused",
                    f"no retry is left in the quota ({self.budget.remaining} at the start of "
                    f"this session, {self.sources.quota_source}), so the failure stands. "
                    "An evidence writer grants more (`git evidence quota grant`).",
                )
            if story.label == CHARACTERIZATION and call is not None and call.failed:
                story.note = CHANGED
                _add_section(
                    call,
                    "changed behaviour",
                    "this characterization test records what the product does; it now does "
                    "something else. A person reviews the change"
                    + ("; --evidence-strict makes it a failure." if self.strict else "."),
                )
                if not self.strict and not hasattr(call, "wasxfail"):
                    call.outcome = CHANGED  # type: ignore[assignment]
        return logged

    # -- reporting (the controller under xdist) ---------------------------------------

    def tally(self, report: pytest.TestReport) -> None:
        """Count a report before pytest logs it: retries spent, what to list at the
        end, the JUnit children; our outcomes get their own letters."""
        outcome = report.outcome
        if outcome in (RERUN, CHANGED) and self.status is None:
            self.status = _Status()
            self.config.pluginmanager.register(self.status, "git_evidence_status")
        if outcome == RERUN:
            if getattr(report, "evidence_label", "") == NONDETERMINISTIC:
                self.retries_used += 1  # an invariant's second run is never spent
            _junit_child(self.config, report, getattr(report, "evidence_tag", "rerunFailure"))
        elif outcome == CHANGED:
            _junit_child(self.config, report, "skipped")
        note = getattr(report, "evidence_note", "")
        if note and report.when == "teardown":
            self.notable.append((report.nodeid, getattr(report, "evidence_attempts", 1), note))

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.notable and not self.retries_used:
            return
        write = terminalreporter.write_line
        terminalreporter.section("git evidence")
        src = self.sources
        write(
            f"seed {self.seed}; retries used: {self.retries_used} of {src.remaining} left "
            f"in {src.quota_source}"
        )
        what = {
            FLAKY: "passed on a retry (nondeterministic)",
            RETRIED_FAILED: "failed every retry (nondeterministic)",
            QUOTA: "not retried: the retry quota is used up",
            FLICKER: "flicker on an invariant (a failure)",
            CHANGED: "changed behaviour (characterization)"
            + (", a failure under --evidence-strict" if self.strict else ""),
        }
        for node, attempts, note in self.notable:
            write(f"{what.get(note, note)}: {node} ({attempts} attempt{'s' * (attempts != 1)})")
        if self.retries_used:
            write("CI records what was spent: git evidence quota spend --from-junit FILE")


class _Controller:
    """Under xdist, the controller sees the workers' reports here."""

    def __init__(self, run: EvidenceRun) -> None:
        self.run = run

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.run.tally(report)


class _Status:
    """The progress letters of our outcomes (registered once one appears)."""

    def pytest_report_teststatus(
        self, report: pytest.TestReport
    ) -> tuple[str, str, tuple[str, dict[str, bool]]] | None:
        if report.outcome == RERUN:
            return RERUN, "R", ("RERUN", {"yellow": True})
        if report.outcome == CHANGED:
            return CHANGED, "C", ("CHANGED", {"yellow": True})
        return None


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


def _add_section(report: pytest.TestReport, title: str, text: str) -> None:
    longrepr: Any = report.longrepr
    if hasattr(longrepr, "addsection"):
        longrepr.addsection(f"evidence: {title}", text)
    else:
        report.sections.append((f"evidence: {title}", text))


def _append(path: str, line: str) -> None:
    # one write with O_APPEND: xdist workers append to the same file
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


class _Hits:
    """Counts the examples a Hypothesis test ran to an outcome (an ``assume`` that
    rejects is not a hit), through the documented ``.hypothesis.inner_test`` hook."""

    def __init__(self, item: pytest.Item, story: Story) -> None:
        self.handle: Any = getattr(getattr(item, "obj", None), "hypothesis", None)
        self.story = story
        self.inner: Any = getattr(self.handle, "inner_test", None)
        self.counts = [0]

    def __enter__(self) -> None:
        if self.inner is None:
            return
        from hypothesis.errors import UnsatisfiedAssumption

        inner, counts = self.inner, [0]
        self.counts = counts

        def counted(*args: Any, **kwargs: Any) -> Any:
            try:
                result = inner(*args, **kwargs)
            except UnsatisfiedAssumption:
                raise
            except BaseException:
                counts[0] += 1
                raise
            counts[0] += 1
            return result

        self.handle.inner_test = counted

    def __exit__(self, *exc: object) -> None:
        if self.inner is not None:
            self.handle.inner_test = self.inner
            self.story.hits = self.counts[0]  # the last attempt's count stands


def _junit(config: pytest.Config) -> Any:
    try:
        from _pytest.junitxml import xml_key
    except ImportError:  # pragma: no cover - pytest without junitxml
        return None
    return config.stash.get(xml_key, None)


def _exception_name(longrepr: object) -> str:
    """The exception's type as pytest's traceback names it on its last line."""
    entries = getattr(getattr(longrepr, "reprtraceback", None), "reprentries", None) or []
    location = getattr(entries[-1], "reprfileloc", None) if entries else None
    name = str(getattr(location, "message", "") or "failure")
    return name if name.replace(".", "_").isidentifier() else "failure"


def _junit_child(config: pytest.Config, report: pytest.TestReport, tag: str) -> None:
    """Surefire's flaky style: each failed attempt before the last is a
    ``<flakyFailure>`` (the test passed in the end) or ``<rerunFailure>`` (it did not)
    inside the test's one ``<testcase>``; a changed characterization is ``<skipped>``."""
    xml = _junit(config)
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
        node = ElementTree.Element(tag, type=_exception_name(report.longrepr), message=message)
        trace = ElementTree.SubElement(node, "stackTrace")
        trace.text = text
        if report.capstdout:
            ElementTree.SubElement(node, "system-out").text = report.capstdout
        if report.capstderr:
            ElementTree.SubElement(node, "system-err").text = report.capstderr
    xml.node_reporter(report).append(node)
