"""The rule table: every rule's id (``RuleId``), decision and hint (``RULES``), the
hints for a range without a base (``NO_BASE``) and for the staged change
(``STAGED_HINTS``), what each hint's fields stand for (``FIELDS``), and ``fill``, which
words a hint. Data and one function: the findings are built in ``findings.py`` and the
deciders read this table; ``git evidence rules``, the forge formats and the docs read
it too, without loading any decider."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal

from git_evidence.core import paths
from git_evidence.core.oids import Oid
from git_evidence.core.paths import PathClass

if TYPE_CHECKING:  # data types only: the rules import nothing that runs git
    from git_evidence.policy.schema import Decision


# The decisions, in order of severity: the names of policy.Decision's values. The
# Literal lives with the policy, which sets three rules' decisions and could not import
# the rules back (the rules type against the policy).
ALLOW: Final = "allow"
HOLD: Final = "hold"
REJECT: Final = "reject"
SEVERITY: dict[Decision, int] = {ALLOW: 0, HOLD: 1, REJECT: 2}
# Classes that may ride along with anything, and those that make a change "product
# side" when they sit beside evidence (test code and unclassified paths included).
NON_EVIDENCE_SIDE: frozenset[PathClass] = frozenset({paths.PRODUCT, paths.TEST, paths.OTHER})

# The rule ids, a closed set: the type checker holds every finding to it. They are the
# keys of RULES, and docs/rules.md and the man page document each (tests hold all three
# equal).
RuleId = Literal[
    "mixed-commit",
    "mixed-range",
    "evidence-untrusted",
    "evidence-proposed",
    "notes-forge",
    "verdict-invalid",
    "replace-ref",
    "ref-namespace",
    "non-fast-forward",
    "protected-delete",
    "not-a-commit",
    "other-path",
    "added-test",
    "test-edit",
    "fixture-breach",
    "lock-stale",
    "lock-missing",
    "lock-invalid",
    "ledger-rewrite",
    "ledger-entry",
    "policy-error",
    "policy-invalid",
    "time-budget",
    "git-error",
]
# rule id → (decision, one line saying how to fix it). `{…}` fields are filled in
# (FIELDS says with what); a rule whose hint names {base} has a NO_BASE twin for a
# range that has no base (a branch with no history in common with [rules].base).
RULES: dict[RuleId, tuple[Decision | None, str]] = {
    "mixed-commit": (
        REJECT,
        "split commit {commit}: `git evidence split {commit}` makes it two commits, the "
        "evidence paths alone and the rest alone (`git evidence split --range "
        "{base}..HEAD` splits every mixed commit); then an evidence writer pushes the "
        "evidence commit",
    ),
    "mixed-range": (
        REJECT,
        "push the evidence commits apart from the product commits: drop them from this "
        "branch (`git rebase -i {base}`) and have an evidence writer push them alone",
    ),
    "evidence-untrusted": (
        REJECT,
        "remove the evidence change from this push (`git rebase -i {base}`) and have "
        "{role} push it on its own ({writers})",
    ),
    "evidence-proposed": (
        ALLOW,
        "a proposal, not a change in force: {role} ({writers}) reviews it and brings it "
        "to {base_ref} (pushes it, or a merge of it); `[rules].proposals = false` refuses "
        "proposals",
    ),
    "notes-forge": (
        REJECT,
        "only lock writers ({writers}) update {ref}; push branches by name (`git push "
        "origin main`), not with `--all` or `--mirror`",
    ),
    "verdict-invalid": (
        REJECT,
        "a verdict note is one canonical record `git evidence judge --note` wrote about "
        "the commit it is attached to: judge the candidate again and push that note",
    ),
    "replace-ref": (
        REJECT,
        "replace refs change what git shows for an object and are never accepted: "
        "delete it (`git replace -d`) and push without it",
    ),
    "ref-namespace": (REJECT, "push to a ref under {namespaces} (policy [rules].allow_namespaces)"),
    "non-fast-forward": (
        REJECT,
        "protected history is never rewritten: fetch, rebase onto the server's {ref} "
        "(`git pull --rebase`) and push again",
    ),
    "protected-delete": (
        REJECT,
        "{ref} is protected and cannot be deleted (policy [rules].protected)",
    ),
    "not-a-commit": (REJECT, "push a ref that names a commit (a tag must peel to a commit)"),
    "other-path": (
        None,
        "these paths are in no class: {accept}; or classify them in [paths] with a "
        "reviewed policy change",
    ),
    "added-test": (None, "new test files are reviewed before they judge the product: {accept}"),
    "test-edit": (
        None,
        "edited or deleted test files are reviewed before they judge the product: {accept}",
    ),
    "fixture-breach": (
        REJECT,
        "the bytes under the lock roots change only in an evidence writer's push: drop "
        "the change (`git rebase -i {base}`), or have an evidence writer push it; "
        "post-receive then pins it",
    ),
    "lock-stale": (
        HOLD,
        "{base} no longer matches the lock pinned on {locked}: a lock writer reviews the "
        "drift and pins it (`git evidence lock {base} --push origin`); it holds a push "
        "only when [lock].required is true, and then {accept}",
    ),
    "lock-missing": (
        HOLD,
        "no lock is in force at {base} and the policy requires one: a lock writer pins it "
        "(`git evidence lock {base} --push origin`), or {accept}",
    ),
    "lock-invalid": (
        REJECT,
        "a lock writer re-pins {locked} (`git evidence lock {locked} --push origin`); a "
        "note is exactly one canonical record, as git evidence writes it (no trailing "
        "newline)",
    ),
    "ledger-rewrite": (
        REJECT,
        "the freeze ledger is append-only: restore its old bytes (`git checkout {base} -- "
        "{path}`) and append new lines only; CI appends them (`git evidence freeze add`)",
    ),
    "ledger-entry": (
        REJECT,
        "append only entries `git evidence freeze add` writes: a reproduced flake (one "
        "seed that both passed and failed), a window inside max_window_hours, a pin that "
        "exists, by a ledger writer",
    ),
    "policy-error": (REJECT, "fix the policy file named above; until then every push is refused"),
    "policy-invalid": (
        REJECT,
        "{ref} would be left with a policy file that does not parse (every later push "
        "would be refused): correct it (`git evidence policy --base {commit}` shows the "
        "error) and push again",
    ),
    "time-budget": (
        REJECT,
        "nothing was allowed: push fewer commits at a time, or raise "
        "[rules].time_budget_s where the host allows it",
    ),
    "git-error": (
        REJECT,
        "the gate could not read what it must judge; nothing was "
        "allowed: check the repository (git fsck) and retry",
    ),
}

# The same hints for a range with no base: its first commit is a root commit, or it
# shares no history with [rules].base. The pushed tip is never shown as its own base.
_NO_HISTORY = "{ref} has no history in common with {base_ref}"
# ...and when the pushed ref is the base itself, which does not exist yet.
_CREATES_BASE = "{base_ref} does not exist yet: this push creates it"
NO_BASE: dict[RuleId, str] = {
    "mixed-commit": "split commit {commit}: `git evidence split {commit}` makes it two "
    "commits, the evidence paths alone and the rest alone; then an evidence writer pushes "
    f"the evidence commit ({_NO_HISTORY})",
    "mixed-range": "push the evidence commits apart from the product commits: drop them "
    f"from this branch (`git rebase -i --root`: {_NO_HISTORY}) and have an evidence "
    "writer push them alone",
    "evidence-untrusted": "remove the evidence change from this push (`git rebase -i "
    f"--root`: {_NO_HISTORY}) and have {{role}} push it on its own ({{writers}})",
    "fixture-breach": "the bytes under the lock roots change only in an evidence writer's "
    f"push: drop the change (`git rebase -i --root`: {_NO_HISTORY}), or have an evidence "
    "writer push it; post-receive then pins it",
    "lock-stale": "the lock pinned on {locked} no longer matches: a lock writer reviews "
    "the drift and pins the base branch (`git evidence lock {base_ref} --push origin`)",
    "lock-missing": f"{_NO_HISTORY}, so no lock is in force for it and the policy requires "
    "one: {accept}",
    "ledger-rewrite": "the freeze ledger is append-only: keep every line it had and "
    "append new lines only; CI appends them (`git evidence freeze add`)",
}

# What each field of a hint stands for: the text `git evidence rules` shows in its
# place, and what it means.
FIELDS: dict[str, tuple[str, str]] = {
    "commit": ("COMMIT", "the commit the finding names (short id)"),
    "base": (
        "BASE",
        "the commit the range is judged against: the old tip of a protected branch, "
        "else the branch's merge-base with [rules].base (a range with no base gets a "
        "hint without it)",
    ),
    "ref": ("REF", "the ref the push updates"),
    "locked": ("LOCKED", "the commit the lock in force is pinned on"),
    "path": ("PATH", "the freeze ledger ([ledger].path)"),
    "writers": ("WRITERS", "the writers [identities] lists for the change"),
    "role": ("an evidence writer (a ledger writer for the freeze ledger)", ""),
    "namespaces": ("NAMESPACES", "[rules].allow_namespaces"),
    "base_ref": ("[rules].base", ""),
    "accept": (
        "a reviewer ([identities].reviewers, by default the evidence writers) accepts "
        "the held change by pushing it, or a merge of it, to a protected branch",
        "",
    ),
}

# policy-error in a client hook: a committed policy file that does not parse.
CLIENT_POLICY_FIX = (
    "fix .git-evidence.toml and commit it alone (pre-commit lets that commit through "
    "once the file parses); the server validates it (policy-invalid)"
)

# lock-invalid for a note whose commit only the message names.
REPIN_NAMED = (
    "a lock writer re-pins the commit named above (`git evidence lock` with that commit "
    "and `--push origin`); a note is exactly one canonical record, as git evidence "
    "writes it (no trailing newline)"
)
HELD = "held for review before it reaches a protected branch"
# What the staged change is judged under in place of a commit id (pre-commit): it has
# no commit yet, and its findings name none.
STAGED = Oid("staged")


def fill(rule: RuleId, template: str, **fields: str | None) -> str:
    """``template`` with its fields filled. A rule whose hint names {base} gets its
    NO_BASE wording when the range has none: the hint never shows a placeholder."""
    if "{base}" in template and not fields.get("base"):
        template = NO_BASE[rule]
        if fields.get("creates") == "base":
            template = template.replace(_NO_HISTORY, _CREATES_BASE)
    return template.format_map({k: v for k, v in fields.items() if v is not None})


# The staged change (pre-commit): nothing is committed yet, so these hints say what to
# do with the index, and holds say how the change reaches a reviewer.
STAGED_HINTS: dict[RuleId, str] = {
    "mixed-commit": "take the evidence out of this commit (`git restore --staged -- "
    "{evidence}`) and commit it on its own; once committed, `git evidence split` makes a "
    "mixed commit two",
    "evidence-untrusted": "take it out of this commit (`git restore --staged -- "
    "{evidence}`) and leave it to {role} ({writers}); in a person's own clone, "
    "`git config evidence.trusted true`",
}
MAX_RESTORE = 8  # paths spelled out in a `git restore` command


# Client refusals a person of the right role lifts in their own clone, where the hook
# has no identity but `evidence.trusted`: evidence they may
# push, and holds they may accept.
LIFTED_BY_TRUST: frozenset[RuleId] = frozenset(
    {
        "evidence-untrusted",
        "mixed-range",
        "fixture-breach",
        "other-path",
        "added-test",
        "test-edit",
        "lock-missing",
        "lock-stale",
    }
)
TRUSTED_CLONE_FIX = (
    "in the own clone of an evidence writer (of a reviewer, for a hold), `git config "
    "evidence.trusted true` lifts this refusal here; the server still decides by who pushes"
)
