"""The retry quota and the labels file at push, and the quota commands.
Each tampering case is a real push into the protected server."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers.pushes import refused, remote
from helpers.repos import Work, evidence

QUOTA = "tests/retry-quota.jsonl"
LABELS = "tests/evidence-labels.tsv"
AGENT, ALICE, CI = "agent-bot", "alice", "ci-bot"


def stamp(moment: datetime | None = None) -> str:
    return (moment or datetime.now(timezone.utc) - timedelta(minutes=5)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )


def grant(amount: int, writer: str = ALICE, **over: object) -> str:
    doc = {"kind": "grant", "amount": amount, "writer": writer, "at": stamp(), "reason": "net"}
    doc.update(over)
    return json.dumps(doc) + "\n"


def spend(amount: int, writer: str = CI, test_id: str = "tests/test_app.py::test_app") -> str:
    doc = {
        "kind": "spend",
        "amount": amount,
        "test_id": test_id,
        "candidate": "c" * 40,
        "writer": writer,
        "at": stamp(),
    }
    return json.dumps(doc) + "\n"


def append(work: Work, text: str, path: str = QUOTA, message: str = "quota") -> None:
    target = work.path / path
    target.parent.mkdir(parents=True, exist_ok=True)
    old = target.read_text() if target.exists() else ""
    target.write_text(old + text)
    work.git("add", "-A")
    work.git("commit", "-qm", message)


@pytest.fixture
def granted(work: Work) -> Work:
    """A server whose main carries a quota of 3 retries, granted by alice."""
    append(work, grant(3))
    result = work.push("origin", "HEAD:main", pusher=ALICE)
    assert result.returncode == 0, result.stderr
    return work


# -- controls ---------------------------------------------------------------------------


def test_a_grant_by_an_evidence_writer_is_allowed(granted: Work) -> None:
    append(granted, grant(2))
    result = granted.push("origin", "HEAD:main", pusher=ALICE)
    assert result.returncode == 0, result.stderr


def test_a_spend_by_ci_within_the_quota_is_allowed(granted: Work) -> None:
    append(granted, spend(2) + spend(1, test_id="tests/test_app.py::test_other"))
    result = granted.push("origin", "HEAD:main", pusher=CI)
    assert result.returncode == 0, result.stderr


def test_a_labels_change_alone_by_an_evidence_writer_is_allowed(work: Work) -> None:
    work.commit("labels", {LABELS: "tests/test_app.py::test_app\tinvariant\n"})
    result = work.push("origin", "HEAD:main", pusher=ALICE)
    assert result.returncode == 0, result.stderr


# -- attacks ------------------------------------------------------------------------------


def test_a_quota_grant_by_an_untrusted_pusher_is_refused(work: Work) -> None:
    append(work, grant(100, writer=ALICE))
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert QUOTA in remote(result)


def test_a_quota_grant_by_ci_is_refused(work: Work) -> None:
    append(work, grant(5, writer=CI))
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")
    assert "retries are granted by an evidence writer's push only" in remote(result)


def test_a_grant_naming_an_evidence_writer_but_pushed_by_ci_is_refused(work: Work) -> None:
    append(work, grant(5, writer=ALICE))
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")


def test_a_spend_that_goes_negative_is_refused(granted: Work) -> None:
    append(granted, spend(2) + spend(2))
    result = granted.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")
    assert f"{QUOTA}: line 3: remaining retries would be -1" in remote(result)


def test_a_spend_by_an_evidence_writer_is_refused(granted: Work) -> None:
    append(granted, spend(1, writer=ALICE))
    result = granted.push("origin", "HEAD:main", pusher=ALICE)
    assert refused(result, "ledger-entry")
    assert "spend writer 'alice' is not a ledger writer" in remote(result)


def test_rewriting_the_quota_is_refused(granted: Work) -> None:
    path = granted.path / QUOTA
    path.write_text(path.read_text().replace('"amount": 3', '"amount": 30'))
    granted.git("commit", "-qam", "more")
    result = granted.push("origin", "HEAD:main", pusher=ALICE)
    assert refused(result, "ledger-rewrite")
    assert "the retry quota is append-only" in remote(result)


def test_deleting_the_quota_is_refused(granted: Work) -> None:
    granted.commit("drop", remove=(QUOTA,))
    assert refused(granted.push("origin", "HEAD:main", pusher=ALICE), "ledger-rewrite")


def test_a_spend_undone_by_a_later_commit_is_a_rewrite(granted: Work) -> None:
    append(granted, spend(1))
    assert granted.push("origin", "HEAD:main", pusher=CI).returncode == 0
    path = granted.path / QUOTA
    path.write_text(grant(3))
    granted.git("commit", "-qam", "forget the spend")
    assert refused(granted.push("origin", "HEAD:main", pusher=ALICE), "ledger-rewrite")


def test_a_quota_grant_mixed_with_product_is_refused(work: Work) -> None:
    work.write(QUOTA, grant(10))
    work.commit("fix and retries", {"src/app.py": "print('fixed')\n"})
    result = work.push("origin", "HEAD:main", pusher=ALICE)
    assert refused(result, "mixed-commit")


def test_a_labels_file_mixed_with_src_is_refused(work: Work) -> None:
    work.commit(
        "fix and relabel",
        {
            "src/app.py": "print('fixed')\n",
            LABELS: "tests/test_app.py::test_app\tnondeterministic\n",
        },
    )
    result = work.push("origin", "HEAD:main", pusher=ALICE)
    assert refused(result, "mixed-commit")
    assert f"policy: {LABELS}" in remote(result)


def test_a_labels_change_by_an_untrusted_pusher_is_refused(work: Work) -> None:
    work.commit("relabel", {LABELS: "tests/test_app.py::test_app\tnondeterministic\n"})
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "evidence-untrusted")


def test_quota_and_ledger_in_one_commit_by_an_evidence_writer_is_refused(work: Work) -> None:
    work.write(QUOTA, grant(1))
    append(work, '{"forged": true}\n', path="tests/freeze.jsonl")
    result = work.push("origin", "HEAD:main", pusher=ALICE)
    assert refused(result, "evidence-untrusted")


def test_another_spelling_of_the_quota_is_refused(granted: Work) -> None:
    append(granted, spend(1), path="Tests/Retry-Quota.jsonl")
    result = granted.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-rewrite")
    assert "another spelling of the quota" in remote(result)


def test_a_moved_quota_path_is_protected_where_the_policy_puts_it(tmp_path: Path) -> None:
    from helpers.repos import POLICY, protected_clone

    policy = POLICY + '\n[labels]\nquota_path = "qa/quota.jsonl"\n'
    work = protected_clone(tmp_path, {".git-evidence.toml": policy})
    append(work, grant(1), path="qa/quota.jsonl")
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "evidence-untrusted")
    result = work.push("origin", "HEAD:main", pusher=ALICE)
    assert result.returncode == 0, result.stderr


# -- the commands --------------------------------------------------------------------------

JUNIT = """<testsuites><testsuite>
<testcase classname="tests.test_app" name="test_net"><properties>
 <property name="test_id" value="tests/test_app.py::test_net"/>
 <property name="label" value="nondeterministic"/><property name="attempts" value="3"/>
 <property name="evidence" value="flaky"/></properties><flakyFailure message="x"/></testcase>
<testcase classname="tests.test_app" name="test_inv"><properties>
 <property name="test_id" value="tests/test_app.py::test_inv"/>
 <property name="label" value="invariant"/><property name="attempts" value="2"/>
 <property name="evidence" value="flicker"/></properties><failure message="y"/></testcase>
</testsuite></testsuites>
"""


def test_quota_spend_appends_what_the_junit_shows_and_ci_may_push_it(granted: Work) -> None:
    (granted.path.parent / "junit.xml").write_text(JUNIT)
    result = evidence(
        granted.path, "quota", "spend", "--from-junit", "../junit.xml", "--writer", CI
    )
    assert result.returncode == 0, result.stderr
    assert "recorded 2 retries spent by 1 test(s); 1 remain" in result.stdout
    lines = (granted.path / QUOTA).read_text().splitlines()
    last = json.loads(lines[-1])
    assert len(lines) == 2  # the invariant's confirming run is never spent
    assert (last["kind"], last["amount"], last["test_id"], last["writer"]) == (
        "spend",
        2,
        "tests/test_app.py::test_net",
        CI,
    )
    assert last["candidate"] == granted.head()
    granted.git("commit", "-qam", "spend")
    pushed = granted.push("origin", "HEAD:main", pusher=CI)
    assert pushed.returncode == 0, pushed.stderr


def test_quota_spend_refuses_to_go_below_zero(work: Work) -> None:
    append(work, grant(1))
    (work.path.parent / "junit.xml").write_text(JUNIT)
    result = evidence(work.path, "quota", "spend", "--from-junit", "../junit.xml", "--writer", CI)
    assert result.returncode == 1
    assert "used 2 retries but tests/retry-quota.jsonl has 1 left" in result.stdout
    assert len((work.path / QUOTA).read_text().splitlines()) == 1


def test_quota_spend_by_someone_not_a_ledger_writer_is_refused(granted: Work) -> None:
    (granted.path.parent / "junit.xml").write_text(JUNIT)
    result = evidence(
        granted.path, "quota", "spend", "--from-junit", "../junit.xml", "--writer", AGENT
    )
    assert result.returncode == 2
    assert "agent-bot is not one of the ledger writers (ci-bot)" in result.stderr


def test_quota_status_shows_remaining_and_spends(granted: Work) -> None:
    append(granted, spend(1))
    result = evidence(granted.path, "quota", "status")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"{QUOTA}: 2 retries remaining (3 granted, 1 spent)")
    assert "1 by ci-bot: tests/test_app.py::test_app" in result.stdout
    doc = json.loads(evidence(granted.path, "quota", "status", "--format", "json").stdout)
    assert (doc["remaining"], len(doc["recent_spends"])) == (2, 1)


def test_quota_grant_writes_a_line_the_server_accepts(work: Work) -> None:
    result = evidence(work.path, "quota", "grant", "4", "--reason", "ci network", "--writer", ALICE)
    assert result.returncode == 0, result.stderr
    assert "granted 4 retries; 4 remain" in result.stdout
    work.git("add", "-A")
    work.git("commit", "-qm", "grant")
    pushed = work.push("origin", "HEAD:main", pusher=ALICE)
    assert pushed.returncode == 0, pushed.stderr


def test_quota_status_on_a_broken_file_names_the_line(work: Work) -> None:
    (work.path / QUOTA).write_text(grant(1) + "{not json\n")
    result = evidence(work.path, "quota", "status")
    assert result.returncode == 2
    assert f"{QUOTA}:2: not one JSON object" in result.stderr
