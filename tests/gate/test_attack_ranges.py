"""End to end: pushes whose commits each look harmless but whose endpoint is not (a
merge that keeps an older copy of evidence), refs that alias a protected ref on the
server, and policies that would brick the repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.ledgers import CI, LEDGER, append, entry, line
from helpers.locks import NOTES, pin_main
from helpers.pushes import refused, remote, server_tip
from helpers.repos import POLICY, Work, clone_of, evidence, git, make_server

AGENT = "agent-bot"
ORACLE = "tests/oracles/o.txt"
LOOSE = "assert result >= 0\n"
TIGHT = "assert result == 42\n"


def show(work: Work, rev: str, path: str) -> str:
    return work.git("show", f"{rev}:{path}").stdout


@pytest.fixture
def server(tmp_path: Path) -> Path:
    return make_server(tmp_path, {ORACLE: LOOSE})


@pytest.fixture
def agent(tmp_path: Path, server: Path) -> Work:
    return clone_of(tmp_path, server, "agent")


@pytest.fixture
def alice(tmp_path: Path, server: Path) -> Work:
    return clone_of(tmp_path, server, "alice")


def forked_feature(agent: Work, files: dict[str, str] | None = None) -> str:
    """agent-bot's product branch, forked from main as it is now, pushed."""
    agent.git("checkout", "-qb", "feat")
    agent.commit("feature", files or {"src/feature.py": "f = 1\n"})
    pushed = agent.push("origin", "feat", pusher=AGENT)
    assert pushed.returncode == 0, pushed.stderr
    return agent.head()


def evidence_on_main(alice: Work, files: dict[str, str], pusher: str = "alice") -> str:
    alice.git("pull", "-q", "--ff-only", "origin", "main")
    alice.commit("evidence update", files)
    pushed = alice.push("origin", "HEAD:main", pusher=pusher)
    assert pushed.returncode == 0, pushed.stderr
    return alice.head()


def merge_keeping(work: Work, branch: str, paths: tuple[str, ...], *, also: dict[str, str]) -> str:
    """Merge ``branch`` into origin/main, then resolve by keeping ``branch``'s copy of
    ``paths`` (``git checkout <branch> -- <path>``), with ``also`` edited in the merge."""
    work.git("fetch", "-q", "origin")
    work.git("checkout", "-qB", "main", "origin/main")
    work.git("merge", "-q", "--no-ff", "--no-commit", branch)
    for path in paths:
        work.git("checkout", branch, "--", path)
    for rel, content in also.items():
        work.write(rel, content)
    work.git("add", "-A")
    work.git("commit", "-qm", f"Merge {branch}")
    return work.head()


# -- controls: these must pass -----------------------------------------------------


def test_merging_main_into_a_feature_branch_after_an_oracle_update_is_allowed(
    agent: Work, alice: Work, server: Path
) -> None:
    forked_feature(agent)
    evidence_on_main(alice, {ORACLE: TIGHT})
    agent.git("fetch", "-q", "origin")
    agent.git("merge", "-q", "--no-edit", "origin/main")
    result = agent.push("origin", "feat", pusher=AGENT)
    assert result.returncode == 0, result.stderr


def test_feature_merge_keeping_mains_evidence_is_allowed(
    agent: Work, alice: Work, server: Path
) -> None:
    forked_feature(agent)
    evidence_on_main(alice, {ORACLE: TIGHT})
    merged = merge_keeping(agent, "feat", (), also={})
    result = agent.push("origin", "main", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    assert server_tip(agent) == merged
    assert show(agent, "origin/main", ORACLE) == TIGHT


def test_product_branch_forked_before_a_pinned_fixture_update_is_allowed(
    agent: Work, alice: Work, server: Path
) -> None:
    agent.git("checkout", "-qb", "feat")
    agent.commit("feature", {"src/feature.py": "f = 1\n"})
    pinned = evidence_on_main(alice, {"tests/fixtures/a.json": '{"a": 2}\n'})
    assert git(server, "notes", f"--ref={NOTES}", "list", pinned).returncode == 0
    agent.commit("more feature", {"src/feature.py": "f = 2\n"})
    result = agent.push("origin", "feat", pusher=AGENT)
    assert result.returncode == 0, result.stderr


def test_trusted_evidence_commit_merged_with_product_is_allowed(
    agent: Work, alice: Work, server: Path
) -> None:
    """The endpoint is explained: alice's own evidence commit sets the oracle."""
    forked_feature(agent)
    alice.git("fetch", "-q", "origin")
    alice.git("checkout", "-qb", "tighten", "origin/main")
    alice.commit("tighten", {ORACLE: TIGHT})
    alice.git("checkout", "-qB", "main", "origin/main")
    alice.git("merge", "-q", "--no-ff", "--no-edit", "origin/feat")
    alice.git("merge", "-q", "--no-ff", "--no-edit", "tighten")
    result = alice.push("origin", "main", pusher="alice")
    assert result.returncode == 0, result.stderr


# -- a merge that keeps an older copy of evidence ----------------------------------


def test_merge_keeping_old_oracle_is_refused(agent: Work, alice: Work, server: Path) -> None:
    forked_feature(agent)
    evidence_on_main(alice, {ORACLE: TIGHT})
    merged = merge_keeping(agent, "feat", (ORACLE,), also={})
    assert show(agent, merged, ORACLE) == LOOSE
    result = agent.push("origin", "main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    said = remote(result)
    assert f"oracle: {ORACLE}" in said
    assert "a merge brings back an older copy of 1 evidence path(s)" in said
    assert show(agent, server_tip(agent), ORACLE) == TIGHT


def test_merge_keeping_old_oracle_on_a_side_branch_is_refused(
    agent: Work, alice: Work, server: Path
) -> None:
    """The merge that keeps the old copy is buried under a clean merge on top."""
    forked_feature(agent)
    evidence_on_main(alice, {ORACLE: TIGHT})
    merge_keeping(agent, "feat", (ORACLE,), also={})
    agent.git("checkout", "-qb", "other", "origin/main")
    agent.commit("other work", {"src/other.py": "o\n"})
    agent.git("checkout", "-q", "main")
    agent.git("merge", "-q", "--no-ff", "--no-edit", "other")
    result = agent.push("origin", "main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert show(agent, server_tip(agent), ORACLE) == TIGHT


def test_feature_branch_merge_keeping_old_oracle_is_refused(
    agent: Work, alice: Work, server: Path
) -> None:
    """Merging main into the feature branch, keeping the branch's older oracle: the
    feature branch's base is then main's tip, whose oracle it undoes."""
    forked_feature(agent)
    evidence_on_main(alice, {ORACLE: TIGHT})
    agent.git("fetch", "-q", "origin")
    agent.git("merge", "-q", "--no-commit", "origin/main")
    agent.git("checkout", "HEAD", "--", ORACLE)
    agent.git("commit", "-qm", "sync with main")
    result = agent.push("origin", "feat", pusher=AGENT)
    assert refused(result, "evidence-untrusted")


def test_merge_bringing_back_a_deleted_fixture_is_refused(
    agent: Work, alice: Work, server: Path
) -> None:
    forked_feature(agent)
    alice.git("pull", "-q", "--ff-only", "origin", "main")
    alice.git("rm", "-q", "tests/fixtures/b.json")
    alice.git("commit", "-qm", "drop a fixture")
    assert alice.push("origin", "HEAD:main", pusher="alice").returncode == 0
    merge_keeping(agent, "feat", ("tests/fixtures/b.json",), also={})
    result = agent.push("origin", "main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert "fixture: tests/fixtures/b.json" in remote(result)


def test_merge_dropping_a_new_oracle_is_refused(agent: Work, alice: Work, server: Path) -> None:
    forked_feature(agent)
    evidence_on_main(alice, {"tests/oracles/new.txt": TIGHT})
    agent.git("fetch", "-q", "origin")
    agent.git("checkout", "-qB", "main", "origin/main")
    agent.git("merge", "-q", "--no-ff", "--no-commit", "feat")
    agent.git("rm", "-q", "tests/oracles/new.txt")
    agent.git("commit", "-qm", "Merge feat")
    result = agent.push("origin", "main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert "oracle: tests/oracles/new.txt" in remote(result)


def test_merge_restoring_old_policy_is_refused(tmp_path: Path) -> None:
    bare = make_server(
        tmp_path,
        {".git-evidence.toml": POLICY.replace('["alice"]', '["alice", "agent-bot"]')},
    )
    agent, alice = clone_of(tmp_path, bare, "agent"), clone_of(tmp_path, bare, "alice")
    forked_feature(agent)
    evidence_on_main(alice, {".git-evidence.toml": POLICY})  # agent-bot is no writer now
    merge_keeping(agent, "feat", (".git-evidence.toml",), also={})
    result = agent.push("origin", "main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert "policy: .git-evidence.toml" in remote(result)
    assert '"agent-bot"' not in show(agent, server_tip(agent), ".git-evidence.toml")


def test_merge_emptying_the_ledger_is_refused(agent: Work, alice: Work, server: Path) -> None:
    forked_feature(agent)
    alice.git("pull", "-q", "--ff-only", "origin", "main")
    pin = pin_main(alice)
    append(alice, line(entry(pin)))
    assert alice.push("origin", "HEAD:main", pusher=CI).returncode == 0
    merge_keeping(agent, "feat", (LEDGER,), also={})
    result = agent.push("origin", "main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert refused(result, "ledger-rewrite")


def test_ledger_writer_merge_shrinking_the_ledger_is_a_rewrite(
    agent: Work, alice: Work, server: Path
) -> None:
    forked_feature(agent)
    alice.git("pull", "-q", "--ff-only", "origin", "main")
    pin = pin_main(alice)
    append(alice, line(entry(pin)))
    assert alice.push("origin", "HEAD:main", pusher=CI).returncode == 0
    merge_keeping(alice, "origin/feat", (LEDGER,), also={})
    assert show(alice, "HEAD", LEDGER) == ""
    result = alice.push("origin", "main", pusher=CI)
    assert refused(result, "ledger-rewrite")
    assert "evidence-untrusted" not in remote(result)


def test_trusted_merge_hiding_an_evidence_revert_with_product_is_a_mixed_commit(
    agent: Work, alice: Work, server: Path
) -> None:
    forked_feature(agent)
    evidence_on_main(alice, {ORACLE: TIGHT})
    merged = merge_keeping(alice, "origin/feat", (ORACLE,), also={"src/app.py": "fixed\n"})
    result = alice.push("origin", "main", pusher="alice")
    assert refused(result, "mixed-commit")
    said = remote(result)
    assert f"mixed-commit: refs/heads/main {merged[:12]}: merge brings back an older copy" in said
    assert f"oracle: {ORACLE}" in said and "product: src/app.py" in said


def test_trusted_merge_hiding_an_evidence_revert_under_a_clean_merge_is_a_mixed_commit(
    agent: Work, alice: Work, server: Path
) -> None:
    forked_feature(agent)
    evidence_on_main(alice, {ORACLE: TIGHT})
    merged = merge_keeping(alice, "origin/feat", (ORACLE,), also={"src/app.py": "fixed\n"})
    alice.git("checkout", "-qb", "docs", "origin/main")
    alice.commit("docs", {"docs/more.md": "more\n"})
    alice.git("checkout", "-q", "main")
    alice.git("merge", "-q", "--no-ff", "--no-edit", "docs")
    result = alice.push("origin", "main", pusher="alice")
    assert refused(result, "mixed-commit")
    assert f"refs/heads/main {merged[:12]}: merge brings back" in remote(result)


def test_trusted_merge_hiding_an_evidence_revert_beside_a_decoy_revert_is_a_mixed_commit(
    agent: Work, alice: Work, server: Path
) -> None:
    """A side branch sets the oracle to its old bytes and back: a commit of the range
    sets the very bytes the tip has, but not on the history they reach the tip by."""
    forked_feature(agent)
    evidence_on_main(alice, {ORACLE: TIGHT})
    alice.git("checkout", "-qb", "decoy", "origin/main")
    alice.commit("loosen", {ORACLE: LOOSE})
    alice.commit("tighten again", {ORACLE: TIGHT})
    merged = merge_keeping(alice, "origin/feat", (ORACLE,), also={"src/app.py": "fixed\n"})
    alice.git("merge", "-q", "--no-ff", "--no-edit", "decoy")
    assert show(alice, "HEAD", ORACLE) == LOOSE
    result = alice.push("origin", "main", pusher="alice")
    assert refused(result, "mixed-commit")
    assert f"refs/heads/main {merged[:12]}: merge brings back" in remote(result)


def test_octopus_merge_keeping_old_oracle_is_refused(
    agent: Work, alice: Work, server: Path
) -> None:
    forked_feature(agent)
    evidence_on_main(alice, {ORACLE: TIGHT})
    agent.git("fetch", "-q", "origin")
    agent.git("checkout", "-qb", "other", "origin/main")
    agent.commit("other", {"src/other.py": "o\n"})
    agent.git("checkout", "-qB", "main", "origin/main")
    agent.git("merge", "-q", "--no-ff", "--no-commit", "feat", "other")
    agent.git("checkout", "feat", "--", ORACLE)
    agent.git("commit", "-qm", "octopus")
    result = agent.push("origin", "main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert show(agent, server_tip(agent), ORACLE) == TIGHT


def test_ours_merge_of_main_into_an_old_branch_pushed_to_main_is_refused(
    agent: Work, alice: Work, server: Path
) -> None:
    """`git merge -s ours origin/main` on the old branch: a fast-forward of main whose
    tree is the old branch's."""
    forked_feature(agent)
    evidence_on_main(alice, {ORACLE: TIGHT})
    agent.git("fetch", "-q", "origin")
    agent.git("merge", "-q", "-s", "ours", "--no-edit", "origin/main")
    result = agent.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")


# -- a symbolic ref on the server aliasing a protected ref -----------------------------


@pytest.fixture
def aliased(server: Path, agent: Work) -> Work:
    """The server has ``refs/heads/master -> refs/heads/main``."""
    git(server, "symbolic-ref", "refs/heads/master", "refs/heads/main")
    agent.commit("product", {"src/app.py": "v2\n"})
    assert agent.push("origin", "HEAD:main", pusher=AGENT).returncode == 0
    return agent


def test_rewind_through_a_symbolic_ref_alias_is_refused(aliased: Work, server: Path) -> None:
    tip = server_tip(aliased)
    result = aliased.push("origin", "+HEAD~1:refs/heads/master", pusher=AGENT)
    assert refused(result, "non-fast-forward")
    assert "refs/heads/master is a symbolic ref to refs/heads/main" in remote(result)
    assert server_tip(aliased) == tip
    assert all(
        len(line) <= 80
        for line in result.stderr.replace(" " * 8 + "\n", "\n").splitlines()
        if line.startswith("remote:")
    )


def test_untrusted_evidence_through_a_symbolic_ref_alias_is_judged_as_main(
    aliased: Work, server: Path
) -> None:
    aliased.commit("loosen", {ORACLE: "pass\n"})
    result = aliased.push("origin", "HEAD:refs/heads/master", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    assert "\nevidence-untrusted: refs/heads/main: " in "\n" + remote(result)
    assert show(aliased, server_tip(aliased), ORACLE) == LOOSE


def test_held_change_through_a_symbolic_ref_alias_is_judged_as_main(
    aliased: Work, server: Path
) -> None:
    aliased.commit("ci", {"Makefile": "all:\n"})
    result = aliased.push("origin", "HEAD:refs/heads/master", pusher=AGENT)
    assert refused(result, "other-path")
    assert "\nother-path: refs/heads/main: " in "\n" + remote(result)


def test_delete_through_a_symbolic_ref_alias_is_refused(aliased: Work, server: Path) -> None:
    tip = server_tip(aliased)
    result = aliased.push("origin", ":refs/heads/master", pusher=AGENT)
    assert refused(result, "protected-delete")
    assert server_tip(aliased) == tip


def test_push_to_the_branch_a_protected_symbolic_ref_names_is_judged_as_protected(
    tmp_path: Path,
) -> None:
    bare = make_server(tmp_path)
    git(bare, "update-ref", "refs/heads/trunk", "refs/heads/main")
    git(bare, "symbolic-ref", "refs/heads/main", "refs/heads/trunk")
    work = clone_of(tmp_path, bare)
    work.commit("product", {"src/app.py": "v2\n"})
    assert work.push("origin", "HEAD:refs/heads/trunk", pusher=AGENT).returncode == 0
    tip = server_tip(work, "refs/heads/trunk")
    result = work.push("origin", "+HEAD~1:refs/heads/trunk", pusher=AGENT)
    assert refused(result, "non-fast-forward")
    assert "refs/heads/trunk is what the symbolic ref refs/heads/main names" in remote(result)
    assert server_tip(work, "refs/heads/trunk") == tip


def forged_note(work: Work) -> None:
    """agent-bot writes a lock note of its own on HEAD."""
    work.git("notes", f"--ref={NOTES}", "add", "-f", "-m", '{"forged":true}', "HEAD")


def test_notes_ref_through_a_symbolic_ref_alias_is_refused(agent: Work, server: Path) -> None:
    pin_main(agent)
    git(server, "symbolic-ref", "refs/heads/locks", NOTES)
    before = server_tip(agent, NOTES)
    agent.git("fetch", "-q", "origin", f"+{NOTES}:{NOTES}")
    forged_note(agent)
    result = agent.push("origin", f"{NOTES}:refs/heads/locks", pusher=AGENT)
    assert refused(result, "notes-forge")
    assert server_tip(agent, NOTES) == before


def test_notes_ref_through_a_dangling_symbolic_ref_alias_is_refused(
    agent: Work, server: Path
) -> None:
    """The notes ref does not exist yet: the alias is dangling and git would create
    the notes ref through it."""
    assert server_tip(agent, NOTES) == ""
    git(server, "symbolic-ref", "refs/heads/locks", NOTES)
    forged_note(agent)
    result = agent.push("origin", f"{NOTES}:refs/heads/locks", pusher=AGENT)
    assert refused(result, "notes-forge")
    assert server_tip(agent, NOTES) == ""


def test_product_push_through_a_symbolic_ref_alias_is_allowed(aliased: Work, server: Path) -> None:
    aliased.commit("product", {"src/app.py": "v3\n"})
    result = aliased.push("origin", "HEAD:refs/heads/master", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    assert server_tip(aliased) == aliased.head()


def test_a_lock_root_change_through_a_symbolic_ref_alias_pins_the_ref_it_names(
    aliased: Work, server: Path
) -> None:
    aliased.commit("new golden", {"tests/goldens/out.txt": "v3\n"})
    result = aliased.push("origin", "HEAD:refs/heads/master", pusher="alice")
    assert result.returncode == 0, result.stderr
    assert server_tip(aliased) == aliased.head()
    assert f"pinned refs/heads/main at {aliased.head()[:12]}" in result.stderr


# -- policy-invalid: a typo must not brick the repository ------------------------------


def test_writer_pushing_an_unparsable_policy_is_refused(alice: Work, agent: Work) -> None:
    tip = server_tip(alice)
    alice.commit("policy typo", {".git-evidence.toml": POLICY + "[rules\n"})
    result = alice.push("origin", "HEAD:main", pusher="alice")
    assert refused(result, "policy-invalid")
    said = remote(result)
    assert f"{alice.head()[:12]}:.git-evidence.toml:" in said
    assert "not valid TOML" in said
    assert server_tip(alice) == tip
    agent.commit("product", {"src/app.py": "still works\n"})
    after = agent.push("origin", "HEAD:main", pusher=AGENT)
    assert after.returncode == 0, after.stderr


def test_writer_pushing_a_policy_with_an_unknown_key_is_refused(alice: Work) -> None:
    alice.commit("policy", {".git-evidence.toml": POLICY + "[rules]\nskip_all = true\n"})
    result = alice.push("origin", "HEAD:main", pusher="alice")
    assert refused(result, "policy-invalid")
    assert ".git-evidence.toml:6: rules.skip_all: unknown key" in remote(result)


def test_policy_file_replaced_by_a_directory_is_refused(alice: Work) -> None:
    alice.git("rm", "-q", ".git-evidence.toml")
    alice.commit("policy as a directory", {".git-evidence.toml/x.toml": POLICY})
    result = alice.push("origin", "HEAD:main", pusher="alice")
    assert refused(result, "policy-invalid")
    assert "a tree, not a policy file" in remote(result)


def test_broken_policy_brought_by_a_merge_is_refused(alice: Work) -> None:
    alice.git("checkout", "-qb", "typo")
    alice.commit("policy typo", {".git-evidence.toml": "[identities\n"})
    alice.git("checkout", "-q", "main")
    alice.commit("product", {"src/app.py": "v2\n"})
    alice.git("merge", "-q", "--no-ff", "--no-edit", "typo")
    result = alice.push("origin", "main", pusher="alice")
    assert refused(result, "policy-invalid")


def test_policy_naming_a_base_whose_policy_disagrees_is_refused(alice: Work) -> None:
    """Each file parses, but main's names develop as the base and develop's names main:
    the server could read no policy after the push."""
    assert alice.push("origin", "HEAD:refs/heads/develop", pusher="alice").returncode == 0
    moved = POLICY + '[rules]\nprotected = ["refs/heads/main", "refs/heads/develop"]\n'
    moved += 'base = "refs/heads/develop"\n'
    alice.commit("base moves to develop", {".git-evidence.toml": moved})
    tip = server_tip(alice)
    result = alice.push("origin", "HEAD:main", pusher="alice")
    assert refused(result, "policy-invalid")
    assert "they must agree" in remote(result)
    assert server_tip(alice) == tip


def test_valid_policy_change_by_a_writer_is_allowed(alice: Work) -> None:
    alice.commit("policy", {".git-evidence.toml": POLICY + '[rules]\nother_path = "reject"\n'})
    result = alice.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr


def test_broken_policy_on_a_feature_branch_does_not_refuse_it(alice: Work) -> None:
    """Only a protected ref must keep a policy that parses (a branch is for review)."""
    alice.git("checkout", "-qb", "draft")
    alice.commit("draft policy", {".git-evidence.toml": "[identities\n"})
    result = alice.push("origin", "draft", pusher="alice")
    assert "policy-invalid" not in remote(result)
    assert result.returncode == 0, result.stderr


def test_sealing_a_policy_recovers_a_broken_base_policy(tmp_path: Path) -> None:
    """The README's recovery: seal a policy, push the fix, unseal."""
    bare = make_server(tmp_path, {".git-evidence.toml": POLICY + "[rules\n"})
    alice = clone_of(tmp_path, bare, "alice")
    alice.commit("product", {"src/app.py": "v2\n"})
    assert refused(alice.push("origin", "HEAD:main", pusher="alice"), "policy-error")
    sealed = tmp_path / "recovery.toml"
    sealed.write_text(POLICY)
    git(bare, "config", "evidence.policyFile", str(sealed))
    alice.commit("fix the policy", {".git-evidence.toml": POLICY})
    fixed = alice.push("origin", "HEAD:main", pusher="alice")
    assert fixed.returncode == 0, fixed.stderr
    git(bare, "config", "--unset", "evidence.policyFile")
    alice.commit("more product", {"src/app.py": "v3\n"})
    after = alice.push("origin", "HEAD:main", pusher=AGENT)
    assert after.returncode == 0, after.stderr


# -- error reports name the pusher -------------------------------------------------------


def test_policy_error_report_names_the_pusher(tmp_path: Path) -> None:
    bare = make_server(tmp_path, {".git-evidence.toml": "[rules\n"})
    work = clone_of(tmp_path, bare)
    work.commit("product", {"src/app.py": "v2\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "policy-error")
    assert f"could not decide, refusing ({AGENT}; no policy)" in remote(result)


def test_git_error_report_names_the_pusher(tmp_path: Path) -> None:
    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    line_in = ("1" * 40 + " " + "2" * 40 + " refs/heads/main\n").encode()
    env = {"GIT_EVIDENCE_PUSHER": AGENT, "GIT_CEILING_DIRECTORIES": str(tmp_path)}
    result = evidence(outside, "pre-receive", input=line_in, env=env)
    assert result.returncode == 2
    assert "git-error" in result.stderr
    assert f"({AGENT}; no policy)" in result.stderr
    as_json = evidence(outside, "pre-receive", "--format", "json", input=line_in, env=env)
    assert json.loads(as_json.stderr)["pusher"] == AGENT


def test_check_error_report_names_the_as_name(tmp_path: Path) -> None:
    work = clone_of(tmp_path, make_server(tmp_path))
    result = evidence(work.path, "check", "--as", "bob", "nosuchrev..HEAD")
    assert result.returncode == 2
    assert "(bob; nothing judged)" in result.stderr
