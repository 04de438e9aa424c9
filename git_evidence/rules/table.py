"""Changes → findings → decision. Pure functions of data: no git here.

Over 300 lines on purpose: the one rule table (text, hint, fields) and the
decisions that read it."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Final, Literal, NamedTuple

from git_evidence.core import paths
from git_evidence.core.oids import Oid
from git_evidence.core.path_globs import fold_path
from git_evidence.core.paths import EVIDENCE_CLASSES, Classifier, PathClass
from git_evidence.core.slots import Slotted

if TYPE_CHECKING:  # data types only: the rules import nothing that runs git
    from typing import TypedDict

    from git_evidence.core.errors import ErrorRule
    from git_evidence.gate.ranges import CommitDiff, UpdateFacts
    from git_evidence.ledger.entries import LedgerProblem
    from git_evidence.lock.check import LockFacts
    from git_evidence.lock.manifest import Drift
    from git_evidence.policy.identity import Identity
    from git_evidence.policy.schema import Decision, Policy

    class RangeFields(TypedDict):  # what ``_range`` gives a hint (no runtime class)
        base: str
        base_ref: str
        creates: str | None


# The decisions, in order of severity: the names of policy.Decision's values. The
# Literal lives with the policy, which sets three rules' decisions and could not import
# the rules back (rules.py types against the policy).
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


class Finding(NamedTuple):
    rule: RuleId | ErrorRule  # a rule of the table, or of an error that stopped it
    decision: Decision
    ref: str
    commit: Oid | None
    paths: dict[str, list[str]]
    message: str
    hint: str
    # Whether it counts toward the update's decision. A hold does not when a reviewer's
    # push accepts it (``accepted_by`` names them) or when it is on its way to review
    # (an update of a ref that is not protected); it keeps its decision `hold`.
    blocking: bool = True
    accepted_by: str | None = None


class CommitSummary(NamedTuple):
    """The classified content of one commit (or of the staged change), kept compact:
    a push of 20,000 commits holds 20,000 of these."""

    oid: Oid
    merge: bool
    by_class: tuple[tuple[PathClass, tuple[str, ...]], ...]
    classes: frozenset[PathClass]
    added_tests: tuple[str, ...] = ()
    changed_tests: tuple[str, ...] = ()
    # (status, old blob, new blob, path) of each change to the freeze ledger
    ledger: tuple[tuple[str, str, str, str], ...] = ()
    # what the commit sets: each evidence change's path, then its value_key (new mode
    # and object id), flat: a push of 15,000 commits holds some 60,000 of them
    evidence_values: tuple[str | bytes, ...] = ()
    # evidence paths a merge kept from an older copy
    kept: tuple[str, ...] = ()
    # (status, old blob, new blob, path) of each change to the retry quota,
    # append-only like the ledger
    quota: tuple[tuple[str, str, str, str], ...] = ()


def value_key(mode: str, oid: str) -> bytes:
    """A path's value (mode, object id) in a few bytes: the mode, the id in binary."""
    return mode.encode() + bytes.fromhex(oid)


def value_pairs(summary: CommitSummary) -> frozenset[tuple[str | bytes, str | bytes]]:
    """``(path, value_key)`` of each value the commit's own diff sets as evidence: a
    walk asking one commit about many paths (a crate move sets thousands) builds it once."""
    flat = summary.evidence_values
    return frozenset(zip(flat[0::2], flat[1::2], strict=True))


def sets_value(summary: CommitSummary, value: tuple[str, str, str]) -> bool:
    """Whether the commit's own diff sets ``(path, mode, object id)`` as evidence."""
    return sets_in(value_pairs(summary), value)


def sets_in(pairs: frozenset[tuple[str | bytes, str | bytes]], value: tuple[str, str, str]) -> bool:
    """``sets_value`` on a commit's ``value_pairs``."""
    path, mode, oid = value
    return (path, value_key(mode, oid)) in pairs


# Classes whose plain rows are read past their path (status, mode, blob ids).
_WATCHED: frozenset[PathClass] = EVIDENCE_CLASSES | {paths.TEST}
# Commits share a handful of class combinations: one frozenset object each.
_CLASS_SETS: dict[tuple[PathClass, ...], frozenset[PathClass]] = {}


def summarize(
    commit: CommitDiff, classifier: Classifier, ledger_path: str = "", quota_path: str = ""
) -> CommitSummary:
    """``ledger_path`` and ``quota_path`` (folded): changes to them keep their blob ids
    for the append-only checks.

    Plain rows come raw (``commit.rows``): each is looked up by its path's bytes, so a
    path the push names again costs one dict lookup, and only test and evidence rows
    have their row read further."""
    by_class: dict[PathClass, list[str]] = {}
    added: list[str] = []
    changed: list[str] = []
    ledger: list[tuple[str, str, str, str]] = []
    quota: list[tuple[str, str, str, str]] = []
    values: list[str | bytes] = []
    if commit.rows:
        known = classifier.plain_classes
        classify = classifier.classify_plain
        rows = iter(commit.rows)
        for meta, raw in zip(rows, rows, strict=True):
            path, klass = known.get(raw) or classify(raw)
            listed = by_class.get(klass)
            if listed is None:
                by_class[klass] = [path]
            else:
                listed.append(path)
            if klass in _WATCHED:
                # `:<old mode> <new mode> <old id> <new id> <status>`
                _, new_mode, old_oid, new_oid, letters = meta.decode().split(" ")
                status = letters[:1]
                if klass == paths.TEST:
                    (added if status == "A" else changed).append(path)
                    continue
                values += (path, value_key(new_mode, new_oid))
                if klass == paths.LEDGER:
                    folded = fold_path(path)
                    if folded == ledger_path:
                        ledger.append((status, old_oid, new_oid, path))
                    elif folded == quota_path:
                        quota.append((status, old_oid, new_oid, path))
    for change in commit.changes:
        klass = classifier.classify_change(change).klass
        by_class.setdefault(klass, []).append(change.path)
        if klass == paths.TEST:
            (added if change.status == "A" else changed).append(change.path)
        elif klass in EVIDENCE_CLASSES:
            values += (change.path, value_key(change.new_mode, change.object_ids()[1]))
            if klass == paths.LEDGER:
                folded = fold_path(change.path)
                if folded == ledger_path:
                    ledger.append((change.status, *change.object_ids(), change.path))
                elif folded == quota_path:
                    quota.append((change.status, *change.object_ids(), change.path))
    key = tuple(by_class)
    classes = _CLASS_SETS.get(key) or _CLASS_SETS.setdefault(key, frozenset(key))
    return CommitSummary(
        commit.oid,
        commit.merge,
        tuple([(k, tuple(v)) for k, v in by_class.items()]),
        classes,
        tuple(added),
        tuple(changed),
        tuple(ledger),
        tuple(values),
        quota=tuple(quota),
    )


def with_kept(summary: CommitSummary, kept: Iterable[tuple[PathClass, str]]) -> CommitSummary:
    """``summary`` judged as also changing ``kept`` (``(class, path)`` pairs): evidence
    a merge brought back from an older copy is a change that merge made."""
    by_class = {k: list(v) for k, v in summary.by_class}
    paths_kept = list(summary.kept)
    for klass, path in kept:
        if path not in by_class.setdefault(klass, []):
            by_class[klass].append(path)
        if path not in paths_kept:
            paths_kept.append(path)
    return summary._replace(
        by_class=tuple((k, tuple(v)) for k, v in by_class.items()),
        classes=frozenset(by_class),
        kept=tuple(paths_kept),
    )


class UpdateDecision(Slotted):
    __slots__ = ("facts", "findings", "judged")

    def __init__(self, facts: UpdateFacts, findings: list[Finding], judged: bool = False) -> None:
        self.facts = facts
        self.findings = findings
        self.judged = judged  # its commits were judged: nothing refused the ref itself

    @property
    def decision(self) -> Decision:
        return worst(f.decision for f in self.findings if f.blocking)


def worst(decisions: Iterable[Decision]) -> Decision:
    return max(decisions, key=SEVERITY.__getitem__, default=ALLOW)


def _finding(
    rule: RuleId,
    ref: str,
    *,
    commit: Oid | None = None,
    found: dict[str, list[str]] | None = None,
    message: str,
    decision: Decision | None = None,
    hint: str | None = None,
    **fields: str | None,
) -> Finding:
    default, template = RULES[rule]
    chosen = decision or default
    assert chosen is not None
    return Finding(
        rule,
        chosen,
        ref,
        commit,
        found or {},
        message,
        fill(rule, hint or template, ref=ref, commit=(commit or "")[:12], **fields),
        blocking=chosen != ALLOW,
    )


def fill(rule: RuleId, template: str, **fields: str | None) -> str:
    """``template`` with its fields filled. A rule whose hint names {base} gets its
    NO_BASE wording when the range has none: the hint never shows a placeholder."""
    if "{base}" in template and not fields.get("base"):
        template = NO_BASE[rule]
        if fields.get("creates") == "base":
            template = template.replace(_NO_HISTORY, _CREATES_BASE)
    return template.format_map({k: v for k, v in fields.items() if v is not None})


def creates_base(facts: UpdateFacts) -> bool:
    """Whether the update creates [rules].base itself, which does not exist yet (a first
    push): not a range ``check`` names, not a case variant of an existing base."""
    return facts.creates_base and facts.named_ref


def _range(facts: UpdateFacts, policy: Policy) -> RangeFields:
    """The fields of a hint that say where the update's range starts: its base (short;
    ``fill`` takes the NO_BASE wording without one), the base ref, and ``creates`` when
    the update creates the base itself."""
    return {
        "base": (facts.base or "")[:12],
        "base_ref": policy.base,
        "creates": "base" if creates_base(facts) else None,
    }


def _writers(names: Iterable[str], plural: str = "writers") -> str:
    listed = sorted(names)
    if listed:
        return ", ".join(listed)
    return f"the policy lists no {plural}: add one in [identities] with a reviewed policy change"


def _accept(policy: Policy, target: str) -> str:
    """How a person accepts a hold on its way to ``target``."""
    names = sorted(policy.review_names)
    if not names:
        return (
            "a reviewer accepts the held change by pushing it to "
            f"{target} ({_writers(names, 'reviewers')})"
        )
    return (
        f"a reviewer ({', '.join(names)}) accepts the held change by pushing it, or a "
        f"merge of it, to {target}"
    )


def hold_target(facts: UpdateFacts, policy: Policy) -> str:
    """The protected ref a held change must reach to be accepted there."""
    return facts.update.ref if facts.protected and facts.named_ref else policy.base


def proposal_ref(facts: UpdateFacts, policy: Policy) -> bool:
    """Whether an evidence-only change the pusher may not write is a proposal on this
    update's ref: a branch outside [rules].protected, pushed by name,
    unless [rules].proposals is false. Tags, other namespaces, protected refs and a
    range judged by hand (bound for the base) get none."""
    ref = facts.update.ref
    return (
        policy.proposals
        and facts.named_ref
        and not facts.protected
        and ref.startswith("refs/heads/")
    )


def holds_block(facts: UpdateFacts) -> bool:
    """A hold blocks an update of a protected ref, and a range judged by hand (`check`,
    `verify`), which asks whether the range may reach the base; on any other ref it
    is reported for review and does not block."""
    return facts.protected or not facts.named_ref


def settle_hold(finding: Finding, policy: Policy, who: Identity, *, bound: bool) -> Finding:
    """A hold as it stands for this pusher: ``bound`` (for a
    protected ref) and pushed by a reviewer, it is accepted; bound for nothing
    protected, it is reported on its way to review; else it blocks."""
    if finding.decision != HOLD:
        return finding
    if not bound:
        return finding._replace(message=f"{finding.message}: {HELD}", blocking=False)
    if who.reviewer(policy):
        return finding._replace(blocking=False, accepted_by=who.accepter)
    return finding


def decide_ref(facts: UpdateFacts, policy: Policy, who: Identity) -> list[Finding]:
    """Findings that follow from the ref and its history shape alone."""
    update, ref = facts.update, facts.update.ref
    if not facts.named_ref:
        return []
    if ref.startswith("refs/replace/"):
        return [_finding("replace-ref", ref, message="replace refs are refused")]
    if facts.notes and ref.casefold() == policy.judge.notes_ref.casefold():
        return decide_verdict_ref(facts, policy, who)
    if facts.notes:
        if who.lock_writer(policy):
            return []
        return [
            _finding(
                "notes-forge",
                ref,
                message=f"{who.describe()} is not a lock writer",
                writers=_writers(policy.lock_writers, "lock writers"),
            )
        ]
    if not any(ref.startswith(space) for space in policy.allow_namespaces):
        return [
            _finding(
                "ref-namespace",
                ref,
                message="ref outside the allowed namespaces",
                namespaces=", ".join(policy.allow_namespaces),
            )
        ]
    if update.is_delete:
        if facts.protected:
            return [_finding("protected-delete", ref, message="deleting a protected branch")]
        return []
    if facts.commit is None:
        return [
            _finding(
                "not-a-commit",
                ref,
                commit=update.new,
                message=f"{update.new[:12]} does not resolve to a commit",
            )
        ]
    if facts.protected and facts.fast_forward is False:
        return [
            _finding(
                "non-fast-forward",
                ref,
                commit=facts.commit,
                message=f"{update.old[:12]} is not an ancestor of {facts.commit[:12]}",
            )
        ]
    return []


def decide_verdict_ref(facts: UpdateFacts, policy: Policy, who: Identity) -> list[Finding]:
    """The verdict notes ref is pushed by verdict writers only."""
    if who.verdict_writer(policy):
        return []
    ref = facts.update.ref
    return [
        Finding(
            "notes-forge",
            REJECT,
            ref,
            None,
            {},
            f"{who.describe()} is not a verdict writer",
            f"only verdict writers ({_writers(policy.verdict_writer_names)}) update {ref}; "
            "push without it (`git push <remote> <branch>`, not `--all`/`--mirror`)",
        )
    ]


def decide_verdict_notes(facts: UpdateFacts, problems: Sequence[str]) -> list[Finding]:
    """A verdict writer's push of the verdict notes ref: every note must be a verdict."""
    return [_finding("verdict-invalid", facts.update.ref, message=problem) for problem in problems]


def decide_update(
    facts: UpdateFacts,
    commits: Sequence[CommitSummary],
    policy: Policy,
    who: Identity,
    *,
    bound: bool | None = None,
    proposal: bool | None = None,
) -> UpdateDecision:
    """``bound``: whether the change is on its way into a protected ref, where a hold
    blocks unless a reviewer pushes it (default: holds_block). ``proposal``: whether
    evidence the pusher may not write is a proposal there (default: proposal_ref)."""
    ref = facts.update.ref
    findings = decide_ref(facts, policy, who)
    if findings or facts.revlist is None:
        return UpdateDecision(facts, findings)
    outcome = UpdateDecision(facts, findings, judged=True)
    present: frozenset[PathClass] = frozenset().union(*(commit.classes for commit in commits))
    added: dict[str, None] = {}
    changed: dict[str, None] = {}
    kept: dict[str, None] = {}
    where = _range(facts, policy)
    for commit in commits:
        if _mixes(commit.classes):
            findings.append(
                _finding(
                    "mixed-commit",
                    ref,
                    commit=commit.oid,
                    found=_side_by_side(dict(commit.by_class)),
                    message=mix_message(commit),
                    **where,
                )
            )
        if commit.added_tests:
            added.update(dict.fromkeys(commit.added_tests))
        if commit.changed_tests:
            changed.update(dict.fromkeys(commit.changed_tests))
        if commit.kept:
            kept.update(dict.fromkeys(commit.kept))
    union = _union(commits, _listed_classes(present, bool(findings), policy, who))
    evidence = present & EVIDENCE_CLASSES
    # The split trick: no single commit mixes, the range does. (A range whose mix is
    # one mixed commit already has its finding.)
    if (
        evidence
        and present & NON_EVIDENCE_SIDE
        and not findings
        and not who.evidence_writer(policy)
    ):
        findings.append(
            _finding(
                "mixed-range",
                ref,
                found=_side_by_side(_lists(union)),
                message=f"the {len(commits)} commits of this range change evidence and "
                "product between them",
                **where,
            )
        )
    untrusted = {k for k in evidence if not _may_write(k, union.get(k, {}), policy, who)}
    proposing = proposal_ref(facts, policy) if proposal is None else proposal
    if untrusted and proposing and not findings and not present & NON_EVIDENCE_SIDE:
        ledger_only = untrusted == {paths.LEDGER}
        role = "a ledger writer" if ledger_only else "an evidence writer"
        findings.append(
            _finding(
                "evidence-proposed",
                ref,
                found={k: list(union[k]) for k in sorted(untrusted)},
                message=f"evidence proposed by {who.describe()}: {role} must bring it to "
                f"{policy.base}",
                **where,
                role=role,
                writers=_writers(
                    policy.ledger_writers if ledger_only else policy.evidence_writers,
                    "ledger writers" if ledger_only else "evidence writers",
                ),
            )
        )
    elif untrusted:
        ledger_only = untrusted == {paths.LEDGER}
        findings.append(
            _finding(
                "evidence-untrusted",
                ref,
                found={k: list(union[k]) for k in sorted(untrusted)},
                message=f"{who.describe()} may not change evidence"
                + (
                    f" (a merge brings back an older copy of {len(kept)} evidence path(s))"
                    if kept
                    else ""
                ),
                **where,
                role="a ledger writer" if ledger_only else "an evidence writer",
                writers=_writers(
                    policy.ledger_writers if ledger_only else policy.evidence_writers,
                    "ledger writers" if ledger_only else "evidence writers",
                ),
            )
        )
    bound = holds_block(facts) if bound is None else bound
    accept = _accept(policy, hold_target(facts, policy))
    reviewed: tuple[tuple[RuleId, Decision, dict[str, None], str], ...] = (
        ("other-path", policy.other_path, union.get(paths.OTHER, {}), "paths in no class"),
        ("added-test", policy.added_test, added, "new test files"),
        ("test-edit", policy.test_edit, changed, "edited or deleted test files"),
    )
    for rule, decision, listed, what in reviewed:
        if listed and decision != ALLOW:
            klass = paths.OTHER if rule == "other-path" else paths.TEST
            held = _finding(
                rule,
                ref,
                found={klass: list(listed)},
                message=what,
                decision=decision,
                accept=accept,
            )
            findings.append(settle_hold(held, policy, who, bound=bound))
    return outcome


def _mixes(classes: frozenset[PathClass]) -> bool:
    """Evidence beside a non-neutral non-evidence class (one answer per class set:
    commits share a handful of them)."""
    hit = _MIXES.get(classes)
    if hit is None:
        hit = _MIXES[classes] = bool(classes & EVIDENCE_CLASSES and classes & NON_EVIDENCE_SIDE)
    return hit


_MIXES: dict[frozenset[PathClass], bool] = {}


def _listed_classes(
    present: frozenset[PathClass], mixed: bool, policy: Policy, who: Identity
) -> frozenset[PathClass]:
    """The classes whose paths over the range a finding may list: all of a mix when
    the split trick may fire (``mixed-range``), the evidence unless the pusher may
    write it all, and the paths in no class when they are not allowed. A push of
    20,000 product commits then collects no path at all."""
    evidence = present & EVIDENCE_CLASSES
    wanted: set[PathClass] = set()
    if evidence and not mixed and not who.evidence_writer(policy):
        wanted |= EVIDENCE_CLASSES | NON_EVIDENCE_SIDE
    if not (who.evidence_writer(policy) and who.ledger_writer(policy)):
        wanted |= evidence
    if policy.other_path != ALLOW:
        wanted.add(paths.OTHER)
    return present & wanted


def _union(
    commits: Sequence[CommitSummary], wanted: frozenset[PathClass]
) -> dict[PathClass, dict[str, None]]:
    """The paths of the ``wanted`` classes over ``commits``, each once, in order."""
    union: dict[PathClass, dict[str, None]] = {}
    if not wanted:
        return union
    for commit in commits:
        if commit.classes & wanted:
            for klass, found in commit.by_class:
                if klass in wanted:
                    union.setdefault(klass, {}).update(dict.fromkeys(found))
    return union


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


def decide_staged(
    facts: UpdateFacts,
    summary: CommitSummary,
    policy: Policy,
    who: Identity,
    *,
    protected: bool,
    proposal: bool = False,
) -> UpdateDecision:
    """The staged change judged as one commit of the current branch: a hold blocks only
    when that branch is ``protected`` (and this clone is not trusted), as on the server;
    evidence alone on a branch that takes ``proposal``s is one."""
    outcome = decide_update(facts, [summary], policy, who, bound=protected, proposal=proposal)
    target = facts.update.ref if protected else policy.base
    outcome.findings = [_staged(f, policy, target) for f in outcome.findings]
    return outcome


def _staged(finding: Finding, policy: Policy, target: str) -> Finding:
    hint = finding.hint
    if finding.rule in STAGED_HINTS:
        ledger_only = set(finding.paths) == {paths.LEDGER}
        evidence = [p for k, found in finding.paths.items() if k in EVIDENCE_CLASSES for p in found]
        hint = STAGED_HINTS[finding.rule].format(
            evidence=restore_args(evidence),
            role="a ledger writer" if ledger_only else "an evidence writer",
            writers=_writers(
                policy.ledger_writers if ledger_only else policy.evidence_writers,
                "ledger writers" if ledger_only else "evidence writers",
            ),
        )
    elif finding.decision == HOLD and finding.accepted_by is None and finding.rule in RULES:
        reviewers = _writers(policy.review_names, "reviewers")
        if finding.blocking:
            accept = (
                "commit them on a branch of their own (`git switch -c for-review` keeps "
                f"what is staged) for a reviewer to accept ({reviewers}); in a person's "
                "own clone, `git config evidence.trusted true`"
            )
        else:
            accept = (
                f"a reviewer ({reviewers}) accepts the held change when this branch is "
                f"merged into {target}"
            )
        hint = fill(finding.rule, RULES[finding.rule][1], accept=accept)
    return finding._replace(commit=None, hint=hint)


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


def liftable_by_trust(finding: Finding) -> Finding:
    """A client hook's blocking finding that trust would lift, its hint naming the
    setting that lifts it."""
    if not finding.blocking or finding.rule not in LIFTED_BY_TRUST:
        return finding
    return finding._replace(hint=f"{finding.hint}; {TRUSTED_CLONE_FIX}")


def restore_args(found: Sequence[str]) -> str:
    """Paths for a `git restore` command line, quoted for a shell; their directories
    when there are many."""
    listed = sorted(set(found))
    if len(listed) > MAX_RESTORE:
        listed = sorted({p.rpartition("/")[0] or p for p in listed})
    if len(listed) > MAX_RESTORE:
        return "PATH... (each evidence path listed above)"
    return " ".join(shlex.quote(p) for p in listed)


# How a mixed-commit message names what sits beside the evidence.
_MIXED_WITH: tuple[tuple[PathClass, str], ...] = (
    (paths.PRODUCT, "product"),
    (paths.TEST, "test code"),
    (paths.OTHER, "other paths"),
)
_EVIDENCE_ORDER: tuple[PathClass, ...] = (paths.FIXTURE, paths.ORACLE, paths.LEDGER, paths.POLICY)


def mix_message(commit: CommitSummary) -> str:
    """What a mixed commit mixes: "commit mixes evidence (fixture) with product and
    test code"."""
    classes = commit.classes
    others = [name for klass, name in _MIXED_WITH if klass in classes]
    beside = others[0] if len(others) == 1 else f"{', '.join(others[:-1])} and {others[-1]}"
    if commit.kept:
        kept = set(commit.kept)
        brought = [
            k for k in _EVIDENCE_ORDER if any(p in kept for p in dict(commit.by_class).get(k, ()))
        ]
        return (
            f"merge brings back an older copy of evidence ({', '.join(brought)}) and "
            f"mixes it with {beside}"
        )
    evidence = ", ".join(k for k in _EVIDENCE_ORDER if k in classes)
    subject = "the staged change" if commit.oid == STAGED else "merge" if commit.merge else "commit"
    return f"{subject} mixes evidence ({evidence}) with {beside}"


def _may_write(klass: PathClass, changed: Iterable[str], policy: Policy, who: Identity) -> bool:
    if klass != paths.LEDGER:
        return who.evidence_writer(policy)
    if who.ledger_writer(policy):
        return True
    # The retry quota sits in the ledger's class but takes grants from evidence
    # writers; its own check holds each appended line to its writer (quota.py).
    quota = fold_path(policy.quota_path)
    listed = list(changed)
    return (
        who.evidence_writer(policy) and bool(listed) and all(fold_path(p) == quota for p in listed)
    )


def _lists(union: dict[PathClass, dict[str, None]]) -> dict[PathClass, list[str]]:
    return {k: list(v) for k, v in union.items()}


def _side_by_side(by_class: Mapping[PathClass, Sequence[str]]) -> dict[str, list[str]]:
    """The paths that make a mix: evidence and non-neutral non-evidence classes."""
    return {k: sorted(set(by_class[k])) for k in sorted(by_class) if k in _SIDE_BY_SIDE}


_SIDE_BY_SIDE = EVIDENCE_CLASSES | NON_EVIDENCE_SIDE


def error_finding(rule: ErrorRule, message: str, hint: str) -> Finding:
    return Finding(rule, REJECT, "", None, {}, message, hint)


def decide_policy_file(facts: UpdateFacts, problem: str | None, path: str) -> list[Finding]:
    """A protected ref must be left with a policy file that parses and validates."""
    if problem is None:
        return []
    return [
        _finding(
            "policy-invalid",
            facts.update.ref,
            commit=facts.commit,
            found={paths.POLICY: [path]},
            message=problem,
        )
    ]


def _literal(text: str) -> str:
    """``text`` inside a hint, which is a template: its braces doubled."""
    return text.replace("{", "{{").replace("}", "}}")


def decide_labels_file(facts: UpdateFacts, problem: str | None, path: str) -> list[Finding]:
    """A protected ref must be left with a labels file that parses: every
    judgement and every ``pytest --evidence`` run reads it from there."""
    if problem is None:
        return []
    shown = _literal(path)
    return [
        _finding(
            "policy-invalid",
            facts.update.ref,
            commit=facts.commit,
            found={paths.POLICY: [path]},
            message=problem,
            hint=f"{{ref}} would be left with a labels file that does not parse (every "
            f"judgement and `pytest --evidence` run would stop on it): correct {shown} at "
            "the line named (`git evidence labels check --rev {commit}` lists every "
            "problem) and push again",
        )
    ]


def decide_staged_policy(facts: UpdateFacts, problem: str | None, path: str) -> list[Finding]:
    """A staged policy file must parse: committed, it would refuse every later commit
    and push that reads it."""
    if problem is None:
        return []
    return [
        _finding(
            "policy-invalid",
            facts.update.ref,
            found={paths.POLICY: [path]},
            message=problem,
            hint=f"correct {path} at the line named and stage it again (`git add -- {path}`); "
            "committed, a policy that does not parse refuses every later commit",
        )
    ]


def decide_staged_labels(facts: UpdateFacts, problem: str | None, path: str) -> list[Finding]:
    """A staged labels file must parse: committed, it would stop every judgement and
    every ``pytest --evidence`` run that reads it, and the server refuses it on a
    protected ref."""
    if problem is None:
        return []
    shown = _literal(path)
    return [
        _finding(
            "policy-invalid",
            facts.update.ref,
            found={paths.POLICY: [path]},
            message=problem,
            hint=f"correct {shown} at the line named and stage it again (`git add -- "
            f"{shlex.quote(shown)}`); committed, labels that do not parse stop every judgement and "
            "`pytest --evidence` run",
        )
    ]


def decide_lock(
    facts: UpdateFacts, lock: LockFacts, policy: Policy, who: Identity, *, proposed: bool = False
) -> list[Finding]:
    """Findings from the lock roots and the lock in force at the update's base. A stale
    lock is a notice unless the policy requires a lock: the base
    is accepted history whatever its pin says, so it holds nothing by itself. A
    ``proposed`` range (evidence-proposed) changes the locked bytes as its proposal:
    that is no breach until an evidence writer brings it to a protected ref."""
    ref = facts.update.ref
    where = _range(facts, policy)
    base = where["base"]
    if lock.invalid is not None:
        locked = lock.found.commit[:12] if lock.found else base
        return [
            _finding(
                "lock-invalid",
                ref,
                commit=lock.found.commit if lock.found else None,
                message=lock.invalid,
                locked=locked,
                hint=None if locked else REPIN_NAMED,
            )
        ]
    findings: list[Finding] = []
    bound = holds_block(facts)
    accept = _accept(policy, hold_target(facts, policy))
    if lock.found is None and policy.lock_required:
        missing = _finding(
            "lock-missing",
            ref,
            message=f"no lock in force at {base}" if base else "no base: nothing is pinned",
            **where,
            accept=accept,
        )
        findings.append(settle_hold(missing, policy, who, bound=bound))
    if lock.found is not None and lock.stale:
        locked = lock.found.commit[:12]
        notice = "" if policy.lock_required else " (a notice: it holds nothing by itself)"
        stale = _finding(
            "lock-stale",
            ref,
            commit=facts.base,
            found=_drift_paths(lock.stale),
            message=f"the base differs from the lock pinned on {locked} in "
            f"{len(lock.stale)} file(s){notice}",
            decision=HOLD if policy.lock_required else ALLOW,
            **where,
            locked=locked,
            accept=accept,
        )
        findings.append(settle_hold(stale, policy, who, bound=bound))
    if lock.breach and not who.evidence_writer(policy) and not proposed:
        findings.append(
            _finding(
                "fixture-breach",
                ref,
                commit=facts.commit,
                found=_drift_paths(lock.breach),
                message=f"{len(lock.breach)} file(s) under the lock roots differ from "
                + (f"the base {base}" if base else "the lock in force"),
                **where,
            )
        )
    return findings


def _drift_paths(drift: Sequence[Drift]) -> dict[str, list[str]]:
    """Drift by kind (``modified``, ``added``, …), each line the path and what changed:
    the kind is said once, by the line's label."""
    by_kind: dict[str, list[str]] = {}
    for item in drift:
        by_kind.setdefault(item.kind, []).append(item.detail())
    return by_kind


def decide_notes(facts: UpdateFacts, problems: Sequence[str]) -> list[Finding]:
    """A lock writer's push of the notes ref: every note it adds must be a lock."""
    return [
        _finding("lock-invalid", facts.update.ref, message=problem, hint=REPIN_NAMED)
        for problem in problems
    ]


def decide_ledger(
    facts: UpdateFacts,
    problems: Sequence[tuple[Oid | None, LedgerProblem]],
    ledger_path: str,
    hints: Mapping[RuleId, tuple[str, str]] | None = None,
) -> list[Finding]:
    """Findings for an append-only file's changes (the freeze ledger; the retry quota
    with its own ``hints``, with a base and without): ``(commit or None for the range,
    problem)`` pairs from ledger.check_change or quota.check_change."""
    base = (facts.base or "")[:12]
    findings = []
    for commit, problem in problems:
        where = f"line {problem.line}: " if problem.line else ""
        hint = None if hints is None else hints[problem.rule][0 if base else 1]
        findings.append(
            _finding(
                problem.rule,
                facts.update.ref,
                commit=commit,
                found={paths.LEDGER: [ledger_path]},
                message=f"{ledger_path}: {where}{problem.message}",
                hint=hint,
                base=base,
                path=ledger_path,
            )
        )
    return findings
