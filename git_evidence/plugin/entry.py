"""The pytest plugin: sealed test labels, seeded runs, quota-bound retries.

Registered as the ``pytest11`` entry point ``git_evidence`` and opt-in: it does something
only with ``--evidence`` or ``-p git_evidence``. Loaded but not asked for, it registers
a marker and nothing else, so a session without it pays for one ``pytest_configure``.

When active it reads the labels from the base revision (or a sealed file, or the file
``git evidence judge`` writes), seeds ``random`` and Hypothesis, refuses to run a
collection with an unlabelled test, retries only ``nondeterministic`` tests (within
``[labels].retries`` and the retry quota), fails an ``invariant`` that fails and then
passes, and reports a failing ``characterization`` test as changed behaviour.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

NAMES = ("git_evidence", "git_evidence.plugin.entry")
SEED_KEY = "git_evidence/seed"
# Plugins that retry on their own: two retry policies in one session cannot both hold.
RETRY_OWNERS = {"rerunfailures": "pytest-rerunfailures", "flaky": "flaky"}


def seed_type(text: str) -> int | str:
    if text == "last":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number or 'last'") from None


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evidence", "git evidence: sealed test labels and retries")
    group.addoption(
        "--evidence",
        action="store_true",
        dest="evidence",
        help="enforce the sealed test labels (also: -p git_evidence)",
    )
    group.addoption(
        "--evidence-seed",
        dest="evidence_seed",
        type=seed_type,
        metavar="N|last",
        help="seed random and Hypothesis with N (default: EVIDENCE_SEED, else a new "
        "seed); 'last' replays the previous run's seed",
    )
    group.addoption(
        "--evidence-labels",
        dest="evidence_labels",
        metavar="PATH",
        help="read the labels from PATH instead of the base revision "
        "(git evidence judge sets EVIDENCE_LABELS_FILE)",
    )
    group.addoption(
        "--evidence-quota",
        dest="evidence_quota",
        metavar="PATH",
        help="read the retry quota from PATH instead of the base revision "
        "(git evidence judge sets EVIDENCE_QUOTA_FILE)",
    )
    group.addoption(
        "--evidence-strict",
        action="store_true",
        dest="evidence_strict",
        help="a failing characterization test fails the session",
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "evidence(kind): the test's label (invariant, characterization, nondeterministic); "
        "the sealed labels file wins and a marker that disagrees fails",
    )
    if not wanted(config):
        return
    for name, dist in RETRY_OWNERS.items():
        if config.pluginmanager.hasplugin(name):
            raise pytest.UsageError(
                f"evidence: {dist} is active, but under --evidence git evidence owns "
                f"retries (nondeterministic tests only, within the retry quota): "
                f"run with -p no:{name}"
            )
    with _without_assertion_rewriting(config):
        from git_evidence.plugin.session import EvidenceRun

        run = EvidenceRun(config, choose_seed(config))
    config.pluginmanager.register(run, "git_evidence_run")


@contextmanager
def _without_assertion_rewriting(config: pytest.Config) -> Iterator[None]:
    """Import the plugin's modules as Python does, from their ordinary bytecode.

    pytest marks every package of an installed plugin for assertion rewriting, so it
    would load ``git_evidence`` (some twenty modules, the controller's git and policy
    code among them) by parsing and compiling the source again in every process of
    every session whenever its own cache cannot be written (``PYTHONDONTWRITEBYTECODE``,
    a read-only site-packages): a constant cost paid once more by each xdist worker.
    The package holds no test assertions to rewrite, so pytest's import hook steps
    aside while the run is set up (the labels read, the modules it needs loaded)."""
    hook: object = config.pluginmanager.rewrite_hook
    index = next((n for n, finder in enumerate(sys.meta_path) if finder is hook), None)
    if index is None:  # assertion rewriting is off (--assert=plain)
        yield
        return
    finder = sys.meta_path.pop(index)
    try:
        yield
    finally:
        sys.meta_path.insert(index, finder)


def wanted(config: pytest.Config) -> bool:
    """``--evidence``, or ``-p git_evidence`` (on the command line, in ``addopts`` or
    ``PYTEST_PLUGINS``): loaded through the entry point, the plugin is always
    registered, so asking for it by name is what switches it on."""
    if config.getoption("evidence", False):
        return True
    asked = list(config.getoption("plugins", None) or [])
    asked += os.environ.get("PYTEST_PLUGINS", "").split(",")
    return any(name.strip() in NAMES for name in asked)


def choose_seed(config: pytest.Config) -> int:
    """The run's seed: from the controller under xdist, else ``--evidence-seed``
    (``last``: the cache), else ``EVIDENCE_SEED``, else a new one. The option and the
    variable must agree when both are given."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and "git_evidence" in workerinput:
        seed: int = workerinput["git_evidence"]["seed"]
        return seed
    option = config.getoption("evidence_seed")
    env = os.environ.get("EVIDENCE_SEED", "").strip()
    cache = getattr(config, "cache", None)
    if option == "last":
        if cache is None:
            raise pytest.UsageError("evidence: --evidence-seed last needs the cacheprovider plugin")
        last = cache.get(SEED_KEY, None)
        if not isinstance(last, int):
            raise pytest.UsageError(
                "evidence: --evidence-seed last: no earlier run recorded a seed"
            )
        option = last
    if env:
        try:
            from_env = int(env)
        except ValueError:
            raise pytest.UsageError(
                f"evidence: EVIDENCE_SEED={env!r} is not a whole number"
            ) from None
        if option is not None and option != from_env:
            raise pytest.UsageError(
                f"evidence: --evidence-seed {option} and EVIDENCE_SEED={from_env} disagree"
            )
        option = from_env
    seed = option if isinstance(option, int) else random.Random().getrandbits(32)
    if cache is not None:
        cache.set(SEED_KEY, seed)
    return seed


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """Under ``git evidence judge`` (``EVIDENCE_ORIGINS_FILE``), where the workspace's
    packages (``EVIDENCE_PACKAGES``) were imported from in this process: the judge
    refuses to decide when any came from outside the workspace (an editable install of
    another checkout, site-packages). Recorded whether or not the plugin is asked for."""
    target = os.environ.get("EVIDENCE_ORIGINS_FILE")
    names = {n for n in os.environ.get("EVIDENCE_PACKAGES", "").split(",") if n}
    if not target or not names:
        return
    import json

    modules = {}
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] not in names or module is None:
            continue
        where = getattr(module, "__file__", None)
        if where is None:  # a namespace package: where its first portion lies
            where = next(iter(getattr(module, "__path__", None) or ()), None)
        if isinstance(where, str):
            modules[name] = os.path.realpath(where)
    line = json.dumps({"pid": os.getpid(), "modules": modules}, sort_keys=True) + "\n"
    try:
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError:
        return
    with os.fdopen(fd, "a", encoding="utf-8") as handle:
        handle.write(line)
