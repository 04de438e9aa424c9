"""Globs, folding, roots and classes, table by table (core/globs.py, core/path_globs.py,
core/paths.py): a glob's components and refs, folded paths, canonical globs and their
problems, the roots above and inside a glob, each path's class, and the rows the
mutation run (bench/mutation.py) once found unpinned in core/paths.py. No git runs
here."""

from __future__ import annotations

import re

import pytest
from helpers.repos import POLICY
from helpers.rule_facts import BASE_POLICY

from git_evidence.core import globs, path_globs, paths
from git_evidence.core.paths import Change
from git_evidence.policy.parsing import parse_policy
from git_evidence.policy.schema import Policy

A, B = "1" * 40, "2" * 40


def policy(extra: str = "") -> Policy:
    return parse_policy((extra + POLICY).encode(), "base:.git-evidence.toml")


# -- globs -----------------------------------------------------------------------------------------

COMPONENT_TABLE = [
    # (glob component, name, matches)
    ("*.json", "a.json", True),
    ("*.json", ".json", True),
    ("*.json", "a/b.json", False),
    ("a*****b", "a/b", False),
    ("a*****b", "axxb", True),
    ("?", "a", True),
    ("?", "/", False),
    ("?", "ab", False),
    ("[ab]", "b", True),
    ("[ab]", "c", False),
    ("[!ab]", "c", True),
    ("[!ab]", "a", False),
    ("[^ab]", "c", True),
    ("[!a]", "/", False),
    ("[]a]", "]", True),
    ("[]]", "]", True),
    ("[!]a]", "b", True),
    ("[!a]", "!", True),
    ("[\u00a7]a]", "\u00a7a]", True),
    ("[a-cx]", "x", True),
    ("[ab]", "x", False),
    ("[!]a]", "]", False),
    ("[a-c]", "b", True),
    ("[a-c]", "-", False),
    ("[a-]", "-", True),
    ("[", "[", True),
    ("a[b", "a[b", True),
    ("x.y", "xzy", False),
    ("*", "new\nline", True),
    ("*", "", True),
]


@pytest.mark.parametrize(("glob", "name", "matches"), COMPONENT_TABLE)
def test_component_table(glob: str, name: str, matches: bool) -> None:
    assert bool(re.fullmatch(globs.component_regex(glob), name)) is matches


def test_character_classes_are_refused() -> None:
    with pytest.raises(ValueError, match=r"\[:alpha:\] are not supported"):
        globs.component_regex("[[:alpha:]]")


COMPONENTS_TABLE = [
    # (glob, path, matches): `**` spans whole components
    ("a/**", "a/b/c", True),
    ("a/**", "a", False),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("a/**/b", "a/xb", False),
    ("**/b", "b", True),
    ("**/b", "x/b", True),
    ("a/*", "a/b", True),
    ("a/*", "a/b/c", False),
    ("tests/*.json", "tests/sub/x.json", False),
    ("tests/*.json", "tests/x.json", True),
]


@pytest.mark.parametrize(("glob", "path", "matches"), COMPONENTS_TABLE)
def test_components_table(glob: str, path: str, matches: bool) -> None:
    assert bool(re.fullmatch(globs.components_regex(glob.split("/")), path)) is matches


REF_GLOB_TABLE = [
    ("refs/heads/release/*", "refs/heads/release/1", True),
    ("refs/heads/release/*", "refs/heads/release/1/x", False),
    ("refs/heads/release/*", "refs/heads/release", False),
    ("refs/heads/**", "refs/heads/a/b", True),
    ("refs/heads/main", "refs/heads/main/x", False),
]


@pytest.mark.parametrize(("glob", "ref", "matches"), REF_GLOB_TABLE)
def test_ref_glob_table(glob: str, ref: str, matches: bool) -> None:
    assert bool(re.fullmatch(globs.ref_glob_regex(glob), ref)) is matches


def test_wildcards_are_star_question_and_bracket() -> None:
    assert [globs.has_wildcard(t) for t in ("a*", "a?", "a[", "a]", "a.b", "")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]


# -- paths: folding, globs, roots, classes --------------------------------------------------------

FOLD_TABLE = [
    ("Tests/Fixtures", "tests/fixtures"),
    ("a\\b", "a/b"),
    ("dir./x", "dir/x"),
    ("dir ./x", "dir/x"),
    ("x. ", "x"),
    ("a.b", "a.b"),
    (".hidden", ".hidden"),
    ("fix\u200ctures", "fixtures"),
    ("STRASSE", "strasse"),
    ("Stra\u00dfe", "strasse"),
    ("re\u0301sultats", "r\u00e9sultats"),
    ("\u212a", "k"),  # the Kelvin sign folds to k
]


@pytest.mark.parametrize(("path", "folded"), FOLD_TABLE)
def test_fold_table(path: str, folded: str) -> None:
    assert path_globs.fold_path(path) == folded


CANONICAL_TABLE = [
    ("./a//b", "a/b"),
    ("/a/./b", "/a/b"),
    ("a/b/", "a/b/"),
    ("!./x/**", "!x/**"),
    ("/", "/"),
    ("./", ""),
]


@pytest.mark.parametrize(("glob", "canonical"), CANONICAL_TABLE)
def test_canonical_table(glob: str, canonical: str) -> None:
    assert path_globs.canonical_glob(glob) == canonical


GLOB_PROBLEM_TABLE = [
    ("src/**", False, None),
    ("!src/x", True, None),
    ("!src/x", False, "negation (`!`) is not supported here"),
    ("", False, "an empty glob matches nothing"),
    ("/ /", False, "an empty glob matches nothing"),
    ("a/../b", False, "a glob may not contain `..`"),
    ("a\\b", False, "backslashes are not supported in globs"),
    ("a/\u200b/b", False, "a component folds to nothing, `.` or `..`"),
    ("a/ ./b", False, "a component folds to nothing, `.` or `..`"),
    ("[Z-a]", False, "not a valid glob once folded"),
    ("[[:alpha:]]", False, "not a valid glob once folded"),
]


@pytest.mark.parametrize(("glob", "negation", "problem"), GLOB_PROBLEM_TABLE)
def test_glob_problem_table(glob: str, negation: bool, problem: str | None) -> None:
    got = path_globs.glob_problem(glob, negation=negation)
    if problem is None:
        assert got is None
    else:
        assert got is not None and got.startswith(problem)


GLOB_TABLE = [
    # (policy glob, path, matches)
    ("*.snap", "deep/dir/x.snap", True),
    ("*.snap", "x.snap", True),
    ("/.gitmodules", ".gitmodules", True),
    ("/.gitmodules", "sub/.gitmodules", False),
    ("tests/fixtures/**", "tests/fixtures/a", True),
    ("tests/fixtures/**", "tests/fixtures", False),
    ("tests/fixtures", "tests/fixtures/a/b", True),
    ("tests/fixtures", "tests/fixtures_old", False),
    ("fixtures/", "a/fixtures/b", True),
    ("tests/*.json", "tests/sub/x.json", False),
    ("tests/*.json", "tests/x.json", True),
    ("Tests/*.JSON", "tests/x.json", True),
]


@pytest.mark.parametrize(("glob", "path", "matches"), GLOB_TABLE)
def test_glob_table(glob: str, path: str, matches: bool) -> None:
    assert bool(re.fullmatch(path_globs.glob_regex(glob), path)) is matches


ROOT_TABLE = [
    ("tests/fixtures/**", [("tests", "above"), ("tests/fixtures", "at")]),
    (
        "crates/*/resources/**",
        [("crates", "above"), ("crates/x", "above"), ("crates/x/resources", "at")],
    ),
    ("**/__snapshots__/**", [("a/b/__snapshots__", "at"), ("__snapshots__", "at")]),
    ("src/**/testdata/**", [("src", "above"), ("src/a/testdata", "at")]),
    ("tests/freeze.jsonl", [("tests", "above")]),
]


@pytest.mark.parametrize(("glob", "expected"), ROOT_TABLE)
def test_root_table(glob: str, expected: list[tuple[str, str]]) -> None:
    patterns = path_globs.root_patterns(glob)
    for path, where in expected:
        hits = [p.reason for p in patterns if re.fullmatch(p.regex, path)]
        assert hits and hits[0].startswith(where), (path, hits)
    assert not any(re.fullmatch(p.regex, "src/app.py") for p in patterns)


CLASSIFY_TABLE = [
    # (extra policy, path, class)
    ("", "src/app.py", "product"),
    ("", "Makefile", "other"),
    ("", "tests/fixtures/a.json", "fixture"),
    ("", "tests/test_app.py", "test"),
    ("", "tests/freeze.jsonl", "freeze_ledger"),
    ("", "docs/a.md", "neutral"),
    ("", ".github/workflows/ci.yml", "other"),
    ('[paths]\nfixture = ["tests/*.json"]\n', "tests/sub/x.json", "test"),
    ('[paths]\nfixture = ["tests/*.json"]\n', "tests/x.json", "fixture"),
    ('[paths]\nproduct = ["src/**", "!src/gen/**"]\n', "src/gen/x.py", "other"),
    ('[paths]\nproduct = ["!src/gen/**", "src/**"]\n', "src/gen/x.py", "product"),
    ('[ledger]\npath = "ci/flakes.jsonl"\n', "ci/flakes.jsonl", "freeze_ledger"),
    ('[paths]\npolicy = ["!.gitattributes"]\n', "src/.gitattributes", "policy"),
]


@pytest.mark.parametrize(("extra", "path", "klass"), CLASSIFY_TABLE)
def test_classify_table(extra: str, path: str, klass: str) -> None:
    assert policy(extra).classifier().classify(path).klass == klass


def link(path: str, target: str, old_target: str | None = None) -> Change:
    return Change(
        "A", "000000", "120000", A, B, path, link_target=target, old_link_target=old_target
    )


LINK_TABLE = [
    # (link, target, class)
    ("src/root", "..", "policy"),  # the repository root holds every evidence root
    ("src/top", "../", "policy"),
    ("src/self", ".", "product"),
    ("src/data.json", "../tests/fixtures/a.json", "fixture"),
    # above tests/properties, and above the labels file (policy), which wins
    ("src/all", "../tests", "policy"),
    ("src/ledger", "../tests/freeze.jsonl", "freeze_ledger"),
    ("src/alias.py", "app.py", "product"),
    ("src/out", "../../etc/passwd", "other"),
    ("src/abs", "/etc/passwd", "other"),
    ("src/win", "..\\tests\\fixtures\\a.json", "fixture"),
    ("tests/fixtures/x", "../../src/app.py", "fixture"),
]


@pytest.mark.parametrize(("path", "target", "klass"), LINK_TABLE)
def test_link_table(path: str, target: str, klass: str) -> None:
    assert BASE_POLICY.classifier().classify_change(link(path, target)).klass == klass


def test_a_link_to_the_repository_root_is_evidence_above_every_root() -> None:
    classifier = BASE_POLICY.classifier()
    for target in ("..", "../", "../src/..", "..\\"):
        found = classifier.classify_change(link("src/root", target))
        assert (found.klass, found.reason) == (
            "policy",
            "symlink to the repository root, above every evidence root",
        ), target


def test_a_link_retargeted_away_from_evidence_is_still_evidence() -> None:
    moved = link("src/data.json", "app.py", old_target="../tests/fixtures/a.json")
    assert BASE_POLICY.classifier().classify_change(moved).klass == "fixture"


def test_the_root_is_no_evidence_when_no_class_has_a_root() -> None:
    bare = Policy(paths={"product": ("src/**",)}, lock_roots=())
    classifier = paths.Classifier(bare.paths)
    assert classifier.classify_change(link("src/root", "..")).klass == "product"


# -- what the mutation run found unpinned in paths.py ------------------------------------------


def test_glob_problem_refuses_negation_unless_asked() -> None:
    assert path_globs.glob_problem("!src/x") == "negation (`!`) is not supported here"


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("src/\u00a7", "src/x", False),  # a trailing non-ASCII name is part of the glob
        ("src/\u00a7", "src/\u00a7", True),
        ("/\u00a7a/b", "\u00a7a/b", True),
        ("\u00a7/**", "\u00a7/x", True),
        ("\u00a7", "deep/\u00a7", True),
    ],
)
def test_globs_keep_every_character_but_slashes(glob: str, path: str, matches: bool) -> None:
    assert path_globs.glob_problem(glob) is None
    assert bool(re.fullmatch(path_globs.glob_regex(glob), path)) is matches


def test_root_patterns_name_at_and_above_and_leave_the_root_to_the_caller() -> None:
    patterns = path_globs.root_patterns("tests/fixtures/**")
    assert [p.reason for p in patterns] == [
        "above evidence root tests/fixtures/",
        "at evidence root tests/fixtures/",
    ]
    assert [p.reason for p in path_globs.root_patterns("tests/freeze.jsonl")] == [
        "above evidence root tests/freeze.jsonl"
    ]
    for glob in ("tests/fixtures/**", "tests/freeze.jsonl", "a/*/b/**", "**/x/**"):
        assert not any(re.fullmatch(p.regex, "") for p in path_globs.root_patterns(glob)), glob


def test_matches_are_values_with_no_reason_by_default() -> None:
    match = BASE_POLICY.classifier().classify("src/app.py")
    assert match.reason == ""
    with pytest.raises(AttributeError):
        match.klass = "fixture"  # type: ignore[misc]


def test_object_ids_of_a_row_with_neither_ids_nor_raw_row_are_empty() -> None:
    assert Change("A", "000000", "100644", "", "", "x").object_ids() == ("", "")


def test_every_lock_root_is_a_root_at_above_and_inside() -> None:
    classifier = paths.Classifier(
        {"product": ("src/**",)}, extra_roots=("data/golden/", "more/gold\u00a7")
    )
    assert classifier.root_relation("data") == paths.Match(
        "fixture", "data/golden/", "above evidence root data/golden/"
    )
    assert classifier.root_relation("data/golden") == paths.Match(
        "fixture", "data/golden/", "at evidence root data/golden/"
    )
    assert classifier.root_relation("data/golden/x").reason == (  # type: ignore[union-attr]
        "inside evidence root data/golden/"
    )
    assert classifier.root_relation("more/gold\u00a7/x").klass == "fixture"  # type: ignore[union-attr]
    assert classifier.root_relation("more/gold\u00a7").reason == (  # type: ignore[union-attr]
        "at evidence root more/gold\u00a7/"
    )
    assert classifier.root_relation("more/gold") is None
    # With lock roots alone, the repository root is above a fixture root.
    assert classifier.classify_change(link("src/root", "..")).klass == "fixture"


def test_a_negation_does_not_hide_the_roots_written_after_it() -> None:
    classifier = paths.Classifier({"fixture": ("!tests/fixtures/skip/**", "data/**")})
    assert classifier.root_relation("data") == paths.Match(
        "fixture", "data/**", "at evidence root data/"
    )


def test_a_negation_in_the_last_class_falls_to_other() -> None:
    pol = policy('[paths]\nneutral = ["docs/**", "!docs/private/**"]\n')
    match = pol.classifier().classify("docs/private/a.md")
    assert match.klass == "other"
    assert match.negated == (paths.Negation("neutral", "docs/**", "!docs/private/**"),)


def test_the_negation_that_decided_is_found_past_other_negations() -> None:
    pol = policy('[paths]\nproduct = ["src/**", "!src/gen/**", "!src/vendor/**"]\n')
    match = pol.classifier().classify("src/vendor/x.py")
    assert match.klass == "other"
    assert match.negated == (paths.Negation("product", "src/**", "!src/vendor/**"),)
    assert match.negated[0].describe() == "product glob src/** negated by !src/vendor/**"


def test_a_link_replaced_by_a_file_is_judged_by_where_it_led() -> None:
    was_link = Change(
        "M", "120000", "100644", A, B, "src/data.json", old_link_target="../tests/fixtures/a.json"
    )
    assert BASE_POLICY.classifier().classify_change(was_link).klass == "fixture"


def test_only_the_new_target_can_leave_the_repository() -> None:
    classifier = BASE_POLICY.classifier()
    came_back = link("src/x", "app.py", old_target="/etc/passwd")
    assert classifier.classify_change(came_back).klass == "product"
    now_a_file = Change("M", "120000", "100644", A, B, "src/x", old_link_target="/etc/passwd")
    assert classifier.classify_change(now_a_file).klass == "product"
    left = link("src/x", "/etc/passwd", old_target="app.py")
    assert classifier.classify_change(left) == paths.Match(
        "other", None, "symlink out of the repository (/etc/passwd)"
    )


@pytest.mark.parametrize("glob", ["a**b", "a*****b", "**", "x***", "***y"])
def test_a_run_of_stars_is_one_star(glob: str) -> None:
    # One `[^/]*` per run: `a*****b` must not backtrack exponentially.
    assert globs.component_regex(glob) == globs.component_regex(re.sub(r"\*+", "*", glob))
    assert globs.component_regex(glob).count("[^/]*") == 1
