"""Attacks on the lock, end to end: notes that are not the canonical
record's exact bytes, accepted history that no pin covered yet, and lock writers racing
the server's post-receive."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.ledgers import CI, LEDGER, append, entry, line
from helpers.locks import pin_main
from helpers.pushes import refused, remote
from helpers.repos import POLICY, Work, clone_of, evidence, git, make_server

AGENT = "agent-bot"
NOTES = "refs/notes/evidence"
LOCK_WRITER = {"GIT_EVIDENCE_PUSHER": "ci-bot"}


def note_bytes(repo: Path, rev: str) -> bytes:
    """A note exactly as stored (``git notes show`` would add nothing, but be sure)."""
    blob = git(repo, "notes", f"--ref={NOTES}", "list", rev).stdout.strip()
    return subprocess.run(
        ["git", "cat-file", "blob", blob], cwd=repo, capture_output=True, check=True
    ).stdout


def notes_on(repo: Path) -> dict[str, str]:
    """Annotated commit → note blob."""
    out = git(repo, "notes", f"--ref={NOTES}", "list", check=False).stdout
    return {line.split()[1]: line.split()[0] for line in out.splitlines()}


def fetch_notes(work: Work) -> None:
    work.git("fetch", "-q", "origin", f"+{NOTES}:{NOTES}")


def replace_note(work: Work, rev: str, data: bytes) -> None:
    """Attach ``data`` as ``rev``'s note, byte for byte."""
    blob = work.git("hash-object", "-w", "--stdin", input=data).stdout.strip()
    work.git("notes", f"--ref={NOTES}", "add", "-f", "-C", blob, rev)


def push_bypassing_the_gate(server: Path, work: Work, *args: str) -> None:
    """What a note from before these rules (or an admin's slip) looks like on a server."""
    hook = server / "hooks" / "pre-receive"
    hook.rename(server / "hooks" / "off")
    try:
        result = work.push("-f", "origin", *args)
        assert result.returncode == 0, result.stderr
    finally:
        (server / "hooks" / "off").rename(hook)


@pytest.fixture
def locked(work: Work) -> Work:
    pin_main(work)
    return work


# -- 1. a lock note is exactly the canonical record's bytes --------------------------


def _spaced(record: bytes) -> bytes:
    return json.dumps(json.loads(record), sort_keys=True).encode()


def _reordered(record: bytes) -> bytes:
    doc = json.loads(record)
    return json.dumps(dict(reversed(list(doc.items()))), separators=(",", ":")).encode()


NOT_BYTE_EXACT: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "trailing-newline": (lambda r: r + b"\n", "ends with a newline"),
    "leading-space": (lambda r: b" " + r, "whitespace around the record"),
    "bom": (lambda r: b"\xef\xbb\xbf" + r, "byte order mark"),
    "crlf": (lambda r: r + b"\r\n", "carriage return"),
    "spaces-inside": (_spaced, "not in canonical form"),
    "reordered-keys": (_reordered, "not in canonical form"),
}


@pytest.mark.parametrize("variant", sorted(NOT_BYTE_EXACT))
def test_note_that_is_not_byte_exact_pushed_by_a_lock_writer_is_refused(
    locked: Work, variant: str
) -> None:
    change, reason = NOT_BYTE_EXACT[variant]
    fetch_notes(locked)
    record = note_bytes(locked.path, "origin/main")
    replace_note(locked, "origin/main", change(record))
    result = locked.push("origin", NOTES, pusher="ci-bot")
    assert refused(result, "lock-invalid")
    assert reason in remote(result)


def test_note_written_by_git_notes_add_from_a_file_is_refused(locked: Work, tmp_path: Path) -> None:
    """`git notes add -F file` of the record saved with a final newline: what a lock
    writer's editor or `echo` produces."""
    fetch_notes(locked)
    saved = tmp_path / "record.json"
    saved.write_bytes(note_bytes(locked.path, "origin/main") + b"\n")
    locked.git("notes", f"--ref={NOTES}", "add", "-f", "-F", str(saved), "origin/main")
    result = locked.push("origin", NOTES, pusher="ci-bot")
    assert refused(result, "lock-invalid")
    assert "ends with a newline" in remote(result)


def test_lock_in_force_with_a_trailing_newline_refuses_pushes(locked: Work, server: Path) -> None:
    fetch_notes(locked)
    replace_note(locked, "origin/main", note_bytes(locked.path, "origin/main") + b"\n")
    push_bypassing_the_gate(server, locked, NOTES)
    locked.commit("product", {"src/app.py": "v2\n"})
    result = locked.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "lock-invalid")
    assert "ends with a newline" in remote(result)
    assert "Traceback" not in result.stderr


def test_show_lock_refuses_a_note_that_is_not_byte_exact(locked: Work) -> None:
    fetch_notes(locked)
    replace_note(locked, "origin/main", note_bytes(locked.path, "origin/main") + b"\n")
    shown = evidence(locked.path, "show-lock", "origin/main")
    assert shown.returncode == 2
    assert "lock-invalid" in shown.stderr
    assert "sha256:" not in shown.stdout


def test_lock_repairs_a_note_that_is_not_byte_exact(locked: Work) -> None:
    fetch_notes(locked)
    exact = note_bytes(locked.path, "origin/main")
    replace_note(locked, "origin/main", exact + b"\n")
    result = evidence(locked.path, "lock", "origin/main")
    assert result.returncode == 0, result.stderr
    assert "\tpinned:" in result.stdout
    assert "already pinned" not in result.stdout
    repaired = note_bytes(locked.path, "origin/main")
    assert not repaired.endswith(b"\n")
    digest = result.stdout.split("\t")[0]
    assert digest == "sha256:" + hashlib.sha256(repaired).hexdigest()


def test_every_command_cites_one_pin_digest(locked: Work) -> None:
    """`lock`, `show-lock`, `verify` and the ledger's pin check agree on the digest."""
    fetch_notes(locked)
    pinned = evidence(locked.path, "lock", "origin/main").stdout.split("\t")[0]
    shown = json.loads(evidence(locked.path, "show-lock", "--format", "json").stdout)
    verified = json.loads(evidence(locked.path, "verify", "--format", "json").stdout)
    raw = "sha256:" + hashlib.sha256(note_bytes(locked.path, "origin/main")).hexdigest()
    assert pinned == shown["digest"] == verified["lock"]["digest"] == raw
    append(locked, line(entry(shown["digest"])))
    result = locked.push("origin", "HEAD:main", pusher=CI)
    assert result.returncode == 0, result.stderr


def test_freeze_citing_the_raw_hash_of_a_broken_note_is_refused(locked: Work, server: Path) -> None:
    fetch_notes(locked)
    broken = note_bytes(locked.path, "origin/main") + b"\n"
    replace_note(locked, "origin/main", broken)
    push_bypassing_the_gate(server, locked, NOTES)
    append(locked, line(entry("sha256:" + hashlib.sha256(broken).hexdigest())))
    result = locked.push("origin", "HEAD:main", pusher=CI)
    assert refused(result, "ledger-entry")
    assert "is not the digest of any lock" in remote(result)


# -- 2. accepted history: every first-parent commit whose lock roots changed ---------


def alice_pushes_fixture_then_product(work: Work) -> tuple[str, str]:
    fixture = work.commit("new golden", {"tests/goldens/out.txt": "v2\n"})
    product = work.commit("behaviour", {"src/app.py": "v2\n"})
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr
    return fixture, product


def test_post_receive_pins_the_mid_push_commit_whose_fixtures_changed(
    locked: Work, server: Path
) -> None:
    fixture, product = alice_pushes_fixture_then_product(locked)
    notes = notes_on(server)
    assert fixture in notes and product in notes
    doc = json.loads(note_bytes(server, fixture))
    entry_ = doc["files"]["tests/goldens/out.txt"]
    assert entry_["sha256"] == hashlib.sha256(b"v2\n").hexdigest()


def test_post_receive_pins_only_commits_whose_lock_roots_changed(
    locked: Work, server: Path
) -> None:
    before = set(notes_on(server))
    changed = []
    for i in range(12):
        if i in (3, 7):
            changed.append(locked.commit(f"golden {i}", {"tests/goldens/out.txt": f"{i}\n"}))
        else:
            locked.commit(f"docs {i}", {"docs/guide.md": f"{i}\n"})
    result = locked.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr
    assert "pinned 2 earlier commit(s) of refs/heads/main" in remote(result)
    assert set(notes_on(server)) - before == {*changed, locked.head()}


def test_a_push_of_a_long_fixture_history_pins_its_newest_commits(
    locked: Work, server: Path
) -> None:
    """A first push of a long history must not write a pin for every fixture change
    it ever had: the newest ones are pinned, the rest are named."""
    from git_evidence.lock.pinning import MAX_RANGE_PINS

    count = MAX_RANGE_PINS + 5
    stream = [b"reset refs/heads/main\nfrom %s\n" % locked.head().encode()]
    for i in range(count):
        body = b"%d\n" % i
        stream.append(
            b"commit refs/heads/main\ncommitter A <a@x> %d +0000\ndata 6\ngolden\n"
            b"M 100644 inline tests/goldens/out.txt\ndata %d\n%s\n"
            % (1_700_000_000 + i, len(body), body)
        )
    locked.git("fast-import", "--quiet", input=b"".join(stream))
    locked.git("reset", "-q", "--hard", "main")
    before = set(notes_on(server))
    result = locked.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr
    assert "left 5 older commit(s) of refs/heads/main" in remote(result)
    newest = locked.git("rev-list", "-n", str(MAX_RANGE_PINS), "HEAD").stdout.split()
    assert set(notes_on(server)) - before == set(newest)


def test_tag_on_a_mid_push_commit_is_allowed_without_lock_stale(locked: Work, server: Path) -> None:
    fixture, _ = alice_pushes_fixture_then_product(locked)
    locked.git("tag", "v1", fixture)
    for pusher, tag in ((AGENT, "v1"), ("alice", "v1:refs/tags/v1-alice")):
        result = locked.push("origin", tag, pusher=pusher)
        assert result.returncode == 0, result.stderr
        assert "lock-stale" not in result.stderr


def test_agent_branch_from_a_mid_push_commit_is_allowed(
    locked: Work, server: Path, tmp_path: Path
) -> None:
    fixture, _ = alice_pushes_fixture_then_product(locked)
    agent = clone_of(tmp_path, server, "agent")
    agent.git("checkout", "-qb", "feat", fixture)
    agent.commit("product on the fixture commit", {"src/feature.py": "f\n"})
    result = agent.push("origin", "feat", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    said = remote(result)
    assert "lock-stale" not in said
    assert "fixture-breach" not in said


SLOW_POST_RECEIVE = """#!/bin/sh
# Test only: the first post-receive waits for the test to say go, so that a push can
# arrive while it is still pinning. Later ones run at once.
if mkdir "{gate}/first" 2>/dev/null; then
  touch "{gate}/waiting"
  i=0
  while [ ! -e "{gate}/go" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
fi
exec "{real}"
"""


def test_product_push_while_post_receive_is_still_pinning_is_allowed(
    locked: Work, server: Path, tmp_path: Path
) -> None:
    hooks = server / "hooks"
    (hooks / "post-receive").rename(hooks / "post-receive.real")
    gate = tmp_path / "gate"
    gate.mkdir()
    slow = SLOW_POST_RECEIVE.format(gate=gate, real=hooks / "post-receive.real")
    (hooks / "post-receive").write_text(slow)
    (hooks / "post-receive").chmod(0o755)

    golden = locked.commit("new golden", {"tests/goldens/out.txt": "v2\n"})
    alice = subprocess.Popen(
        ["git", "push", "origin", "HEAD:main"],
        cwd=locked.path,
        env={**os.environ, "GIT_EVIDENCE_PUSHER": "alice"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 30
        while not (gate / "waiting").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert (gate / "waiting").exists(), "alice's post-receive never started"
        assert git(server, "rev-parse", "main").stdout.strip() == golden
        assert golden not in notes_on(server)  # still pinning

        agent = clone_of(tmp_path, server, "agent")
        agent.commit("product", {"src/app.py": "v3\n"})
        result = agent.push("origin", "HEAD:main", pusher=AGENT)
        assert result.returncode == 0, result.stderr
        assert "fixture-breach" not in remote(result)
    finally:
        (gate / "go").touch()
        alice.communicate(timeout=60)
    assert alice.returncode == 0
    assert golden in notes_on(server)


def test_lock_stale_is_a_notice_that_holds_only_when_a_lock_is_required(
    tmp_path: Path,
) -> None:
    required = POLICY + "[lock]\nrequired = true\n"
    server = make_server(tmp_path, {".git-evidence.toml": required})
    work = clone_of(tmp_path, server)
    pin_main(work)
    (server / "hooks" / "post-receive").rename(server / "hooks" / "post-off")
    work.commit("golden", {"tests/goldens/out.txt": "v2\n"})
    assert work.push("origin", "HEAD:main", pusher="alice").returncode == 0
    work.commit("product", {"src/app.py": "v2\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "lock-stale")
    assert "refs/heads/main: hold" in remote(result)


def test_verify_fails_on_a_stale_lock(locked: Work, server: Path) -> None:
    (server / "hooks" / "post-receive").rename(server / "hooks" / "post-off")
    locked.commit("golden", {"tests/goldens/out.txt": "v2\n"})
    assert locked.push("origin", "HEAD:main", pusher="alice").returncode == 0
    locked.commit("product", {"src/app.py": "v2\n"})
    assert locked.push("origin", "HEAD:main", pusher=AGENT).returncode == 0
    fetch_notes(locked)
    locked.git("fetch", "-q", "origin")
    result = evidence(locked.path, "verify", "--base", "origin/main~1")
    assert result.returncode == 1
    assert "lock-stale" in result.stdout


def test_breach_is_judged_against_the_base_when_no_pin_covers_it(tmp_path: Path) -> None:
    """The base's own manifest is the reference: an unpinned base still catches drift
    under a lock root the path globs miss."""
    policy = POLICY + '[lock]\nroots = ["tests/fixtures", "data/golden"]\n'
    server = make_server(tmp_path, {".git-evidence.toml": policy, "data/golden/x.bin": "1\n"})
    work = clone_of(tmp_path, server)
    pin_main(work)
    (server / "hooks" / "post-receive").rename(server / "hooks" / "post-off")
    work.commit("fixture", {"tests/fixtures/a.json": '{"a": 3}\n'})
    assert work.push("origin", "HEAD:main", pusher="alice").returncode == 0
    work.commit("drift", {"data/golden/x.bin": "2\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "fixture-breach")
    said = remote(result)
    assert "modified: data/golden/x.bin" in said
    assert "tests/fixtures/a.json" not in said.split("fixture-breach", 1)[1]


# -- 4. git evidence lock --push -------------------------------------------------------


def test_lock_push_from_a_fresh_clone_that_never_fetched_notes(
    locked: Work, server: Path, tmp_path: Path
) -> None:
    (server / "hooks" / "post-receive").rename(server / "hooks" / "post-off")
    locked.commit("golden", {"tests/goldens/out.txt": "v2\n"})
    assert locked.push("origin", "HEAD:main", pusher="alice").returncode == 0
    before = notes_on(server)
    fresh = clone_of(tmp_path, server, "fresh")
    assert fresh.git("rev-parse", "-q", "--verify", NOTES, check=False).returncode != 0
    result = evidence(fresh.path, "lock", "origin/main", "--push", "origin", env=LOCK_WRITER)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "is published on origin" in result.stdout
    after = notes_on(server)
    assert fresh.head("origin/main") in after
    assert all(after[commit] == blob for commit, blob in before.items())


def test_lock_push_creates_the_notes_ref_on_a_server_that_has_none(
    work: Work, server: Path
) -> None:
    assert git(server, "rev-parse", "-q", "--verify", NOTES, check=False).returncode != 0
    result = evidence(work.path, "lock", "origin/main", "--push", env=LOCK_WRITER)
    assert result.returncode == 0, result.stdout + result.stderr
    assert work.head("origin/main") in notes_on(server)


def test_lock_push_retries_when_another_writer_pushes_meanwhile(
    locked: Work, server: Path, tmp_path: Path
) -> None:
    (server / "hooks" / "post-receive").rename(server / "hooks" / "post-off")
    older = locked.commit("golden 1", {"tests/goldens/out.txt": "v2\n"})
    newer = locked.commit("golden 2", {"tests/goldens/out.txt": "v3\n"})
    assert locked.push("origin", "HEAD:main", pusher="alice").returncode == 0
    other = clone_of(tmp_path, server, "other")
    writer = clone_of(tmp_path, server, "writer")
    flag = tmp_path / "raced"
    # Between this clone's fetch and its push, the other writer publishes a pin.
    hook = writer.path / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)  # a repository may start without hooks/
    hook.write_text(
        "#!/bin/sh\n"
        f'if [ ! -e "{flag}" ]; then\n'
        f'  touch "{flag}"\n'
        f'  cd "{other.path}" && unset GIT_DIR GIT_INDEX_FILE &&\n'
        f"  git fetch -q origin +{NOTES}:{NOTES} &&\n"
        f"  {sys.executable} -m git_evidence lock {older} >/dev/null &&\n"
        f"  git push -q origin {NOTES} >/dev/null 2>&1 || exit 3\n"
        "fi\n"
        "exit 0\n"
    )
    hook.chmod(0o755)
    result = evidence(writer.path, "lock", newer, "--push", "origin", env=LOCK_WRITER)
    assert result.returncode == 0, result.stdout + result.stderr
    assert flag.exists()
    assert "moved meanwhile" in result.stderr
    notes = notes_on(server)
    assert older in notes and newer in notes  # neither writer's pin was overwritten
    assert json.loads(note_bytes(server, older))["commit"] == older


def test_lock_push_by_someone_who_is_no_lock_writer_says_so(
    locked: Work, tmp_path: Path, server: Path
) -> None:
    fresh = clone_of(tmp_path, server, "fresh")
    fresh.commit("local", {"src/app.py": "local\n"})
    result = evidence(fresh.path, "lock", "HEAD", "--push", env={"GIT_EVIDENCE_PUSHER": AGENT})
    assert result.returncode == 1
    assert "notes-forge" in result.stderr
    assert "is not one of its lock writers" in result.stderr
    assert "Traceback" not in result.stderr


def test_ledger_append_after_lock_push_cites_a_pin_the_server_knows(
    locked: Work, server: Path
) -> None:
    (server / "hooks" / "post-receive").rename(server / "hooks" / "post-off")
    locked.commit("golden", {"tests/goldens/out.txt": "v2\n"})
    assert locked.push("origin", "HEAD:main", pusher="alice").returncode == 0
    pushed = evidence(locked.path, "lock", "HEAD", "--push", env=LOCK_WRITER)
    assert pushed.returncode == 0, pushed.stderr
    digest = pushed.stdout.split("\t")[0]
    append(locked, line(entry(digest)))
    assert (locked.path / LEDGER).read_bytes().count(b"\n") == 1
    result = locked.push("origin", "HEAD:main", pusher=CI)
    assert result.returncode == 0, result.stderr


def test_pin_lookup_finds_every_valid_pin_in_any_order_and_no_broken_one(
    locked: Work,
) -> None:
    import shutil

    from git_evidence.lock.check import pin_lookup
    from git_evidence.plumbing.batch import CatFile
    from git_evidence.plumbing.git import Git

    first = evidence(locked.path, "lock", "HEAD").stdout.split("\t")[0]
    locked.commit("golden", {"tests/goldens/out.txt": "v2\n"})
    second = evidence(locked.path, "lock", "HEAD").stdout.split("\t")[0]
    locked.commit("another golden", {"tests/goldens/out.txt": "v3\n"})
    evidence(locked.path, "lock", "HEAD")
    broken = note_bytes(locked.path, "HEAD") + b"\n"
    replace_note(locked, "HEAD", broken)
    raw_broken = "sha256:" + hashlib.sha256(broken).hexdigest()
    for order in ([first, second], [second, first]):
        # No validated-note cache: every note is read as it is.
        shutil.rmtree(locked.path / ".git" / "git-evidence", ignore_errors=True)
        git_ = Git(cwd=str(locked.path))
        with CatFile(git_) as cat:
            exists = pin_lookup(git_, cat, NOTES)
            assert [exists(d) for d in order] == [True, True]
            assert not exists(raw_broken)
            assert not exists("sha256:" + "0" * 64)
