"""``policy-invalid`` covers the test labels file: a protected ref is never
left with labels that do not parse, since every judgement and every ``pytest
--evidence`` run reads them from there. End to end: real pushes into a bare repository
with the server hook, and the client hooks (pre-commit, pre-push) in a real clone."""

from __future__ import annotations

from pathlib import Path

from helpers.labels import BROKEN, GOOD, LABELS, WHY
from helpers.pushes import refused, remote, server_tip
from helpers.repos import POLICY, Work, clone_of, evidence, make_remote, make_server


def server_with_labels(tmp_path: Path) -> Path:
    return make_server(tmp_path, {LABELS: GOOD})


def test_labels_that_do_not_parse_are_refused_on_main_naming_file_and_line(
    tmp_path: Path,
) -> None:
    alice = clone_of(tmp_path, server_with_labels(tmp_path), "alice")
    tip = server_tip(alice)
    alice.commit("relabel", {LABELS: BROKEN})
    result = alice.push("origin", "HEAD:main", pusher="alice")
    assert refused(result, "policy-invalid")
    said = remote(result)
    assert f"{alice.head()[:12]}:{LABELS}:3: {WHY}" in said
    assert f"git evidence labels check --rev {alice.head()[:12]}" in said
    assert server_tip(alice) == tip


def test_labels_that_parse_are_allowed_from_an_evidence_writer(tmp_path: Path) -> None:
    alice = clone_of(tmp_path, server_with_labels(tmp_path), "alice")
    alice.commit("relabel", {LABELS: GOOD + "tests/test_app.py::test_net\tnondeterministic\n"})
    result = alice.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr


def test_a_first_labels_file_that_does_not_parse_is_refused(tmp_path: Path) -> None:
    alice = clone_of(tmp_path, make_server(tmp_path), "alice")
    alice.commit("labels", {LABELS: "tests/test_app.py::test_app invariant\n"})  # no tab
    result = alice.push("origin", "HEAD:main", pusher="alice")
    assert refused(result, "policy-invalid")
    assert f":{LABELS}:1: expected `node id<TAB>kind`" in remote(result)


def test_labels_replaced_by_a_directory_are_refused(tmp_path: Path) -> None:
    alice = clone_of(tmp_path, server_with_labels(tmp_path), "alice")
    alice.git("rm", "-q", LABELS)
    alice.commit("labels as a directory", {f"{LABELS}/rows.tsv": GOOD})
    result = alice.push("origin", "HEAD:main", pusher="alice")
    assert refused(result, "policy-invalid")
    assert f":{LABELS}: a tree, not a labels file" in remote(result)


def test_broken_labels_brought_by_a_merge_are_refused(tmp_path: Path) -> None:
    alice = clone_of(tmp_path, server_with_labels(tmp_path), "alice")
    alice.git("checkout", "-qb", "relabel")
    alice.commit("relabel", {LABELS: BROKEN})
    alice.git("checkout", "-q", "main")
    alice.commit("product", {"src/app.py": "v2\n"})
    alice.git("merge", "-q", "--no-ff", "--no-edit", "relabel")
    result = alice.push("origin", "main", pusher="alice")
    assert refused(result, "policy-invalid")
    assert f":{LABELS}:3: {WHY}" in remote(result)


def test_a_policy_moving_the_labels_to_a_file_that_does_not_parse_is_refused(
    tmp_path: Path,
) -> None:
    """The labels checked are at the path the policy in force after the push names."""
    moved = "tests/labels/evidence.tsv"
    alice = clone_of(tmp_path, server_with_labels(tmp_path), "alice")
    alice.commit("new labels", {moved: BROKEN})
    alice.commit("policy", {".git-evidence.toml": POLICY + f'\n[labels]\npath = "{moved}"\n'})
    result = alice.push("origin", "HEAD:main", pusher="alice")
    assert refused(result, "policy-invalid")
    said = remote(result)
    assert f"{alice.head()[:12]}:{moved}:3: {WHY}" in said


def test_broken_labels_on_a_feature_branch_do_not_refuse_it(tmp_path: Path) -> None:
    """Only a protected ref must keep labels that parse (a branch is for review)."""
    alice = clone_of(tmp_path, server_with_labels(tmp_path), "alice")
    alice.git("checkout", "-qb", "draft")
    alice.commit("draft labels", {LABELS: BROKEN})
    result = alice.push("origin", "draft", pusher="alice")
    assert "policy-invalid" not in remote(result)
    assert result.returncode == 0, result.stderr


# -- the client hooks ---------------------------------------------------------------------


def hooked_clone(tmp_path: Path) -> Work:
    """A trusted clone (evidence may be committed here) with the client hooks, of a
    remote without a server hook: only the client hooks stand."""
    work = clone_of(tmp_path, make_remote(tmp_path, {LABELS: GOOD}), "clone")
    installed = evidence(work.path, "install")
    assert installed.returncode == 0, installed.stderr
    work.git("config", "evidence.trusted", "true")
    return work


def test_pre_commit_refuses_staged_labels_that_do_not_parse(tmp_path: Path) -> None:
    work = hooked_clone(tmp_path)
    work.write(LABELS, BROKEN)
    work.git("add", "-A")
    result = work.git("commit", "-m", "relabel", check=False)
    assert result.returncode != 0
    said = " ".join(result.stderr.split())
    assert f"policy-invalid: refs/heads/main: staged:{LABELS}:3: {WHY}" in said
    assert f"git add -- {LABELS}" in said


def test_pre_commit_allows_staged_labels_that_parse(tmp_path: Path) -> None:
    work = hooked_clone(tmp_path)
    work.write(LABELS, GOOD + "tests/test_app.py::test_net\tnondeterministic\n")
    work.git("add", "-A")
    result = work.git("commit", "-m", "relabel", check=False)
    assert result.returncode == 0, result.stderr


def test_pre_push_refuses_labels_committed_around_pre_commit(tmp_path: Path) -> None:
    work = hooked_clone(tmp_path)
    work.write(LABELS, BROKEN)
    work.git("commit", "-qam", "relabel", "--no-verify")
    result = work.push("origin", "HEAD:main")
    assert result.returncode != 0
    said = " ".join(result.stderr.split())
    assert "policy-invalid: refs/heads/main" in said and f":{LABELS}:3: {WHY}" in said
