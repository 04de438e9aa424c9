"""`git evidence check` names what a push of the range to a protected ref would meet
from policy-invalid: a policy or labels file that does not parse, as pre-receive
decides it (only when the range changes the file), the server agreeing."""

from __future__ import annotations

from pathlib import Path

from helpers.labels import BROKEN, GOOD, LABELS, WHY
from helpers.pushes import refused
from helpers.repos import POLICY, clone_of, evidence, make_server


def test_check_names_broken_labels_the_server_then_refuses(tmp_path: Path) -> None:
    alice = clone_of(tmp_path, make_server(tmp_path, {LABELS: GOOD}), "alice")
    alice.commit("relabel", {LABELS: BROKEN})
    checked = evidence(alice.path, "check", "--as", "alice")
    said = " ".join(checked.stdout.split())  # the report wraps its lines
    assert f"policy-invalid: {alice.head()[:12]}:{LABELS}:3: {WHY}" in said
    assert "a push of this to a protected ref is refused" in said
    assert refused(alice.push("origin", "HEAD:main", pusher="alice"), "policy-invalid")


def test_check_names_a_policy_that_does_not_parse(tmp_path: Path) -> None:
    alice = clone_of(tmp_path, make_server(tmp_path), "alice")
    alice.commit("policy", {".git-evidence.toml": POLICY + "[rules\n"})
    checked = evidence(alice.path, "check", "--as", "alice")
    said = " ".join(checked.stdout.split())
    assert f"policy-invalid: {alice.head()[:12]}:.git-evidence.toml" in said
    assert refused(alice.push("origin", "HEAD:main", pusher="alice"), "policy-invalid")


def test_check_says_nothing_of_files_the_range_leaves_alone(tmp_path: Path) -> None:
    alice = clone_of(tmp_path, make_server(tmp_path, {LABELS: GOOD}), "alice")
    alice.commit("product", {"src/app.py": "print('changed')\n"})
    checked = evidence(alice.path, "check", "--as", "alice")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "policy-invalid" not in checked.stdout
