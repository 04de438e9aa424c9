"""The one decide pass (``rules.decide``), in process: facts built by hand, findings out.
What each entry point adds (the staged change's wording, the hint a trusted clone
lifts), which files, notes, locks, ledgers and quotas of an update are read and when,
and when a policy that parses alone still breaks the server's policy. Fast enough to
run on each mutation (bench/mutation.py)."""

from __future__ import annotations

from collections.abc import Sequence

from helpers.rule_facts import AGENT, ALICE, BASE_POLICY, facts, summary, who

from git_evidence.core.facts import (
    Drift,
    Entry,
    FileProblem,
    LedgerProblem,
    LockFacts,
    LockRef,
    PushFacts,
    UpdateBundle,
    UpdateFacts,
)
from git_evidence.core.oids import Oid
from git_evidence.policy.identity import Identity
from git_evidence.rules.decide import UNPUSHED_FILES, decide, judges_range
from git_evidence.rules.findings import Finding
from git_evidence.rules.table import ALLOW, HOLD, REJECT, TRUSTED_CLONE_FIX

BROKEN_POLICY = FileProblem("policy", ".git-evidence.toml", "line 3: expected '='")
BROKEN_LABELS = FileProblem("labels", "tests/evidence-labels.tsv", "line 2: no kind")
AFTER_PUSH = FileProblem("policy", ".git-evidence.toml", "two policies disagree")
BREACH = [Drift("tests/fixtures/a.json", "modified", Entry("100644", "1" * 40), None)]
LOCKED = LockRef(Oid("c" * 40), Oid("d" * 40))


def rules(findings: Sequence[Finding]) -> dict[str, str]:
    return {f.rule: f.decision for f in findings}


def one(
    bundle: UpdateBundle, pusher: str | None = AGENT, entry: str = "pre-receive", **push: object
) -> list[Finding]:
    """The findings of a push of one update."""
    decided = decide(PushFacts([bundle], entry, **push), BASE_POLICY, who(pusher))  # type: ignore[arg-type]
    assert len(decided.decisions) == 1
    return list(decided.decisions[0].findings)


# -- which decider: the staged change, or a pushed update -----------------------------------


def test_the_staged_change_is_decided_with_hints_that_speak_of_the_index() -> None:
    mixed = UpdateBundle(facts(), [summary("src/app.py", "tests/fixtures/a.json")])
    staged = one(mixed, ALICE, "pre-commit")
    pushed = one(mixed, ALICE, "pre-receive")
    assert rules(staged) == rules(pushed) == {"mixed-commit": REJECT}
    assert "git restore --staged" in (staged[0].hint or "")
    assert "git restore --staged" not in (pushed[0].hint or "")


def test_a_staged_file_that_does_not_parse_names_no_commit_and_says_stage_it_again() -> None:
    bundle = UpdateBundle(facts(), [summary("src/app.py")], files=[BROKEN_POLICY])
    (found,) = one(bundle, ALICE, "pre-commit")
    assert found.rule == "policy-invalid" and found.commit is None
    assert "stage it again" in (found.hint or "")
    (pushed,) = one(bundle, ALICE, "pre-receive")
    assert pushed.commit == facts().commit
    assert "stage it again" not in (pushed.hint or "")


def test_staged_evidence_alone_is_a_proposal_only_where_the_branch_takes_them() -> None:
    """pre-commit says whether its branch takes proposals (``staged_proposal``); the
    staged change's own facts name the branch it is on, protected here."""
    staged = UpdateBundle(facts(), [summary("tests/fixtures/a.json")])
    proposed = one(staged, AGENT, "pre-commit", staged_proposal=True)
    assert rules(proposed) == {"evidence-proposed": ALLOW}
    assert rules(one(staged, AGENT, "pre-commit")) == {"evidence-untrusted": REJECT}


# -- the policy once the push is applied ----------------------------------------------------


def policy_push(*, changed: bool = True, **fields: object) -> UpdateBundle:
    return UpdateBundle(
        facts(**fields),  # type: ignore[arg-type]
        [summary(".git-evidence.toml")],
        policy_changed=changed,
    )


def test_a_policy_change_that_breaks_the_server_policy_is_refused() -> None:
    found = one(policy_push(), ALICE, after_push=AFTER_PUSH)
    assert rules(found) == {"policy-invalid": REJECT}
    assert found[0].message == AFTER_PUSH.problem


def test_with_nothing_wrong_after_the_push_there_is_no_finding() -> None:
    assert one(policy_push(), ALICE) == []


def test_an_update_that_does_not_change_the_policy_is_not_charged_with_it() -> None:
    assert one(policy_push(changed=False), ALICE, after_push=AFTER_PUSH) == []


def test_an_update_whose_commits_were_not_judged_is_not_charged_with_the_policy() -> None:
    refused_ref = policy_push(ref="refs/heads/feature\\x", revlist=None)
    found = one(refused_ref, ALICE, after_push=AFTER_PUSH)
    assert "policy-invalid" not in rules(found)


def test_a_push_refused_already_is_not_told_about_the_policy_too() -> None:
    mixed = UpdateBundle(
        facts(), [summary(".git-evidence.toml", "src/app.py")], policy_changed=True
    )
    found = one(mixed, ALICE, after_push=AFTER_PUSH)
    assert rules(found) == {"mixed-commit": REJECT}


def test_each_update_of_a_push_is_decided_on_its_own() -> None:
    product = UpdateBundle(facts(ref="refs/heads/main"), [summary("src/app.py")])
    changed = policy_push(ref="refs/heads/release")
    decided = decide(PushFacts([product, changed], after_push=AFTER_PUSH), BASE_POLICY, who(ALICE))
    assert [rules(d.findings) for d in decided.decisions] == [{}, {"policy-invalid": REJECT}]


# -- what a client hook adds: the setting that lifts a refusal in a trusted clone ------------


def test_pre_push_names_the_trusted_clone_setting_in_a_refusal_trust_lifts() -> None:
    fixture = UpdateBundle(facts(), [summary("tests/fixtures/a.json")])
    (found,) = one(fixture, None, "pre-push")
    assert found.rule == "evidence-untrusted"
    assert (found.hint or "").endswith(TRUSTED_CLONE_FIX)
    (served,) = one(fixture, None, "pre-receive")
    assert TRUSTED_CLONE_FIX not in (served.hint or "")


def test_a_trusted_clone_is_not_told_to_trust_itself() -> None:
    fixture = UpdateBundle(facts(), [summary("tests/fixtures/a.json", "tests/test_app.py")])
    trusted = Identity(None, "client", trusted_clone=True)
    decided = decide(PushFacts([fixture], "pre-push"), BASE_POLICY, trusted)
    assert all(TRUSTED_CLONE_FIX not in (f.hint or "") for f in decided.decisions[0].findings)


# -- judges_range: whose range the gate reads the lock, ledger and files for -----------------


def test_a_range_is_judged_when_it_has_commits_and_its_ref_is_not_refused() -> None:
    assert judges_range(facts(), BASE_POLICY, who(AGENT))


def test_a_deletion_has_no_range_to_judge() -> None:
    assert not judges_range(facts(commit=None), BASE_POLICY, who(AGENT))


def test_an_update_with_no_listing_has_no_range_to_judge() -> None:
    assert not judges_range(facts(revlist=None), BASE_POLICY, who(AGENT))


def test_a_refused_ref_has_its_range_left_unread() -> None:
    forced = facts(fast_forward=False)  # history rewritten on a protected ref
    assert not judges_range(forced, BASE_POLICY, who(AGENT))
    assert judges_range(facts(fast_forward=False, protected=False), BASE_POLICY, who(AGENT))


# -- notes: a lock writer's, a verdict writer's ------------------------------------------------


def notes_update(ref: str, *, notes: bool = True) -> UpdateFacts:
    return facts(ref=ref, notes=notes, protected=False, revlist=None, commit=None)


def test_a_lock_notes_push_is_told_which_notes_are_no_locks() -> None:
    bundle = UpdateBundle(notes_update("refs/notes/evidence-lock"), notes=["no lock"])
    assert rules(one(bundle, "ci-bot")) == {"lock-invalid": REJECT}


def test_a_verdict_notes_push_is_told_which_notes_are_no_verdicts() -> None:
    ref = BASE_POLICY.judge.notes_ref
    bundle = UpdateBundle(notes_update(ref), notes=["no lock"], verdicts=["no verdict"])
    found = one(bundle, "ci-bot")
    assert rules(found) == {"verdict-invalid": REJECT}
    assert found[0].message == "no verdict"
    spelled = UpdateBundle(notes_update(ref.upper()), verdicts=["no verdict"])
    assert rules(one(spelled, "ci-bot")) == {"verdict-invalid": REJECT}


def test_an_update_that_is_no_notes_push_reads_no_notes_problems() -> None:
    ref = BASE_POLICY.judge.notes_ref
    bundle = UpdateBundle(notes_update(ref, notes=False), notes=["x"], verdicts=["y"])
    assert rules(one(bundle, "ci-bot")) == {"ref-namespace": REJECT}  # and nothing of notes


# -- what a judged update leaves: files, the lock, the ledger and the quota --------------------


def test_a_protected_tip_that_leaves_a_broken_file_is_refused() -> None:
    bundle = UpdateBundle(facts(), [summary("src/app.py")], files=[BROKEN_LABELS])
    found = one(bundle)
    assert rules(found) == {"policy-invalid": REJECT}
    assert "labels file" in (found[0].hint or "")


def test_a_range_that_is_no_protected_ref_is_told_in_a_note() -> None:
    bundle = UpdateBundle(facts(protected=False), [summary("src/app.py")], files=[BROKEN_POLICY])
    decided = decide(PushFacts([bundle], "check"), BASE_POLICY, who(AGENT))
    assert decided.decisions[0].findings == ()
    assert decided.notes == [f"policy-invalid: {BROKEN_POLICY.problem} ({UNPUSHED_FILES})"]


def test_an_update_not_judged_reads_nothing_it_leaves() -> None:
    bundle = UpdateBundle(
        facts(fast_forward=False),
        [summary("src/app.py")],
        files=[BROKEN_POLICY],
        lock=LockFacts(invalid="unreadable"),
        ledger=[(None, LedgerProblem("ledger-rewrite", None, "rewritten"))],
    )
    assert rules(one(bundle)) == {"non-fast-forward": REJECT}


def test_a_deletion_reads_nothing_it_leaves() -> None:
    gone = facts(new="0" * 40, commit=None, revlist=None, protected=False)
    bundle = UpdateBundle(gone, files=[BROKEN_POLICY], lock=LockFacts(invalid="x"))
    assert one(bundle) == []


def test_the_lock_is_decided_when_it_was_read() -> None:
    product = UpdateBundle(
        facts(), [summary("src/app.py")], lock=LockFacts(found=LOCKED, invalid="bad note")
    )
    assert rules(one(product)) == {"lock-invalid": REJECT}
    unread = UpdateBundle(facts(), [summary("src/app.py")])
    assert one(unread) == []


def test_a_breach_beside_another_finding_is_still_a_breach() -> None:
    other = UpdateBundle(
        facts(), [summary("Makefile")], lock=LockFacts(found=LOCKED, breach=BREACH)
    )
    assert rules(one(other)) == {"other-path": HOLD, "fixture-breach": REJECT}


def test_a_proposal_names_who_must_bring_it_to_the_base() -> None:
    feature = facts(ref="refs/heads/feature", protected=False)
    (fixture,) = one(UpdateBundle(feature, [summary("tests/fixtures/a.json")]))
    (ledger,) = one(UpdateBundle(feature, [summary("tests/freeze.jsonl")]))
    assert fixture.rule == ledger.rule == "evidence-proposed"
    assert "an evidence writer must bring it to" in fixture.message
    assert "a ledger writer must bring it to" in ledger.message


def test_a_proposal_that_changes_locked_bytes_is_no_breach() -> None:
    proposal = facts(ref="refs/heads/feature", protected=False)
    bundle = UpdateBundle(
        proposal, [summary("tests/fixtures/a.json")], lock=LockFacts(found=LOCKED, breach=BREACH)
    )
    assert rules(one(bundle)) == {"evidence-proposed": ALLOW}


def test_ledger_and_quota_problems_of_a_judged_update_are_findings() -> None:
    ledger = [(None, LedgerProblem("ledger-rewrite", 2, "a line was changed"))]
    bundle = UpdateBundle(facts(), [summary("src/app.py")], ledger=ledger, quota=ledger)
    found = one(bundle)
    assert [f.rule for f in found] == ["ledger-rewrite", "ledger-rewrite"]
    assert found[0].hint != found[1].hint  # the quota's hints are its own
