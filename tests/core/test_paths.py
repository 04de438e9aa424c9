"""Folding and classification, including property-based tests."""

from __future__ import annotations

import unicodedata

import pytest
from helpers.examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from git_evidence.core import path_globs
from git_evidence.core.links import resolve_link
from git_evidence.core.path_globs import fold_path, glob_regex
from git_evidence.core.paths import EVIDENCE_CLASSES, Change, Classifier, is_runner_config
from git_evidence.policy.schema import Policy

CLASSIFIER = Policy().classifier()


@pytest.mark.parametrize(
    ("path", "klass"),
    [
        ("src/app.py", "product"),
        ("tests/fixtures/a.json", "fixture"),
        ("tests/fixtures/a/b/c", "fixture"),
        ("tests/fixtures_old/a", "test"),
        ("testdata/x", "fixture"),
        ("deep/dir/view.snap", "oracle"),
        ("src/__snapshots__/x.txt", "oracle"),
        ("tests/freeze.jsonl", "freeze_ledger"),
        ("tests/test_app.py", "test"),
        ("docs/a.md", "neutral"),
        ("pkg/README.md", "neutral"),
        (".gitattributes", "policy"),
        ("src/deep/.gitattributes", "policy"),
        (".gitmodules", "policy"),
        ("sub/.gitmodules", "other"),
        (".git-evidence.toml", "policy"),
        ("Makefile", "other"),
    ],
)
def test_default_classes(path: str, klass: str) -> None:
    assert CLASSIFIER.classify(path).klass == klass


def test_evidence_wins_over_product() -> None:
    assert CLASSIFIER.classify("src/ui/__snapshots__/a.snap").klass == "oracle"


def test_glob_spans_whole_components_only() -> None:
    import re

    pattern = re.compile(glob_regex("tests/fixtures/**"))
    assert pattern.fullmatch("tests/fixtures/a/b")
    assert not pattern.fullmatch("tests/fixtures_old/a")
    assert not re.fullmatch(glob_regex("/.gitmodules"), "x/.gitmodules")


@pytest.mark.parametrize(
    "spelling",
    [
        "Tests/Fixtures/a.json",
        "tests/fix\u200ctures/a.json",
        "tests/fixtures./a.json",
        "tests/fixtures /a.json",
        "TESTS/FIXTURES/A.JSON",
        "tests/\u00adfixtures/a.json",
    ],
)
def test_spellings_fold_to_evidence(spelling: str) -> None:
    assert CLASSIFIER.classify(spelling).klass == "fixture"


def test_non_utf8_path_does_not_crash() -> None:
    path = b"tests/fixtures/caf\xe9.json".decode("utf-8", "surrogateescape")
    assert CLASSIFIER.classify(path).klass == "fixture"


def test_symlink_into_fixtures_is_evidence() -> None:
    link = Change(
        "A",
        "000000",
        "120000",
        "0" * 40,
        "1" * 40,
        "src/data",
        link_target="../tests/fixtures/a.json",
    )
    assert CLASSIFIER.classify_change(link).klass == "fixture"


def test_symlink_leaving_the_repository_is_not_resolved() -> None:
    assert resolve_link("src/a", "../../etc/passwd") is None
    assert resolve_link("src/a", "/etc/passwd") is None
    assert resolve_link("src/a", "../tests") == "tests"


def test_entry_above_an_evidence_root_is_evidence() -> None:
    change = Change("A", "000000", "100644", "0" * 40, "1" * 40, "tests")
    assert CLASSIFIER.classify_change(change).klass in EVIDENCE_CLASSES


# -- properties ---------------------------------------------------------------------

path_text = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\0"),
    min_size=0,
    max_size=30,
)


@given(path_text)
@settings(max_examples=examples(400))
def test_folding_is_idempotent(text: str) -> None:
    assert fold_path(fold_path(text)) == fold_path(text)


ROOTS = ["tests/fixtures", "tests/goldens", "testdata", "tests/properties", "tests/oracles"]
IGNORABLES = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"]


@st.composite
def variant_of_evidence_path(draw: st.DrawFn) -> str:
    root = draw(st.sampled_from(ROOTS))
    leaf = draw(st.text(alphabet="abcdefé_-0123456789", min_size=1, max_size=8))
    out = []
    for ch in f"{root}/{leaf}.json":
        if ch.isalpha() and draw(st.booleans()):
            ch = ch.upper()
        out.append(ch)
        if ch != "/" and draw(st.integers(0, 5)) == 0:
            out.append(draw(st.sampled_from(IGNORABLES)))
    text = "".join(out)
    parts = text.split("/")
    parts = [p + draw(st.sampled_from(["", ".", " ", ". "])) for p in parts]
    text = "/".join(parts)
    return unicodedata.normalize(draw(st.sampled_from(["NFC", "NFD"])), text)


@given(variant_of_evidence_path())
@settings(max_examples=examples(400))
def test_any_case_or_unicode_variant_of_an_evidence_path_is_evidence(path: str) -> None:
    assert CLASSIFIER.classify(path).klass in EVIDENCE_CLASSES


@given(st.text(alphabet="ab. /A\\", max_size=16))
@settings(max_examples=examples(600))
def test_an_ascii_path_folds_as_the_trailing_rule_says_with_or_without_the_shortcut(
    text: str,
) -> None:
    """fold_path skips the trailing-dot rule's regex when no dot or space ends a
    component: the shortcut must never change what it gives."""
    lower = text.replace("\\", "/").lower()
    assert fold_path(text) == path_globs._TRAILING.sub("", lower)


# -- runner configuration: its reason names the file, evidence globs still win ------------


LOADED = "runner configuration (conftest.py: loaded without being named)"


@pytest.mark.parametrize("path", ["conftest.py", "src/pkg/conftest.py", "tests/conftest.py"])
def test_runner_configuration_is_named_by_its_file_name_alone(path: str) -> None:
    found = Policy().classifier().classify(path)
    assert (found.klass, found.glob, found.reason) == ("other", None, LOADED)


def test_a_runner_configuration_name_is_told_from_any_other() -> None:
    assert is_runner_config("tests/conftest.py") and is_runner_config("Src/SiteCustomize.py")
    assert not is_runner_config("src/app.py") and not is_runner_config("tests/test_x.py")


def test_a_test_or_product_glob_does_not_make_runner_configuration_its_own() -> None:
    """`tests/**` is test code and `src/**` product, but what they hold that a runner
    loads unasked is `other`."""
    classifier = Policy().classifier()
    assert classifier.classify("tests/test_app.py").klass == "test"
    assert classifier.classify("tests/conftest.py").klass == "other"
    assert Classifier({"product": ["**"]}).classify("src/conftest.py").reason == LOADED


def test_an_evidence_glob_keeps_runner_configuration_evidence() -> None:
    found = Policy().classifier().classify("tests/fixtures/conftest.py")
    assert found.klass == "fixture" and found.glob is not None and found.reason == ""
