"""Pure functions of the classifier: per-glob evidence roots, negation, newlines in names,
link resolution through a tree, ref globs and policy bounds. No git here."""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence

import pytest
from helpers.examples import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from git_evidence.core.errors import PolicyError
from git_evidence.core.links import follow_link, resolve_link
from git_evidence.core.oids import Oid
from git_evidence.core.path_globs import glob_regex
from git_evidence.core.paths import EVIDENCE_CLASSES, FIXTURE, Change, Classifier
from git_evidence.plumbing.context import client_view, server_view
from git_evidence.policy.parsing import parse_policy
from git_evidence.policy.schema import Policy

SOURCE = "base:.git-evidence.toml"


def policy(text: str) -> Policy:
    return parse_policy(text.encode(), SOURCE)


def error(text: str) -> PolicyError:
    with pytest.raises(PolicyError) as caught:
        parse_policy(text.encode(), SOURCE)
    return caught.value


def only_fixture(*globs: str) -> Classifier:
    return Classifier({FIXTURE: globs})


def structural(classifier: Classifier, path: str) -> bool:
    """Evidence for an entry placed at ``path``: it matches, or is at or above a root."""
    return (
        classifier.classify(path).klass in EVIDENCE_CLASSES
        or classifier.root_relation(path) is not None
    )


# -- B: per-glob roots, three wildcard shapes -------------------------------------------


@pytest.mark.parametrize(
    ("glob", "at_or_above", "product"),
    [
        (
            "crates/*/resources/**",
            ["crates", "crates/ruff", "crates/ruff/resources", "crates/ty/resources"],
            ["crates/ruff/src/lib.rs", "crates/ruff/src", "crates/ruff/Cargo.toml"],
        ),
        (
            "src/**/testdata/**",
            ["src", "src/testdata", "src/pkg/testdata", "src/a/b/c/testdata"],
            ["src/app.py", "src/pkg", "src/pkg/mod.py", "src/pkg/testdatax"],
        ),
        (
            "tests/gold[e]ns/**",
            ["tests", "tests/goldens"],
            ["tests/test_app.py", "tests/goldxns", "tests/unit/goldens"],
        ),
        (
            "**/__snapshots__/**",
            ["__snapshots__", "src/__snapshots__", "src/ui/deep/__snapshots__"],
            ["src/app.py", "src", "src/ui", "src/__snapshots__x"],
        ),
        (
            "data/?x/**",
            ["data", "data/ax", "data/bx"],
            ["data/abx", "data/readme.md", "data/x"],
        ),
    ],
)
def test_roots_follow_each_glob_component_by_component(
    glob: str, at_or_above: list[str], product: list[str]
) -> None:
    classifier = only_fixture(glob)
    for path in at_or_above:
        assert classifier.root_relation(path) is not None, path
    for path in product:
        assert classifier.classify(path).klass != FIXTURE, path
        assert classifier.root_relation(path) is None, path


def test_wildcard_fixture_glob_no_longer_makes_its_literal_prefix_a_root() -> None:
    classifier = policy('[paths]\nfixture = ["crates/*/resources/**"]\n').classifier()
    lib = Change("M", "100644", "100644", "", "", "crates/ruff/src/lib.rs")
    assert classifier.classify_change(lib).klass == "other"
    swapped = Change("T", "040000", "120000", "", "", "crates/ruff/resources")
    assert classifier.classify_change(swapped).klass == FIXTURE


def test_root_reasons_say_at_or_above() -> None:
    classifier = only_fixture("crates/*/resources/**")
    at = classifier.root_relation("crates/ruff/resources")
    above = classifier.root_relation("crates/ruff")
    assert at is not None and at.reason == "at evidence root crates/*/resources/"
    assert above is not None and above.reason == "above evidence root crates/*/resources/"


def test_the_repository_root_is_above_every_root() -> None:
    assert only_fixture("crates/*/resources/**").root_relation("") is not None
    assert Policy().classifier().root_relation("") is not None


def test_a_negated_fixture_glob_keeps_its_roots() -> None:
    classifier = Classifier({FIXTURE: ("data/**", "!data/scratch/**")})
    assert classifier.classify("data/scratch/x").klass == "other"
    assert classifier.classify("data/a.json").klass == FIXTURE
    assert classifier.root_relation("data") is not None


# The definition (docs/policy.md), checked against an independent matcher: a path is at or
# above an evidence root of a glob (or matches it) exactly when some extension of it
# (path + "/" + more components) matches the glob. Exact for globs whose `**` can only
# come last; with a `**` earlier the roots stop at it (else every directory under
# `src` would be "above" `src/**/testdata/**`), so there only the soundness direction
# holds: nothing is called a root that no extension could make evidence.

COMPONENT_GLOBS = ["a", "b", "ab", "*", "?", "a*", "*b", "[ab]", "[!a]", "?b"]
NAMES = ["a", "b", "ab", "ba", "bb", "c", "abc"]


def extension_matches(path: Sequence[str], glob: Sequence[str]) -> bool:
    """Is there a non-empty ``more`` with ``path + more`` matching ``glob`` (gitignore:
    a match on a directory covers everything under it)?"""
    if not glob:
        return True  # path's prefix matched all of it: everything below matches
    if not path:
        return True  # what remains of the glob can match some components
    head = glob[0]
    if head == "**":
        return extension_matches(path, glob[1:]) or extension_matches(path[1:], glob)
    return fnmatch.fnmatchcase(path[0], head) and extension_matches(path[1:], glob[1:])


globs_without_inner_stars = st.builds(
    lambda parts, tail: "/".join([*parts, *(["**"] if tail else [])]),
    st.lists(st.sampled_from(COMPONENT_GLOBS), min_size=1, max_size=4),
    st.booleans(),
).filter(lambda g: "/" in g)
paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=6)


@given(globs_without_inner_stars, paths)
@settings(max_examples=examples(600))
def test_at_or_above_is_exactly_having_an_extension_that_matches(
    glob: str, parts: list[str]
) -> None:
    assert structural(only_fixture(glob), "/".join(parts)) == extension_matches(
        parts, glob.split("/")
    )


globs_with_stars = st.lists(st.sampled_from([*COMPONENT_GLOBS, "**"]), min_size=2, max_size=5).map(
    "/".join
)


@given(globs_with_stars, paths)
@settings(max_examples=examples(600))
def test_nothing_is_a_root_that_no_extension_could_match(glob: str, parts: list[str]) -> None:
    classifier = only_fixture(glob)
    path = "/".join(parts)
    if classifier.root_relation(path) is not None:
        assert extension_matches(parts, glob.split("/"))
    # ...and what comes before the first `**` is honoured component by component.
    head = glob.split("/**")[0].split("/")
    if glob.startswith("**") or len(parts) > len(head) or head == glob.split("/"):
        return
    if all(fnmatch.fnmatchcase(p, g) for p, g in zip(parts, head, strict=False)):
        assert classifier.root_relation(path) is not None


# -- C: any byte in a component, a newline included -------------------------------------


@pytest.mark.parametrize(
    "path",
    ["src/a\ntests/fixtures/x.json", "src/dir\nname/mod.py", "src/\n", "src/x\n\ny"],
)
def test_newlines_in_product_paths_stay_product(path: str) -> None:
    assert Policy().classifier().classify(path).klass == "product"


def test_newline_in_an_evidence_path_stays_evidence() -> None:
    assert Policy().classifier().classify("tests/fixtures/a\nb.json").klass == FIXTURE
    assert re.fullmatch(glob_regex("*.snap"), "dir\nx/a\n.snap")


@given(st.text(alphabet="ab\n\r\t /.", min_size=1, max_size=12))
@settings(max_examples=examples(300))
def test_any_name_under_src_is_product(name: str) -> None:
    path = "src/x" + name
    assert Policy().classifier().classify(path).klass == "product"


# -- E: negation within a class -------------------------------------------------------


def test_negated_product_glob_falls_to_the_next_class() -> None:
    classifier = policy(
        '[paths]\nproduct = ["mypy/**", "!mypy/test/**"]\ntest = ["tests/**", "mypy/test/**"]\n'
    ).classifier()
    match = classifier.classify("mypy/test/x.py")
    assert match.klass == "test" and match.glob == "mypy/test/**"
    assert [n.describe() for n in match.negated] == [
        "product glob mypy/** negated by !mypy/test/**"
    ]
    assert classifier.classify("mypy/a.py").klass == "product"


def test_last_match_wins_within_a_class() -> None:
    classifier = policy(
        '[paths]\nproduct = ["src/**", "!src/gen/**", "src/gen/keep/**"]\n'
    ).classifier()
    assert classifier.classify("src/gen/x.py").klass == "other"
    assert classifier.classify("src/gen/keep/x.py").klass == "product"
    assert classifier.classify("src/app.py").klass == "product"


def test_a_negation_before_its_glob_has_no_effect() -> None:
    classifier = policy('[paths]\nproduct = ["!src/gen/**", "src/**"]\n').classifier()
    assert classifier.classify("src/gen/x.py").klass == "product"


def test_negation_never_moves_a_path_into_evidence() -> None:
    loose = policy('[paths]\nproduct = ["src/**", "!src/**"]\n').classifier()
    assert loose.classify("src/app.py").klass == "other"
    strict = Policy().classifier()
    for path in ("src/app.py", "src/a/b.py", "docs/x.md"):
        assert (loose.classify(path).klass in EVIDENCE_CLASSES) <= (
            strict.classify(path).klass in EVIDENCE_CLASSES
        )


@pytest.mark.parametrize("path", [".gitattributes", "src/.gitattributes", ".gitmodules"])
def test_negation_never_takes_a_builtin_policy_file_out(path: str) -> None:
    classifier = policy(
        '[paths]\npolicy = ["ci/**", "!.gitattributes", "!**/.gitattributes", "!.gitmodules"]\n'
    ).classifier()
    assert classifier.classify(path).klass == "policy"


def test_negation_never_takes_the_ledger_path_out() -> None:
    classifier = policy('[paths]\nfreeze_ledger = ["!tests/freeze.jsonl"]\n').classifier()
    assert classifier.classify("tests/freeze.jsonl").klass == "freeze_ledger"


def test_negation_in_an_evidence_class_falls_to_the_next_class() -> None:
    classifier = policy(
        '[paths]\nfixture = ["tests/fixtures/**", "!tests/fixtures/scratch/**"]\n'
        '[lock]\nroots = ["tests/goldens"]\n'
    ).classifier()
    assert classifier.classify("tests/fixtures/scratch/x").klass == "test"
    change = Change("A", "000000", "100644", "", "", "tests/fixtures/scratch/x")
    assert classifier.classify_change(change).klass == "test"
    # ...but the root stays: a file standing in for tests/fixtures is still evidence.
    swapped = Change("T", "040000", "100644", "", "", "tests/fixtures")
    assert classifier.classify_change(swapped).klass == FIXTURE


def test_a_fixture_negation_takes_a_path_out_of_a_lock_root_too() -> None:
    # The default lock roots include tests/fixtures: the negation still decides the
    # class (the lock, which covers the bytes, is [lock].exclude's business).
    classifier = policy(
        '[paths]\nfixture = ["tests/fixtures/**", "!tests/fixtures/scratch/**"]\n'
    ).classifier()
    change = Change("A", "000000", "100644", "", "", "tests/fixtures/scratch/x")
    assert classifier.classify_change(change).klass == "test"


def test_a_path_in_a_lock_root_outside_the_fixture_globs_is_a_fixture() -> None:
    classifier = policy('[lock]\nroots = ["data/golden"]\n').classifier()
    match = classifier.structural("data/golden/x.bin")
    assert match.klass == FIXTURE and match.reason == "inside evidence root data/golden/"
    unrelated = policy(
        '[paths]\nproduct = ["src/**", "!src/gen/**"]\n[lock]\nroots = ["src/gen"]\n'
    ).classifier()
    assert unrelated.structural("src/gen/x.py").klass == FIXTURE


# -- A: links through a tree ------------------------------------------------------------


def tree(links: Mapping[str, str]):  # type: ignore[no-untyped-def]
    calls: list[list[str]] = []

    def read_links(paths: Sequence[str]) -> dict[str, str]:
        calls.append(list(paths))
        return {p: links[p] for p in paths if p in links}

    return read_links, calls


def test_dotdot_after_a_linked_directory_climbs_from_where_it_points() -> None:
    read, _ = tree({"src/sub": "../tests/unit/deep"})
    walk = follow_link("src/l", "sub/../../fixtures/g.json", read)
    assert "tests/fixtures/g.json" in walk.reached
    assert not walk.outside
    assert resolve_link("src/l", "sub/../../fixtures/g.json") == "fixtures/g.json"


def test_a_walk_names_the_links_it_follows() -> None:
    read, _ = tree({"src/a": "b", "src/b": "../tests/fixtures", "src/c": "../docs"})
    assert follow_link("src/l", "a/x.json", read).through == ("src/a", "src/b")


def test_the_lexical_reading_counts_too() -> None:
    # A kernel reads src/tests/fixtures/a.json (src/deep/er/../..); Windows reads
    # tests/fixtures/a.json.
    read, _ = tree({"src/sub": "deep/er"})
    walk = follow_link("src/l", "sub/../../tests/fixtures/a.json", read)
    assert set(walk.reached) == {"src/tests/fixtures/a.json", "tests/fixtures/a.json"}


def test_backslash_in_a_target_is_a_separator() -> None:
    read, _ = tree({})
    assert follow_link("src/l", "..\\tests\\fixtures\\g.json", read).reached == (
        "tests/fixtures/g.json",
    )
    assert resolve_link("src/l", "..\\tests\\fixtures\\g.json") == "tests/fixtures/g.json"


def test_links_are_followed_in_chains() -> None:
    read, _ = tree({"src/a": "b", "src/b": "../tests/fixtures"})
    assert "tests/fixtures/x.json" in follow_link("src/l", "a/x.json", read).reached


def test_absolute_and_escaping_targets_are_outside() -> None:
    read, _ = tree({"src/out": "/etc"})
    assert follow_link("src/l", "/etc/passwd", read).outside
    assert follow_link("src/l", "../../elsewhere/x", read).outside
    assert follow_link("src/l", "out/passwd", read).outside
    assert not follow_link("src/l", "app.py", read).outside


def test_a_link_to_the_parent_reaches_the_repository_root() -> None:
    read, _ = tree({})
    assert follow_link("src/root", "..", read).reached == ("",)


def test_a_link_loop_ends() -> None:
    read, _ = tree({"src/a": "b", "src/b": "a"})
    walk = follow_link("src/l", "a/x", read)
    assert walk.reached == () and not walk.outside


def test_one_lookup_per_run_of_components() -> None:
    read, calls = tree({})
    follow_link("src/l", "a/b/c/d/e", read)
    assert len(calls) == 1


def test_link_classes() -> None:
    classifier = Policy().classifier()

    def link(path: str, target: str, hops: tuple[str, ...] = (), outside: bool = False) -> str:
        change = Change(
            "A", "000000", "120000", "", "", path, target, None, hops, link_outside=outside
        )
        return classifier.classify_change(change).klass

    assert link("src/l", "..\\tests\\fixtures\\g.json") == FIXTURE
    assert link("src/root", "..") in EVIDENCE_CLASSES
    assert link("src/l", "/etc/passwd") == "other"
    assert link("src/l", "../../x") == "other"
    assert link("src/l", "app.py") == "product"
    assert link("src/__snapshots__", "snapdata") == "oracle"
    assert link("src/l", "sub/../../fixtures/g.json", hops=("tests/fixtures/g.json",)) == FIXTURE
    assert link("src/l", "out/x", outside=True) == "other"


# -- D: policy validation -------------------------------------------------------------


def test_a_glob_is_validated_after_folding() -> None:
    exc = error('[paths]\nproduct = ["src/**"]\nfixture = ["data/[Z-a]x/**"]\n')
    assert exc.key == "paths.fixture" and exc.line == 3
    assert "bad character range" in str(exc)


@pytest.mark.parametrize(
    "glob",
    ["data/[z-a]/**", "data/[[:alpha:]]/**", "tests/.../x", "tests/\u200b./x"],
)
def test_a_glob_that_cannot_be_used_is_a_policy_error(glob: str) -> None:
    exc = error(f"[paths]\nfixture = [{glob!r}]\n")
    assert exc.key == "paths.fixture" and exc.line == 2


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[ledger]\nmax_window_hours = 9223372036854775807\n", "ledger.max_window_hours"),
        ("[ledger]\nmax_window_hours = 8761\n", "ledger.max_window_hours"),
        ("[ledger]\nmax_window_hours = 0\n", "ledger.max_window_hours"),
        ("[ledger]\nmax_window_hours = true\n", "ledger.max_window_hours"),
        ("[ledger]\nmax_window_hours = 1.5\n", "ledger.max_window_hours"),
        ("[rules]\ntime_budget_s = 3601\n", "rules.time_budget_s"),
        ("[rules]\ntime_budget_s = 0\n", "rules.time_budget_s"),
        ("[rules]\ntime_budget_s = true\n", "rules.time_budget_s"),
        ("[rules]\ntime_budget_s = inf\n", "rules.time_budget_s"),
        ("[rules]\ntime_budget_s = nan\n", "rules.time_budget_s"),
    ],
)
def test_every_number_is_bounded(text: str, key: str) -> None:
    exc = error(text)
    assert exc.key == key and exc.line == 2


def test_the_largest_numbers_allowed_parse() -> None:
    parsed = policy("[rules]\ntime_budget_s = 3600\n[ledger]\nmax_window_hours = 8760\n")
    assert parsed.time_budget_s == 3600 and parsed.max_window_hours == 8760


@pytest.mark.parametrize(
    "root", ["tests/*/fixtures", "tests/fixture?", "tests/[f]ixtures", "tests/../src", "!tests"]
)
def test_lock_roots_must_be_literal_directories(root: str) -> None:
    exc = error(f"[lock]\nroots = [{root!r}]\n")
    assert exc.key == "lock.roots" and exc.line == 2


def test_protected_globs_protect_matching_refs() -> None:
    parsed = policy('[rules]\nprotected = ["refs/heads/main", "refs/heads/release/*"]\n')
    assert parsed.is_protected("refs/heads/release/1.0")
    assert parsed.is_protected("refs/heads/Release/1.0")
    assert parsed.is_protected("refs/heads/MAIN")
    assert not parsed.is_protected("refs/heads/release/1.0/hotfix")
    assert not parsed.is_protected("refs/heads/release")
    assert not parsed.is_protected("refs/heads/feature")
    deep = policy('[rules]\nprotected = ["refs/heads/main", "refs/heads/release/**"]\n')
    assert deep.is_protected("refs/heads/release/1.0/hotfix")
    bracket = policy('[rules]\nprotected = ["refs/heads/main", "refs/heads/v[0-9]"]\n')
    assert bracket.is_protected("refs/heads/v1") and not bracket.is_protected("refs/heads/vx")


def test_protected_globs_reach_the_views() -> None:
    parsed = policy('[rules]\nprotected = ["refs/heads/main", "refs/heads/release/*"]\n')
    refs: dict[str, Oid] = {
        "refs/heads/main": Oid("1" * 40),
        "refs/heads/release/1.0": Oid("2" * 40),
        "refs/heads/release/2.0": Oid("3" * 40),
        "refs/heads/feature": Oid("4" * 40),
    }
    assert set(server_view(refs, parsed).protected) == {
        "refs/heads/main",
        "refs/heads/release/1.0",
        "refs/heads/release/2.0",
    }
    tracking: dict[str, Oid] = {
        "refs/remotes/origin/main": Oid("1" * 40),
        "refs/remotes/origin/release/3.0": Oid("5" * 40),
        "refs/remotes/origin/HEAD": Oid("1" * 40),
        "refs/heads/topic": Oid("6" * 40),
    }
    view = client_view("origin", tracking, parsed)
    assert view.protected == {"refs/heads/main": "1" * 40, "refs/heads/release/3.0": "5" * 40}


def test_a_bad_protected_glob_is_a_policy_error() -> None:
    exc = error('[rules]\nprotected = ["refs/heads/main", "refs/heads/[z-a]"]\n')
    assert exc.key == "rules.protected" and exc.line == 2


def test_the_base_must_be_protected() -> None:
    exc = error('[rules]\nprotected = ["refs/heads/release/*"]\n')
    assert exc.key == "rules.protected" and exc.line == 2
    exc = error('[rules]\nbase = "refs/heads/develop"\n')
    assert exc.key == "rules.base" and exc.line == 2
    assert "must be protected" in str(exc)
    ok = policy('[rules]\nbase = "refs/heads/release/1"\nprotected = ["refs/heads/release/*"]\n')
    assert ok.is_protected(ok.base)


def test_the_base_is_one_ref_not_a_glob() -> None:
    exc = error('[rules]\nbase = "refs/heads/*"\nprotected = ["refs/heads/*"]\n')
    assert exc.key == "rules.base" and exc.line == 2


def test_namespaces_must_end_with_a_slash() -> None:
    exc = error('[rules]\nallow_namespaces = ["refs/heads"]\n')
    assert exc.key == "rules.allow_namespaces" and exc.line == 2
