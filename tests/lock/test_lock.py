"""The lock: pinned as a git note, verified by hand, enforced at push."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers.locks import NOTES, pin_main
from helpers.pushes import refused, remote
from helpers.repos import Work, evidence, git, protected_clone

AGENT = "agent-bot"


@pytest.fixture
def locked(work: Work) -> Work:
    pin_main(work)
    return work


def note_on(server: Path, rev: str = "main") -> dict[str, object]:
    out = git(server, "notes", f"--ref={NOTES}", "show", rev).stdout
    doc: dict[str, object] = json.loads(out)
    return doc


def test_lock_writer_pins_and_pushes_the_notes_ref(locked: Work, server: Path) -> None:
    doc = note_on(server)
    assert doc["commit"] == git(server, "rev-parse", "main").stdout.strip()
    files = doc["files"]
    assert isinstance(files, dict)
    assert set(files) >= {"tests/fixtures/a.json", "tests/fixtures/b.json", "tests/goldens/out.txt"}
    shown = evidence(locked.path, "show-lock", "origin/main")
    assert shown.returncode == 0, shown.stderr
    assert "root tests/fixtures: tree" in shown.stdout


def test_lock_records_mode_size_sha256_and_root_trees(locked: Work, server: Path) -> None:
    import hashlib

    doc = note_on(server)
    entry = doc["files"]["tests/fixtures/a.json"]  # type: ignore[index]
    assert entry["mode"] == "100644"
    assert entry["size"] == len(b'{"a": 1}\n')
    assert entry["sha256"] == hashlib.sha256(b'{"a": 1}\n').hexdigest()
    tree = git(server, "rev-parse", "main:tests/fixtures").stdout.strip()
    assert doc["trees"]["tests/fixtures"] == tree  # type: ignore[index]
    assert doc["trees"]["testdata"] is None  # type: ignore[index]


def test_re_pinning_is_idempotent(locked: Work) -> None:
    again = evidence(locked.path, "lock", "origin/main")
    assert again.returncode == 0
    assert "already pinned, unchanged" in again.stdout


def test_post_receive_pins_a_main_tip_whose_lock_roots_changed(locked: Work, server: Path) -> None:
    locked.commit("new golden", {"tests/goldens/out.txt": "v2\n"})
    result = locked.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr
    assert "remote: git-evidence: pinned refs/heads/main" in result.stderr
    assert note_on(server)["commit"] == locked.head()


def test_a_product_push_pins_nothing_and_the_pin_before_it_stays_in_force(
    locked: Work, server: Path
) -> None:
    notes_before = git(server, "rev-parse", NOTES).stdout
    pinned = locked.head()
    locked.commit("product", {"src/app.py": "v2\n"})
    result = locked.push("origin", "HEAD:main", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    assert "pinned" not in result.stderr
    assert git(server, "rev-parse", NOTES).stdout == notes_before  # nothing written
    shown = evidence(locked.path, "show-lock", "HEAD")
    assert shown.returncode == 0, shown.stderr
    assert pinned[:12] in shown.stdout  # the lock in force is the nearest pin
    assert evidence(locked.path, "verify").returncode == 0


def test_untrusted_push_after_a_trusted_evidence_update_is_judged_against_the_new_pin(
    locked: Work, tmp_path: Path
) -> None:
    locked.commit("new golden", {"tests/goldens/out.txt": "v2\n"})
    assert locked.push("origin", "HEAD:main", pusher="alice").returncode == 0
    agent = Work(tmp_path / "agent")
    git(
        tmp_path,
        "clone",
        "-q",
        str(locked.git("remote", "get-url", "origin").stdout.strip()),
        str(agent.path),
    )
    agent.commit("product", {"src/app.py": "v3\n"})
    result = agent.push("origin", "HEAD:main", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    assert "lock-stale" not in result.stderr


def test_bytes_under_a_lock_root_outside_the_fixture_globs_are_a_breach(
    tmp_path: Path,
) -> None:
    policy = (
        '[paths]\nfixture = ["tests/fixtures/**"]\n'
        '[lock]\nroots = ["tests/fixtures", "data/golden"]\n'
        '[identities]\nevidence_writers = ["alice"]\nlock_writers = ["ci-bot"]\n'
    )
    work = protected_clone(tmp_path, {".git-evidence.toml": policy, "data/golden/x.bin": "1\n"})
    pin_main(work)
    work.commit("drift", {"data/golden/x.bin": "2\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "fixture-breach")
    assert "modified: data/golden/x.bin" in remote(result)


@pytest.mark.parametrize(
    ("kind", "change"),
    [
        ("modified", "byte"),
        ("added", "add"),
        ("removed", "remove"),
        ("mode", "chmod"),
        ("modified", "symlink"),
    ],
)
def test_drift_is_reported_by_verify_and_refused_at_push(
    locked: Work, kind: str, change: str
) -> None:
    if change == "byte":
        locked.write("tests/fixtures/a.json", '{"a": 2}\n')
    elif change == "add":
        locked.write("tests/fixtures/new.json", "{}\n")
    elif change == "remove":
        os.remove(locked.path / "tests/fixtures/b.json")
    elif change == "chmod":
        os.chmod(locked.path / "tests/fixtures/a.json", 0o755)
    else:
        os.remove(locked.path / "tests/fixtures/a.json")
        os.symlink("b.json", locked.path / "tests/fixtures/a.json")
    locked.git("add", "-A")
    locked.git("commit", "-qm", "drift")
    verified = evidence(locked.path, "verify", "--format", "json")
    assert verified.returncode == 1
    doc = json.loads(verified.stdout)
    assert [d["kind"] for d in doc["drift"]] == [kind]
    assert doc["lock"]["digest"].startswith("sha256:")
    result = locked.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "fixture-breach")
    assert f"{kind}: tests/fixtures/" in remote(result)


def test_verify_with_unchanged_fixtures_matches(locked: Work) -> None:
    locked.commit("product", {"src/app.py": "v2\n"})
    result = evidence(locked.path, "verify")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "matches it" in result.stdout


def test_verify_worktree_sees_untracked_and_ignored_files(locked: Work) -> None:
    assert evidence(locked.path, "verify", "--worktree").returncode == 0
    locked.write(".gitignore", "*.tmp\n")
    locked.write("tests/fixtures/.DS_Store", "junk")  # excluded by the policy
    clean = evidence(locked.path, "verify", "--worktree")
    assert clean.returncode == 0, clean.stdout
    locked.write("tests/fixtures/extra.tmp", "ignored but read by tests\n")
    result = evidence(locked.path, "verify", "--worktree", "--format", "json")
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["drift"] == [
        {
            "path": "tests/fixtures/extra.tmp",
            "kind": "added",
            "old": None,
            "new": doc["drift"][0]["new"],
        }
    ]


def test_verify_without_a_lock_says_how_to_get_one(work: Work) -> None:
    result = evidence(work.path, "verify")
    assert result.returncode == 1
    assert "no lock in force" in result.stdout
    assert "git fetch origin refs/notes/evidence" in result.stdout


def _push_note_bypassing_the_hook(server: Path, work: Work) -> None:
    hook = server / "hooks" / "pre-receive"
    hook.rename(server / "hooks" / "off")
    try:
        assert work.push("-f", "origin", NOTES).returncode == 0
    finally:
        (server / "hooks" / "off").rename(hook)


def test_forged_note_pushed_by_a_lock_writer_is_refused(locked: Work) -> None:
    from git_evidence.core.records import canonical_json

    locked.git("fetch", "-q", "origin", f"+{NOTES}:{NOTES}")
    doc = json.loads(locked.git("notes", f"--ref={NOTES}", "show", "origin/main").stdout)
    doc["files"]["tests/fixtures/a.json"]["sha256"] = "0" * 64
    forged = canonical_json(doc)  # one line, byte-exact: only the hash is wrong
    blob = locked.git("hash-object", "-w", "--stdin", input=forged).stdout.strip()
    locked.git("notes", f"--ref={NOTES}", "add", "-f", "-C", blob, "origin/main")
    result = locked.push("origin", NOTES, pusher="ci-bot")
    assert refused(result, "lock-invalid")
    said = remote(result)
    assert "does not match that commit's files" in said
    assert "tests/fixtures/a.json: modified" in said


def test_doubled_note_from_a_cat_sort_uniq_merge_is_refused(
    locked: Work, server: Path, tmp_path: Path
) -> None:
    other = Work(tmp_path / "other")
    git(tmp_path, "clone", "-q", str(server), str(other.path))
    # A second lock writer pins the same commit in a notes history of its own, then
    # merges the server's with cat_sort_uniq: the note now holds both records.
    second = {"GIT_COMMITTER_NAME": "second lock writer"}
    assert evidence(other.path, "lock", "origin/main", env=second).returncode == 0
    other.git("fetch", "-q", "origin", f"{NOTES}:refs/notes/theirs")
    other.git("notes", f"--ref={NOTES}", "merge", "-q", "-s", "cat_sort_uniq", "refs/notes/theirs")
    text = other.git("notes", f"--ref={NOTES}", "show", "origin/main").stdout
    assert len([line for line in text.splitlines() if line.strip()]) == 2
    result = other.push("-f", "origin", NOTES, pusher="ci-bot")
    assert refused(result, "lock-invalid")
    assert "holds 2 records" in remote(result)


def test_a_broken_lock_on_the_server_refuses_pushes_without_crashing(
    locked: Work, server: Path
) -> None:
    locked.git("fetch", "-q", "origin", f"+{NOTES}:{NOTES}")
    locked.git("notes", f"--ref={NOTES}", "add", "-f", "-m", "not json at all", "origin/main")
    _push_note_bypassing_the_hook(server, locked)
    locked.commit("product", {"src/app.py": "v2\n"})
    result = locked.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "lock-invalid")
    assert "Traceback" not in result.stderr


def test_stale_lock_names_the_commit_to_pin(locked: Work, server: Path) -> None:
    post = server / "hooks" / "post-receive"
    post.rename(server / "hooks" / "post-off")
    locked.commit("golden", {"tests/goldens/out.txt": "v2\n"})
    assert locked.push("origin", "HEAD:main", pusher="alice").returncode == 0
    stale_base = locked.head()
    post.with_name("post-off").rename(post)
    locked.commit("product", {"src/app.py": "v2\n"})
    result = locked.push("origin", "HEAD:main", pusher=AGENT)
    # A notice: the base is accepted history, the push is not held for its pin.
    assert result.returncode == 0, result.stderr
    said = remote(result)
    assert "\nlock-stale: " in "\n" + said
    assert f"git evidence lock {stale_base[:12]}" in said
    assert "fixture-breach" not in said
    assert "refs/heads/main: allow" in said


def test_lock_missing_is_held_when_required(tmp_path: Path) -> None:
    policy = "[lock]\nrequired = true\n"
    work = protected_clone(tmp_path, {".git-evidence.toml": policy})
    work.commit("product", {"src/app.py": "v2\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "lock-missing")


def test_lock_survives_the_agent_amending_and_rebasing_its_branch(locked: Work) -> None:
    locked.git("checkout", "-qb", "feat")
    locked.commit("product", {"src/app.py": "v2\n"})
    assert locked.push("origin", "feat", pusher=AGENT).returncode == 0
    locked.git("commit", "-q", "--amend", "-m", "product, amended")
    result = locked.push("-f", "origin", "feat", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    locked.git("rebase", "-q", "--onto", "origin/main", "HEAD~1")
    assert locked.push("-f", "origin", "feat", pusher=AGENT).returncode == 0


def test_lfs_pointer_is_recorded_and_its_change_reported(locked: Work, server: Path) -> None:
    pointer = (
        "version https://git-lfs.github.com/spec/v1\noid sha256:" + "a" * 64 + "\nsize 12345\n"
    )
    locked.commit("lfs golden", {"tests/goldens/big.bin": pointer})
    assert locked.push("origin", "HEAD:main", pusher="alice").returncode == 0
    entry = note_on(server)["files"]["tests/goldens/big.bin"]  # type: ignore[index]
    assert entry["lfs"] == {"oid": "sha256:" + "a" * 64, "size": 12345}
    locked.commit("swap the object", {"tests/goldens/big.bin": pointer.replace("a" * 64, "b" * 64)})
    result = locked.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "fixture-breach")
    assert "lfs: tests/goldens/big.bin" in remote(result)


def test_pre_push_checks_the_fetched_lock(locked: Work) -> None:
    assert evidence(locked.path, "install").returncode == 0
    locked.git("fetch", "-q", "origin")
    locked.commit("drift", {"src/app.py": "x\n"})
    locked.git("update-index", "--chmod=+x", "tests/fixtures/a.json")
    locked.git("commit", "-qm", "chmod", "--no-verify")
    result = locked.push("origin", "HEAD:main")
    assert result.returncode != 0
    assert "fixture-breach: refs/heads/main" in result.stderr


def test_pre_push_says_when_it_has_no_lock(work: Work) -> None:
    assert evidence(work.path, "install").returncode == 0
    work.git("config", "evidence.verbose", "true")  # a hook that allows is silent otherwise
    work.commit("product", {"src/app.py": "x\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert "no lock fetched" in result.stderr


def test_install_adds_the_notes_fetch_refspec_so_clones_receive_locks(
    locked: Work, tmp_path: Path, server: Path
) -> None:
    clone = Work(tmp_path / "fresh")
    git(tmp_path, "clone", "-q", str(server), str(clone.path))
    assert evidence(clone.path, "install").returncode == 0
    clone.git("fetch", "-q", "origin")
    assert clone.git("rev-parse", "-q", "--verify", NOTES, check=False).returncode == 0
    assert evidence(clone.path, "verify").returncode == 0


def test_lock_of_an_unknown_revision_fails_clearly(work: Work) -> None:
    result = evidence(work.path, "lock", "no-such-rev")
    assert result.returncode == 2
    assert "'no-such-rev' does not name a commit" in result.stderr


def test_lock_reads_git_objects_not_the_checkout(locked: Work, server: Path) -> None:
    locked.write("tests/fixtures/a.json", "edited on disk, not committed\n")
    result = evidence(locked.path, "lock", "HEAD")
    assert "already pinned, unchanged" in result.stdout
    assert "edited" not in json.dumps(note_on(server))


def _canonical_forgery(locked: Work, edit: Callable[[dict[str, Any], dict[str, Any]], None]) -> str:
    """A lock writer's note that is one canonical record but lies about the commit."""
    from git_evidence.core.facts import Entry
    from git_evidence.lock.record import Lock

    locked.git("fetch", "-q", "origin", f"+{NOTES}:{NOTES}")
    doc = json.loads(locked.git("notes", f"--ref={NOTES}", "show", "origin/main").stdout)
    files = {
        p: Entry(e["mode"], e["blob"], e["size"], e["sha256"]) for p, e in doc["files"].items()
    }
    edit(files, doc)
    lock = Lock(doc["commit"], tuple(doc["roots"]), doc["trees"], files, "forger", doc["pinned_at"])
    blob = locked.git("hash-object", "-w", "--stdin", input=lock.canonical).stdout.strip()
    locked.git("notes", f"--ref={NOTES}", "add", "-f", "-C", blob, "origin/main")
    return blob


def test_a_canonical_note_that_lies_about_a_hash_is_refused(locked: Work) -> None:
    def lie(files: dict[str, Any], doc: dict[str, Any]) -> None:
        entry = files["tests/fixtures/a.json"]
        files["tests/fixtures/a.json"] = entry._replace(sha256="0" * 64)

    _canonical_forgery(locked, lie)
    result = locked.push("origin", NOTES, pusher="ci-bot")
    assert refused(result, "lock-invalid")
    assert "does not match that commit's files" in remote(result)


def test_a_canonical_note_with_other_root_trees_is_refused(locked: Work) -> None:
    def lie(files: dict[str, Any], doc: dict[str, Any]) -> None:
        doc["trees"]["tests/fixtures"] = "1" * 40

    _canonical_forgery(locked, lie)
    result = locked.push("origin", NOTES, pusher="ci-bot")
    assert refused(result, "lock-invalid")
    assert "root trees that commit does not have" in remote(result)
