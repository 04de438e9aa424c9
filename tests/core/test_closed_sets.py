"""The closed sets the type checker holds the code to are the sets the code runs with:
each ``Literal`` names exactly the values its constants and tables use, so a value the
checker accepts is one the gate knows, and none it knows is missing."""

from __future__ import annotations

import importlib
import pkgutil
from typing import get_args

import git_evidence
from git_evidence.core import errors, paths
from git_evidence.core.errors import ErrorRule, EvidenceError
from git_evidence.core.paths import PathClass
from git_evidence.policy import schema
from git_evidence.policy.schema import Decision
from git_evidence.rules import table
from git_evidence.rules.table import RuleId


def test_path_classes_are_the_classes_the_classifier_gives() -> None:
    classes = get_args(PathClass)
    assert len(classes) == len(set(classes))
    assert set(classes) == {*paths.PRECEDENCE, paths.OTHER}
    constants = (
        paths.PRODUCT,
        paths.FIXTURE,
        paths.ORACLE,
        paths.LEDGER,
        paths.POLICY,
        paths.TEST,
        paths.NEUTRAL,
        paths.OTHER,
    )
    assert sorted(constants) == sorted(classes)
    assert {paths.FIXTURE, paths.ORACLE, paths.LEDGER, paths.POLICY} == paths.EVIDENCE_CLASSES


def test_every_class_but_other_has_globs_in_the_policy() -> None:
    assert set(schema.DEFAULT_PATHS) == set(get_args(PathClass)) - {paths.OTHER}
    assert schema.TABLE_KEYS["paths"] == set(schema.DEFAULT_PATHS)


def test_decisions_are_the_policys_and_the_rules_in_order_of_severity() -> None:
    assert get_args(Decision) == schema.DECISIONS == (table.ALLOW, table.HOLD, table.REJECT)
    assert sorted(table.SEVERITY, key=table.SEVERITY.__getitem__) == list(schema.DECISIONS)


def test_rule_ids_are_the_rules_table() -> None:
    ids = get_args(RuleId)
    assert len(ids) == len(set(ids))
    assert set(ids) == set(table.RULES)
    assert set(table.NO_BASE) <= set(ids)
    assert set(table.STAGED_HINTS) <= set(ids)


def test_every_error_names_a_rule_of_its_closed_set() -> None:
    # every module, so that each error type defined anywhere is a subclass found below
    for module in pkgutil.walk_packages(git_evidence.__path__, "git_evidence."):
        if not module.name.endswith("__main__"):  # importing it runs the command line
            importlib.import_module(module.name)
    found = {EvidenceError}
    todo = [EvidenceError]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.add(sub)
            todo.append(sub)
    assert {error.rule for error in found} <= set(get_args(ErrorRule))
    assert set(get_args(ErrorRule)) >= errors.ERROR_RULES
    assert errors.INTERNAL_ERROR in get_args(ErrorRule)
