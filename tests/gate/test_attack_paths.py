"""End to end: symlinks into evidence, per-glob evidence roots, newlines in
names, policy validation, ref globs in `protected`, negated globs. Every case is a real
push into a bare repository with the hooks installed."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from helpers.pushes import refused, remote, server_tip
from helpers.repos import POLICY, Work, evidence, git, protected_clone

AGENT = "agent-bot"


def push_main(work: Work, pusher: str = AGENT) -> subprocess.CompletedProcess[str]:
    """Push HEAD to main, asserting that the hook did not crash."""
    result = work.push("origin", "HEAD:main", pusher=pusher)
    assert "Traceback" not in result.stderr
    return result


def links(
    work: Work, message: str, pairs: dict[str, str], files: dict[str, str] | None = None
) -> str:
    """Commit symlinks (link → target) and files in one commit."""
    for link, target in pairs.items():
        (work.path / link).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, work.path / link)
    return work.commit(message, files)


def with_policy(tmp_path: Path, text: str, files: dict[str, str] | None = None) -> Work:
    return protected_clone(tmp_path, {".git-evidence.toml": text + POLICY, **(files or {})})


# -- A: symlinks into evidence that are classed product ---------------------------------


@pytest.fixture
def deep(tmp_path: Path) -> Work:
    """A server whose tree has tests/unit/deep (test code) and tests/fixtures/g.json."""
    return protected_clone(
        tmp_path,
        {"tests/unit/deep/test_x.py": "def test(): pass\n", "tests/fixtures/g.json": "{}\n"},
    )


def test_symlink_climbing_out_of_a_linked_directory_into_fixtures_is_refused(deep: Work) -> None:
    # src/sub/../../fixtures/g.json is tests/unit/deep/../../fixtures/g.json for the
    # kernel: tests/fixtures/g.json, though it reads like fixtures/g.json.
    links(
        deep,
        "two product links",
        {"src/sub": "../tests/unit/deep", "src/l": "sub/../../fixtures/g.json"},
    )
    assert os.path.realpath(deep.path / "src/l") == str(deep.path / "tests/fixtures/g.json")
    result = push_main(deep)
    assert refused(result, "evidence-untrusted")
    assert "fixture: src/l" in remote(result)


def test_symlink_through_an_accepted_linked_directory_into_fixtures_is_refused(
    deep: Work,
) -> None:
    links(deep, "a product link to test code", {"src/sub": "../tests/unit/deep"})
    result = push_main(deep)
    assert result.returncode == 0, result.stderr  # a link to test code is no evidence
    # The linked directory is in the server's tree now; only src/l is new.
    links(deep, "the climb", {"src/l": "sub/../../fixtures/g.json"})
    result = push_main(deep)
    assert refused(result, "evidence-untrusted")
    assert "fixture: src/l" in remote(result)


def test_pre_commit_refuses_a_symlink_climbing_out_of_a_linked_directory(deep: Work) -> None:
    assert evidence(deep.path, "install").returncode == 0
    os.symlink("../tests/unit/deep", deep.path / "src/sub")
    os.symlink("sub/../../fixtures/g.json", deep.path / "src/l")
    deep.git("add", "-A")
    result = deep.git("commit", "-m", "two product links", check=False)
    assert result.returncode != 0
    assert "fixture: src/l" in result.stderr


def test_symlink_standing_in_for_a_snapshots_directory_is_refused(work: Work) -> None:
    links(work, "snapshots live elsewhere", {"src/__snapshots__": "snapdata"})
    result = push_main(work)
    assert refused(result, "evidence-untrusted")
    assert "oracle: src/__snapshots__" in remote(result)


def test_file_standing_in_for_a_snapshots_directory_is_refused(work: Work) -> None:
    work.commit("a file named like the snapshot directory", {"src/ui/__snapshots__": "x\n"})
    result = push_main(work)
    assert refused(result, "evidence-untrusted")
    assert "oracle: src/ui/__snapshots__" in remote(result)


def test_symlink_target_written_with_backslashes_into_fixtures_is_refused(work: Work) -> None:
    links(work, "windows spelling", {"src/data.json": "..\\tests\\fixtures\\a.json"})
    result = push_main(work)
    assert refused(result, "evidence-untrusted")
    assert "fixture: src/data.json" in remote(result)


def test_symlink_to_an_absolute_path_is_held_as_other(work: Work) -> None:
    links(work, "absolute", {"src/passwd": "/etc/passwd"})
    result = push_main(work)
    assert refused(result, "other-path")
    assert "other: src/passwd" in remote(result)


def test_symlink_climbing_out_of_the_repository_is_held_as_other(work: Work) -> None:
    # `../../<checkout dir>/tests/fixtures` re-enters the checkout by its name.
    links(work, "escape", {"src/data.json": "../../work/tests/fixtures/a.json"})
    result = push_main(work)
    assert refused(result, "other-path")
    assert "other: src/data.json" in remote(result)


def test_symlink_to_the_repository_root_is_refused(work: Work) -> None:
    links(work, "root", {"src/root": ".."})
    result = push_main(work)
    assert refused(result, "evidence-untrusted")
    assert ": src/root" in remote(result)


def test_product_symlink_within_product_is_allowed(work: Work) -> None:
    links(work, "alias", {"src/alias.py": "app.py", "src/pkg/up": "../app.py"})
    result = push_main(work)
    assert result.returncode == 0, result.stderr


# -- B: per-glob evidence roots ----------------------------------------------------------

CRATES = '[paths]\nproduct = ["src/**", "crates/**"]\nfixture = ["crates/*/resources/**"]\n'
CRATE_FILES = {
    "crates/ruff/src/lib.rs": "fn main() {}\n",
    "crates/ruff/resources/case.py": "x = 1\n",
}


def test_product_code_beside_a_wildcard_fixture_root_is_allowed(tmp_path: Path) -> None:
    work = with_policy(tmp_path, CRATES, CRATE_FILES)
    work.commit("fix", {"crates/ruff/src/lib.rs": "fn main() { fixed() }\n"})
    result = push_main(work)
    assert result.returncode == 0, result.stderr
    assert evidence(work.path, "classify", "crates/ruff/src/lib.rs").stdout.split("\t")[1] == (
        "product"
    )


def test_wildcard_fixture_root_replaced_by_a_file_is_refused(tmp_path: Path) -> None:
    work = with_policy(tmp_path, CRATES, CRATE_FILES)
    work.git("rm", "-rq", "crates/ruff/resources")
    work.commit("resources is a file now", {"crates/ruff/resources": "gone\n"})
    result = push_main(work)
    assert refused(result, "evidence-untrusted")
    assert "fixture: crates/ruff/resources" in remote(result)


def test_missing_wildcard_fixture_root_created_as_a_symlink_is_refused(tmp_path: Path) -> None:
    work = with_policy(tmp_path, CRATES, CRATE_FILES)
    links(work, "new crate, resources elsewhere", {"crates/ty/resources": "../../src"})
    result = push_main(work)
    assert refused(result, "evidence-untrusted")
    assert "fixture: crates/ty/resources" in remote(result)


def test_ancestor_of_a_wildcard_fixture_root_replaced_by_a_file_is_refused(
    tmp_path: Path,
) -> None:
    work = with_policy(tmp_path, CRATES, {"crates/ty/src/lib.rs": "x\n"})
    work.git("rm", "-rq", "crates/ty")
    work.commit("crates/ty is a file now", {"crates/ty": "gone\n"})
    result = push_main(work)
    assert refused(result, "evidence-untrusted")
    assert "fixture: crates/ty" in remote(result)


def test_product_code_under_an_inner_double_star_fixture_glob_is_allowed(
    tmp_path: Path,
) -> None:
    work = with_policy(
        tmp_path,
        '[paths]\nfixture = ["src/**/testdata/**"]\n',
        {"src/pkg/testdata/in.txt": "1\n", "src/pkg/mod.py": "m\n"},
    )
    work.commit("fix", {"src/pkg/mod.py": "fixed\n", "src/other/new.py": "n\n"})
    result = push_main(work)
    assert result.returncode == 0, result.stderr


def test_testdata_directory_replaced_by_a_symlink_is_refused(tmp_path: Path) -> None:
    work = with_policy(
        tmp_path, '[paths]\nfixture = ["src/**/testdata/**"]\n', {"src/pkg/testdata/in.txt": "1\n"}
    )
    work.git("rm", "-rq", "src/pkg/testdata")
    links(work, "testdata elsewhere", {"src/pkg/testdata": "../gen"})
    result = push_main(work)
    assert refused(result, "evidence-untrusted")
    assert "fixture: src/pkg/testdata" in remote(result)


def test_test_code_beside_a_bracket_glob_root_is_not_evidence(tmp_path: Path) -> None:
    work = with_policy(
        tmp_path,
        '[paths]\nfixture = ["tests/gold[e]ns/**"]\n[rules]\nadded_test = "allow"\n'
        'test_edit = "allow"\n',
    )
    work.commit("test and fix", {"tests/test_new.py": "def test(): pass\n", "src/app.py": "v\n"})
    result = push_main(work)
    assert result.returncode == 0, result.stderr
    work.commit("golden", {"tests/goldens/out.txt": "changed\n"})
    result = push_main(work)
    assert refused(result, "evidence-untrusted")


# -- C: newlines in names ------------------------------------------------------------------


def test_product_path_with_a_newline_is_product(work: Work) -> None:
    work.commit("odd name", {"src/a\ntests/fixtures/x.json": "{}\n"})
    result = push_main(work)
    assert result.returncode == 0, result.stderr
    listed = work.git("ls-tree", "-r", "--name-only", "-z", "origin/main").stdout.split("\0")
    assert "src/a\ntests/fixtures/x.json" in listed


def test_product_directory_with_a_newline_in_its_name_is_product(work: Work) -> None:
    work.commit("odd dir", {"src/dir\nname/mod.py": "m\n", "src/app.py": "v\n"})
    result = push_main(work)
    assert result.returncode == 0, result.stderr


def test_newline_name_beside_a_fixture_is_still_a_mixed_commit(work: Work) -> None:
    work.commit("mix", {"src/a\nb.py": "m\n", "tests/fixtures/a.json": "{}\n"})
    result = push_main(work)
    assert refused(result, "mixed-commit")
    assert 'product: "src/a\\nb.py"' in remote(result)


# -- D: policy validation ------------------------------------------------------------------


def test_glob_with_an_empty_range_after_folding_refuses_with_its_line(tmp_path: Path) -> None:
    work = with_policy(tmp_path, '[paths]\nfixture = ["data/[Z-a]x/**"]\n')
    work.commit("fix", {"src/app.py": "v\n"})
    result = push_main(work)
    assert refused(result, "policy-error")
    assert "base:.git-evidence.toml:2: paths.fixture: 'data/[Z-a]x/**'" in remote(result)


def test_install_refuses_to_seal_a_policy_with_an_empty_range(tmp_path: Path, server: Path) -> None:
    sealed = tmp_path / "policy.toml"
    sealed.write_text('[paths]\nproduct = ["src/**"]\noracle = ["data/[Z-a]x/**"]\n')
    result = evidence(server, "install", "--server", "--force", "--policy", str(sealed))
    assert result.returncode == 2, result.stderr
    assert f"{sealed}:3: paths.oracle:" in result.stderr
    assert "Traceback" not in result.stderr
    assert git(server, "config", "evidence.policyFile", check=False).returncode == 1


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("[ledger]\nmax_window_hours = 9223372036854775807\n", "2: ledger.max_window_hours"),
        ("[rules]\ntime_budget_s = 86400\n", "2: rules.time_budget_s"),
        ("[rules]\ntime_budget_s = true\n", "2: rules.time_budget_s"),
        ('[lock]\nroots = ["tests/*/fixtures"]\n', "2: lock.roots"),
        ('[lock]\nroots = ["tests/../src"]\n', "2: lock.roots"),
        ('[rules]\nprotected = ["refs/heads/release/*"]\n', "2: rules.protected"),
        ('[rules]\nallow_namespaces = ["refs/heads"]\n', "2: rules.allow_namespaces"),
    ],
)
def test_out_of_bounds_policy_refuses_every_push(tmp_path: Path, text: str, where: str) -> None:
    work = with_policy(tmp_path, text)
    work.commit("fix", {"src/app.py": "v\n"})
    result = push_main(work)
    assert refused(result, "policy-error")
    assert f"base:.git-evidence.toml:{where}:" in remote(result)


def test_huge_window_does_not_crash_a_freeze_push(tmp_path: Path) -> None:
    work = with_policy(tmp_path, "[ledger]\nmax_window_hours = 9223372036854775807\n")
    work.commit("freeze", {"tests/freeze.jsonl": '{"test": "x"}\n'})
    result = push_main(work, pusher="ci-bot")
    assert refused(result, "policy-error")
    assert "ledger.max_window_hours" in remote(result)


RELEASES = '[rules]\nprotected = ["refs/heads/main", "refs/heads/release/*"]\n'


def test_release_glob_protects_release_branches_from_rewrites(tmp_path: Path) -> None:
    work = with_policy(tmp_path, RELEASES)
    assert work.push("origin", "main:release/1.0", pusher="alice").returncode == 0
    work.git("commit", "-q", "--amend", "-m", "rewritten seed")
    result = work.push("--force", "origin", "HEAD:release/1.0", pusher="alice")
    assert refused(result, "non-fast-forward")
    result = work.push("origin", ":release/1.0", pusher="alice")
    assert refused(result, "protected-delete")
    assert server_tip(work, "refs/heads/release/1.0")


def test_release_glob_does_not_cross_a_slash(tmp_path: Path) -> None:
    work = with_policy(tmp_path, RELEASES)
    assert work.push("origin", "main:release/1.0/wip", pusher="alice").returncode == 0
    result = work.push("origin", ":release/1.0/wip", pusher="alice")
    assert result.returncode == 0, result.stderr


def test_post_receive_pins_branches_protected_by_a_glob(tmp_path: Path) -> None:
    work = with_policy(tmp_path, RELEASES)
    work.commit("fix", {"src/app.py": "v\n"})
    result = work.push("origin", "HEAD:release/2.0", pusher="alice")
    assert result.returncode == 0, result.stderr
    assert "git-evidence: pinned refs/heads/release/2.0" in remote(result)


def test_branch_off_a_glob_protected_release_is_judged_from_the_release(tmp_path: Path) -> None:
    work = with_policy(tmp_path, RELEASES)
    work.git("checkout", "-qb", "release/1.0")
    work.commit("golden for 1.0", {"tests/goldens/out.txt": "1.0\n"})
    assert work.push("origin", "release/1.0", pusher="alice").returncode == 0
    work.git("checkout", "-qb", "hotfix")
    work.commit("product fix", {"src/app.py": "hotfix\n"})
    # The reviewed golden commit is on a protected ref: not part of this range.
    result = work.push("origin", "hotfix", pusher=AGENT)
    assert result.returncode == 0, result.stderr


def test_base_outside_protected_is_a_policy_error(tmp_path: Path) -> None:
    work = with_policy(tmp_path, '[rules]\nbase = "refs/heads/develop"\n')
    work.commit("fix", {"src/app.py": "v\n"})
    result = push_main(work)
    assert refused(result, "policy-error")
    assert "rules.base: the base refs/heads/develop must be protected" in remote(result)


# -- E: negated globs within a class ---------------------------------------------------


def test_negated_product_glob_sends_paths_to_the_next_class(tmp_path: Path) -> None:
    work = with_policy(tmp_path, '[paths]\nproduct = ["src/**", "!src/gen/**"]\n')
    work.commit("generated", {"src/gen/parser.py": "p\n"})
    result = push_main(work)
    assert refused(result, "other-path")
    assert "other: src/gen/parser.py" in remote(result)
    work.git("reset", "-q", "--hard", "origin/main")
    work.commit("fix", {"src/app.py": "v\n"})
    assert push_main(work).returncode == 0


def test_negation_cannot_take_gitattributes_out_of_the_policy_class(tmp_path: Path) -> None:
    work = with_policy(
        tmp_path,
        '[paths]\npolicy = ["!.gitattributes", "!**/.gitattributes"]\n'
        'product = ["src/**", "!src/.gitattributes"]\n',
    )
    work.commit("attributes", {"src/.gitattributes": "*.json filter=x\n"})
    result = push_main(work)
    assert refused(result, "evidence-untrusted")
    assert "policy: src/.gitattributes" in remote(result)


def test_negation_in_the_fixture_class_takes_paths_back(tmp_path: Path) -> None:
    work = with_policy(
        tmp_path,
        '[paths]\nfixture = ["tests/fixtures/**", "!tests/fixtures/scratch/**"]\n'
        '[rules]\nadded_test = "allow"\n[lock]\nroots = ["tests/goldens"]\n',
    )
    work.commit("scratch and fix", {"tests/fixtures/scratch/t.txt": "t\n", "src/app.py": "v\n"})
    result = push_main(work)
    assert result.returncode == 0, result.stderr
    # The root stays: a file standing in for tests/fixtures is evidence.
    work.git("rm", "-rq", "tests/fixtures")
    work.commit("fixtures is a file", {"tests/fixtures": "x\n"})
    result = push_main(work)
    assert refused(result, "evidence-untrusted")
    assert "fixture: tests/fixtures" in remote(result)


def test_classify_names_the_negation_that_decided(tmp_path: Path) -> None:
    work = with_policy(
        tmp_path,
        '[paths]\nproduct = ["mypy/**", "!mypy/test/**"]\ntest = ["tests/**", "mypy/test/**"]\n',
    )
    out = evidence(work.path, "classify", "mypy/test/x.py", "mypy/a.py").stdout.splitlines()
    assert out[0] == (
        "mypy/test/x.py\ttest\tglob mypy/test/** ; product glob mypy/** negated by !mypy/test/**"
    )
    assert out[1] == "mypy/a.py\tproduct\tglob mypy/**"


def test_linked_directory_added_after_the_link_climbing_out_of_it_is_refused(
    deep: Work,
) -> None:
    # First the climbing link, dangling (src/sub does not exist yet), then the
    # directory link that makes it lead into tests/fixtures: each commit alone looks
    # harmless.
    links(deep, "dangling link", {"src/l": "sub/../../fixtures/g.json"})
    links(deep, "a product link to test code", {"src/sub": "../tests/unit/deep"})
    result = push_main(deep)
    assert refused(result, "evidence-untrusted")
    assert "fixture: src/sub" in remote(result)


def test_retargeting_a_linked_directory_under_a_climbing_link_is_refused(deep: Work) -> None:
    links(
        deep,
        "links within product",
        {"src/sub": "pkg/deep", "src/l": "sub/../../fixtures/g.json"},
        {"src/pkg/deep/x.py": "x\n"},
    )
    result = push_main(deep)
    assert result.returncode == 0, result.stderr
    os.remove(deep.path / "src/sub")
    links(deep, "retarget", {"src/sub": "../tests/unit/deep"})
    result = push_main(deep)
    assert refused(result, "evidence-untrusted")
    assert "fixture: src/sub" in remote(result)


def test_fixture_negation_holds_inside_the_default_lock_roots(tmp_path: Path) -> None:
    work = with_policy(
        tmp_path,
        '[paths]\nfixture = ["tests/fixtures/**", "!tests/fixtures/README.md"]\n'
        '[rules]\nadded_test = "allow"\n',
    )
    out = evidence(work.path, "classify", "tests/fixtures/README.md").stdout
    assert out.startswith("tests/fixtures/README.md\ttest\tglob tests/** ; fixture glob")
    work.commit("notes and fix", {"tests/fixtures/README.md": "notes\n", "src/app.py": "v\n"})
    result = push_main(work)
    # The negation takes the path out of the fixture class, not out of the lock root:
    # the bytes the tests can read there changed, and the lock says so (with or without
    # a notes ref on the server).
    assert refused(result, "fixture-breach"), result.stderr
    assert "added: tests/fixtures/README.md" in remote(result)
