"""Holds a person can accept: on a protected ref a hold blocks
unless a reviewer pushes it; on any other ref it is reported and does not block; a
trusted clone accepts holds in its client hooks; rejects stay rejects. End to end:
real pushes into a bare repository with the hooks installed."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from helpers.pushes import refused, remote, server_tip
from helpers.repos import SEED, Work, clone_of, evidence, make_remote, make_server

AGENT = "agent-bot"
NEW_TEST = {"tests/test_new.py": "def test_new():\n    assert True\n"}
# alice writes evidence; bob only reviews.
SPLIT_ROLES = """\
[identities]
evidence_writers = ["alice"]
reviewers = ["bob"]
ledger_writers = ["ci-bot"]
lock_writers = ["ci-bot"]
"""


def said(result: subprocess.CompletedProcess[str]) -> str:
    return remote(result)


def flat(text: str) -> str:
    """A client hook's report with its wrapped lines joined (path lines kept apart)."""
    return re.sub(r"\n {4}(?![a-z_]+: )", " ", text)


# -- protected refs: a reviewer's push accepts a hold ----------------------------------


def test_reviewer_push_to_main_accepts_an_added_test(work: Work) -> None:
    work.commit("new test", NEW_TEST)
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr
    text = said(result)
    assert "\naccepted by alice: added-test tests/test_new.py\n" in f"\n{text}\n"
    assert "refs/heads/main: allow" in text
    assert "To fix" not in text
    assert server_tip(work) == work.head()


def test_untrusted_push_of_an_added_test_to_main_is_held(work: Work) -> None:
    before = server_tip(work)
    work.commit("new test", NEW_TEST)
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "added-test")
    text = said(result)
    assert "refs/heads/main: hold" in text
    assert "accepted by" not in text
    assert (
        "a reviewer (alice) accepts the held change by pushing it, or a merge of it, to "
        "refs/heads/main" in text
    )
    assert server_tip(work) == before


def test_anonymous_push_of_an_unclassified_path_to_main_is_held(work: Work) -> None:
    work.commit("ci", {".github/workflows/ci.yml": "on: push\n"})
    result = work.push("origin", "HEAD:main")
    assert refused(result, "other-path")
    assert "refs/heads/main: hold" in said(result)


def test_reviewer_push_accepts_every_hold_of_the_range(work: Work) -> None:
    work.commit("ci", {".github/workflows/ci.yml": "on: push\n"})
    work.commit("edit test", {"tests/test_app.py": "def test_app():\n    assert 1\n"})
    work.commit("new test", NEW_TEST)
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr
    text = said(result)
    assert "accepted by alice: other-path .github/workflows/ci.yml" in text
    assert "accepted by alice: test-edit tests/test_app.py" in text
    assert "accepted by alice: added-test tests/test_new.py" in text


# -- other refs: reported, not blocking -------------------------------------------------


def test_hold_on_a_feature_branch_is_reported_and_does_not_block(work: Work) -> None:
    work.git("checkout", "-qb", "feat")
    work.commit("new test", NEW_TEST)
    result = work.push("origin", "feat", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    text = said(result)
    assert (
        "added-test: refs/heads/feat: new test files: held for review before it reaches "
        "a protected branch" in text
    )
    assert "refs/heads/feat: allow" in text
    assert "accepts the held change by pushing it, or a merge of it, to refs/heads/main" in text
    assert server_tip(work, "refs/heads/feat") == work.head()


def test_reject_on_a_feature_branch_still_blocks(work: Work) -> None:
    work.git("checkout", "-qb", "feat")
    work.commit("new test", NEW_TEST)
    work.commit("golden", {"tests/goldens/out.txt": "moved\n"})
    result = work.push("origin", "feat", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert "refs/heads/feat: reject" in said(result)
    assert server_tip(work, "refs/heads/feat") == ""


def test_reviewer_merge_of_a_held_branch_is_how_it_is_accepted(
    work: Work, server: Path, tmp_path: Path
) -> None:
    """The flow the README documents: an agent pushes a branch (held notice), a
    reviewer checks it and merges it to main."""
    work.git("checkout", "-qb", "feat")
    work.commit("feature with its test", {"src/feature.py": "f\n", **NEW_TEST})
    assert work.push("origin", "feat", pusher=AGENT).returncode == 0
    reviewer = clone_of(tmp_path, server, "reviewer")
    as_clone = evidence(reviewer.path, "check", "origin/main..origin/feat")
    assert as_clone.returncode == 1, as_clone.stdout
    assert "added-test: origin/main..origin/feat: new test files" in as_clone.stdout
    as_alice = evidence(reviewer.path, "check", "origin/main..origin/feat", "--as", "alice")
    assert as_alice.returncode == 0, as_alice.stdout
    assert "accepted by alice: added-test tests/test_new.py" in as_alice.stdout
    reviewer.git("merge", "-q", "--no-ff", "--no-edit", "origin/feat")
    result = reviewer.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr
    assert "accepted by alice: added-test tests/test_new.py" in said(result)
    assert server_tip(reviewer) == reviewer.head()


def test_untrusted_merge_of_a_held_branch_into_main_is_held(work: Work) -> None:
    work.git("checkout", "-qb", "feat")
    work.commit("new test", NEW_TEST)
    assert work.push("origin", "feat", pusher=AGENT).returncode == 0
    work.git("checkout", "-q", "main")
    work.git("merge", "-q", "--no-ff", "--no-edit", "feat")
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "added-test")


# -- who reviews --------------------------------------------------------------------------


def test_reviewers_listed_apart_from_evidence_writers_accept_holds(tmp_path: Path) -> None:
    work = clone_of(tmp_path, make_server(tmp_path, {".git-evidence.toml": SPLIT_ROLES}))
    work.commit("new test", NEW_TEST)
    by_alice = work.push("origin", "HEAD:main", pusher="alice")
    assert refused(by_alice, "added-test")  # an evidence writer, not a reviewer
    assert "a reviewer (bob) accepts the held change" in said(by_alice)
    by_bob = work.push("origin", "HEAD:main", pusher="bob")
    assert by_bob.returncode == 0, by_bob.stderr
    assert "accepted by bob: added-test tests/test_new.py" in said(by_bob)


def test_reviewer_who_is_no_evidence_writer_cannot_push_evidence(tmp_path: Path) -> None:
    work = clone_of(tmp_path, make_server(tmp_path, {".git-evidence.toml": SPLIT_ROLES}))
    work.commit("golden", {"tests/goldens/out.txt": "moved\n"})
    result = work.push("origin", "HEAD:main", pusher="bob")
    assert refused(result, "evidence-untrusted")
    assert "accepted by" not in said(result)


def test_reviewer_push_of_a_mixed_commit_is_still_refused(work: Work) -> None:
    work.commit("mixed", {"tests/test_new.py": "t\n", "tests/fixtures/a.json": "{}\n"})
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert refused(result, "mixed-commit")
    assert "accepted by alice: added-test tests/test_new.py" in said(result)


def test_empty_reviewer_list_leaves_holds_to_nobody(tmp_path: Path) -> None:
    policy = '[identities]\nevidence_writers = ["alice"]\nreviewers = []\n'
    work = clone_of(tmp_path, make_server(tmp_path, {".git-evidence.toml": policy}))
    work.commit("new test", NEW_TEST)
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert refused(result, "added-test")
    assert (
        "the policy lists no reviewers: add one in [identities] with a reviewed policy change"
        in said(result)
    )


def test_policy_prints_the_reviewers_in_force(tmp_path: Path) -> None:
    work = clone_of(tmp_path, make_server(tmp_path))
    shown = evidence(work.path, "policy", "--format", "json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["identities"]["reviewers"] == ["alice"]


def test_lock_missing_is_accepted_by_a_reviewer_when_a_lock_is_required(tmp_path: Path) -> None:
    policy = SEED[".git-evidence.toml"] + "[lock]\nrequired = true\n"
    work = clone_of(tmp_path, make_server(tmp_path, {".git-evidence.toml": policy}))
    work.commit("product", {"src/app.py": "v2\n"})
    held = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(held, "lock-missing")
    accepted = work.push("origin", "HEAD:main", pusher="alice")
    assert accepted.returncode == 0, accepted.stderr
    assert "accepted by alice: lock-missing" in said(accepted)


# -- JSON -----------------------------------------------------------------------------------


def _held_finding(doc: dict[str, object]) -> dict[str, object]:
    updates = doc["updates"]
    assert isinstance(updates, list)
    found = [f for f in updates[0]["findings"] if f["rule"] == "added-test"]
    assert len(found) == 1
    finding: dict[str, object] = found[0]
    return finding


def test_json_keeps_the_hold_and_says_who_accepted_it(work: Work) -> None:
    work.commit("new test", NEW_TEST)
    accepted = evidence(work.path, "check", "--as", "alice", "--format", "json")
    assert accepted.returncode == 0, accepted.stdout
    doc = json.loads(accepted.stdout)
    assert doc["decision"] == "allow"
    assert doc["updates"][0]["decision"] == "allow"
    finding = _held_finding(doc)
    assert finding["decision"] == "hold"
    assert finding["blocking"] is False
    assert finding["accepted_by"] == "alice"
    held = json.loads(evidence(work.path, "check", "--as", AGENT, "--format", "json").stdout)
    assert held["decision"] == "hold"
    assert _held_finding(held)["blocking"] is True
    assert _held_finding(held)["accepted_by"] is None


def test_json_of_a_feature_branch_hold_is_not_blocking(work: Work, server: Path) -> None:
    work.git("checkout", "-qb", "feat")
    work.commit("new test", NEW_TEST)
    assert work.push("origin", "feat", pusher=AGENT).returncode == 0
    tip = work.head()
    result = evidence(
        server,
        "pre-receive",
        "--format",
        "json",
        input=f"{'0' * 40} {tip} refs/heads/other\n".encode(),
        env={"GIT_EVIDENCE_PUSHER": AGENT},
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stderr)
    assert doc["updates"][0]["decision"] == "allow"
    finding = _held_finding(doc)
    assert finding["decision"] == "hold"
    assert finding["blocking"] is False
    assert finding["accepted_by"] is None


# -- client hooks: a trusted clone accepts holds ---------------------------------------------


@pytest.fixture
def hooked(tmp_path: Path) -> Work:
    """A clone with the client hooks, of a remote with no server hook: only the client
    hooks stand."""
    work = clone_of(tmp_path, make_remote(tmp_path), "hooked")
    assert evidence(work.path, "install").returncode == 0
    return work


def _stage_new_test(work: Work) -> None:
    work.write("tests/test_new.py", NEW_TEST["tests/test_new.py"])
    work.git("add", "-A")


def test_pre_commit_holds_a_new_test_on_main_in_an_untrusted_clone(hooked: Work) -> None:
    _stage_new_test(hooked)
    result = hooked.git("commit", "-m", "new test", check=False)
    assert result.returncode != 0
    assert "added-test: refs/heads/main: new test files" in flat(result.stderr)
    assert "git switch -c for-review" in flat(result.stderr)
    assert "git config evidence.trusted true" in flat(result.stderr)
    assert hooked.git("rev-list", "--count", "HEAD").stdout.strip() == "1"


def test_trusted_clone_accepts_a_hold_in_pre_commit(hooked: Work) -> None:
    hooked.git("config", "evidence.trusted", "true")
    _stage_new_test(hooked)
    result = hooked.git("commit", "-m", "new test", check=False)
    assert result.returncode == 0, result.stderr
    assert "accepted by this trusted clone: added-test tests/test_new.py" in flat(result.stderr)


def test_pre_commit_on_a_feature_branch_reports_a_hold_without_blocking(hooked: Work) -> None:
    hooked.git("checkout", "-qb", "feat")
    _stage_new_test(hooked)
    result = hooked.git("commit", "-m", "new test", check=False)
    assert result.returncode == 0, result.stderr
    assert "held for review before it reaches a protected branch" in flat(result.stderr)
    assert "accepts the held change when this branch is merged into refs/heads/main" in flat(
        result.stderr
    )


def test_trusted_clone_accepts_a_hold_in_pre_push(hooked: Work) -> None:
    _stage_new_test(hooked)
    hooked.git("commit", "-qm", "new test", "--no-verify")
    held = hooked.push("origin", "HEAD:main")
    assert held.returncode != 0
    assert "added-test: refs/heads/main: new test files" in flat(held.stderr)
    hooked.git("config", "evidence.trusted", "true")
    accepted = hooked.push("origin", "HEAD:main")
    assert accepted.returncode == 0, accepted.stderr
    assert "accepted by this trusted clone: added-test tests/test_new.py" in flat(accepted.stderr)


def test_pre_push_of_a_held_feature_branch_is_not_blocked(hooked: Work) -> None:
    hooked.git("checkout", "-qb", "feat")
    _stage_new_test(hooked)
    hooked.git("commit", "-qm", "new test")
    result = hooked.push("origin", "feat")
    assert result.returncode == 0, result.stderr
    assert "held for review before it reaches a protected branch" in flat(result.stderr)


def test_trusted_clone_still_refuses_a_mixed_commit(hooked: Work) -> None:
    hooked.git("config", "evidence.trusted", "true")
    hooked.write("tests/fixtures/a.json", "{}\n")
    _stage_new_test(hooked)
    result = hooked.git("commit", "-m", "mixed", check=False)
    assert result.returncode != 0
    assert "mixed-commit: " in flat(result.stderr)
