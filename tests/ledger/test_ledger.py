"""The freeze ledger: append-only, CI-written, reproduced, time-boxed.
Each tampering case is a push of its own into the protected server."""

from __future__ import annotations

import json
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from helpers.ledgers import CI, LEDGER, append, entry, line, stamp
from helpers.locks import pin_main
from helpers.pushes import refused, remote
from helpers.repos import Work, evidence


@pytest.fixture
def ci(work: Work) -> tuple[Work, str]:
    """A clone whose server main is pinned; the pin digest a freeze cites."""
    return work, pin_main(work)


def test_a_valid_append_by_a_ledger_writer_is_allowed(ci: tuple[Work, str]) -> None:
    work, pin = ci
    append(work, line(entry(pin)))
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert result.returncode == 0, result.stderr


def test_a_second_append_is_allowed(ci: tuple[Work, str]) -> None:
    work, pin = ci
    append(work, line(entry(pin)))
    assert work.push("origin", "HEAD:main", pusher=CI).returncode == 0
    append(work, line(entry(pin, fingerprint="beef")))
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert result.returncode == 0, result.stderr


def _seeded(work: Work, pin: str) -> None:
    append(work, line(entry(pin)) + line(entry(pin, fingerprint="second")))
    assert work.push("origin", "HEAD:main", pusher=CI).returncode == 0


def test_editing_a_line_is_a_rewrite(ci: tuple[Work, str]) -> None:
    work, pin = ci
    _seeded(work, pin)
    path = work.path / LEDGER
    path.write_text(path.read_text().replace('"failures":3', '"failures":1', 1))
    work.git("commit", "-qam", "soften")
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-rewrite")
    assert "line 1: existing lines were edited" in remote(result)


def test_deleting_a_line_is_a_rewrite(ci: tuple[Work, str]) -> None:
    work, pin = ci
    _seeded(work, pin)
    path = work.path / LEDGER
    path.write_text(path.read_text().splitlines(keepends=True)[1])
    work.git("commit", "-qam", "drop")
    assert refused(work.push("origin", "HEAD:main", pusher=CI), "ledger-rewrite")


def test_reordering_is_a_rewrite(ci: tuple[Work, str]) -> None:
    work, pin = ci
    _seeded(work, pin)
    path = work.path / LEDGER
    first, second = path.read_text().splitlines(keepends=True)
    path.write_text(second + first)
    work.git("commit", "-qam", "reorder")
    assert refused(work.push("origin", "HEAD:main", pusher=CI), "ledger-rewrite")


def test_crlf_line_endings_are_a_rewrite(ci: tuple[Work, str]) -> None:
    work, pin = ci
    _seeded(work, pin)
    path = work.path / LEDGER
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    work.git("commit", "-qam", "crlf")
    assert refused(work.push("origin", "HEAD:main", pusher=CI), "ledger-rewrite")


def test_an_appended_crlf_line_is_refused(ci: tuple[Work, str]) -> None:
    work, pin = ci
    append(work, line(entry(pin)).replace("\n", "\r\n"))
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")
    assert "carriage return" in remote(result)


def test_a_bom_is_refused(ci: tuple[Work, str]) -> None:
    work, pin = ci
    append(work, b"\xef\xbb\xbf" + line(entry(pin)).encode())
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")
    assert "byte order mark" in remote(result)


def test_a_bom_added_to_an_existing_ledger_is_a_rewrite(ci: tuple[Work, str]) -> None:
    work, pin = ci
    _seeded(work, pin)
    path = work.path / LEDGER
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    work.git("commit", "-qam", "bom")
    assert refused(work.push("origin", "HEAD:main", pusher=CI), "ledger-rewrite")


def test_renaming_the_ledger_is_a_rewrite(ci: tuple[Work, str]) -> None:
    work, pin = ci
    _seeded(work, pin)
    work.git("mv", LEDGER, "tests/freeze-old.jsonl")
    work.git("commit", "-qm", "rename")
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-rewrite")
    assert "deleted or renamed" in remote(result)


def test_deleting_the_ledger_is_a_rewrite(ci: tuple[Work, str]) -> None:
    work, pin = ci
    _seeded(work, pin)
    work.git("rm", "-q", LEDGER)
    work.git("commit", "-qm", "delete")
    assert refused(work.push("origin", "HEAD:main", pusher=CI), "ledger-rewrite")


def test_a_duplicate_key_is_refused(ci: tuple[Work, str]) -> None:
    work, pin = ci
    text = line(entry(pin)).rstrip("\n")[:-1] + ',"reproduced":false}\n'
    append(work, text)
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")
    assert "duplicate key 'reproduced'" in remote(result)


def test_a_window_too_long_is_refused(ci: tuple[Work, str]) -> None:
    work, pin = ci
    now = datetime.now(timezone.utc)
    append(
        work,
        line(
            entry(
                pin,
                frozen_at=stamp(now - timedelta(hours=1)),
                until=stamp(now + timedelta(hours=100)),
            )
        ),
    )
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")
    assert "more than max_window_hours = 72" in remote(result)


def test_until_before_frozen_at_is_refused(ci: tuple[Work, str]) -> None:
    work, pin = ci
    now = datetime.now(timezone.utc)
    append(work, line(entry(pin, frozen_at=stamp(now), until=stamp(now - timedelta(hours=1)))))
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")
    assert "until is not after frozen_at" in remote(result)


def test_reproduced_false_is_refused(ci: tuple[Work, str]) -> None:
    work, pin = ci
    append(work, line(entry(pin, reproduced=False)))
    assert refused(work.push("origin", "HEAD:main", pusher=CI), "ledger-entry")


@pytest.mark.parametrize("failures", [0, 10])
def test_failures_must_show_both_a_pass_and_a_fail(ci: tuple[Work, str], failures: int) -> None:
    work, pin = ci
    append(work, line(entry(pin, failures=failures)))
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")
    assert "between 1 and runs - 1" in remote(result)


def test_a_pin_digest_that_does_not_exist_is_refused(ci: tuple[Work, str]) -> None:
    work, _ = ci
    append(work, line(entry("sha256:" + "0" * 64)))
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")
    assert "is not the digest of any lock" in remote(result)


def test_an_entry_by_a_writer_who_is_not_a_ledger_writer_is_refused(
    ci: tuple[Work, str],
) -> None:
    work, pin = ci
    append(work, line(entry(pin, writer="agent-bot")))
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")
    assert "writer 'agent-bot' is not a ledger writer" in remote(result)


def test_a_pusher_who_is_not_a_ledger_writer_is_refused(ci: tuple[Work, str]) -> None:
    work, pin = ci
    append(work, line(entry(pin)))
    assert refused(work.push("origin", "HEAD:main", pusher="agent-bot"), "evidence-untrusted")
    assert refused(work.push("origin", "HEAD:main", pusher="alice"), "evidence-untrusted")


def test_a_commit_dated_in_the_past_with_an_old_window_is_refused(
    ci: tuple[Work, str],
) -> None:
    work, pin = ci
    then = datetime(2020, 1, 1, tzinfo=timezone.utc)
    append(work, line(entry(pin, frozen_at=stamp(then), until=stamp(then + timedelta(hours=48)))))
    work.git(
        "commit",
        "-q",
        "--amend",
        "--no-edit",
        "--date=2020-01-01T01:00:00Z",
        env={"GIT_COMMITTER_DATE": "2020-01-01T01:00:00Z"},
    )
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")
    assert "by the server's clock" in remote(result)


def test_a_case_variant_of_the_ledger_is_evidence(ci: tuple[Work, str]) -> None:
    work, pin = ci
    work.commit("variant", {"Tests/Freeze.jsonl": line(entry(pin))})
    result = work.push("origin", "HEAD:main", pusher="agent-bot")
    assert refused(result, "evidence-untrusted")


# -- git evidence freeze ------------------------------------------------------------------

FLAKY = """
import os, sys, pathlib
seed = int(os.environ["EVIDENCE_SEED"])
mode = sys.argv[1]
counter = pathlib.Path(sys.argv[2])
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
if mode == "pass":
    sys.exit(0)
if mode == "fail":
    sys.exit(1)
if mode == "odd":
    sys.exit(seed % 2)
print("flaky output", n % 3)
sys.exit(1 if n % 3 == 0 else 0)
"""


def freeze_add(work: Work, tmp_path: Path, mode: str, *extra: str) -> tuple[int, str, str]:
    """freeze add of the probe, committed (freeze add runs an export of HEAD in the
    sandbox, never the working tree); the probe counts its runs in its workspace."""
    work.git("fetch", "-q", "origin", "+refs/notes/evidence:refs/notes/evidence")
    work.git("merge", "-q", "--ff-only", "origin/main")
    if not (work.path / "tools/probe.py").exists():
        work.commit("the probe", {"tools/probe.py": FLAKY})
    result = evidence(
        work.path,
        "freeze",
        "add",
        "--test",
        "tests/test_app.py::test_app",
        "--runs",
        "6",
        *extra,
        "--",
        sys.executable,
        "tools/probe.py",
        mode,
        f"count-{mode}.local",
        env={"GIT_EVIDENCE_PUSHER": CI},
    )
    return result.returncode, result.stdout, result.stderr


def test_freeze_add_on_a_stable_pass_freezes_nothing(ci: tuple[Work, str], tmp_path: Path) -> None:
    work, _ = ci
    code, out, _ = freeze_add(work, tmp_path, "pass", "--seeds", "2")
    assert code == 1
    assert "passed every run: nothing to freeze" in out
    assert (work.path / LEDGER).read_text() == ""


def test_freeze_add_on_a_stable_fail_is_a_product_failure(
    ci: tuple[Work, str], tmp_path: Path
) -> None:
    work, _ = ci
    code, out, _ = freeze_add(work, tmp_path, "fail", "--seeds", "3")
    assert code == 1
    assert "product failure, never frozen" in out
    assert (work.path / LEDGER).read_text() == ""


def test_a_seed_dependent_failure_is_a_counterexample_not_a_flake(
    ci: tuple[Work, str], tmp_path: Path
) -> None:
    work, _ = ci
    code, out, _ = freeze_add(work, tmp_path, "odd", "--seeds", "4", "--seed", "0")
    assert code == 1
    assert "seed 1 fails every time" in out
    assert "counterexample" in out
    assert (work.path / LEDGER).read_text() == ""


def test_a_real_flake_is_frozen_and_the_push_is_allowed(
    ci: tuple[Work, str], tmp_path: Path
) -> None:
    work, pin = ci
    code, out, err = freeze_add(work, tmp_path, "flaky", "--reason", "timing")
    assert code == 0, out + err
    doc = json.loads((work.path / LEDGER).read_text())
    assert doc["seed"] == 0 and doc["reproduced"] is True
    assert doc["failures"] == 2 and doc["runs"] == 6
    assert doc["pin"] == pin
    assert doc["writer"] == CI
    assert [code for code, _ in doc["outputs"]] == [1, 0, 0, 1, 0, 0]
    work.git("add", LEDGER)
    work.git("commit", "-qm", "freeze the flake")
    # the probe (a path held for review) is accepted by a reviewer; the freeze by CI
    accepted = work.push("origin", "HEAD~1:main", pusher="alice")
    assert accepted.returncode == 0, accepted.stderr
    result = work.push("origin", "HEAD:main", pusher=CI)
    assert result.returncode == 0, result.stderr
    status = evidence(work.path, "freeze", "status", "tests/test_app.py::test_app")
    assert status.returncode == 0, status.stdout
    listed = evidence(work.path, "freeze", "list", "--active", "--format", "json")
    assert json.loads(listed.stdout)["freezes"][0]["reason"] == "timing"
    checked = evidence(work.path, "check", "HEAD~1..HEAD", "--as", CI)
    assert "freezes in force: 1" in checked.stdout


def test_freeze_add_refuses_outside_ci_for_a_non_writer(ci: tuple[Work, str]) -> None:
    work, _ = ci
    result = evidence(
        work.path,
        "freeze",
        "add",
        "--test",
        "t",
        "--runs",
        "3",
        "--",
        "true",
        env={"GIT_EVIDENCE_PUSHER": "agent-bot"},
    )
    assert result.returncode == 2
    assert "agent-bot is not a ledger writer" in result.stderr
    assert "--ci" in result.stderr


def test_freeze_status_without_a_freeze_exits_1(work: Work) -> None:
    result = evidence(work.path, "freeze", "status", "tests/test_app.py::test_app")
    assert result.returncode == 1
    assert "no freeze in force" in result.stdout


def test_an_added_test_does_not_inherit_an_older_freeze(ci: tuple[Work, str]) -> None:
    work, pin = ci
    now = datetime.now(timezone.utc)
    older = entry(
        pin, test_id="tests/test_new.py::test_it", frozen_at=stamp(now - timedelta(hours=2))
    )
    (work.path / LEDGER).write_text(line(older))
    work.write("tests/test_new.py", "def test_it(): pass\n")
    result = evidence(work.path, "freeze", "status", "tests/test_new.py::test_it")
    assert result.returncode == 1
    assert "never inherits an older freeze" in result.stdout


def _freeze_add_cmd(work: Work, *command: str, env: dict[str, str] | None = None) -> Any:
    work.git("fetch", "-q", "origin", "+refs/notes/evidence:refs/notes/evidence")
    work.git("merge", "-q", "--ff-only", "origin/main")
    return evidence(
        work.path,
        "freeze",
        "add",
        "--test",
        "tests/test_app.py::test_app",
        "--runs",
        "2",
        "--",
        *command,
        env={"GIT_EVIDENCE_PUSHER": CI, **(env or {})},
    )


def test_freeze_add_of_a_command_that_cannot_start_is_exit_2_never_a_product_failure(
    ci: tuple[Work, str], tmp_path: Path
) -> None:
    work, _ = ci
    gone = tmp_path / "venv" / "bin" / "python"
    result = _freeze_add_cmd(work, str(gone), "-m", "pytest")
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"cannot start {gone}" in result.stdout + result.stderr
    assert "product failure" not in result.stdout
    result = _freeze_add_cmd(work, "sh", "-c", "exec /nowhere/python")
    assert result.returncode == 2, result.stdout + result.stderr
    assert "exited 127, as a command that cannot start does" in result.stdout + result.stderr
    assert (work.path / LEDGER).read_text() == ""


def test_freeze_add_runs_see_no_secret_of_the_environment(ci: tuple[Work, str]) -> None:
    work, _ = ci
    check = "import os, sys; sys.exit(1 if 'CLOUD_TOKEN' in os.environ else 0)"
    result = _freeze_add_cmd(work, sys.executable, "-c", check, env={"CLOUD_TOKEN": "x"})
    assert "passed every run: nothing to freeze" in result.stdout, result.stdout + result.stderr
