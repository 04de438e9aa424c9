"""The rules' deciders, table by table (rules/commits.py, rules/files.py, rules/findings.py,
rules/summaries.py): the commits of an update (`decide_update`), its ref alone
(`decide_ref`), the lock (`decide_lock`), notes and ledger problems, and one commit's
summary. No git runs here: each row is data in, findings out. The end-to-end pushes in
tests/gate/test_server_push.py and the others keep a few cases per rule; these tables
pin every branch of the decision, fast enough to run on each mutation
(bench/mutation.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from helpers.repos import POLICY
from helpers.rule_facts import AGENT, ALICE, BASE_POLICY, CI, NEW, OLD, change, facts, summary, who

from git_evidence.core.facts import CommitDiff, Drift, Entry, LedgerProblem, LockFacts, LockRef
from git_evidence.core.oids import ZERO_OID, Oid
from git_evidence.policy.identity import client_identity
from git_evidence.policy.parsing import parse_policy
from git_evidence.policy.schema import Decision, Policy
from git_evidence.rules.commits import decide_ref, decide_update
from git_evidence.rules.files import (
    QUOTA_HINTS,
    decide_labels_file,
    decide_ledger,
    decide_lock,
    decide_notes,
    decide_policy_file,
)
from git_evidence.rules.findings import Finding, error_finding, worst
from git_evidence.rules.summaries import summarize
from git_evidence.rules.table import ALLOW, HOLD, REJECT, RULES

ZERO = "0" * 40
# Three identities, three different writers: no permission borrows another's list.
SPLIT_POLICY = parse_policy(
    b'[identities]\nevidence_writers = ["alice"]\nledger_writers = ["ledger-bot"]\n'
    b'lock_writers = ["lock-bot"]\n',
    "base:.git-evidence.toml",
)


def policy(extra: str = "") -> Policy:
    return parse_policy((extra + POLICY).encode(), "base:.git-evidence.toml")


def rules_of(findings: Sequence[Finding]) -> dict[str, str]:
    return {f.rule: f.decision for f in findings}


# -- decide_update: commits → findings ------------------------------------------------------

UPDATE_TABLE: list[tuple[str, list[tuple[str, ...]], str | None, str, dict[str, Decision]]] = [
    # (case, commits as path lists, pusher, extra policy, expected {rule: decision})
    ("product only", [("src/app.py",)], AGENT, "", {}),
    ("docs only", [("docs/guide.md", "README.md")], AGENT, "", {}),
    ("product with docs", [("src/app.py", "docs/guide.md")], AGENT, "", {}),
    ("fixture by a writer", [("tests/fixtures/a.json",)], ALICE, "", {}),
    (
        "fixture by an agent",
        [("tests/fixtures/a.json",)],
        AGENT,
        "",
        {"evidence-untrusted": REJECT},
    ),
    (
        "fixture by anonymous",
        [("tests/goldens/out.txt",)],
        None,
        "",
        {"evidence-untrusted": REJECT},
    ),
    (
        "fixture and product by an agent",
        [("src/app.py", "tests/fixtures/a.json")],
        AGENT,
        "",
        {"mixed-commit": REJECT, "evidence-untrusted": REJECT},
    ),
    (
        "fixture and product by a writer",
        [("src/app.py", "tests/fixtures/a.json")],
        ALICE,
        "",
        {"mixed-commit": REJECT},
    ),
    (
        "fixture and an other path, other paths allowed",
        [("tests/fixtures/a.json", "Makefile")],
        ALICE,
        '[rules]\nother_path = "allow"\n',
        {"mixed-commit": REJECT},
    ),
    (
        "fixture and an other path",
        [("tests/fixtures/a.json", "Makefile")],
        ALICE,
        "",
        {"mixed-commit": REJECT, "other-path": HOLD},
    ),
    (
        "fixture and test code",
        [("tests/fixtures/a.json", "tests/test_app.py")],
        ALICE,
        "",
        {"mixed-commit": REJECT, "test-edit": HOLD},
    ),
    ("fixture and docs ride together", [("tests/fixtures/a.json", "docs/x.md")], ALICE, "", {}),
    (
        "oracle and product",
        [("src/__snapshots__/v.snap", "src/v.py")],
        ALICE,
        "",
        {"mixed-commit": REJECT},
    ),
    ("policy and product", [(".gitattributes", "src/app.py")], ALICE, "", {"mixed-commit": REJECT}),
    (
        "ledger and product by the ledger writer",
        [("tests/freeze.jsonl", "src/app.py")],
        CI,
        "",
        {"mixed-commit": REJECT},
    ),
    (
        "product then fixture by an agent",
        [("src/app.py",), ("tests/fixtures/a.json",)],
        AGENT,
        "",
        {"mixed-range": REJECT, "evidence-untrusted": REJECT},
    ),
    (
        "product then fixture by a writer",
        [("src/app.py",), ("tests/fixtures/a.json",)],
        ALICE,
        "",
        {},
    ),
    (
        "other path then fixture by a ledger writer",
        [("Makefile",), ("tests/fixtures/a.json",)],
        CI,
        '[rules]\nother_path = "allow"\n',
        {"mixed-range": REJECT, "evidence-untrusted": REJECT},
    ),
    (
        "docs then fixture by an agent",
        [("docs/a.md",), ("tests/fixtures/a.json",)],
        AGENT,
        "",
        {"evidence-untrusted": REJECT},
    ),
    ("ledger by the ledger writer", [("tests/freeze.jsonl",)], CI, "", {}),
    (
        "ledger by an evidence writer",
        [("tests/freeze.jsonl",)],
        ALICE,
        "",
        {"evidence-untrusted": REJECT},
    ),
    (
        "ledger and fixture by the ledger writer",
        [("tests/freeze.jsonl", "tests/fixtures/a.json")],
        CI,
        "",
        {"evidence-untrusted": REJECT},
    ),
    (
        "policy file by an agent",
        [(".git-evidence.toml",)],
        AGENT,
        "",
        {"evidence-untrusted": REJECT},
    ),
    ("other path held", [("Makefile",)], AGENT, "", {"other-path": HOLD}),
    (
        "other path rejected",
        [("Makefile",)],
        AGENT,
        '[rules]\nother_path = "reject"\n',
        {"other-path": REJECT},
    ),
    ("other path allowed", [("Makefile",)], AGENT, '[rules]\nother_path = "allow"\n', {}),
    ("added test held", [("A:tests/test_new.py",)], AGENT, "", {"added-test": HOLD}),
    (
        "added test allowed",
        [("A:tests/test_new.py",)],
        AGENT,
        '[rules]\nadded_test = "allow"\n',
        {},
    ),
    (
        "added test rejected",
        [("A:tests/test_new.py",)],
        AGENT,
        '[rules]\nadded_test = "reject"\n',
        {"added-test": REJECT},
    ),
    ("edited test held", [("tests/test_app.py",)], AGENT, "", {"test-edit": HOLD}),
    ("deleted test held", [("D:tests/test_app.py",)], AGENT, "", {"test-edit": HOLD}),
    ("edited test allowed", [("tests/test_app.py",)], AGENT, '[rules]\ntest_edit = "allow"\n', {}),
    (
        "edited test rejected",
        [("tests/test_app.py",)],
        AGENT,
        '[rules]\ntest_edit = "reject"\n',
        {"test-edit": REJECT},
    ),
    ("no commits", [], AGENT, "", {}),
]


@pytest.mark.parametrize(
    ("commits", "pusher", "extra", "expected"),
    [pytest.param(c, p, e, x, id=name) for name, c, p, e, x in UPDATE_TABLE],
)
def test_update_table(
    commits: list[tuple[str, ...]], pusher: str | None, extra: str, expected: dict[str, Decision]
) -> None:
    pol = policy(extra)
    summaries = [summary(*paths_, pol=pol, n=i) for i, paths_ in enumerate(commits)]
    verdict = decide_update(facts(), summaries, pol, who(pusher))
    assert rules_of(verdict.findings) == expected
    assert verdict.judged
    assert verdict.decision == worst(expected.values())


def test_mixed_commit_lists_both_sides_and_names_the_commit() -> None:
    commit = summary("src/app.py", "tests/fixtures/a.json", "docs/a.md", n=7)
    (mixed, _) = decide_update(facts(), [commit], BASE_POLICY, who(AGENT)).findings
    assert mixed.commit == commit.oid
    assert mixed.paths == {"fixture": ["tests/fixtures/a.json"], "product": ["src/app.py"]}
    assert mixed.message == "commit mixes evidence (fixture) with product"
    short = commit.oid[:12]
    assert mixed.hint.startswith(f"split commit {short}: `git evidence split {short}` makes")
    assert f"--range {OLD[:12]}..HEAD" in mixed.hint


def test_a_mixed_merge_says_merge() -> None:
    commit = summary("src/app.py", "tests/fixtures/a.json", merge=True)
    (mixed, _) = decide_update(facts(), [commit], BASE_POLICY, who(AGENT)).findings
    assert mixed.message == "merge mixes evidence (fixture) with product"


def test_mixed_range_lists_the_union_and_counts_the_commits() -> None:
    commits = [summary("src/app.py", n=1), summary("tests/fixtures/a.json", n=2)]
    findings = decide_update(facts(), commits, BASE_POLICY, who(AGENT)).findings
    mixed = next(f for f in findings if f.rule == "mixed-range")
    assert mixed.commit is None
    assert mixed.paths == {"fixture": ["tests/fixtures/a.json"], "product": ["src/app.py"]}
    assert "the 2 commits of this range" in mixed.message
    assert f"git rebase -i {OLD[:12]}" in mixed.hint


def test_untrusted_names_the_pusher_the_paths_and_the_writers() -> None:
    commits = [summary("tests/fixtures/a.json", "tests/goldens/out.txt")]
    (finding,) = decide_update(facts(), commits, BASE_POLICY, who(AGENT)).findings
    assert finding.message == "agent-bot may not change evidence"
    assert finding.paths == {"fixture": ["tests/fixtures/a.json", "tests/goldens/out.txt"]}
    assert "have an evidence writer push it on its own (alice)" in finding.hint


def test_untrusted_ledger_names_the_ledger_writers() -> None:
    (finding,) = decide_update(
        facts(), [summary("tests/freeze.jsonl")], SPLIT_POLICY, who(ALICE)
    ).findings
    assert finding.paths == {"freeze_ledger": ["tests/freeze.jsonl"]}
    assert "have a ledger writer push it on its own (ledger-bot)" in finding.hint


def test_untrusted_with_no_writers_says_so() -> None:
    pol = parse_policy(b"", "base")
    (finding,) = decide_update(
        facts(), [summary("tests/fixtures/a.json")], pol, who(ALICE)
    ).findings
    assert "the policy lists no evidence writers: add one in [identities]" in finding.hint
    assert "nobody" not in finding.hint


def test_writers_are_listed_sorted() -> None:
    pol = parse_policy(b'[identities]\nevidence_writers = ["zed", "amy"]\n', "base")
    (finding,) = decide_update(
        facts(), [summary("tests/fixtures/a.json")], pol, who(AGENT)
    ).findings
    assert "push it on its own (amy, zed)" in finding.hint


def test_other_and_test_findings_list_their_paths_once() -> None:
    commits = [
        summary("Makefile", "A:tests/test_new.py", n=1),
        summary("Makefile", "tests/test_app.py", n=2),
    ]
    findings = {
        f.rule: f for f in decide_update(facts(), commits, BASE_POLICY, who(AGENT)).findings
    }
    assert findings["other-path"].paths == {"other": ["Makefile"]}
    assert findings["other-path"].message == "paths in no class"
    assert findings["added-test"].paths == {"test": ["tests/test_new.py"]}
    assert findings["test-edit"].paths == {"test": ["tests/test_app.py"]}


def test_a_trusted_clone_writes_every_kind_of_evidence() -> None:
    trusted = client_identity(trusted=True)
    commits = [summary("tests/fixtures/a.json"), summary("tests/freeze.jsonl", n=1)]
    assert decide_update(facts(), commits, BASE_POLICY, trusted).findings == ()
    assert decide_ref(facts(BASE_POLICY.notes_ref, notes=True), BASE_POLICY, trusted) == []
    assert trusted.describe() == "this clone (trusted clone)"


def test_a_refused_ref_judges_no_commits() -> None:
    mixed = [summary("src/app.py", "tests/fixtures/a.json")]
    verdict = decide_update(facts("refs/sneaky/x"), mixed, BASE_POLICY, who(AGENT))
    assert rules_of(verdict.findings) == {"ref-namespace": REJECT}
    assert not verdict.judged
    no_range = facts(revlist=None)
    assert decide_update(no_range, mixed, BASE_POLICY, who(AGENT)).findings == ()


def test_a_range_without_a_base_says_so_in_its_hints() -> None:
    (finding,) = decide_update(
        facts(base=None), [summary("tests/fixtures/a.json")], BASE_POLICY, who(AGENT)
    ).findings
    assert "git rebase -i --root" in finding.hint
    assert "no history in common with refs/heads/main" in finding.hint
    assert "<base>" not in finding.hint


def test_the_first_push_of_the_base_says_it_creates_it() -> None:
    # plan_updates: a create of [rules].base, absent here
    creating = facts(old=ZERO_OID, base=None, creates_base=True)
    (finding,) = decide_update(
        creating, [summary("tests/fixtures/a.json")], BASE_POLICY, who(AGENT)
    ).findings
    assert "refs/heads/main does not exist yet: this push creates it" in finding.hint
    assert "no history in common" not in finding.hint


def test_a_base_rewritten_with_unrelated_history_is_not_said_to_be_created() -> None:
    (finding,) = decide_update(
        facts(base=None), [summary("tests/fixtures/a.json")], BASE_POLICY, who(AGENT)
    ).findings
    assert "does not exist yet" not in finding.hint


def test_a_check_range_naming_the_base_is_not_said_to_create_it() -> None:
    checked = facts(old=ZERO_OID, base=None, named_ref=False, creates_base=True)
    (finding,) = decide_update(
        checked, [summary("tests/fixtures/a.json")], BASE_POLICY, who(AGENT)
    ).findings
    assert "does not exist yet" not in finding.hint


# -- decide_ref: the ref and the history shape alone -----------------------------------------

REF_TABLE: list[tuple[str, dict[str, Any], str | None, Policy, dict[str, str]]] = [
    ("replace ref", {"ref": "refs/replace/" + OLD}, ALICE, BASE_POLICY, {"replace-ref": REJECT}),
    (
        "notes by the lock writer",
        {"ref": "refs/notes/evidence", "notes": True},
        CI,
        BASE_POLICY,
        {},
    ),
    (
        "notes by an evidence writer",
        {"ref": "refs/notes/evidence", "notes": True},
        ALICE,
        BASE_POLICY,
        {"notes-forge": REJECT},
    ),
    (
        "notes by an agent",
        {"ref": "refs/notes/evidence", "notes": True},
        AGENT,
        BASE_POLICY,
        {"notes-forge": REJECT},
    ),
    (
        "notes by anonymous",
        {"ref": "refs/notes/evidence", "notes": True},
        None,
        BASE_POLICY,
        {"notes-forge": REJECT},
    ),
    (
        "notes by the lock-bot",
        {"ref": "refs/notes/evidence", "notes": True},
        "lock-bot",
        SPLIT_POLICY,
        {},
    ),
    (
        "notes by the ledger-bot",
        {"ref": "refs/notes/evidence", "notes": True},
        "ledger-bot",
        SPLIT_POLICY,
        {"notes-forge": REJECT},
    ),
    (
        "notes by the evidence writer",
        {"ref": "refs/notes/evidence", "notes": True},
        ALICE,
        SPLIT_POLICY,
        {"notes-forge": REJECT},
    ),
    (
        "outside the namespaces",
        {"ref": "refs/sneaky/x"},
        ALICE,
        BASE_POLICY,
        {"ref-namespace": REJECT},
    ),
    (
        "a prefix of a namespace",
        {"ref": "refs/headsX/y", "protected": False},
        ALICE,
        BASE_POLICY,
        {"ref-namespace": REJECT},
    ),
    ("a tag", {"ref": "refs/tags/v1", "protected": False}, AGENT, BASE_POLICY, {}),
    (
        "a new branch",
        {"ref": "refs/heads/feat", "protected": False, "old": ZERO},
        AGENT,
        BASE_POLICY,
        {},
    ),
    (
        "delete a protected branch",
        {"new": ZERO, "commit": None},
        ALICE,
        BASE_POLICY,
        {"protected-delete": REJECT},
    ),
    (
        "delete a branch",
        {"ref": "refs/heads/feat", "protected": False, "new": ZERO, "commit": None},
        AGENT,
        BASE_POLICY,
        {},
    ),
    ("not a commit", {"commit": None}, ALICE, BASE_POLICY, {"not-a-commit": REJECT}),
    (
        "rewind of a protected branch",
        {"fast_forward": False},
        ALICE,
        BASE_POLICY,
        {"non-fast-forward": REJECT},
    ),
    (
        "rewind of a feature branch",
        {"ref": "refs/heads/feat", "protected": False, "fast_forward": False},
        AGENT,
        BASE_POLICY,
        {},
    ),
    ("fast-forward not yet known", {"fast_forward": None}, ALICE, BASE_POLICY, {}),
    (
        "a check range has no ref rules",
        {"ref": "refs/replace/x", "named_ref": False},
        AGENT,
        BASE_POLICY,
        {},
    ),
]


@pytest.mark.parametrize(
    ("shape", "pusher", "pol", "expected"),
    [pytest.param(s, p, pol, x, id=name) for name, s, p, pol, x in REF_TABLE],
)
def test_ref_table(
    shape: dict[str, Any], pusher: str | None, pol: Policy, expected: dict[str, str]
) -> None:
    assert rules_of(decide_ref(facts(**shape), pol, who(pusher))) == expected


def test_ref_findings_say_why() -> None:
    (forge,) = decide_ref(facts("refs/notes/evidence", notes=True), BASE_POLICY, who(ALICE))
    assert forge.message == "alice is not a lock writer"
    assert forge.hint.startswith("only lock writers (ci-bot) update refs/notes/evidence")
    (space,) = decide_ref(facts("refs/sneaky/x"), BASE_POLICY, who(ALICE))
    assert "push to a ref under refs/heads/, refs/tags/" in space.hint
    (rewind,) = decide_ref(facts(fast_forward=False), BASE_POLICY, who(ALICE))
    assert rewind.message == f"{OLD[:12]} is not an ancestor of {NEW[:12]}"
    assert rewind.commit == NEW
    (blob,) = decide_ref(facts(commit=None), BASE_POLICY, who(ALICE))
    assert blob.message == f"{NEW[:12]} does not resolve to a commit"
    assert blob.commit == NEW


# -- decide_lock --------------------------------------------------------------------------------

ENTRY_A = Entry("100644", "1" * 40, 3, "a" * 64)
ENTRY_B = Entry("100644", "2" * 40, 3, "b" * 64)
DRIFT = [Drift("tests/fixtures/a.json", "modified", ENTRY_A, ENTRY_B)]
FOUND = LockRef(Oid("c" * 40), Oid("d" * 40))
REQUIRED = policy("[lock]\nrequired = true\n")

LOCK_TABLE: list[tuple[str, LockFacts, str, Policy, dict[str, str]]] = [
    ("nothing pinned, not required", LockFacts(), AGENT, BASE_POLICY, {}),
    ("nothing pinned, required", LockFacts(), AGENT, REQUIRED, {"lock-missing": HOLD}),
    ("pinned and clean", LockFacts(found=FOUND), AGENT, REQUIRED, {}),
    (
        "invalid",
        LockFacts(found=FOUND, invalid="bad"),
        ALICE,
        BASE_POLICY,
        {"lock-invalid": REJECT},
    ),
    (
        "invalid, nothing found",
        LockFacts(invalid="bad"),
        ALICE,
        BASE_POLICY,
        {"lock-invalid": REJECT},
    ),
    (
        "stale, not required",
        LockFacts(found=FOUND, stale=DRIFT),
        AGENT,
        BASE_POLICY,
        {"lock-stale": ALLOW},
    ),
    ("stale, required", LockFacts(found=FOUND, stale=DRIFT), AGENT, REQUIRED, {"lock-stale": HOLD}),
    ("stale but nothing found", LockFacts(stale=DRIFT), AGENT, BASE_POLICY, {}),
    (
        "breach by an agent",
        LockFacts(found=FOUND, breach=DRIFT),
        AGENT,
        BASE_POLICY,
        {"fixture-breach": REJECT},
    ),
    ("breach by a writer", LockFacts(found=FOUND, breach=DRIFT), ALICE, BASE_POLICY, {}),
    (
        "breach by the lock writer",
        LockFacts(found=FOUND, breach=DRIFT),
        CI,
        BASE_POLICY,
        {"fixture-breach": REJECT},
    ),
    ("empty breach", LockFacts(found=FOUND, breach=[]), AGENT, BASE_POLICY, {}),
]


@pytest.mark.parametrize(
    ("lock", "pusher", "pol", "expected"),
    [pytest.param(lf, p, pol, x, id=name) for name, lf, p, pol, x in LOCK_TABLE],
)
def test_lock_table(lock: LockFacts, pusher: str, pol: Policy, expected: dict[str, str]) -> None:
    assert rules_of(decide_lock(facts(), lock, pol, who(pusher))) == expected


def test_lock_findings_say_what_and_where() -> None:
    (invalid,) = decide_lock(
        facts(), LockFacts(found=FOUND, invalid="why"), BASE_POLICY, who(AGENT)
    )
    assert invalid.message == "why"
    assert invalid.commit == FOUND.commit
    locked = FOUND.commit[:12]
    assert f"re-pins {locked} (`git evidence lock {locked} --push origin`)" in invalid.hint
    (orphan,) = decide_lock(facts(), LockFacts(invalid="why"), BASE_POLICY, who(AGENT))
    assert orphan.commit is None
    assert f"re-pins {OLD[:12]}" in orphan.hint
    (missing,) = decide_lock(facts(), LockFacts(), REQUIRED, who(AGENT))
    assert missing.message == f"no lock in force at {OLD[:12]}"
    (rootless,) = decide_lock(facts(base=None), LockFacts(), REQUIRED, who(AGENT))
    assert rootless.message == "no base: nothing is pinned"
    assert "no history in common with refs/heads/main" in rootless.hint
    assert "<base>" not in rootless.hint
    (stale,) = decide_lock(facts(), LockFacts(found=FOUND, stale=DRIFT), BASE_POLICY, who(AGENT))
    assert stale.commit == OLD
    assert stale.message == (
        f"the base differs from the lock pinned on {FOUND.commit[:12]} in 1 file(s) "
        "(a notice: it holds nothing by itself)"
    )
    # the path alone, a path of the tree; what changed there apart
    assert stale.paths == {"modified": [DRIFT[0].path]}
    assert stale.details == {DRIFT[0].path: DRIFT[0].change()}
    (held,) = decide_lock(facts(), LockFacts(found=FOUND, stale=DRIFT), REQUIRED, who(AGENT))
    assert (
        held.message == f"the base differs from the lock pinned on {FOUND.commit[:12]} in 1 file(s)"
    )
    (breach,) = decide_lock(facts(), LockFacts(found=FOUND, breach=DRIFT), BASE_POLICY, who(AGENT))
    assert breach.commit == NEW
    assert breach.message == f"1 file(s) under the lock roots differ from the base {OLD[:12]}"


def test_notes_and_ledger_problems_become_findings() -> None:
    (note,) = decide_notes(facts("refs/notes/evidence", notes=True), ["not canonical"])
    assert (note.rule, note.decision, note.message) == ("lock-invalid", REJECT, "not canonical")
    problems: list[tuple[Oid | None, LedgerProblem]] = [
        (Oid("c" * 40), LedgerProblem("ledger-entry", 3, "bad")),
        (None, LedgerProblem("ledger-rewrite", None, "gone")),
    ]
    entry_f, rewrite_f = decide_ledger(facts(), problems, "tests/freeze.jsonl")
    assert entry_f.message == "tests/freeze.jsonl: line 3: bad"
    assert entry_f.commit == "c" * 40
    assert rewrite_f.message == "tests/freeze.jsonl: gone"
    assert (rewrite_f.rule, rewrite_f.decision) == ("ledger-rewrite", REJECT)
    assert f"git checkout {OLD[:12]} -- tests/freeze.jsonl" in rewrite_f.hint


def test_findings_are_values() -> None:
    (finding,) = decide_ref(facts(commit=None), BASE_POLICY, who(ALICE))
    with pytest.raises(AttributeError):
        finding.rule = "other"  # type: ignore[misc, assignment]
    error = error_finding("policy-error", "why", "fix it")
    assert error == Finding("policy-error", REJECT, "", None, {}, "why", "fix it")


def test_worst_orders_the_decisions() -> None:
    assert worst([]) == ALLOW
    assert worst([ALLOW, HOLD]) == HOLD
    assert worst([HOLD, REJECT, ALLOW]) == REJECT
    assert worst([ALLOW]) == ALLOW


def test_every_rule_has_a_decision_and_a_fix() -> None:
    for rule, (decision, hint) in RULES.items():
        assert decision in (None, ALLOW, HOLD, REJECT), rule
        assert hint, rule
    assert {r for r, (d, _) in RULES.items() if d is None} == {
        "other-path",
        "added-test",
        "test-edit",
    }


# -- summarize: one commit's classes ---------------------------------------------------------


def test_summary_keeps_classes_tests_and_ledger_rows() -> None:
    diff = CommitDiff(
        Oid("e" * 40),
        False,
        (
            change("src/a.py"),
            change("tests/test_new.py", "A"),
            change("tests/test_old.py", "D"),
            change("tests/test_app.py"),
            change("Tests/Freeze.jsonl"),
            change("tests/freezes/old.json"),
        ),
    )
    got = summarize(diff, BASE_POLICY.classifier(), "tests/freeze.jsonl")
    assert got.classes == {"product", "test", "freeze_ledger"}
    assert got.added_tests == ("tests/test_new.py",)
    assert got.changed_tests == ("tests/test_old.py", "tests/test_app.py")
    # Only the ledger path keeps its blob ids; other ledger-class paths are evidence.
    assert got.ledger == (("M", "1" * 40, "2" * 40, "Tests/Freeze.jsonl"),)
    assert dict(got.by_class)["freeze_ledger"] == ("Tests/Freeze.jsonl", "tests/freezes/old.json")


def test_a_file_decider_called_without_staged_speaks_of_a_push() -> None:
    (policy_f,) = decide_policy_file(facts(), "line 1: bad", ".git-evidence.toml")
    (labels_f,) = decide_labels_file(facts(), "line 1: bad", "tests/evidence-labels.tsv")
    assert policy_f.commit == labels_f.commit == NEW
    assert "stage it again" not in (policy_f.hint or "")
    assert "push again" in (labels_f.hint or "") and "stage" not in (labels_f.hint or "")


def test_each_quota_hint_is_a_pair_with_a_base_and_without() -> None:
    assert {rule: len(hints) for rule, hints in QUOTA_HINTS.items()} == {
        "ledger-rewrite": 2,
        "ledger-entry": 2,
    }
