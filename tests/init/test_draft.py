"""The drafting alone (no git): the shapes it finds in layouts other than the four
real ones, and a draft that always parses as a policy."""

from __future__ import annotations

from git_evidence.init.draft import draft
from git_evidence.init.render import draft_toml
from git_evidence.policy.parsing import parse_policy


def classes(paths: list[str]) -> dict[str, str]:
    text = draft_toml(draft(paths, "refs/heads/main"), len(paths), "0" * 40)
    classifier = parse_policy(text.encode(), ".git-evidence.toml").classifier()
    return {p: classifier.classify(p).klass for p in paths}


def test_go_testdata_beside_the_code_is_a_fixture_and_test_files_are_tests() -> None:
    paths = [f"pkg/p{i}/x.go" for i in range(6)] + [f"pkg/p{i}/x_test.go" for i in range(6)]
    paths += ["pkg/p0/testdata/in.txt", "pkg/p1/testdata/golden.out", "go.mod"]
    got = classes(paths)
    assert got["pkg/p0/testdata/in.txt"] == got["pkg/p1/testdata/golden.out"] == "fixture"
    assert got["pkg/p3/x_test.go"] == "test"
    assert got["pkg/p3/x.go"] == got["go.mod"] == "product"


def test_jest_snapshots_and_syrupy_ambr_files_are_oracles() -> None:
    paths = [
        "src/app.js",
        "src/__tests__/app.test.js",
        "src/__tests__/__snapshots__/app.test.js.snap",
        "tests/test_api.py",
        "tests/__snapshots__/test_api.ambr",
        "lib/snap_util.py",
    ]
    got = classes(paths)
    assert got["src/__tests__/__snapshots__/app.test.js.snap"] == "oracle"
    assert got["tests/__snapshots__/test_api.ambr"] == "oracle"
    assert got["src/__tests__/app.test.js"] == got["tests/test_api.py"] == "test"
    assert got["src/app.js"] == got["lib/snap_util.py"] == "product"


def test_maven_test_resources_are_fixtures_and_main_resources_product() -> None:
    paths = [
        "src/main/java/a/App.java",
        "src/main/resources/app.properties",
        "src/test/java/a/AppTest.java",
        "src/test/resources/case.json",
    ]
    got = classes(paths)
    assert got["src/test/resources/case.json"] == "fixture"
    assert got["src/test/java/a/AppTest.java"] == "test"
    assert got["src/main/resources/app.properties"] == "product"


def test_goldens_beside_their_inputs_are_fixtures_and_the_inputs_stay_tests() -> None:
    paths = [f"tests/cases/c{i}.py" for i in range(5)] + [f"tests/cases/c{i}.out" for i in range(5)]
    paths += ["tests/notes.out", "app/main.py"]
    got = classes(paths)
    assert got["tests/cases/c3.out"] == "fixture"
    assert got["tests/cases/c3.py"] == "test"


def test_a_lone_data_file_beside_tests_is_not_a_golden() -> None:
    got = classes(["tests/test_a.py", "tests/test_a.json", "app/main.py"])
    assert got["tests/test_a.json"] == "test"


def test_folders_merged_across_packages_never_make_a_file_above_them_evidence() -> None:
    paths = ["tests/test_top.py", "tests/a/data/x.json", "tests/b/data/y.json", "src/m.py"]
    got = classes(paths)
    assert got["tests/a/data/x.json"] == got["tests/b/data/y.json"] == "fixture"
    assert got["tests/test_top.py"] == "test"


def test_a_folder_named_with_glob_characters_is_matched_not_misread() -> None:
    paths = ["tests/[id]/data/x.json", "tests/!bang/fixtures/y.json", "app/[slug]/page.tsx"]
    got = classes(paths)
    assert got["tests/[id]/data/x.json"] == got["tests/!bang/fixtures/y.json"] == "fixture"
    assert got["app/[slug]/page.tsx"] == "product"


def test_a_tree_with_no_tests_gives_a_draft_that_parses() -> None:
    assert classes(["main.c", "README"]) == {"main.c": "product", "README": "neutral"}


def test_a_data_folder_named_after_its_test_module_is_a_fixture() -> None:
    paths = ["tests/test_api.py", "tests/test_api/expected.yml", "tests/test_api/in.json"]
    paths += ["tests/test_db/__init__.py", "tests/test_db/test_x.py", "pkg/api.py"]
    got = classes(paths)
    assert got["tests/test_api/expected.yml"] == got["tests/test_api/in.json"] == "fixture"
    assert got["tests/test_db/test_x.py"] == got["tests/test_api.py"] == "test"


def test_playwright_snapshots_and_vcr_cassettes_are_evidence() -> None:
    paths = [
        "e2e/home.spec.ts",
        "e2e/home.spec.ts-snapshots/home-chromium-linux.png",
        "tests/cassettes/login.yaml",
        "tests/test_login.py",
        "web/app.ts",
    ]
    got = classes(paths)
    assert got["e2e/home.spec.ts-snapshots/home-chromium-linux.png"] == "oracle"
    assert got["tests/cassettes/login.yaml"] == "fixture"
    assert got["e2e/home.spec.ts"] == "test"
