"""End to end: real `git push` into a bare repository with the pre-receive hook
installed. Each attack is a test of its own; the controls must pass."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.pushes import AGENT, refused, remote, server_tip
from helpers.repos import POLICY, Work, git, make_server, protected_clone

# -- controls: these must pass -----------------------------------------------------


def test_product_only_push_is_allowed(work: Work) -> None:
    work.commit("fix", {"src/app.py": "print('fixed')\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    assert "allow" not in remote(result)  # an allow with nothing to remark is not said
    assert server_tip(work) == work.head()


def test_docs_only_push_is_allowed(work: Work) -> None:
    work.commit("docs", {"docs/guide.md": "more\n", "README.md": "new readme\n"})
    assert work.push("origin", "HEAD:main", pusher=AGENT).returncode == 0


def test_product_with_docs_is_allowed(work: Work) -> None:
    work.commit("fix+docs", {"src/app.py": "y\n", "docs/guide.md": "why\n"})
    assert work.push("origin", "HEAD:main", pusher=AGENT).returncode == 0


def test_trusted_evidence_only_push_is_allowed(work: Work) -> None:
    work.commit("new golden", {"tests/goldens/out.txt": "new golden\n"})
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr


def test_trusted_separate_product_and_evidence_commits_are_allowed(work: Work) -> None:
    work.commit("behaviour", {"src/app.py": "v2\n"})
    work.commit("golden for v2", {"tests/goldens/out.txt": "v2\n"})
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr


def test_new_product_branch_is_allowed(work: Work) -> None:
    work.git("checkout", "-qb", "feat")
    work.commit("one", {"src/a.py": "1\n"})
    work.commit("two", {"src/b.py": "2\n"})
    result = work.push("origin", "feat", pusher=AGENT)
    assert result.returncode == 0, result.stderr


def test_merging_main_into_feature_branch_is_allowed(work: Work, tmp_path: Path) -> None:
    work.git("checkout", "-qb", "feat")
    work.commit("feature", {"src/feature.py": "f\n"})
    assert work.push("origin", "feat", pusher=AGENT).returncode == 0
    trusted = Work(tmp_path / "alice")
    git(
        tmp_path,
        "clone",
        "-q",
        str(work.git("remote", "get-url", "origin").stdout.strip()),
        str(trusted.path),
    )
    trusted.commit("golden", {"tests/goldens/out.txt": "v3\n"})
    assert trusted.push("origin", "HEAD:main", pusher="alice").returncode == 0
    work.git("fetch", "-q", "origin")
    work.git("merge", "-q", "--no-edit", "origin/main")
    result = work.push("origin", "feat", pusher=AGENT)
    assert result.returncode == 0, result.stderr


def test_deleting_a_feature_branch_is_allowed(work: Work) -> None:
    work.git("checkout", "-qb", "feat")
    work.commit("f", {"src/f.py": "f\n"})
    assert work.push("origin", "feat", pusher=AGENT).returncode == 0
    result = work.push("origin", ":feat", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    assert server_tip(work, "refs/heads/feat") == ""


def test_two_clean_refs_at_once_are_allowed(work: Work) -> None:
    work.commit("main fix", {"src/app.py": "m\n"})
    work.git("checkout", "-qb", "feat")
    work.commit("feature", {"src/feat.py": "f\n"})
    result = work.push("origin", "main", "feat", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    assert "allow" not in remote(result)


def test_clean_merge_of_product_branch_is_allowed(work: Work) -> None:
    work.git("checkout", "-qb", "feat")
    work.commit("feature", {"src/feat.py": "f\n"})
    work.git("checkout", "-q", "main")
    work.commit("main side", {"src/app.py": "m\n"})
    work.git("merge", "-q", "--no-ff", "--no-edit", "feat")
    result = work.push("origin", "main", pusher=AGENT)
    assert result.returncode == 0, result.stderr


# -- the fence: mixes ----------------------------------------------------------------


def test_mixed_commit_is_refused(work: Work) -> None:
    sha = work.commit("fix", {"src/app.py": "x\n", "tests/fixtures/a.json": "{}\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "mixed-commit")
    said = remote(result)
    assert (
        f"\nmixed-commit: refs/heads/main {sha[:12]}: commit mixes evidence (fixture) "
        "with product" in said
    )
    assert "\n    fixture: tests/fixtures/a.json\n    product: src/app.py\n" in said
    assert "\n  To fix: split commit" in said
    assert all(
        len(line) <= 80
        for line in result.stderr.replace(" " * 8 + "\n", "\n").splitlines()
        if line.startswith("remote:")
    )
    assert server_tip(work) != sha


def test_trusted_mixed_commit_is_refused(work: Work) -> None:
    work.commit("fix", {"src/app.py": "x\n", "tests/goldens/out.txt": "moved\n"})
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert refused(result, "mixed-commit")
    assert "evidence-untrusted" not in remote(result)


def test_test_code_beside_fixture_is_a_mixed_commit(work: Work) -> None:
    work.commit("loosen", {"tests/test_app.py": "# weaker\n", "tests/fixtures/a.json": "{}\n"})
    assert refused(work.push("origin", "HEAD:main", pusher="alice"), "mixed-commit")


def test_evidence_split_across_commits_is_refused(work: Work) -> None:
    work.commit("product", {"src/app.py": "x\n"})
    work.commit("fixture", {"tests/fixtures/a.json": "{}\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "mixed-range")
    assert refused(result, "evidence-untrusted")
    assert "mixed-commit" not in remote(result)


def test_evidence_changed_then_reverted_beside_product_is_refused(work: Work) -> None:
    work.commit("loosen fixture", {"tests/fixtures/a.json": "{}\n"})
    work.git("revert", "--no-edit", "HEAD")
    work.commit("product", {"src/app.py": "x\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "mixed-range")


def test_rename_out_of_fixtures_is_refused(work: Work) -> None:
    work.git("mv", "tests/fixtures/a.json", "src/a.json")
    work.git("commit", "-qm", "move fixture into product")
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "mixed-commit")
    assert "fixture: tests/fixtures/a.json" in remote(result)


def test_rename_into_fixtures_is_refused(work: Work) -> None:
    work.git("mv", "src/app.py", "tests/fixtures/app.py")
    work.git("commit", "-qm", "move product into fixtures")
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "mixed-commit")


def test_rename_within_fixtures_is_refused_for_untrusted(work: Work) -> None:
    work.git("mv", "tests/fixtures/a.json", "tests/fixtures/renamed.json")
    work.git("commit", "-qm", "rename")
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "evidence-untrusted")


def test_copy_into_fixtures_is_refused(work: Work) -> None:
    work.commit("copy", {"tests/fixtures/app_copy.py": (work.path / "src/app.py").read_text()})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert "fixture: tests/fixtures/app_copy.py" in remote(result)


def test_fixture_delete_is_refused(work: Work) -> None:
    work.commit("drop row", remove=("tests/fixtures/b.json",))
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "evidence-untrusted")


def test_mode_only_change_on_fixture_is_refused(work: Work) -> None:
    work.git("update-index", "--chmod=+x", "tests/fixtures/a.json")
    work.git("commit", "-qm", "chmod")
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert "fixture: tests/fixtures/a.json" in remote(result)


def test_fixture_replaced_by_symlink_is_refused(work: Work) -> None:
    os.remove(work.path / "tests/fixtures/a.json")
    work.commit_link("symlink swap", "tests/fixtures/a.json", "../../src/app.py")
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "evidence-untrusted")


def test_product_symlink_into_fixtures_is_refused(work: Work) -> None:
    work.commit_link("product link", "src/data.json", "../tests/fixtures/a.json")
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert "src/data.json" in remote(result)


def test_product_symlink_above_fixture_root_is_refused(work: Work) -> None:
    work.commit_link("link to tests/", "src/all_tests", "../tests")
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "evidence-untrusted")


def test_fixture_directory_replaced_by_symlink_is_refused(work: Work) -> None:
    work.git("rm", "-rq", "tests/fixtures")
    work.commit_link("fixtures dir is now a link", "tests/fixtures", "../src")
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert "    fixture: tests/fixtures\n" in remote(result)


def test_file_above_evidence_root_is_refused(work: Work) -> None:
    work.git("rm", "-rq", "tests")
    work.commit("tests is a file now", {"tests": "nothing here\n"})
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "evidence-untrusted")


def test_gitlink_on_evidence_path_is_refused(work: Work) -> None:
    sha = work.head()
    work.git("update-index", "--add", "--cacheinfo", f"160000,{sha},tests/fixtures/sub")
    work.git("commit", "-qm", "submodule in fixtures")
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "evidence-untrusted")


def test_gitmodules_is_policy(work: Work) -> None:
    work.commit("submodule config", {".gitmodules": '[submodule "x"]\n\tpath = x\n'})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert "policy: .gitmodules" in remote(result)


@pytest.mark.parametrize(
    "where", [".gitattributes", "src/.gitattributes", "tests/fixtures/deep/.gitattributes"]
)
def test_gitattributes_anywhere_is_refused(work: Work, where: str) -> None:
    work.commit("attributes", {where: "*.json filter=rewrite\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")


def test_policy_file_change_is_refused_for_untrusted(work: Work) -> None:
    work.commit("loosen", {".git-evidence.toml": "[paths]\nfixture = []\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert "policy: .git-evidence.toml" in remote(result)


def test_policy_loosened_in_the_same_push_is_refused(work: Work) -> None:
    loose = (
        "[paths]\nfixture = []\noracle = []\nproduct = ['src/**', 'tests/**']\n"
        "[identities]\nevidence_writers = ['agent-bot']\n"
    )
    work.commit("loosen policy", {".git-evidence.toml": loose})
    work.commit("now edit the judge", {"src/app.py": "bug\n", "tests/fixtures/a.json": "{}\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "mixed-commit")
    assert refused(result, "evidence-untrusted")


# -- spellings of evidence paths ------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "Tests/Fixtures/a.json",  # case variant
        "TESTS/FIXTURES/new.json",
        "tests/fix\u200ctures/a.json",  # zero-width non-joiner
        "tests/fixtures\u200b/a.json",  # zero-width space
        "tests/fixtures./a.json",  # trailing dot (Windows drops it)
        "tests/fixtures /a.json",  # trailing space
        "tests/fixtures/интервью.json",  # non-ASCII name under a fixture root
    ],
)
def test_evidence_path_spellings_are_refused(work: Work, path: str) -> None:
    work.commit("spelling", {"src/app.py": "bug\n", path: "{}\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "mixed-commit"), result.stderr


def test_nfd_spelling_of_evidence_path_is_refused(tmp_path: Path) -> None:
    policy = (
        '[paths]\nfixture = ["tests/fixtures/**", "tests/r\u00e9sultats/**"]\n'
        '[identities]\nevidence_writers = ["alice"]\n'
    )
    work = protected_clone(tmp_path, {".git-evidence.toml": policy})
    work.commit("nfd", {"src/app.py": "bug\n", "tests/re\u0301sultats/x.txt": "1\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "mixed-commit"), result.stderr


def test_non_utf8_fixture_name_is_refused(work: Work) -> None:
    work.write(b"tests/fixtures/caf\xe9.json", b"{}\n")
    work.commit("latin-1 name", {"src/app.py": "bug\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "mixed-commit"), result.stderr
    assert "Traceback" not in result.stderr


def test_path_with_newline_is_refused(work: Work) -> None:
    work.commit("newline", {"tests/fixtures/a\nb.json": "{}\n", "src/app.py": "bug\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "mixed-commit")
    assert 'fixture: "tests/fixtures/a\\nb.json"' in remote(result)


def test_snapshot_at_any_depth_is_an_oracle(work: Work) -> None:
    work.commit("snap", {"src/__snapshots__/view.snap": "x\n", "src/view.py": "v\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "mixed-commit")
    assert "oracle: src/__snapshots__/view.snap" in remote(result)


# -- merges ------------------------------------------------------------------------------


def test_evil_merge_is_refused(work: Work) -> None:
    work.git("checkout", "-qb", "feat")
    work.commit("feature", {"src/feat.py": "f\n"})
    work.git("checkout", "-q", "main")
    work.commit("main side", {"src/app.py": "m\n"})
    work.git("merge", "-q", "--no-ff", "--no-commit", "feat")
    work.write("tests/fixtures/a.json", '{"evil": true}\n')
    work.git("add", "-A")
    work.git("commit", "-qm", "merge feat")
    merge = work.head()
    result = work.push("origin", "main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert refused(result, "mixed-range")
    work.git("reset", "-q", "--hard", "HEAD")
    assert merge


def test_evil_merge_mixing_in_the_merge_itself_is_a_mixed_commit(work: Work) -> None:
    work.git("checkout", "-qb", "feat")
    work.commit("feature", {"src/feat.py": "f\n"})
    work.git("checkout", "-q", "main")
    work.commit("main side", {"src/app.py": "m\n"})
    work.git("merge", "-q", "--no-ff", "--no-commit", "feat")
    work.write("tests/fixtures/a.json", '{"evil": true}\n')
    work.write("src/extra.py", "sneaky\n")
    work.git("add", "-A")
    work.git("commit", "-qm", "merge feat")
    result = work.push("origin", "main", pusher="alice")
    assert refused(result, "mixed-commit")
    assert "merge mixes evidence (fixture) with product" in remote(result)


def test_octopus_merge_bringing_evidence_is_refused(work: Work) -> None:
    for name, files in (
        ("p1", {"src/p1.py": "1\n"}),
        ("p2", {"src/p2.py": "2\n"}),
        ("ev", {"tests/fixtures/c.json": "{}\n"}),
    ):
        work.git("checkout", "-q", "-b", name, "main")
        work.commit(name, files)
    work.git("checkout", "-q", "main")
    work.git("merge", "-q", "--no-edit", "p1", "p2", "ev")
    assert len(work.git("log", "-1", "--format=%P").stdout.split()) == 3
    result = work.push("origin", "main", pusher=AGENT)
    assert refused(result, "mixed-range")


def test_ours_merge_of_a_mixed_branch_is_refused(work: Work) -> None:
    work.git("checkout", "-qb", "sneaky")
    work.commit("mixed", {"src/app.py": "bug\n", "tests/fixtures/a.json": "{}\n"})
    work.git("checkout", "-q", "main")
    work.commit("product", {"src/other.py": "o\n"})
    work.git("merge", "-q", "-s", "ours", "--no-edit", "sneaky")
    assert (work.path / "tests/fixtures/a.json").read_text() == '{"a": 1}\n'
    result = work.push("origin", "main", pusher=AGENT)
    assert refused(result, "mixed-commit")


def test_unrelated_history_merge_is_refused(work: Work) -> None:
    work.git("checkout", "-q", "--orphan", "other")
    work.git("rm", "-rqf", ".")
    work.commit("foreign root", {"tests/fixtures/foreign.json": "{}\n"})
    work.git("checkout", "-q", "main")
    work.git("merge", "-q", "--allow-unrelated-histories", "--no-edit", "other")
    work.commit("product", {"src/app.py": "p\n"})
    result = work.push("origin", "main", pusher=AGENT)
    assert refused(result, "mixed-range")


# -- history shape and refs ---------------------------------------------------------------


def test_force_push_to_main_is_refused(work: Work) -> None:
    work.git("commit", "-q", "--amend", "-m", "rewritten seed")
    result = work.push("--force", "origin", "HEAD:main", pusher="alice")
    assert refused(result, "non-fast-forward")


def test_deleting_protected_branch_is_refused(tmp_path: Path) -> None:
    policy = (
        '[rules]\nprotected = ["refs/heads/main", "refs/heads/release"]\n'
        '[identities]\nevidence_writers = ["alice"]\n'
    )
    work = protected_clone(tmp_path, {".git-evidence.toml": policy})
    assert work.push("origin", "main:release", pusher="alice").returncode == 0
    result = work.push("origin", ":release", pusher="alice")
    assert refused(result, "protected-delete")
    assert server_tip(work, "refs/heads/release")


def test_new_branch_with_evidence_is_refused_when_the_policy_takes_no_proposals(
    tmp_path: Path,
) -> None:
    work = protected_clone(
        tmp_path, {".git-evidence.toml": POLICY + "[rules]\nproposals = false\n"}
    )
    work.git("checkout", "-qb", "feat")
    work.commit("fixture", {"tests/fixtures/x.json": "{}\n"})
    assert refused(work.push("origin", "feat", pusher=AGENT), "evidence-untrusted")


def test_annotated_tag_on_commit_the_server_lacks_is_judged(work: Work) -> None:
    work.git("checkout", "-qb", "hidden")
    work.commit("mixed", {"src/app.py": "bug\n", "tests/fixtures/a.json": "{}\n"})
    work.git("tag", "-a", "-m", "release", "v1")
    work.git("checkout", "-q", "main")
    work.git("branch", "-D", "hidden")
    result = work.push("origin", "refs/tags/v1", pusher=AGENT)
    assert refused(result, "mixed-commit")


def test_annotated_tag_on_product_commit_is_allowed(work: Work) -> None:
    work.commit("fix", {"src/app.py": "ok\n"})
    work.git("tag", "-a", "-m", "release", "v1")
    result = work.push("origin", "refs/tags/v1", pusher=AGENT)
    assert result.returncode == 0, result.stderr


def test_tag_on_a_blob_is_refused(work: Work) -> None:
    blob = work.git("hash-object", "-w", "src/app.py").stdout.strip()
    work.git("tag", "blobtag", blob)
    assert refused(work.push("origin", "refs/tags/blobtag", pusher=AGENT), "not-a-commit")


def test_replace_ref_push_is_refused(work: Work) -> None:
    seed = work.head()
    work.commit("product", {"src/app.py": "p\n"})
    work.git("replace", seed, work.head())
    result = work.push("origin", f"refs/replace/{seed}", pusher="alice")
    assert refused(result, "replace-ref")


def test_client_side_replace_ref_does_not_hide_evidence(work: Work) -> None:
    mixed = work.commit("mixed", {"src/app.py": "bug\n", "tests/fixtures/a.json": "{}\n"})
    work.git("checkout", "-q", "HEAD~")
    clean = work.commit("clean look-alike", {"src/app.py": "bug\n"})
    work.git("checkout", "-q", "main")
    work.git("replace", mixed, clean)
    assert "tests/fixtures" not in work.git("show", "--stat", "main").stdout
    result = work.push("origin", "main", pusher=AGENT)
    assert refused(result, "mixed-commit")


def test_ref_outside_allowed_namespaces_is_refused(work: Work) -> None:
    assert refused(work.push("origin", "HEAD:refs/sneaky/x", pusher=AGENT), "ref-namespace")


def test_notes_push_by_untrusted_is_refused(work: Work) -> None:
    work.git("notes", "--ref", "refs/notes/evidence", "add", "-m", "{}", "HEAD")
    result = work.push("origin", "refs/notes/evidence", pusher=AGENT)
    assert refused(result, "notes-forge")


def test_push_options_do_not_bypass_the_gate(work: Work, server: Path) -> None:
    git(server, "config", "receive.advertisePushOptions", "true")
    work.commit("mixed", {"src/app.py": "bug\n", "tests/fixtures/a.json": "{}\n"})
    result = work.push("-o", "evidence.skip", "-o", "ci.skip", "origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "mixed-commit")


def test_multi_ref_push_with_one_bad_ref_updates_nothing(work: Work) -> None:
    before = server_tip(work)
    work.commit("clean", {"src/app.py": "ok\n"})
    work.git("checkout", "-qb", "bad")
    work.commit("mixed", {"src/app.py": "bug\n", "tests/fixtures/a.json": "{}\n"})
    result = work.push("origin", "main", "bad", pusher=AGENT)
    assert refused(result, "mixed-commit")
    assert "refused: 1 of 2 ref updates not allowed" in remote(result)
    assert server_tip(work) == before
    assert server_tip(work, "refs/heads/bad") == ""


# -- who pushes ---------------------------------------------------------------------------


def test_evidence_by_untrusted_pusher_is_refused(work: Work) -> None:
    work.commit("golden", {"tests/goldens/out.txt": "moved\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert "agent-bot may not change evidence" in remote(result)


def test_evidence_by_anonymous_pusher_is_refused(work: Work) -> None:
    work.commit("golden", {"tests/goldens/out.txt": "moved\n"})
    result = work.push("origin", "HEAD:main")
    assert refused(result, "evidence-untrusted")
    assert "anonymous may not change evidence" in remote(result)


@pytest.mark.parametrize(
    "variable", ["GL_USERNAME", "GL_USER", "GITEA_PUSHER_NAME", "GITHUB_USER_LOGIN", "REMOTE_USER"]
)
def test_hosting_identity_variables_name_the_pusher(work: Work, variable: str) -> None:
    work.commit("golden", {"tests/goldens/out.txt": "moved\n"})
    assert work.push("origin", "HEAD:main", env={variable: "alice"}).returncode == 0


def test_ledger_append_needs_a_ledger_writer(work: Work) -> None:
    work.commit("freeze", {"tests/freeze.jsonl": "{}\n"})
    assert refused(work.push("origin", "HEAD:main", pusher="alice"), "evidence-untrusted")
    by_ci = work.push("origin", "HEAD:main", pusher="ci-bot")
    assert refused(by_ci, "ledger-entry")  # a writer, but not a valid entry
    assert "evidence-untrusted" not in by_ci.stderr


# -- the [rules] table ---------------------------------------------------------------------


def test_unclassified_path_is_held(work: Work) -> None:
    work.commit("ci", {".github/workflows/ci.yml": "on: push\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "other-path")
    assert "refs/heads/main: hold" in remote(result)


def test_added_test_is_held(work: Work) -> None:
    work.commit("test", {"tests/test_new.py": "def test(): pass\n"})
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "added-test")


def test_edited_test_is_held(work: Work) -> None:
    work.commit("test", {"tests/test_app.py": "def test_app(): assert True\n"})
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "test-edit")


def test_rules_table_can_allow_other_paths(tmp_path: Path) -> None:
    policy = '[rules]\nother_path = "allow"\nadded_test = "allow"\n'
    work = protected_clone(tmp_path, {".git-evidence.toml": policy})
    work.commit("ci", {"Makefile": "all:\n", "tests/test_x.py": "x\n"})
    assert work.push("origin", "HEAD:main", pusher=AGENT).returncode == 0


# -- failing closed ------------------------------------------------------------------------


def test_malformed_sealed_policy_refuses_every_push(
    work: Work, server: Path, tmp_path: Path
) -> None:
    sealed = tmp_path / "policy.toml"
    sealed.write_text('[rules]\nother_path = "hold"\nprotected = [\n')
    git(server, "config", "evidence.policyFile", str(sealed))
    work.commit("fix", {"src/app.py": "ok\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "policy-error")
    assert f"sealed:{sealed}:" in remote(result)
    assert "Traceback" not in result.stderr


def test_unknown_key_in_sealed_policy_refuses_every_push(
    work: Work, server: Path, tmp_path: Path
) -> None:
    sealed = tmp_path / "policy.toml"
    sealed.write_text('[rules]\nother_path = "hold"\nskip_all = true\n')
    git(server, "config", "evidence.policyFile", str(sealed))
    work.commit("fix", {"src/app.py": "ok\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "policy-error")
    assert f"{sealed}:3: rules.skip_all: unknown key" in remote(result)


def test_missing_sealed_policy_refuses(work: Work, server: Path) -> None:
    git(server, "config", "evidence.policyFile", "/nonexistent/policy.toml")
    work.commit("fix", {"src/app.py": "ok\n"})
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "policy-error")


def test_sealed_policy_wins_over_the_file_in_the_repository(
    work: Work, server: Path, tmp_path: Path
) -> None:
    sealed = tmp_path / "policy.toml"
    sealed.write_text('[identities]\nevidence_writers = ["bob"]\n')
    git(server, "config", "evidence.policyFile", str(sealed))
    work.commit("golden", {"tests/goldens/out.txt": "moved\n"})
    assert refused(work.push("origin", "HEAD:main", pusher="alice"), "evidence-untrusted")
    assert work.push("origin", "HEAD:main", pusher="bob").returncode == 0


def test_broken_policy_on_main_refuses_with_its_line(tmp_path: Path) -> None:
    work = protected_clone(tmp_path, {".git-evidence.toml": "[paths]\nproduct = 'src'\n"})
    work.commit("fix", {"src/app.py": "ok\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "policy-error")
    assert "base:.git-evidence.toml:2: paths.product: expected a list of strings" in remote(result)


def test_symlink_through_an_existing_link_into_fixtures_is_refused(tmp_path: Path) -> None:
    bare = make_server(tmp_path)
    legacy = Work(tmp_path / "legacy")
    git(tmp_path, "clone", "-q", str(bare), str(legacy.path))
    legacy.commit_link("a link that predates the gate", "src/fx", "../tests/fixtures")
    hook = bare / "hooks" / "pre-receive"  # it came in before the hook was installed
    hook.rename(bare / "hooks" / "off")
    assert legacy.push("origin", "HEAD:main").returncode == 0
    (bare / "hooks" / "off").rename(hook)
    work = Work(tmp_path / "w")
    git(tmp_path, "clone", "-q", str(bare), str(work.path))
    work.commit_link("innocent-looking product link", "src/data.json", "fx/a.json")
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert "fixture: src/data.json" in remote(result)


def test_symlink_loop_does_not_hang_or_crash(work: Work) -> None:
    os.symlink("b", work.path / "src/a")
    work.commit_link("loop", "src/b", "a")
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert result.returncode == 0, result.stderr


def test_glob_characters_in_names_are_literal(work: Work) -> None:
    work.commit("odd names", {"src/[ab]*.py": "x\n", "src/?.py": "y\n"})
    assert work.push("origin", "HEAD:main", pusher=AGENT).returncode == 0
    work.commit("odd fixture", {"tests/fixtures/*": "{}\n", "src/app.py": "z\n"})
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "mixed-commit")


def test_time_budget_refuses_instead_of_hanging(tmp_path: Path) -> None:
    policy = '[rules]\ntime_budget_s = 0.001\n[identities]\nevidence_writers = ["alice"]\n'
    work = protected_clone(tmp_path, {".git-evidence.toml": policy})
    for n in range(30):
        work.commit(f"product {n}", {"src/app.py": f"v{n}\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "time-budget")
    said = remote(result)
    assert "judging stopped at the time budget of 0.001 s" in said
    assert "commits judged" in said
    assert "nothing was allowed" in said
    assert server_tip(work) != work.head()


def test_time_budget_must_be_a_sane_number(tmp_path: Path) -> None:
    work = protected_clone(tmp_path, {".git-evidence.toml": "[rules]\ntime_budget_s = -1\n"})
    work.commit("product", {"src/app.py": "v\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "policy-error")
    assert "rules.time_budget_s: expected seconds" in remote(result)


def test_a_case_variant_of_a_protected_branch_is_protected(server: Path) -> None:
    from git_evidence.core.facts import RefUpdate
    from git_evidence.core.oids import ZERO_OID
    from git_evidence.gate.ranges import plan_updates
    from git_evidence.plumbing.context import server_view
    from git_evidence.plumbing.git import Git
    from git_evidence.plumbing.in_force import resolve

    repo = Git(cwd=str(server))
    refs = repo.refs()
    policy = resolve(repo, refs=refs, server=True).policy
    main = refs["refs/heads/main"]
    plans = plan_updates(
        repo,
        [
            RefUpdate(main, ZERO_OID, "refs/heads/MAIN"),
            RefUpdate(ZERO_OID, main, "refs/Notes/Evidence"),
        ],
        policy,
        server_view(refs, policy),
    )
    assert plans[0].protected
    assert plans[1].notes


def test_a_backslash_spelling_of_an_evidence_path_is_evidence(work: Work) -> None:
    work.commit("backslash", {"src/app.py": "bug\n", "tests\\fixtures\\a.json": "{}\n"})
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "mixed-commit")
