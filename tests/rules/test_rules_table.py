"""The pure modules, table by table: the rules (rules.py), the ledger's append check
(ledger.py), the raw-diff parser (ranges.parse_raw), globs, folding and the policy.

No git runs here: each row is data in, findings (or problems, or changes) out. The
end-to-end pushes in test_server_push.py and the others keep a few cases per rule;
these tables pin every branch of the decision, fast enough to run on each mutation
(bench/mutation.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest
from helpers.repos import POLICY
from helpers.rule_facts import (
    AGENT,
    ALICE,
    BASE_POLICY,
    CI,
    NEW,
    OLD,
    change,
    facts,
    row,
    summary,
    who,
)

from git_evidence.core import globs, path_globs, paths, records
from git_evidence.core.errors import PolicyError
from git_evidence.core.facts import (
    CommitDiff,
    Drift,
    Entry,
    LedgerProblem,
    LockFacts,
    LockRef,
)
from git_evidence.core.oids import ZERO_OID, Oid
from git_evidence.core.paths import Change
from git_evidence.ledger import entries
from git_evidence.plumbing.raw_diff import LinkResolver, parse_raw
from git_evidence.policy.identity import Identity, client_identity, server_pusher
from git_evidence.policy.parsing import parse_policy
from git_evidence.policy.schema import Decision, Policy
from git_evidence.rules.commits import decide_ref, decide_update
from git_evidence.rules.files import decide_ledger, decide_lock, decide_notes
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
    assert decide_update(facts(), commits, BASE_POLICY, trusted).findings == []
    assert decide_ref(facts(BASE_POLICY.notes_ref, notes=True), BASE_POLICY, trusted) == []
    assert trusted.describe() == "this clone (trusted clone)"


def test_a_refused_ref_judges_no_commits() -> None:
    mixed = [summary("src/app.py", "tests/fixtures/a.json")]
    verdict = decide_update(facts("refs/sneaky/x"), mixed, BASE_POLICY, who(AGENT))
    assert rules_of(verdict.findings) == {"ref-namespace": REJECT}
    assert not verdict.judged
    no_range = facts(revlist=None)
    assert decide_update(no_range, mixed, BASE_POLICY, who(AGENT)).findings == []


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
    assert stale.paths == {"modified": [DRIFT[0].detail()]}
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


# -- identities: who may write what ------------------------------------------------------------

IDENTITY_TABLE = [
    # name, evidence, ledger, lock (under SPLIT_POLICY)
    ("alice", True, False, False),
    ("ledger-bot", False, True, False),
    ("lock-bot", False, False, True),
    ("agent-bot", False, False, False),
    (None, False, False, False),
]


@pytest.mark.parametrize(("name", "evidence", "ledger_", "lock"), IDENTITY_TABLE)
def test_each_writer_list_grants_only_its_own_permission(
    name: str | None, evidence: bool, ledger_: bool, lock: bool
) -> None:
    person = who(name)
    assert person.evidence_writer(SPLIT_POLICY) is evidence
    assert person.ledger_writer(SPLIT_POLICY) is ledger_
    assert person.lock_writer(SPLIT_POLICY) is lock


def test_the_pusher_is_the_first_variable_set() -> None:
    assert server_pusher({"GL_USER": "bob", "REMOTE_USER": "carol"}) == Identity("bob", "GL_USER")
    assert server_pusher({"GIT_EVIDENCE_PUSHER": " ", "REMOTE_USER": "carol"}).name == "carol"
    assert server_pusher({}) == Identity(None, "no pusher variable set")
    assert who(None).describe() == "anonymous"
    assert Identity("bob", "x", trusted_clone=True).describe() == "bob (trusted clone)"
    assert client_identity(False, "bob") == Identity("bob", "--as")
    assert not client_identity(False).evidence_writer(BASE_POLICY)


# -- the ledger's append check ------------------------------------------------------------------

NOW = datetime(2026, 6, 1, 12, 0, 0, tzinfo=timezone.utc)
PIN = "sha256:" + "f" * 64


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def entry(**over: object) -> dict[str, object]:
    doc: dict[str, object] = {
        "test_id": "tests/test_app.py::test_app",
        "fingerprint": "f00d",
        "seed": 7,
        "pin": PIN,
        "reproduced": True,
        "runs": 10,
        "failures": 3,
        "writer": CI,
        "frozen_at": stamp(NOW - timedelta(hours=1)),
        "until": stamp(NOW + timedelta(hours=24)),
    }
    doc.update(over)
    return {k: v for k, v in doc.items() if v is not ...}


def raw(doc: dict[str, object]) -> bytes:
    return json.dumps(doc, separators=(",", ":")).encode()


def check(
    old: bytes | None, new: bytes | None, pins: Sequence[str] = (PIN,)
) -> list[tuple[str, int | None, str]]:
    return [
        tuple(p)  # type: ignore[misc]
        for p in entries.check_change(
            old, new, max_window_hours=72, now=NOW, writers={CI}, pin_exists=pins.__contains__
        )
    ]


GOOD = raw(entry()) + b"\n"
APPEND_TABLE: list[tuple[str, bytes | None, bytes | None, list[tuple[str, int | None, str]]]] = [
    ("nothing appended", GOOD, GOOD, []),
    ("a first entry", b"", GOOD, []),
    ("a first entry in a new file", None, GOOD, []),
    ("an entry after one", GOOD, GOOD + raw(entry(fingerprint="b")) + b"\n", []),
    ("deleted", GOOD, None, [("ledger-rewrite", None, "the ledger was deleted or renamed")]),
    (
        "edited",
        GOOD,
        GOOD.replace(b'"failures":3', b'"failures":2'),
        [("ledger-rewrite", 1, "existing lines were edited, removed, reordered or re-encoded")],
    ),
    (
        "second line edited",
        GOOD + GOOD,
        GOOD + GOOD.replace(b"f00d", b"f00e"),
        [("ledger-rewrite", 2, "existing lines were edited, removed, reordered or re-encoded")],
    ),
    (
        "truncated",
        GOOD + GOOD,
        GOOD,
        [("ledger-rewrite", 2, "existing lines were edited, removed, reordered or re-encoded")],
    ),
    (
        "emptied",
        GOOD,
        b"",
        [("ledger-rewrite", 1, "existing lines were edited, removed, reordered or re-encoded")],
    ),
    (
        "no final newline before",
        GOOD[:-1],
        GOOD + GOOD,
        [("ledger-rewrite", 1, "the last line had no newline, so appending changed it")],
    ),
    (
        "no final newline appended",
        b"",
        GOOD[:-1],
        [("ledger-entry", 1, "the last line has no newline")],
    ),
    (
        "no final newline on the third line",
        GOOD,
        GOOD + GOOD + GOOD[:-1],
        [("ledger-entry", 3, "the last line has no newline")],
    ),
    (
        "a byte order mark",
        b"",
        b"\xef\xbb\xbf" + GOOD,
        [("ledger-entry", 1, "byte order mark: the ledger is UTF-8 without BOM")],
    ),
    (
        "every bad line is named",
        b"",
        b"[]\n" + GOOD + b"[]\n",
        [("ledger-entry", 1, "not a JSON object"), ("ledger-entry", 3, "not a JSON object")],
    ),
    (
        "a byte order mark on an appended line",
        GOOD,
        GOOD + b"\xef\xbb\xbf" + GOOD,
        [("ledger-entry", 2, "byte order mark: the ledger is UTF-8 without BOM")],
    ),
    (
        "a blank line",
        GOOD,
        GOOD + b"\n",
        [("ledger-entry", 2, "not one JSON object: Expecting value: line 1 column 1 (char 0)")],
    ),
    (
        "a bad second appended line",
        GOOD,
        GOOD + GOOD + b"[]\n",
        [("ledger-entry", 3, "not a JSON object")],
    ),
    (
        "a writer who is not a ledger writer",
        b"",
        raw(entry(writer="agent-bot")) + b"\n",
        [("ledger-entry", 1, "writer 'agent-bot' is not a ledger writer")],
    ),
    ("an unknown pin", b"", GOOD, "pin"),  # type: ignore[list-item]
]


@pytest.mark.parametrize(
    ("old", "new", "expected"), [pytest.param(o, n, x, id=name) for name, o, n, x in APPEND_TABLE]
)
def test_append_table(old: bytes | None, new: bytes | None, expected: Any) -> None:
    if expected == "pin":
        assert check(old, new, pins=()) == [
            ("ledger-entry", 1, f"pin {PIN[:19]}… is not the digest of any lock")
        ]
        return
    assert check(old, new) == expected


CLOCK_TABLE = [
    # (case, frozen_at, until, problem or None)
    ("current", NOW - timedelta(hours=1), NOW + timedelta(hours=1), None),
    ("ends now", NOW - timedelta(hours=1), NOW, "the window ended"),
    ("ended", NOW - timedelta(hours=2), NOW - timedelta(hours=1), "the window ended"),
    ("ends a second from now", NOW - timedelta(hours=1), NOW + timedelta(seconds=1), None),
    # A CI clock up to 10 minutes ahead of the server's is tolerated.
    ("frozen at the skew's edge", NOW + timedelta(minutes=10), NOW + timedelta(hours=2), None),
    (
        "frozen past the skew",
        NOW + timedelta(minutes=10, seconds=1),
        NOW + timedelta(hours=2),
        "in the future",
    ),
]


@pytest.mark.parametrize(
    ("frozen_at", "until", "problem"), [pytest.param(f, u, p, id=c) for c, f, u, p in CLOCK_TABLE]
)
def test_the_server_clock_table(frozen_at: datetime, until: datetime, problem: str | None) -> None:
    got = check(b"", raw(entry(frozen_at=stamp(frozen_at), until=stamp(until))) + b"\n")
    if problem is None:
        assert got == []
    else:
        ((rule, line, message),) = got
        assert (rule, line) == ("ledger-entry", 1)
        assert problem in message


ENTRY_TABLE: list[tuple[str, bytes, str | None]] = [
    ("valid", raw(entry()), None),
    ("carriage return", raw(entry()) + b"\r", "carriage return: lines end with \\n only"),
    ("not UTF-8", b'{"test_id": "\xff"}', "not UTF-8 (byte 13)"),
    (
        "byte order mark",
        b"\xef\xbb\xbf" + raw(entry()),
        "byte order mark: the ledger is UTF-8 without BOM",
    ),
    ("not JSON", b"{", "not one JSON object: "),
    ("a list", b"[1]", "not a JSON object"),
    ("duplicate key", raw(entry())[:-1] + b',"seed":8}', "duplicate key 'seed'"),
    ("missing fields", raw(entry(seed=..., pin=...)), "missing pin, seed"),
    ("unknown field", raw(entry(extra=1)), "unknown field extra"),
    ("a bool for a number", raw(entry(runs=True)), "runs must be int"),
    ("a number for a bool", raw(entry(reproduced=1)), "reproduced must be bool"),
    ("a string seed", raw(entry(seed="s1")), None),
    ("a float seed", raw(entry(seed=1.5)), "seed must be int or str"),
    ("optional fields", raw(entry(reason="r", command="c", outputs=[])), None),
    ("a wrong optional field", raw(entry(reason=1)), "reason must be str"),
    ("an empty test id", raw(entry(test_id=" ")), "test_id is empty"),
    ("an empty writer", raw(entry(writer="")), "writer is empty"),
    ("an empty pin", raw(entry(pin="")), "pin is empty"),
    ("an empty fingerprint", raw(entry(fingerprint="")), "fingerprint is empty"),
    ("not reproduced", raw(entry(reproduced=False)), "reproduced must be true"),
    (
        "one run",
        raw(entry(runs=1, failures=1)),
        "failures must be between 1 and runs - 1 (runs 1, failures 1)",
    ),
    ("two runs, one failure", raw(entry(runs=2, failures=1)), None),
    ("no failure", raw(entry(failures=0)), "failures must be between 1 and runs - 1"),
    ("every run failed", raw(entry(failures=10)), "failures must be between 1 and runs - 1"),
    ("all but one failed", raw(entry(failures=9)), None),
    ("not a time", raw(entry(until="tomorrow")), "until 'tomorrow' is not an ISO 8601 time"),
    ("no zone", raw(entry(until="2026-06-02T00:00:00")), "is not in UTC (end it with Z)"),
    ("another zone", raw(entry(until="2026-06-02T00:00:00+01:00")), "is not in UTC"),
    ("an explicit UTC offset", raw(entry(until="2026-06-02T00:00:00+00:00")), None),
    (
        "until equals frozen_at",
        raw(entry(until=stamp(NOW - timedelta(hours=1)))),
        "until is not after frozen_at",
    ),
    (
        "until before frozen_at",
        raw(entry(until=stamp(NOW - timedelta(hours=2)))),
        "until is not after frozen_at",
    ),
    ("a window of exactly the maximum", raw(entry(until=stamp(NOW + timedelta(hours=71)))), None),
    (
        "a window a second too long",
        raw(entry(until=stamp(NOW + timedelta(hours=71, seconds=1)))),
        "the window is 72.0 h, more than max_window_hours = 72",
    ),
    ("a pin without its prefix", raw(entry(pin="f" * 71)), "is not a pin digest"),
    ("a short pin", raw(entry(pin=PIN[:-1])), "is not a pin digest"),
    ("a long pin", raw(entry(pin=PIN + "f")), "is not a pin digest"),
    (
        "a lone surrogate",
        raw(entry(reason="\ud800")).replace(b"\\ud800", b"\\ud800"),
        "holds a lone surrogate",
    ),
    ("a NUL in a key", raw({**entry(), "a\u0000": 1}), "holds U+0000"),
    ("a NUL deep in a list", raw(entry(outputs=[[0, "x\u0000"]])), "holds U+0000"),
    ("a NUL in the first field", raw(entry(test_id="a\u0000")), "holds U+0000"),
]


@pytest.mark.parametrize(
    ("line", "problem"), [pytest.param(r, p, id=name) for name, r, p in ENTRY_TABLE]
)
def test_entry_table(line: bytes, problem: str | None) -> None:
    if problem is None:
        freeze = entries.parse_entry(line, 4, 72)
        assert freeze.line == 4
        return
    with pytest.raises(entries.EntryError) as caught:
        entries.parse_entry(line, 4, 72)
    assert problem in str(caught.value)


def test_a_parsed_entry_keeps_every_field() -> None:
    freeze = entries.parse_entry(raw(entry(reason="timing")), 2, 72)
    assert freeze == entries.Freeze(
        "tests/test_app.py::test_app",
        "f00d",
        7,
        PIN,
        10,
        3,
        CI,
        NOW - timedelta(hours=1),
        NOW + timedelta(hours=24),
        "timing",
        2,
    )
    assert freeze.as_json()["until"] == stamp(NOW + timedelta(hours=24))
    assert freeze.active(NOW)
    assert freeze.active(NOW - timedelta(hours=1))  # from frozen_at, inclusive
    assert not freeze.active(NOW + timedelta(hours=24))  # to until, exclusive
    assert not freeze.active(NOW - timedelta(hours=2))
    assert entries.parse_entry(raw(entry()), 1, 72).reason == ""


def test_parse_ledger_reads_every_line_and_names_the_bad_ones() -> None:
    data = GOOD + b"junk\n" + GOOD
    freezes, problems = entries.parse_ledger(data, 72)
    assert [f.line for f in freezes] == [1, 3]
    assert [(p.rule, p.line) for p in problems] == [("ledger-entry", 2)]
    assert entries.parse_ledger(b"", 72) == ([], [])
    _, unterminated = entries.parse_ledger(GOOD + b"junk", 72)
    assert [p.line for p in unterminated] == [2]
    _, blank = entries.parse_ledger(GOOD + b"\n", 72)
    assert [p.line for p in blank] == [2]


def test_iso_and_the_first_difference() -> None:
    assert records.iso_utc(datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))) == (
        "2026-01-02T01:04:05Z"
    )
    assert entries._first_difference(b"a\nb\n", b"a\nc\n") == 2
    assert entries._first_difference(b"a\nb\n", b"a\n") == 2
    assert entries._first_difference(b"a\n", b"b\n") == 1
    assert entries._first_difference(b"a\nb\n", b"a\nb") == 2  # the last newline dropped
    assert entries._first_difference(b"a\n", b"a") == 1


# -- ranges.parse_raw: `diff-tree -z --raw -c` token by token ------------------------------------

A, B, C = "1" * 40, "2" * 40, "3" * 40


class _NoGit:
    """parse_raw asks git only for symlink rows: none here."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"parse_raw asked git for {name} on a row with no link")


def parse(tokens: list[bytes], first_commit: Oid | None = None) -> list[CommitDiff]:
    resolver = LinkResolver(_NoGit(), _NoGit())  # type: ignore[arg-type]
    return list(parse_raw(iter(tokens), resolver, first_commit))


RAW_TABLE: list[
    tuple[str, list[bytes], list[tuple[str, bool, list[tuple[str, str, str, str]]]]]
] = [
    (
        "one modified file",
        [NEW.encode(), *row(f":100644 100644 {A} {B} M", "src/app.py")],
        [(NEW, False, [("M", "100644", "100644", "src/app.py")])],
    ),
    (
        "added, deleted and a mode change",
        [
            NEW.encode(),
            *row(f":000000 100644 {ZERO} {A} A", "a"),
            *row(f":100644 000000 {A} {ZERO} D", "b"),
            *row(f":100644 100755 {A} {A} M", "c"),
        ],
        [
            (
                NEW,
                False,
                [
                    ("A", "000000", "100644", "a"),
                    ("D", "100644", "000000", "b"),
                    ("M", "100644", "100755", "c"),
                ],
            )
        ],
    ),
    (
        "two commits, the second with no change",
        [NEW.encode(), *row(f":100644 100644 {A} {B} M", "x"), OLD.encode()],
        [(NEW, False, [("M", "100644", "100644", "x")]), (OLD, False, [])],
    ),
    (
        "a combined row of a merge",
        [NEW.encode(), *row(f"::100644 100644 100644 {A} {B} {C} MM", "m")],
        [(NEW, True, [("M", "100644", "100644", "m")])],
    ),
    (
        "a file both parents lacked",
        [NEW.encode(), *row(f"::000000 000000 100644 {ZERO} {ZERO} {C} AA", "new")],
        [(NEW, True, [("A", "000000", "100644", "new")])],
    ),
    (
        "a file deleted against both parents",
        [NEW.encode(), *row(f"::100644 100644 000000 {A} {B} {ZERO} DD", "gone")],
        [(NEW, True, [("D", "100644", "000000", "gone")])],
    ),
    (
        "added on one side only",
        [NEW.encode(), *row(f"::000000 100644 100644 {ZERO} {B} {C} AM", "half")],
        [(NEW, True, [("M", "000000", "100644", "half")])],
    ),
    (
        "an octopus row",
        [NEW.encode(), *row(f":::100644 100644 100644 100644 {A} {B} {C} {A} MMM", "o")],
        [(NEW, True, [("M", "100644", "100644", "o")])],
    ),
    (
        "a path with a newline and a space",
        [NEW.encode(), *row(f":100644 100644 {A} {B} M", "a dir/new\nline")],
        [(NEW, False, [("M", "100644", "100644", "a dir/new\nline")])],
    ),
    ("nothing at all", [], []),
]


@pytest.mark.parametrize(
    ("tokens", "expected"), [pytest.param(t, x, id=name) for name, t, x in RAW_TABLE]
)
def test_raw_table(
    tokens: list[bytes], expected: list[tuple[str, bool, list[tuple[str, ...]]]]
) -> None:
    got = [
        (d.oid, d.merge, [(c.status, c.old_mode, c.new_mode, c.path) for c in d.changes])
        for d in parse(tokens)
    ]
    assert got == expected


def test_raw_rows_keep_their_object_ids() -> None:
    ((plain,),) = [d.changes for d in parse([NEW.encode(), *row(f":100644 100644 {A} {B} M", "p")])]
    assert (plain.old_oid, plain.new_oid) == ("", "")  # not decoded on the hot path
    assert plain.object_ids() == (A, B)
    ((merged,),) = [
        d.changes
        for d in parse([NEW.encode(), *row(f"::100644 100644 100644 {A} {B} {C} MM", "m")])
    ]
    assert merged.object_ids() == (A, C)  # the first parent's and the merge's


def test_raw_without_a_header_is_the_staged_change() -> None:
    (diff,) = parse(row(f":100644 100644 {A} {ZERO} M", "src/app.py"), first_commit=Oid("index"))
    assert diff.oid == "index"
    assert [c.path for c in diff.changes] == ["src/app.py"]


def test_a_non_utf8_path_survives() -> None:
    (diff,) = parse([NEW.encode(), f":100644 100644 {A} {B} M".encode(), b"caf\xe9"])
    assert diff.changes[0].path.encode("utf-8", "surrogateescape") == b"caf\xe9"


# -- globs -----------------------------------------------------------------------------------------

COMPONENT_TABLE = [
    # (glob component, name, matches)
    ("*.json", "a.json", True),
    ("*.json", ".json", True),
    ("*.json", "a/b.json", False),
    ("a*****b", "a/b", False),
    ("a*****b", "axxb", True),
    ("?", "a", True),
    ("?", "/", False),
    ("?", "ab", False),
    ("[ab]", "b", True),
    ("[ab]", "c", False),
    ("[!ab]", "c", True),
    ("[!ab]", "a", False),
    ("[^ab]", "c", True),
    ("[!a]", "/", False),
    ("[]a]", "]", True),
    ("[]]", "]", True),
    ("[!]a]", "b", True),
    ("[!a]", "!", True),
    ("[\u00a7]a]", "\u00a7a]", True),
    ("[a-cx]", "x", True),
    ("[ab]", "x", False),
    ("[!]a]", "]", False),
    ("[a-c]", "b", True),
    ("[a-c]", "-", False),
    ("[a-]", "-", True),
    ("[", "[", True),
    ("a[b", "a[b", True),
    ("x.y", "xzy", False),
    ("*", "new\nline", True),
    ("*", "", True),
]


@pytest.mark.parametrize(("glob", "name", "matches"), COMPONENT_TABLE)
def test_component_table(glob: str, name: str, matches: bool) -> None:
    assert bool(re.fullmatch(globs.component_regex(glob), name)) is matches


def test_character_classes_are_refused() -> None:
    with pytest.raises(ValueError, match=r"\[:alpha:\] are not supported"):
        globs.component_regex("[[:alpha:]]")


COMPONENTS_TABLE = [
    # (glob, path, matches): `**` spans whole components
    ("a/**", "a/b/c", True),
    ("a/**", "a", False),
    ("a/**/b", "a/b", True),
    ("a/**/b", "a/x/y/b", True),
    ("a/**/b", "a/xb", False),
    ("**/b", "b", True),
    ("**/b", "x/b", True),
    ("a/*", "a/b", True),
    ("a/*", "a/b/c", False),
    ("tests/*.json", "tests/sub/x.json", False),
    ("tests/*.json", "tests/x.json", True),
]


@pytest.mark.parametrize(("glob", "path", "matches"), COMPONENTS_TABLE)
def test_components_table(glob: str, path: str, matches: bool) -> None:
    assert bool(re.fullmatch(globs.components_regex(glob.split("/")), path)) is matches


REF_GLOB_TABLE = [
    ("refs/heads/release/*", "refs/heads/release/1", True),
    ("refs/heads/release/*", "refs/heads/release/1/x", False),
    ("refs/heads/release/*", "refs/heads/release", False),
    ("refs/heads/**", "refs/heads/a/b", True),
    ("refs/heads/main", "refs/heads/main/x", False),
]


@pytest.mark.parametrize(("glob", "ref", "matches"), REF_GLOB_TABLE)
def test_ref_glob_table(glob: str, ref: str, matches: bool) -> None:
    assert bool(re.fullmatch(globs.ref_glob_regex(glob), ref)) is matches


def test_wildcards_are_star_question_and_bracket() -> None:
    assert [globs.has_wildcard(t) for t in ("a*", "a?", "a[", "a]", "a.b", "")] == [
        True,
        True,
        True,
        False,
        False,
        False,
    ]


# -- paths: folding, globs, roots, classes --------------------------------------------------------

FOLD_TABLE = [
    ("Tests/Fixtures", "tests/fixtures"),
    ("a\\b", "a/b"),
    ("dir./x", "dir/x"),
    ("dir ./x", "dir/x"),
    ("x. ", "x"),
    ("a.b", "a.b"),
    (".hidden", ".hidden"),
    ("fix\u200ctures", "fixtures"),
    ("STRASSE", "strasse"),
    ("Stra\u00dfe", "strasse"),
    ("re\u0301sultats", "r\u00e9sultats"),
    ("\u212a", "k"),  # the Kelvin sign folds to k
]


@pytest.mark.parametrize(("path", "folded"), FOLD_TABLE)
def test_fold_table(path: str, folded: str) -> None:
    assert path_globs.fold_path(path) == folded


CANONICAL_TABLE = [
    ("./a//b", "a/b"),
    ("/a/./b", "/a/b"),
    ("a/b/", "a/b/"),
    ("!./x/**", "!x/**"),
    ("/", "/"),
    ("./", ""),
]


@pytest.mark.parametrize(("glob", "canonical"), CANONICAL_TABLE)
def test_canonical_table(glob: str, canonical: str) -> None:
    assert path_globs.canonical_glob(glob) == canonical


GLOB_PROBLEM_TABLE = [
    ("src/**", False, None),
    ("!src/x", True, None),
    ("!src/x", False, "negation (`!`) is not supported here"),
    ("", False, "an empty glob matches nothing"),
    ("/ /", False, "an empty glob matches nothing"),
    ("a/../b", False, "a glob may not contain `..`"),
    ("a\\b", False, "backslashes are not supported in globs"),
    ("a/\u200b/b", False, "a component folds to nothing, `.` or `..`"),
    ("a/ ./b", False, "a component folds to nothing, `.` or `..`"),
    ("[Z-a]", False, "not a valid glob once folded"),
    ("[[:alpha:]]", False, "not a valid glob once folded"),
]


@pytest.mark.parametrize(("glob", "negation", "problem"), GLOB_PROBLEM_TABLE)
def test_glob_problem_table(glob: str, negation: bool, problem: str | None) -> None:
    got = path_globs.glob_problem(glob, negation=negation)
    if problem is None:
        assert got is None
    else:
        assert got is not None and got.startswith(problem)


GLOB_TABLE = [
    # (policy glob, path, matches)
    ("*.snap", "deep/dir/x.snap", True),
    ("*.snap", "x.snap", True),
    ("/.gitmodules", ".gitmodules", True),
    ("/.gitmodules", "sub/.gitmodules", False),
    ("tests/fixtures/**", "tests/fixtures/a", True),
    ("tests/fixtures/**", "tests/fixtures", False),
    ("tests/fixtures", "tests/fixtures/a/b", True),
    ("tests/fixtures", "tests/fixtures_old", False),
    ("fixtures/", "a/fixtures/b", True),
    ("tests/*.json", "tests/sub/x.json", False),
    ("tests/*.json", "tests/x.json", True),
    ("Tests/*.JSON", "tests/x.json", True),
]


@pytest.mark.parametrize(("glob", "path", "matches"), GLOB_TABLE)
def test_glob_table(glob: str, path: str, matches: bool) -> None:
    assert bool(re.fullmatch(path_globs.glob_regex(glob), path)) is matches


ROOT_TABLE = [
    ("tests/fixtures/**", [("tests", "above"), ("tests/fixtures", "at")]),
    (
        "crates/*/resources/**",
        [("crates", "above"), ("crates/x", "above"), ("crates/x/resources", "at")],
    ),
    ("**/__snapshots__/**", [("a/b/__snapshots__", "at"), ("__snapshots__", "at")]),
    ("src/**/testdata/**", [("src", "above"), ("src/a/testdata", "at")]),
    ("tests/freeze.jsonl", [("tests", "above")]),
]


@pytest.mark.parametrize(("glob", "expected"), ROOT_TABLE)
def test_root_table(glob: str, expected: list[tuple[str, str]]) -> None:
    patterns = path_globs.root_patterns(glob)
    for path, where in expected:
        hits = [p.reason for p in patterns if re.fullmatch(p.regex, path)]
        assert hits and hits[0].startswith(where), (path, hits)
    assert not any(re.fullmatch(p.regex, "src/app.py") for p in patterns)


CLASSIFY_TABLE = [
    # (extra policy, path, class)
    ("", "src/app.py", "product"),
    ("", "Makefile", "other"),
    ("", "tests/fixtures/a.json", "fixture"),
    ("", "tests/test_app.py", "test"),
    ("", "tests/freeze.jsonl", "freeze_ledger"),
    ("", "docs/a.md", "neutral"),
    ("", ".github/workflows/ci.yml", "other"),
    ('[paths]\nfixture = ["tests/*.json"]\n', "tests/sub/x.json", "test"),
    ('[paths]\nfixture = ["tests/*.json"]\n', "tests/x.json", "fixture"),
    ('[paths]\nproduct = ["src/**", "!src/gen/**"]\n', "src/gen/x.py", "other"),
    ('[paths]\nproduct = ["!src/gen/**", "src/**"]\n', "src/gen/x.py", "product"),
    ('[ledger]\npath = "ci/flakes.jsonl"\n', "ci/flakes.jsonl", "freeze_ledger"),
    ('[paths]\npolicy = ["!.gitattributes"]\n', "src/.gitattributes", "policy"),
]


@pytest.mark.parametrize(("extra", "path", "klass"), CLASSIFY_TABLE)
def test_classify_table(extra: str, path: str, klass: str) -> None:
    assert policy(extra).classifier().classify(path).klass == klass


def link(path: str, target: str, old_target: str | None = None) -> Change:
    return Change(
        "A", "000000", "120000", A, B, path, link_target=target, old_link_target=old_target
    )


LINK_TABLE = [
    # (link, target, class)
    ("src/root", "..", "policy"),  # the repository root holds every evidence root
    ("src/top", "../", "policy"),
    ("src/self", ".", "product"),
    ("src/data.json", "../tests/fixtures/a.json", "fixture"),
    # above tests/properties, and above the labels file (policy), which wins
    ("src/all", "../tests", "policy"),
    ("src/ledger", "../tests/freeze.jsonl", "freeze_ledger"),
    ("src/alias.py", "app.py", "product"),
    ("src/out", "../../etc/passwd", "other"),
    ("src/abs", "/etc/passwd", "other"),
    ("src/win", "..\\tests\\fixtures\\a.json", "fixture"),
    ("tests/fixtures/x", "../../src/app.py", "fixture"),
]


@pytest.mark.parametrize(("path", "target", "klass"), LINK_TABLE)
def test_link_table(path: str, target: str, klass: str) -> None:
    assert BASE_POLICY.classifier().classify_change(link(path, target)).klass == klass


def test_a_link_to_the_repository_root_is_evidence_above_every_root() -> None:
    classifier = BASE_POLICY.classifier()
    for target in ("..", "../", "../src/..", "..\\"):
        found = classifier.classify_change(link("src/root", target))
        assert (found.klass, found.reason) == (
            "policy",
            "symlink to the repository root, above every evidence root",
        ), target


def test_a_link_retargeted_away_from_evidence_is_still_evidence() -> None:
    moved = link("src/data.json", "app.py", old_target="../tests/fixtures/a.json")
    assert BASE_POLICY.classifier().classify_change(moved).klass == "fixture"


def test_the_root_is_no_evidence_when_no_class_has_a_root() -> None:
    bare = Policy(paths={"product": ("src/**",)}, lock_roots=())
    classifier = paths.Classifier(bare.paths)
    assert classifier.classify_change(link("src/root", "..")).klass == "product"


# -- policy -------------------------------------------------------------------------------------

POLICY_ERROR_TABLE = [
    # (text, key, line)
    ('[rules]\nallow_namespaces = ["refs/heads"]\n', "rules.allow_namespaces", 2),
    ('[rules]\nallow_namespaces = ["heads/"]\n', "rules.allow_namespaces", 2),
    ('[rules]\nallow_namespaces = ["refs/../x/"]\n', "rules.allow_namespaces", 2),
    ('[rules]\nallow_namespaces = "refs/heads/"\n', "rules.allow_namespaces", 2),
    ('[rules]\nprotected = ["main"]\n', "rules.protected", 2),
    ('[rules]\nprotected = ["refs/heads/[z-a]"]\n', "rules.protected", 2),
    ('[rules]\nbase = "refs/heads/*"\n', "rules.base", 2),
    ("[rules]\nbase = 1\n", "rules.base", 2),
    ('[rules]\nbase = "refs/heads/dev"\n', "rules.base", 2),
    ('[rules]\nprotected = ["refs/heads/dev"]\n', "rules.protected", 2),
    ('[rules]\nother_path = "maybe"\n', "rules.other_path", 2),
    ("[rules]\nadded_test = true\n", "rules.added_test", 2),
    ('[rules]\ntest_edit = "no"\n', "rules.test_edit", 2),
    ("[rules]\ntime_budget_s = 0\n", "rules.time_budget_s", 2),
    ("[rules]\ntime_budget_s = 3601\n", "rules.time_budget_s", 2),
    ("[rules]\ntime_budget_s = true\n", "rules.time_budget_s", 2),
    ('[rules]\ntime_budget_s = "1"\n', "rules.time_budget_s", 2),
    ("[ledger]\nmax_window_hours = 0\n", "ledger.max_window_hours", 2),
    ("[ledger]\nmax_window_hours = 8761\n", "ledger.max_window_hours", 2),
    ("[ledger]\nmax_window_hours = 1.5\n", "ledger.max_window_hours", 2),
    ("[ledger]\nmax_window_hours = true\n", "ledger.max_window_hours", 2),
    ('[ledger]\npath = "tests/*.jsonl"\n', "ledger.path", 2),
    ('[ledger]\npath = "a/../b"\n', "ledger.path", 2),
    ("[ledger]\npath = 1\n", "ledger.path", 2),
    ('[ledger]\npath = "!tests/f.jsonl"\n', "ledger.path", 2),
    ('[lock]\nroots = ["tests/*"]\n', "lock.roots", 2),
    ('[lock]\nnotes_ref = "refs/heads/x"\n', "lock.notes_ref", 2),
    ('[lock]\nnotes_ref = "notes/x"\n', "lock.notes_ref", 2),
    ('[lock]\nrequired = "yes"\n', "lock.required", 2),
    ('[lock]\nexclude = ["a/../b"]\n', "lock.exclude", 2),
    ('[paths]\nfixture = ["../x"]\n', "paths.fixture", 2),
    ('[paths]\nfixture = "tests/**"\n', "paths.fixture", 2),
    ('[identities]\nevidence_writers = "alice"\n', "identities.evidence_writers", 2),
    ("[identities]\nevidence_writers = [1]\n", "identities.evidence_writers", 2),
    ("[identities]\nadmins = []\n", "identities.admins", 2),
    ("[nope]\n", "[nope]", 1),
    ('["rules"]\nother_path = "maybe"\n', "rules.other_path", 2),
    ("[ 'rules' ] # quoted\n\nother_path = 'maybe'\n", "rules.other_path", 3),
    ('[identities]\nx = 1\n["rules"]\nother_path = 1\n', "identities.x", 2),
    ("rules = 1\n", "[rules]", None),
]


@pytest.mark.parametrize(("text", "key", "line"), POLICY_ERROR_TABLE)
def test_policy_error_table(text: str, key: str, line: int | None) -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy(text.encode(), "base:.git-evidence.toml")
    assert caught.value.key == key
    assert caught.value.line == line


POLICY_VALUE_TABLE: list[tuple[str, str, object]] = [
    # the defaults
    ("", "other_path", "hold"),
    ("", "added_test", "hold"),
    ("", "test_edit", "hold"),
    ("", "protected", ("refs/heads/main",)),
    ("", "base", "refs/heads/main"),
    ("", "max_window_hours", 72),
    ("", "time_budget_s", 4.5),
    ("", "ledger_path", "tests/freeze.jsonl"),
    ("", "notes_ref", "refs/notes/evidence"),
    ("", "lock_required", False),
    ("", "lock_roots", ("tests/fixtures", "tests/goldens", "testdata", "tests/properties")),
    ("", "evidence_writers", frozenset()),
    # what a file sets
    ("", "allow_namespaces", ("refs/heads/", "refs/tags/")),
    (
        '[rules]\nallow_namespaces = ["refs/heads/", "refs/for/"]\n',
        "allow_namespaces",
        ("refs/heads/", "refs/for/"),
    ),
    ('[rules]\nother_path = "allow"\n', "other_path", "allow"),
    ('[rules]\nadded_test = "reject"\n', "added_test", "reject"),
    ('[rules]\ntest_edit = "allow"\n', "test_edit", "allow"),
    ("[rules]\ntime_budget_s = 3600\n", "time_budget_s", 3600.0),
    ("[rules]\ntime_budget_s = 0.5\n", "time_budget_s", 0.5),
    ("[ledger]\nmax_window_hours = 8760\n", "max_window_hours", 8760),
    ("[ledger]\nmax_window_hours = 1\n", "max_window_hours", 1),
    ('[ledger]\npath = "./ci//flakes.jsonl"\n', "ledger_path", "ci/flakes.jsonl"),
    ('[lock]\nroots = ["data/golden/", "/x"]\n', "lock_roots", ("data/golden", "x")),
    ('[lock]\nroots = ["gold\u00a7/"]\n', "lock_roots", ("gold\u00a7",)),
    ('[ledger]\npath = "/ci/f\u00a7"\n', "ledger_path", "ci/f\u00a7"),
    ("[lock]\nrequired = true\n", "lock_required", True),
    ('[lock]\nnotes_ref = "refs/notes/mine"\n', "notes_ref", "refs/notes/mine"),
    ('[lock]\nexclude = ["**/*.tmp"]\n', "lock_exclude", ("**/*.tmp",)),
    ('[rules]\nprotected = ["refs/heads/*"]\nbase = "refs/heads/dev"\n', "base", "refs/heads/dev"),
    ('[identities]\nlock_writers = ["x"]\n', "lock_writers", frozenset({"x"})),
    ("\ufeff[rules]\nother_path = 'allow'\n", "other_path", "allow"),
]


@pytest.mark.parametrize(("text", "attribute", "value"), POLICY_VALUE_TABLE)
def test_policy_value_table(text: str, attribute: str, value: object) -> None:
    assert getattr(parse_policy(text.encode(), "x"), attribute) == value


def test_the_writer_lists_stay_apart() -> None:
    assert SPLIT_POLICY.evidence_writers == {"alice"}
    assert SPLIT_POLICY.ledger_writers == {"ledger-bot"}
    assert SPLIT_POLICY.lock_writers == {"lock-bot"}
    identities = SPLIT_POLICY.as_dict()["identities"]
    assert identities == {
        "evidence_writers": ["alice"],
        "ledger_writers": ["ledger-bot"],
        "lock_writers": ["lock-bot"],
        "reviewers": ["alice"],  # by default the evidence writers, listed apart
    }


PROTECTED_TABLE = [
    (
        '[rules]\nprotected = ["refs/heads/main", "refs/heads/release/*"]\n',
        "refs/heads/release/1",
        True,
    ),
    (
        '[rules]\nprotected = ["refs/heads/main", "refs/heads/release/*"]\n',
        "refs/heads/release/1/x",
        False,
    ),
    (
        '[rules]\nprotected = ["refs/heads/main", "refs/heads/release/**"]\n',
        "refs/heads/release/1/x",
        True,
    ),
    ("", "refs/heads/MAIN", True),
    ("", "refs/heads/main2", False),
    ("", "refs/heads/mai", False),
]


@pytest.mark.parametrize(("text", "ref", "protected"), PROTECTED_TABLE)
def test_protected_table(text: str, ref: str, protected: bool) -> None:
    assert parse_policy(text.encode(), "x").is_protected(ref) is protected


def test_effective_globs_add_the_builtins_and_the_ledger_once() -> None:
    pol = parse_policy(b'[ledger]\npath = "ci/f.jsonl"\n', "x")
    effective = pol.effective_globs()
    assert effective["policy"][:4] == (
        ".git-evidence.toml",
        ".gitattributes",
        "/.gitmodules",
        "/.lfsconfig",
    )
    # the ledger, then the retry quota, which sits in the ledger's class
    assert effective["freeze_ledger"][-2:] == ("/ci/f.jsonl", "/tests/retry-quota.jsonl")
    again = Policy(paths={"freeze_ledger": ("/tests/freeze.jsonl",)})
    # listed once, however often the policy lists them
    assert again.effective_globs()["freeze_ledger"] == (
        "/tests/freeze.jsonl",
        "/tests/retry-quota.jsonl",
    )


def test_a_policy_is_a_value() -> None:
    with pytest.raises(AttributeError):
        BASE_POLICY.other_path = "allow"  # type: ignore[misc]


def test_the_digest_is_the_sha256_of_the_canonical_json() -> None:
    import hashlib

    canonical = json.dumps(BASE_POLICY.as_dict(), sort_keys=True, separators=(",", ":"))
    assert BASE_POLICY.digest == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def test_the_digest_follows_the_content_not_the_source() -> None:
    one = parse_policy(POLICY.encode(), "a")
    assert one.digest == parse_policy(POLICY.encode(), "b").digest
    assert one.digest != SPLIT_POLICY.digest
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", one.digest)


def test_errors_name_the_source_the_key_and_the_line() -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy(b'# c\n[rules]\n\nother_path = "x"\n', "sealed:/p.toml")
    assert str(caught.value).startswith("sealed:/p.toml:4: rules.other_path: expected one of")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (b"[rules\n", "src:1: not valid TOML: Expected ']' at the end of a table declaration"),
        (b'a = "', "src:1: not valid TOML: Unterminated string (the file ends early)"),
        (b"x = 1\ny = [\n", "src:2: not valid TOML: Invalid value (the file ends early)"),
    ],
)
def test_toml_errors_name_the_line_and_say_when_the_file_ends_early(text: bytes, said: str) -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, "src")
    assert str(caught.value) == said


def _iter_keys() -> Iterator[str]:
    yield from ("paths", "rules", "identities", "lock", "ledger", "labels", "judge")
    yield "verdict_writers"  # listed on its own, only when set


def test_every_table_accepts_its_documented_keys() -> None:
    text = (
        '[paths]\nproduct = ["src/**"]\n'
        '[rules]\nother_path = "hold"\nadded_test = "hold"\ntest_edit = "hold"\n'
        'protected = ["refs/heads/main"]\nbase = "refs/heads/main"\n'
        'allow_namespaces = ["refs/heads/"]\ntime_budget_s = 1\n'
        "[identities]\nevidence_writers = []\nledger_writers = []\nlock_writers = []\n"
        "reviewers = []\nverdict_writers = []\n"
        '[lock]\nroots = ["x"]\nexclude = []\nnotes_ref = "refs/notes/x"\nrequired = false\n'
        '[ledger]\npath = "f.jsonl"\nmax_window_hours = 1\n'
        '[labels]\npath = "l.tsv"\nquota_path = "q.jsonl"\nretries = 1\n'
        '[judge]\nnotes_ref = "refs/notes/v"\nrepeat = 2\nseeds = 1\ntimeout_s = 5\n'
    )
    assert set(parse_policy(text.encode(), "x").as_dict()) == set(_iter_keys())


# -- what the mutation run found unpinned in paths.py ------------------------------------------


def test_glob_problem_refuses_negation_unless_asked() -> None:
    assert path_globs.glob_problem("!src/x") == "negation (`!`) is not supported here"


@pytest.mark.parametrize(
    ("glob", "path", "matches"),
    [
        ("src/\u00a7", "src/x", False),  # a trailing non-ASCII name is part of the glob
        ("src/\u00a7", "src/\u00a7", True),
        ("/\u00a7a/b", "\u00a7a/b", True),
        ("\u00a7/**", "\u00a7/x", True),
        ("\u00a7", "deep/\u00a7", True),
    ],
)
def test_globs_keep_every_character_but_slashes(glob: str, path: str, matches: bool) -> None:
    assert path_globs.glob_problem(glob) is None
    assert bool(re.fullmatch(path_globs.glob_regex(glob), path)) is matches


def test_root_patterns_name_at_and_above_and_leave_the_root_to_the_caller() -> None:
    patterns = path_globs.root_patterns("tests/fixtures/**")
    assert [p.reason for p in patterns] == [
        "above evidence root tests/fixtures/",
        "at evidence root tests/fixtures/",
    ]
    assert [p.reason for p in path_globs.root_patterns("tests/freeze.jsonl")] == [
        "above evidence root tests/freeze.jsonl"
    ]
    for glob in ("tests/fixtures/**", "tests/freeze.jsonl", "a/*/b/**", "**/x/**"):
        assert not any(re.fullmatch(p.regex, "") for p in path_globs.root_patterns(glob)), glob


def test_matches_are_values_with_no_reason_by_default() -> None:
    match = BASE_POLICY.classifier().classify("src/app.py")
    assert match.reason == ""
    with pytest.raises(AttributeError):
        match.klass = "fixture"  # type: ignore[misc]


def test_object_ids_of_a_row_with_neither_ids_nor_raw_row_are_empty() -> None:
    assert Change("A", "000000", "100644", "", "", "x").object_ids() == ("", "")


def test_every_lock_root_is_a_root_at_above_and_inside() -> None:
    classifier = paths.Classifier(
        {"product": ("src/**",)}, extra_roots=("data/golden/", "more/gold\u00a7")
    )
    assert classifier.root_relation("data") == paths.Match(
        "fixture", "data/golden/", "above evidence root data/golden/"
    )
    assert classifier.root_relation("data/golden") == paths.Match(
        "fixture", "data/golden/", "at evidence root data/golden/"
    )
    assert classifier.root_relation("data/golden/x").reason == (  # type: ignore[union-attr]
        "inside evidence root data/golden/"
    )
    assert classifier.root_relation("more/gold\u00a7/x").klass == "fixture"  # type: ignore[union-attr]
    assert classifier.root_relation("more/gold\u00a7").reason == (  # type: ignore[union-attr]
        "at evidence root more/gold\u00a7/"
    )
    assert classifier.root_relation("more/gold") is None
    # With lock roots alone, the repository root is above a fixture root.
    assert classifier.classify_change(link("src/root", "..")).klass == "fixture"


def test_a_negation_does_not_hide_the_roots_written_after_it() -> None:
    classifier = paths.Classifier({"fixture": ("!tests/fixtures/skip/**", "data/**")})
    assert classifier.root_relation("data") == paths.Match(
        "fixture", "data/**", "at evidence root data/"
    )


def test_a_negation_in_the_last_class_falls_to_other() -> None:
    pol = policy('[paths]\nneutral = ["docs/**", "!docs/private/**"]\n')
    match = pol.classifier().classify("docs/private/a.md")
    assert match.klass == "other"
    assert match.negated == (paths.Negation("neutral", "docs/**", "!docs/private/**"),)


def test_the_negation_that_decided_is_found_past_other_negations() -> None:
    pol = policy('[paths]\nproduct = ["src/**", "!src/gen/**", "!src/vendor/**"]\n')
    match = pol.classifier().classify("src/vendor/x.py")
    assert match.klass == "other"
    assert match.negated == (paths.Negation("product", "src/**", "!src/vendor/**"),)
    assert match.negated[0].describe() == "product glob src/** negated by !src/vendor/**"


def test_a_link_replaced_by_a_file_is_judged_by_where_it_led() -> None:
    was_link = Change(
        "M", "120000", "100644", A, B, "src/data.json", old_link_target="../tests/fixtures/a.json"
    )
    assert BASE_POLICY.classifier().classify_change(was_link).klass == "fixture"


def test_only_the_new_target_can_leave_the_repository() -> None:
    classifier = BASE_POLICY.classifier()
    came_back = link("src/x", "app.py", old_target="/etc/passwd")
    assert classifier.classify_change(came_back).klass == "product"
    now_a_file = Change("M", "120000", "100644", A, B, "src/x", old_link_target="/etc/passwd")
    assert classifier.classify_change(now_a_file).klass == "product"
    left = link("src/x", "/etc/passwd", old_target="app.py")
    assert classifier.classify_change(left) == paths.Match(
        "other", None, "symlink out of the repository (/etc/passwd)"
    )


@pytest.mark.parametrize("glob", ["a**b", "a*****b", "**", "x***", "***y"])
def test_a_run_of_stars_is_one_star(glob: str) -> None:
    # One `[^/]*` per run: `a*****b` must not backtrack exponentially.
    assert globs.component_regex(glob) == globs.component_regex(re.sub(r"\*+", "*", glob))
    assert globs.component_regex(glob).count("[^/]*") == 1


def test_the_policy_comes_from_the_file_or_the_defaults(tmp_path: Any) -> None:
    from git_evidence.policy.parsing import load_at, read_sealed

    assert (
        load_at(None, "c" * 40).source == f"built-in defaults (no .git-evidence.toml at {'c' * 12})"
    )
    assert load_at(None, None).source == "built-in defaults (no base revision)"
    assert load_at(POLICY.encode(), "c" * 40) == BASE_POLICY
    sealed = tmp_path / "policy.toml"
    sealed.write_bytes(POLICY.encode())
    assert read_sealed(str(sealed)).evidence_writers == {"alice"}
    assert read_sealed(str(sealed)).source == f"sealed:{sealed}"
    with pytest.raises(PolicyError, match="cannot read the sealed policy"):
        read_sealed(str(tmp_path / "missing.toml"))
