"""What each rule and each judge class means, in one or two sentences: the full
description a code scanning rule shows beside its short name (SARIF
``fullDescription``), and where its documentation page is (``helpUri``). Data only;
docs/rules.md and docs/judging.md say the same at length."""

from __future__ import annotations

from typing import Final

# The project's home: the action is `uses:`d from this repository too.
HOME: Final = "https://github.com/git-evidence/git-evidence"
RULES_PAGE: Final = f"{HOME}/blob/main/docs/rules.md#the-rules-one-by-one"
JUDGE_PAGE: Final = f"{HOME}/blob/main/docs/judging.md"

DESCRIPTIONS: dict[str, str] = {
    "mixed-commit": "One commit changes evidence (fixtures, goldens, oracles, the freeze "
    "ledger, the policy) together with product, test or unclassified paths. Evidence "
    "travels in commits of its own.",
    "mixed-range": "No single commit mixes, but the range changes evidence and product "
    "between its commits, and the pusher may not write evidence.",
    "evidence-untrusted": "The range changes evidence and the pusher is not among the "
    "writers the policy names for that class.",
    "evidence-proposed": "Evidence alone, from a pusher who may not write it, on a "
    "branch that is not protected: a proposal a writer must bring to the base branch.",
    "notes-forge": "The lock or verdict notes ref is updated by someone the policy does "
    "not allow to write it.",
    "verdict-invalid": "A pushed verdict note is not one canonical verdict record about "
    "its commit.",
    "replace-ref": "A refs/replace/ ref is pushed: it would make git show other objects "
    "than the ones judged.",
    "ref-namespace": "A ref outside the namespaces the policy allows is pushed.",
    "non-fast-forward": "A protected ref would be rewound or rewritten.",
    "protected-delete": "A protected ref would be deleted.",
    "not-a-commit": "The pushed object does not peel to a commit.",
    "other-path": "A path in no class of the policy (CI files, lockfiles, build files): "
    "held for a reviewer.",
    "added-test": "A new test file: held for a reviewer.",
    "test-edit": "A modified or deleted test file: held for a reviewer.",
    "fixture-breach": "The files under the lock roots differ from the base's pinned "
    "manifest, and the pusher is not an evidence writer.",
    "lock-stale": "The base no longer matches the lock in force.",
    "lock-missing": "No lock is in force at the base and the policy requires one.",
    "lock-invalid": "The lock note is not exactly one canonical record pinning its commit.",
    "ledger-rewrite": "A change to the freeze ledger (or the retry quota) does not keep "
    "its old bytes: it is append-only.",
    "ledger-entry": "An appended ledger or quota line is not valid, current, or written "
    "by someone allowed to.",
    "policy-invalid": "The push would leave a protected ref whose policy does not parse "
    "and validate.",
    "policy-error": "The policy cannot be read or is invalid: nothing could be judged.",
    "time-budget": "The judgement would have run past its time budget: nothing was allowed.",
    "git-error": "git failed while judging: nothing was allowed.",
    "usage-error": "The command line or the CI job's input is wrong: nothing was judged.",
    "internal-error": "An error git evidence did not foresee: nothing was allowed.",
    "cannot-start": "The sandbox or a property's command could not be started: nothing was judged.",
    "ref-moved": "A ref moved while git evidence read it: nothing was decided.",
    # the judge's classes
    "patch_invalid": "The candidate patch does not apply to the base; nothing ran.",
    "oracle_rewrite": "The candidate changes an oracle, the policy, the labels or the "
    "ledger, or edits or deletes test code; nothing ran.",
    "fixture_breach": "The bytes under the lock roots differ from the pin, before or "
    "after the candidate's runs.",
    "held": "The candidate changes paths the policy holds for a person; nothing ran.",
    "property_miss": "A property lost strength: a must-fail fixture passed, a must-pass "
    "one failed, or a run reported fewer hits than required.",
    "property_fail": "A seed failed on every run of a property.",
    "flake_frozen": "Every disagreement between runs is a test with a freeze in force.",
    "flake_candidate": "A seed gave different outcomes on different runs and no freeze covers it.",
    "accept": "Every run of every seed passed and agreed.",
    "undecided": "The judge could not start or git failed: no class was given.",
}


def description(rule: str) -> str:
    return DESCRIPTIONS.get(rule) or f"git evidence finding {rule}."


def help_uri(rule: str) -> str:
    return JUDGE_PAGE if "_" in rule else RULES_PAGE
