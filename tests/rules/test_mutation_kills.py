"""Who may do what, pinned end to end: one push per plausible one-line bug that once
made no test fail (a class dropped from a set, one writer list read for another, a
comparison off by one, a glob star crossing `/`, a base taken from the wrong commit).
Each test is named after the behaviour the bug would break; the table tests
(tests/*/test_*_table.py) pin the same rows without git."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from helpers.ledgers import LEDGER, append, entry, line, stamp
from helpers.locks import pin_main
from helpers.pushes import AGENT, refused, remote, server_tip
from helpers.repos import POLICY, Work, clone_of, evidence, make_server, protected_clone

NOTES = "refs/notes/evidence"
# Three writer lists, three different names: no permission may borrow another's list.
SPLIT = """\
[identities]
evidence_writers = ["alice"]
ledger_writers = ["ledger-bot"]
lock_writers = ["lock-bot"]
"""


def lock_locally(work: Work) -> str:
    """`git evidence lock origin/main` in ``work`` (the note is not pushed); its digest."""
    work.git("fetch", "-q", "origin")
    result = evidence(work.path, "lock", "origin/main")
    assert result.returncode == 0, result.stderr
    return result.stdout.split("\t")[0]


# -- a class dropped from the "product side" set -------------------------------------------


def test_fixture_with_a_makefile_is_a_mixed_commit_even_with_other_paths_allowed(
    tmp_path: Path,
) -> None:
    work = protected_clone(
        tmp_path, {".git-evidence.toml": '[rules]\nother_path = "allow"\n' + POLICY}
    )
    sha = work.commit("fixture and build", {"tests/fixtures/a.json": "{}\n", "Makefile": "all:\n"})
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert refused(result, "mixed-commit")
    said = remote(result)
    assert f"mixed-commit: refs/heads/main {sha[:12]}" in said
    assert "\n    fixture: tests/fixtures/a.json\n    other: Makefile\n" in said
    assert "other-path" not in said  # allowed: the mix alone refuses it
    assert server_tip(work) != sha


def test_fixture_with_a_makefile_is_a_mixed_commit_not_only_an_other_path_hold(
    work: Work,
) -> None:
    work.commit("fixture and build", {"tests/fixtures/a.json": "{}\n", "Makefile": "all:\n"})
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert refused(result, "mixed-commit")
    # alice is a reviewer: the hold on the Makefile is reported as accepted, and the
    # mix is what refuses the push.
    assert "accepted by alice: other-path Makefile" in " ".join(remote(result).split())
    assert "refs/heads/main: reject" in remote(result)


# -- one writer list read for another -----------------------------------------------------------


def test_evidence_writer_who_is_no_lock_writer_pushing_the_notes_ref_is_notes_forge(
    work: Work,
) -> None:
    lock_locally(work)  # a true lock of main: only the pusher is wrong
    result = work.push("origin", NOTES, pusher="alice")
    assert refused(result, "notes-forge")
    said = remote(result)
    assert "alice is not a lock writer" in said
    assert "only lock writers (ci-bot) update refs/notes/evidence" in said
    assert server_tip(work, NOTES) == ""
    assert work.push("origin", NOTES, pusher="ci-bot").returncode == 0


@pytest.fixture
def split_clone(tmp_path: Path) -> Work:
    """A clone of a server whose policy names a different writer for evidence, the
    ledger and the lock."""
    return clone_of(tmp_path, make_server(tmp_path, {".git-evidence.toml": SPLIT}))


@pytest.fixture
def split_server(split_clone: Work) -> tuple[Work, str]:
    """``split_clone`` with main pinned by the lock writer; the pin digest."""
    digest = lock_locally(split_clone)
    pushed = split_clone.push("origin", NOTES, pusher="lock-bot")
    assert pushed.returncode == 0, pushed.stderr
    return split_clone, digest


@pytest.mark.parametrize(
    ("pusher", "rule"),
    [("lock-bot", None), ("ledger-bot", "notes-forge"), ("alice", "notes-forge")],
)
def test_ledger_writers_and_lock_writers_are_kept_apart_for_the_notes_ref(
    split_clone: Work, pusher: str, rule: str | None
) -> None:
    lock_locally(split_clone)
    result = split_clone.push("origin", NOTES, pusher=pusher)
    if rule is None:
        assert result.returncode == 0, result.stderr
        assert server_tip(split_clone, NOTES) == split_clone.head(NOTES)
    else:
        assert refused(result, rule)
        assert f"{pusher} is not a lock writer" in remote(result)
        assert "only lock writers (lock-bot)" in remote(result)
        assert server_tip(split_clone, NOTES) == ""


@pytest.mark.parametrize(
    ("pusher", "rule"),
    [("ledger-bot", None), ("lock-bot", "evidence-untrusted"), ("alice", "evidence-untrusted")],
)
def test_ledger_writers_and_lock_writers_are_kept_apart_for_the_ledger(
    split_server: tuple[Work, str], pusher: str, rule: str | None
) -> None:
    work, digest = split_server
    append(work, line(entry(digest, writer="ledger-bot")))
    result = work.push("origin", "HEAD:main", pusher=pusher)
    if rule is None:
        assert result.returncode == 0, result.stderr
    else:
        assert refused(result, rule)
        said = remote(result)
        assert f"{pusher} may not change evidence" in said
        assert f"freeze_ledger: {LEDGER}" in said
        assert "have a ledger writer push it on its own (ledger-bot)" in " ".join(said.split())


def test_ledger_writers_and_lock_writers_are_kept_apart_for_the_entry_writer(
    split_server: tuple[Work, str],
) -> None:
    work, digest = split_server
    append(work, line(entry(digest, writer="lock-bot")))
    result = work.push("origin", "HEAD:main", pusher="ledger-bot")
    assert refused(result, "ledger-entry")
    assert "writer 'lock-bot' is not a ledger writer" in remote(result)


# -- the repository root, a glob star, a namespace without its slash -------------------------


def test_symlink_to_the_repository_root_is_evidence(work: Work) -> None:
    work.commit_link("root", "src/root", "..")
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert "policy: src/root" in remote(result)
    classified = evidence(work.path, "check", "HEAD~1..HEAD", "--as", AGENT)
    assert classified.returncode == 1
    assert "evidence-untrusted" in classified.stdout


def test_star_in_a_glob_does_not_cross_a_slash(tmp_path: Path) -> None:
    policy = '[paths]\nfixture = ["tests/*.json"]\n[rules]\ntest_edit = "allow"\n' + POLICY
    work = protected_clone(
        tmp_path,
        {".git-evidence.toml": policy, "tests/x.json": "{}\n", "tests/sub/x.json": "{}\n"},
    )
    shown = evidence(work.path, "classify", "tests/x.json", "tests/sub/x.json")
    assert shown.stdout.splitlines() == [
        "tests/x.json\tfixture\tglob tests/*.json",
        "tests/sub/x.json\ttest\tglob tests/**",
    ]
    work.commit("deeper json is test data", {"tests/sub/x.json": "[]\n", "src/app.py": "v2\n"})
    allowed = work.push("origin", "HEAD:main", pusher=AGENT)
    assert allowed.returncode == 0, allowed.stderr
    work.commit("the fixture itself", {"tests/x.json": "[]\n", "src/app.py": "v3\n"})
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "mixed-commit")


def test_allow_namespaces_without_a_trailing_slash_is_a_policy_error(tmp_path: Path) -> None:
    policy = '[rules]\nallow_namespaces = ["refs/heads"]\n' + POLICY
    work = protected_clone(tmp_path, {".git-evidence.toml": policy})
    work.commit("product", {"src/app.py": "v2\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "policy-error")
    said = remote(result)
    assert "base:.git-evidence.toml:2: rules.allow_namespaces:" in said
    assert "'refs/heads' is not a full ref name like refs/<namespace>/" in said


# -- the base of a new branch -------------------------------------------------------------------


def test_product_branch_forked_before_a_pinned_fixture_update_is_allowed(
    work: Work, tmp_path: Path
) -> None:
    pin_main(work)
    work.git("checkout", "-qb", "feat")  # forked from the pinned main
    alice = clone_of(tmp_path, Path(work.git("remote", "get-url", "origin").stdout.strip()), "a")
    alice.commit("new golden", {"tests/goldens/out.txt": "v2\n"})
    pushed = alice.push("origin", "HEAD:main", pusher="alice")
    assert pushed.returncode == 0, pushed.stderr
    assert "pinned refs/heads/main" in pushed.stderr  # main's tip has its own pin now
    work.commit("product", {"src/app.py": "v2\n"})
    result = work.push("origin", "feat", pusher=AGENT)
    # Against main's tip the branch's golden would look rewritten; its base is the
    # merge-base, where the branch changed no evidence.
    assert result.returncode == 0, result.stderr
    said = remote(result)
    assert "fixture-breach" not in said
    assert "lock-stale" not in said
    assert server_tip(work, "refs/heads/feat") == work.head()


# -- a ledger window that ends where it starts -----------------------------------------------------


def test_ledger_entry_with_until_equal_to_frozen_at_is_refused(work: Work) -> None:
    pin = pin_main(work)
    at = stamp(datetime.now(timezone.utc) - timedelta(minutes=1))
    append(work, line(entry(pin, frozen_at=at, until=at)))
    result = work.push("origin", "HEAD:main", pusher="ci-bot")
    assert refused(result, "ledger-entry")
    assert f"{LEDGER}: line 1: until is not after frozen_at" in remote(result)
