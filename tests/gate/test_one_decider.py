"""Every entry point reports what the one decide pass (``rules.decide.decide``) found,
nothing added or changed after it: pre-receive, pre-push, pre-commit, check and verify,
each run in this process on real repositories with the pass watched. And a policy file
that does not parse is worded by one decider whether it is staged, pushed or checked:
the same rule, the same message but for where the bytes were read, the fix the decider
gives for a staged or a pushed file."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers.repos import POLICY, Work, _in_process, clone_of, evidence, git, make_server

from git_evidence.core.facts import RefUpdate, UpdateFacts
from git_evidence.core.oids import Oid
from git_evidence.gate import time_budget
from git_evidence.policy.schema import POLICY_FILE
from git_evidence.rules import decide as one_pass
from git_evidence.rules.files import decide_policy_file

MAIN = "refs/heads/main"
AGENT = "agent-bot"
BROKEN = POLICY + "[rules]\nbogus = 1\n"

Seen = tuple[str, str, str, str, bool]


def _seen(finding: Any) -> Seen:
    return (finding.rule, finding.decision, finding.message, finding.hint, finding.blocking)


@pytest.fixture(autouse=True)
def _budget_from_the_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hook's time budget counts from its process's start: run in this process, it
    counts from the call instead, as it would in a hook process git just started."""
    monkeypatch.setattr(time_budget, "process_start", time.monotonic)


@pytest.fixture
def decided(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[list[Seen]]]:
    """The findings each call of the one decide pass returned, as it returned them."""
    calls: list[list[Seen]] = []
    real = one_pass.decide

    def watched(*args: Any, **kw: Any) -> one_pass.Decided:
        result = real(*args, **kw)
        calls.append([_seen(f) for v in result.decisions for f in v.findings])
        return result

    monkeypatch.setattr(one_pass, "decide", watched)
    yield calls


def _reported(doc: dict[str, Any]) -> list[Seen]:
    return [
        (f["rule"], f["decision"], f["message"], f["hint"], f["blocking"])
        for update in doc["updates"]
        for f in update["findings"]
    ]


def _run(cwd: Path, *args: str, stdin: str = "", pusher: str | None = None) -> dict[str, Any]:
    env = {"GIT_EVIDENCE_PUSHER": pusher} if pusher else {}
    result = _in_process(cwd, [*args, "--format", "json"], stdin.encode(), {**os.environ, **env})
    return _doc(result)


def _doc(result: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    """The JSON a command wrote: a hook writes its report to stderr, for git to relay."""
    doc: dict[str, Any] = json.loads(result.stdout or result.stderr)
    return doc


@pytest.fixture
def mixed(tmp_path: Path) -> tuple[Path, Work, str, str]:
    """A server, a clone whose main has a commit mixing a fixture with product on top of
    the server's main, and that commit in the server under a feature branch."""
    bare = make_server(tmp_path)
    work = clone_of(tmp_path, bare)
    old = work.head()
    new = work.commit("mixed", {"src/app.py": "print('m')\n", "tests/fixtures/a.json": "[]\n"})
    # into the server around its hook (a fetch runs none): the objects pre-receive reads
    git(bare, "fetch", "-q", str(work.path), "HEAD:refs/heads/feature")
    return bare, work, old, new


def test_pre_receive_reports_what_the_one_pass_decided(
    mixed: tuple[Path, Work, str, str], decided: list[list[Seen]]
) -> None:
    bare, _work, old, new = mixed
    doc = _run(bare, "pre-receive", stdin=f"{old} {new} {MAIN}\n", pusher=AGENT)
    (found,) = decided
    assert "mixed-commit" in {r for r, *_ in found}
    assert _reported(doc) == found


def test_pre_push_reports_what_the_one_pass_decided(
    mixed: tuple[Path, Work, str, str], decided: list[list[Seen]]
) -> None:
    bare, work, old, new = mixed
    line = f"{MAIN} {new} {MAIN} {old}\n"
    doc = _run(work.path, "pre-push", "origin", str(bare), stdin=line)
    (found,) = decided
    assert "mixed-commit" in {r for r, *_ in found}
    # the setting that lifts a client's refusal is the pass's own wording
    assert any("evidence.trusted true" in hint for *_, hint, _ in found)
    assert _reported(doc) == found


def test_pre_commit_reports_what_the_one_pass_decided(
    mixed: tuple[Path, Work, str, str], decided: list[list[Seen]]
) -> None:
    _bare, work, _old, _new = mixed
    work.write("src/app.py", "print('again')\n")
    work.write("tests/fixtures/a.json", '{"again": 1}\n')
    work.write(POLICY_FILE, BROKEN)
    work.git("add", "-A")
    doc = _run(work.path, "pre-commit")
    (found,) = decided
    assert {"mixed-commit", "policy-invalid"} <= {r for r, *_ in found}
    assert _reported(doc) == found


def test_check_and_verify_report_what_the_one_pass_decided(
    mixed: tuple[Path, Work, str, str], decided: list[list[Seen]]
) -> None:
    _bare, work, _old, _new = mixed
    checked = _run(work.path, "check", "--as", AGENT)
    verified = _run(work.path, "verify")
    first, second = decided
    assert "mixed-commit" in {r for r, *_ in first}
    assert _reported(checked) == first
    assert _reported(verified["check"]) == second


def _message_without_source(message: str, source: str) -> str:
    assert message.startswith(f"{source}:{POLICY_FILE}"), message
    return message.removeprefix(f"{source}:")


def test_a_broken_policy_file_is_worded_by_one_decider_staged_pushed_or_checked(
    tmp_path: Path,
) -> None:
    bare = make_server(tmp_path)
    alice = clone_of(tmp_path, bare, "alice")
    alice.git("config", "evidence.trusted", "true")
    old = alice.head()
    alice.write(POLICY_FILE, BROKEN)
    alice.git("add", "-A")
    staged_doc = _run(alice.path, "pre-commit")
    (staged,) = staged_doc["updates"][0]["findings"]

    alice.git("commit", "-qm", "broken policy", "--no-verify")
    new = alice.head()
    assert alice.push("origin", "HEAD:refs/heads/feature", pusher="alice").returncode == 0
    line = f"{old} {new} {MAIN}\n".encode()
    received = evidence(
        bare, "pre-receive", "--format", "json", input=line, env={"GIT_EVIDENCE_PUSHER": "alice"}
    )
    assert received.returncode != 0, received.stderr
    (pushed,) = _doc(received)["updates"][0]["findings"]
    checked = _run(alice.path, "check", "--as", "alice")

    assert staged["rule"] == pushed["rule"] == "policy-invalid"
    assert staged["decision"] == pushed["decision"] == "reject"
    assert staged["paths"] == pushed["paths"] == {"policy": [POLICY_FILE]}
    what = _message_without_source(pushed["message"], new[:12])
    assert _message_without_source(staged["message"], "staged") == what
    (note,) = [n for n in checked.get("notes", []) if n.startswith("policy-invalid: ")]
    assert note == (f"policy-invalid: {new[:12]}:{what} ({one_pass.UNPUSHED_FILES})"), note

    # The fix each gives is the one decider's, for a staged file and for a pushed one.
    update = RefUpdate(Oid(old), Oid(new), MAIN)
    facts = UpdateFacts(update, True, False, commit=Oid(new), base=Oid(old))
    (as_pushed,) = decide_policy_file(facts, pushed["message"], POLICY_FILE)
    assert (pushed["hint"], pushed["commit"]) == (as_pushed.hint, new)
    (as_staged,) = decide_policy_file(facts, staged["message"], POLICY_FILE, staged=True)
    assert (staged["hint"], staged["commit"]) == (as_staged.hint, None)
    assert staged["hint"] != pushed["hint"]  # the flag words the fix for the index


def test_the_hooks_run_here_are_the_real_command_lines(tmp_path: Path) -> None:
    """The in-process runs above go through the same ``main`` a hook process runs."""
    bare = make_server(tmp_path)
    main = subprocess.run(
        ["git", "rev-parse", MAIN], cwd=bare, capture_output=True, text=True, check=True
    ).stdout.strip()
    line = f"{main} {main} {MAIN}\n"
    in_here = _run(bare, "pre-receive", stdin=line, pusher=AGENT)
    alone = evidence(bare, "pre-receive", "--format", "json", input=line.encode())
    assert in_here["decision"] == _doc(alone)["decision"] == "allow"


def test_the_report_is_built_once_with_the_callers_notes() -> None:
    """A hook's own notes go into the report as it is built from the decision, not
    assigned over it afterwards."""
    from git_evidence.core.facts import PushFacts
    from git_evidence.gate import decision
    from git_evidence.policy.identity import Identity
    from git_evidence.policy.schema import Policy

    notes = ("refs/notes/x: said by the hook",)
    report = decision.decide(PushFacts([], "pre-push"), Policy(), Identity("alice", "test"), notes)
    assert report.notes == notes
    assert report.decisions == () and report.decision == "allow"
