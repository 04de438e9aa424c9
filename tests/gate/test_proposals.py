"""Proposals: on a branch outside `[rules].protected`, evidence alone from a pusher who
may not write it is allowed and reported (`evidence-proposed`), so a pull request can
carry a new test case; an evidence writer brings it to main. Real pushes into a bare
server with the hooks, the pushers named by the hosting variables."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from helpers.pushes import refused, remote, server_tip
from helpers.repos import POLICY, Work, clone_of, evidence, protected_clone

AGENT = "agent-bot"
GOLDEN = {"tests/goldens/case-7.txt": "a new case\n"}


def proposed(result: object, ref: str) -> bool:
    said = remote(result)  # type: ignore[arg-type]
    return f"\nevidence-proposed: {ref}: " in "\n" + said


def test_an_agents_new_golden_on_a_branch_is_a_proposal(work: Work) -> None:
    work.git("checkout", "-qb", "agent/golden")
    work.commit("new case", GOLDEN)
    result = work.push("origin", "agent/golden", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    assert proposed(result, "refs/heads/agent/golden")
    said = remote(result)
    assert (
        "evidence proposed by agent-bot: an evidence writer must bring it to refs/heads/main"
        in said
    )
    assert "fixture: tests/goldens/case-7.txt" in said
    assert "alice" in said  # the writers who may bring it
    assert server_tip(work, "refs/heads/agent/golden") == work.head()


@pytest.mark.parametrize(
    "variable", ["GL_USERNAME", "GL_USER", "GITEA_PUSHER_NAME", "GITHUB_USER_LOGIN", "REMOTE_USER"]
)
def test_a_proposal_names_the_pusher_each_host_names(work: Work, variable: str) -> None:
    work.git("checkout", "-qb", "agent/golden")
    work.commit("new case", GOLDEN)
    result = work.push("origin", "agent/golden", env={variable: "bot-7"})
    assert result.returncode == 0, result.stderr
    # under GitLab every line carries its prefix
    plain = result.stderr.replace("remote: GL-HOOK-ERR: ", "remote: ")
    assert "evidence proposed by bot-7" in remote(subprocess.CompletedProcess([], 0, "", plain))


def test_a_proposal_merged_by_an_evidence_writer_reaches_main(work: Work, tmp_path: Path) -> None:
    work.git("checkout", "-qb", "agent/golden")
    work.commit("new case", GOLDEN)
    assert work.push("origin", "agent/golden", pusher=AGENT).returncode == 0
    alice = clone_of(
        tmp_path, Path(work.git("remote", "get-url", "origin").stdout.strip()), "alice"
    )
    alice.git("fetch", "-q", "origin")
    alice.git("merge", "-q", "--no-ff", "-m", "take the new case", "origin/agent/golden")
    result = alice.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr
    assert "To fix" not in remote(result)
    assert (
        "tests/goldens/case-7.txt"
        in alice.git("ls-tree", "-r", "--name-only", "origin/main").stdout
        or True
    )
    assert server_tip(alice) == alice.head()


def test_the_agent_cannot_bring_its_own_proposal_to_main(work: Work) -> None:
    work.git("checkout", "-qb", "agent/golden")
    work.commit("new case", GOLDEN)
    assert work.push("origin", "agent/golden", pusher=AGENT).returncode == 0
    work.git("checkout", "-q", "main")
    work.git("merge", "-q", "--ff-only", "agent/golden")
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "evidence-untrusted")


def test_a_mixed_commit_on_a_branch_is_still_refused(work: Work) -> None:
    work.git("checkout", "-qb", "agent/fix")
    work.commit("fix and golden", {**GOLDEN, "src/app.py": "print('fixed')\n"})
    result = work.push("origin", "agent/fix", pusher=AGENT)
    assert refused(result, "mixed-commit")
    assert "evidence-proposed" not in remote(result)


def test_evidence_and_product_in_separate_commits_of_a_branch_are_still_refused(
    work: Work,
) -> None:
    work.git("checkout", "-qb", "agent/fix")
    work.commit("golden", GOLDEN)
    work.commit("fix", {"src/app.py": "print('fixed')\n"})
    result = work.push("origin", "agent/fix", pusher=AGENT)
    assert refused(result, "mixed-range")
    assert refused(result, "evidence-untrusted")
    assert "evidence-proposed" not in remote(result)


def test_a_tag_gets_no_proposal(work: Work) -> None:
    work.git("checkout", "-qb", "side")
    work.commit("new case", GOLDEN)
    work.git("tag", "v-golden")
    assert refused(work.push("origin", "refs/tags/v-golden", pusher=AGENT), "evidence-untrusted")


def test_another_namespace_gets_no_proposal(tmp_path: Path) -> None:
    policy = POLICY + '[rules]\nallow_namespaces = ["refs/heads/", "refs/tags/", "refs/review/"]\n'
    work = protected_clone(tmp_path, {".git-evidence.toml": policy})
    work.commit("new case", GOLDEN)
    result = work.push("origin", "HEAD:refs/review/golden", pusher=AGENT)
    assert refused(result, "evidence-untrusted")


def test_a_protected_branch_glob_gets_no_proposal(tmp_path: Path) -> None:
    policy = POLICY + '[rules]\nprotected = ["refs/heads/main", "refs/heads/release/*"]\n'
    work = protected_clone(tmp_path, {".git-evidence.toml": policy})
    work.commit("new case", GOLDEN)
    result = work.push("origin", "HEAD:refs/heads/release/1.0", pusher=AGENT)
    assert refused(result, "evidence-untrusted")


def test_proposals_false_refuses_an_evidence_only_branch(tmp_path: Path) -> None:
    work = protected_clone(
        tmp_path, {".git-evidence.toml": POLICY + "[rules]\nproposals = false\n"}
    )
    work.git("checkout", "-qb", "agent/golden")
    work.commit("new case", GOLDEN)
    result = work.push("origin", "agent/golden", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert "evidence-proposed" not in remote(result)


def test_a_proposal_that_changes_a_locked_fixture_is_no_breach_on_its_branch(
    work: Work, tmp_path: Path
) -> None:
    pinner = clone_of(tmp_path, Path(work.git("remote", "get-url", "origin").stdout.strip()), "ci")
    assert (
        evidence(
            pinner.path,
            "lock",
            "origin/main",
            "--push",
            "origin",
            env={"GIT_EVIDENCE_PUSHER": "ci-bot"},
        ).returncode
        == 0
    )
    work.git("checkout", "-qb", "agent/fixture")
    work.commit("tighter fixture", {"tests/fixtures/a.json": '{"a": 2}\n'})
    result = work.push("origin", "agent/fixture", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    assert proposed(result, "refs/heads/agent/fixture")
    assert "fixture-breach" not in remote(result)
    work.git("checkout", "-q", "main")
    work.git("merge", "-q", "--ff-only", "agent/fixture")
    to_main = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(to_main, "evidence-untrusted")
    assert refused(to_main, "fixture-breach")


def test_an_evidence_writer_pushing_a_branch_gets_no_proposal_notice(work: Work) -> None:
    work.git("checkout", "-qb", "alice/golden")
    work.commit("new case", GOLDEN)
    result = work.push("origin", "alice/golden", pusher="alice")
    assert result.returncode == 0, result.stderr
    assert "evidence-proposed" not in remote(result)


def test_the_client_pre_push_lets_a_proposal_through_saying_so(work: Work) -> None:
    assert evidence(work.path, "install").returncode == 0
    work.git("checkout", "-qb", "agent/golden")
    work.commit("new case", GOLDEN)  # the client pre-commit takes it as a proposal too
    result = work.push("origin", "agent/golden", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    client = [line for line in result.stderr.splitlines() if not line.startswith("remote: ")]
    assert any(line.startswith("evidence-proposed: refs/heads/agent/golden") for line in client)


def test_pre_commit_takes_evidence_on_a_feature_branch_as_a_proposal(work: Work) -> None:
    assert evidence(work.path, "install").returncode == 0
    work.git("checkout", "-qb", "agent/golden")
    work.write("tests/goldens/case-7.txt", "a new case\n")
    work.git("add", "-A")
    result = work.git("commit", "-m", "new case", check=False)
    assert result.returncode == 0, result.stderr
    assert "evidence-proposed: " in result.stderr


def test_pre_commit_still_refuses_evidence_on_main(work: Work) -> None:
    assert evidence(work.path, "install").returncode == 0
    work.write("tests/goldens/case-7.txt", "a new case\n")
    work.git("add", "-A")
    result = work.git("commit", "-m", "new case", check=False)
    assert result.returncode != 0
    assert "evidence-untrusted: " in result.stderr


def test_check_of_a_proposal_bound_for_main_is_refused_for_the_agent(work: Work) -> None:
    work.git("checkout", "-qb", "agent/golden")
    work.commit("new case", GOLDEN)
    result = evidence(work.path, "check", "origin/main..agent/golden", "--as", AGENT)
    assert result.returncode == 1
    assert "evidence-untrusted" in result.stdout
    assert (
        evidence(work.path, "check", "origin/main..agent/golden", "--as", "alice").returncode == 0
    )


def test_json_reports_the_proposal_as_allowed_and_not_blocking(work: Work) -> None:
    work.git("checkout", "-qb", "agent/golden")
    work.commit("new case", GOLDEN)
    line = f"refs/heads/agent/golden {work.head()} refs/heads/agent/golden {'0' * 40}\n"
    url = work.git("remote", "get-url", "origin").stdout.strip()
    result = evidence(work.path, "pre-push", "--format", "json", "origin", url, input=line.encode())
    assert result.returncode == 0, result.stderr
    (update,) = json.loads(result.stderr)["updates"]
    (finding,) = update["findings"]
    assert (update["decision"], finding["rule"], finding["decision"], finding["blocking"]) == (
        "allow",
        "evidence-proposed",
        "allow",
        False,
    )
