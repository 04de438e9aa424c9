"""Runner configuration (files an interpreter or test runner loads without being named)
is class `other` wherever it stands, whatever the product, test or neutral globs say;
evidence globs still win."""

from __future__ import annotations

import pytest

from git_evidence.core.paths import OTHER, Classifier, is_runner_config
from git_evidence.policy.schema import Policy


@pytest.mark.parametrize(
    "path",
    [
        "src/sitecustomize.py",
        "src/usercustomize.py",
        "src/evil.pth",
        "src/pkg/conftest.py",
        "conftest.py",
        "tests/conftest.py",
        "pytest.ini",
        "tox.ini",
        "setup.cfg",
        "noxfile.py",
        "pyproject.toml",
        "src/pkg/pyproject.toml",
        ".coveragerc",
        "docs/conftest.py",
        "Src/SiteCustomize.py",
        "src/a\nb/conftest.py",
    ],
)
def test_runner_configuration_is_other_whatever_the_globs_say(path: str) -> None:
    found = Policy().classifier().classify(path)
    assert found.klass == OTHER, found
    assert "runner configuration" in found.reason
    assert is_runner_config(path)


def test_a_product_glob_over_everything_does_not_make_sitecustomize_product() -> None:
    classifier = Classifier({"product": ["**"]})
    assert classifier.classify("src/sitecustomize.py").klass == OTHER
    assert classifier.classify("src/app.py").klass == "product"


def test_a_fixture_glob_still_wins_over_runner_configuration() -> None:
    classifier = Policy().classifier()
    assert classifier.classify("tests/fixtures/conftest.py").klass == "fixture"


@pytest.mark.parametrize(
    "path", ["src/conftest_helpers.py", "src/pth.py", "src/tox.ini.txt", "src/app.py"]
)
def test_names_that_only_resemble_runner_configuration_keep_their_class(path: str) -> None:
    assert Policy().classifier().classify(path).klass == "product"
    assert not is_runner_config(path)
