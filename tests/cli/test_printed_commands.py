"""Commands a report prints run as printed: the "list them all" footer keeps the options
the user ran with, a client refusal an evidence writer can lift names the setting that
lifts it, notes pushes go to the server, and `quota grant|spend` know their writer
from the clone. Real clones, a bare server with the hooks, real pushes."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

from helpers.pushes import refused
from helpers.repos import POLICY, Work, clone_of, evidence, git

AGENT, ALICE, CI = "agent-bot", "alice", "ci-bot"
DRAFT = POLICY + '[paths]\nfixture = ["tests/fixtures/**", "tests/data/**"]\n'


def footer_command(text: str) -> list[str]:
    """The command of the "To list them all" footer, as words."""
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if "To list them all" in line:
            joined = " ".join(x.strip() for x in lines[number : number + 3])
            found = re.search(r"(git evidence check .*?--max-findings 0)", joined)
            assert found, joined
            return shlex.split(found.group(1))
    raise AssertionError(f"no footer in:\n{text}")


def mixed_commits(work: Work, count: int) -> None:
    for n in range(count):
        work.commit(f"mixed {n}", {"src/app.py": f"v{n}\n", f"tests/data/case{n}.txt": f"{n}\n"})


def test_the_footer_carries_base_as_and_policy_and_runs_as_printed(work: Work) -> None:
    (work.path / "draft.toml").write_text(DRAFT)
    base = work.head()
    mixed_commits(work, 3)
    ran = ["check", "HEAD", "--base", base, "--as", AGENT, "--policy", "draft.toml"]
    first = evidence(work.path, *ran, "--max-findings", "1")
    assert first.returncode == 1, first.stdout + first.stderr
    command = footer_command(first.stdout)
    assert command[:3] == ["git", "evidence", "check"]
    for option in (["--base", base], ["--as", AGENT], ["--policy", "draft.toml"]):
        assert " ".join(option) in " ".join(command), command
    listed = evidence(work.path, *command[2:])
    assert listed.returncode == 1
    wanted = json.loads(evidence(work.path, *ran, "--format", "json").stdout)
    again = json.loads(evidence(work.path, *command[2:], "--format", "json").stdout)
    assert [f["rule"] for u in again["updates"] for f in u["findings"]] == [
        f["rule"] for u in wanted["updates"] for f in u["findings"]
    ]
    assert again["policy"] == wanted["policy"]
    assert "draft policy draft.toml (not in force)" in " ".join(listed.stdout.split())


def test_a_footer_without_options_has_none(work: Work) -> None:
    base = work.head()
    for n in range(2):
        work.commit(f"mixed {n}", {"src/app.py": f"v{n}\n", "tests/fixtures/a.json": f"{n}\n"})
    result = evidence(work.path, "check", f"{base}..HEAD", "--max-findings", "1")
    command = footer_command(result.stdout)
    assert command == [
        "git",
        "evidence",
        "check",
        f"{base[:12]}..{work.head()[:12]}",
        "--max-findings",
        "0",
    ]


def test_a_split_hint_carries_the_draft_policy(work: Work) -> None:
    (work.path / "draft.toml").write_text(DRAFT)
    base = work.head()
    mixed_commits(work, 1)
    result = evidence(work.path, "check", f"{base}..HEAD", "--policy", "draft.toml")
    assert result.returncode == 1
    joined = " ".join(result.stdout.split())
    hinted = re.search(r"`(git evidence split [0-9a-f]+ --policy draft.toml)`", joined)
    assert hinted, joined
    split = evidence(work.path, *shlex.split(hinted.group(1))[2:])
    assert split.returncode == 0, split.stderr
    assert "split " in split.stdout


# -- the client pre-push of an evidence writer's clone ------------------------------------


def test_an_evidence_writers_client_refusal_names_evidence_trusted(
    tmp_path: Path, server: Path
) -> None:
    alice = clone_of(tmp_path, server, "alice")
    assert evidence(alice.path, "install").returncode == 0
    alice.write("src/app.py", "print('new behaviour')\n")
    alice.write("tests/goldens/out.txt", "new behaviour\n")
    alice.git("add", "-A")
    alice.git("commit", "-qm", "behaviour and golden", "--no-verify")
    assert evidence(alice.path, "split").returncode == 0
    refused_here = alice.push("origin", "HEAD:main", pusher=ALICE)
    assert refused_here.returncode != 0
    client = " ".join(
        line.strip() for line in refused_here.stderr.splitlines() if not line.startswith("remote:")
    )
    assert "mixed-range: " in client
    assert "`git config evidence.trusted true` lifts this refusal here" in client
    alice.git("config", "evidence.trusted", "true")
    pushed = alice.push("origin", "HEAD:main", pusher=ALICE)
    assert pushed.returncode == 0, pushed.stderr
    assert "evidence-trusted" not in pushed.stderr


def test_a_refusal_no_trust_can_lift_does_not_name_the_setting(work: Work) -> None:
    assert evidence(work.path, "install").returncode == 0
    work.write("src/app.py", "x\n")
    work.write("tests/fixtures/a.json", "{}\n")
    work.git("add", "-A")
    work.git("commit", "-qm", "mixed", "--no-verify")
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    lines = result.stderr.splitlines()
    client = "\n".join(line for line in lines if not line.startswith("remote:"))
    mixed = client.split("mixed-commit: ", 1)[1].split("\nevidence-untrusted: ", 1)
    assert len(mixed) == 2, client  # the mix, then the evidence the clone may not push
    assert "evidence.trusted" not in mixed[0]
    assert "`git config evidence.trusted true` lifts this refusal here" in " ".join(
        mixed[1].split()
    )


# -- notes refs through the client pre-push ----------------------------------------------


def test_the_client_pre_push_lets_a_notes_push_through_to_the_server(
    tmp_path: Path, server: Path
) -> None:
    ci = clone_of(tmp_path, server, "ci")
    assert evidence(ci.path, "install").returncode == 0
    assert evidence(ci.path, "lock", "origin/main").returncode == 0
    result = ci.push("origin", "refs/notes/evidence", pusher=CI)
    assert result.returncode == 0, result.stderr
    client = [line for line in result.stderr.splitlines() if not line.startswith("remote:")]
    notices = [line for line in client if "notes are decided by the server" in line]
    assert notices == [
        "git-evidence: refs/notes/evidence: notes are decided by the server (its lock and "
        "verdict writers), not by this hook"
    ]
    assert git(server, "for-each-ref", "refs/notes/evidence").stdout.strip()


def test_the_server_still_refuses_a_notes_push_the_client_let_through(
    tmp_path: Path, server: Path
) -> None:
    agent = clone_of(tmp_path, server, "agent")
    assert evidence(agent.path, "install").returncode == 0
    assert evidence(agent.path, "lock", "origin/main").returncode == 0
    result = agent.push("origin", "refs/notes/evidence", pusher=AGENT)
    assert refused(result, "notes-forge")
    assert "notes are decided by the server" in result.stderr


def test_pre_push_right_after_install_says_the_server_has_no_lock_yet(work: Work) -> None:
    assert evidence(work.path, "install").returncode == 0
    work.git("fetch", "-q", "origin")
    work.write("src/app.py", "x\n")
    work.write("tests/fixtures/a.json", "{}\n")
    work.git("add", "-A")
    work.git("commit", "-qm", "mixed", "--no-verify")
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    said = " ".join(result.stderr.split())
    assert "no lock fetched from origin yet: `git fetch origin` brings its" in said
    assert "once it has one" in said
    assert "adds the fetch refspec" not in said


def test_pre_push_without_the_refspec_says_how_to_fetch_locks(work: Work) -> None:
    hooks = work.path / ".git" / "hooks"
    assert evidence(work.path, "install").returncode == 0
    work.git("config", "--unset-all", "remote.origin.fetch", "notes")
    assert (hooks / "pre-push").exists()
    work.write("src/app.py", "x\n")
    work.write("tests/fixtures/a.json", "{}\n")
    work.git("add", "-A")
    work.git("commit", "-qm", "mixed", "--no-verify")
    said = " ".join(work.push("origin", "HEAD:main", pusher=AGENT).stderr.split())
    assert "`git evidence install` adds the fetch refspec" in said


# -- quota grant|spend: the writer from the clone -----------------------------------------


def test_quota_grant_takes_the_writer_from_git_config_and_the_push_is_accepted(
    work: Work,
) -> None:
    work.git("config", "evidence.writer", ALICE)
    result = evidence(work.path, "quota", "grant", "5", "--reason", "sync tests hit the network")
    assert result.returncode == 0, result.stderr
    assert "writing as alice (from git config evidence.writer)" in result.stdout
    work.git("add", "-A")
    work.git("commit", "-qm", "grant")
    pushed = work.push("origin", "HEAD:main", pusher=ALICE)
    assert pushed.returncode == 0, pushed.stderr


def test_quota_grant_takes_the_writer_from_git_evidence_pusher(work: Work) -> None:
    result = evidence(
        work.path, "quota", "grant", "5", "--reason", "r", env={"GIT_EVIDENCE_PUSHER": ALICE}
    )
    assert result.returncode == 0, result.stderr
    assert "writing as alice (from GIT_EVIDENCE_PUSHER)" in result.stdout


def test_quota_grant_without_a_writer_says_where_one_comes_from(work: Work) -> None:
    result = evidence(work.path, "quota", "grant", "5", "--reason", "r")
    assert result.returncode == 2
    assert "usage-error: who writes this line?" in result.stderr
    assert "git config evidence.writer" in result.stderr
    assert "GIT_EVIDENCE_PUSHER" in result.stderr


def test_an_explicit_writer_wins_over_the_clone_s(work: Work) -> None:
    work.git("config", "evidence.writer", AGENT)
    result = evidence(work.path, "quota", "grant", "1", "--reason", "r", "--writer", ALICE)
    assert result.returncode == 0, result.stderr
    line = json.loads((work.path / "tests/retry-quota.jsonl").read_text().splitlines()[-1])
    assert line["writer"] == ALICE


def test_a_notes_push_judged_in_json_stays_one_document(tmp_path: Path, server: Path) -> None:
    ci = clone_of(tmp_path, server, "ci")
    assert evidence(ci.path, "lock", "origin/main").returncode == 0
    notes = ci.git("rev-parse", "refs/notes/evidence").stdout.strip()
    line = f"refs/notes/evidence {notes} refs/notes/evidence {'0' * 40}\n".encode()
    url = ci.git("remote", "get-url", "origin").stdout.strip()
    result = evidence(ci.path, "pre-push", "--format", "json", "origin", url, input=line)
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stderr)
    assert doc["updates"] == []
    assert any("notes are decided by the server" in note for note in doc["notes"])
