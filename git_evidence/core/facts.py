"""The facts a push is decided on: immutable records, built once by the modules that
read git (``gate``, ``lock``, ``ledger``) and only read by the rules.

A ref update (``RefUpdate``), one commit's diff as the stream parses it
(``CommitDiff``), what git says about an update's range (``UpdateFacts``), one commit's
classified content (``CommitSummary``), what the lock says (``LockFacts``, ``Drift``
between two manifests' ``Entry``s), and the two bundles the one decide pass reads:
``UpdateBundle`` (everything gathered about one update) and ``PushFacts`` (every update
of one push, or the staged change). Pure and a leaf beside ``paths``: the gathering side
and the deciding side both import it, and neither imports the other's modules for a
type. Hot path: a push holds one ``CommitSummary`` per commit and one bundle per update,
nothing more."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

from git_evidence.core.oids import Oid, is_zero
from git_evidence.core.paths import GITLINK_MODE, Change, PathClass
from git_evidence.core.slots import Frozen

if TYPE_CHECKING:
    from typing import Any, Literal, TypeAlias

    # (commit, problem) of an append-only file's change; None: the range as a whole
    AppendProblems: TypeAlias = Sequence[tuple[Oid | None, "LedgerProblem"]]
    FileKind: TypeAlias = Literal["policy", "labels"]
    # Who gathered the facts: the decide pass words a few findings for it.
    EntryPoint: TypeAlias = Literal["pre-receive", "pre-push", "pre-commit", "check"]


class RefUpdate(NamedTuple):
    old: Oid
    new: Oid
    ref: str

    @property
    def is_delete(self) -> bool:
        return is_zero(self.new)

    @property
    def is_create(self) -> bool:
        return is_zero(self.old)


class CommitDiff(NamedTuple):
    oid: Oid
    merge: bool
    changes: tuple[Change, ...]
    # With ``plain_rows``: the rows of one parent and no symlink or gitlink, raw and
    # flat (``meta, path, meta, path, …``). They live until the commit is summarized;
    # the summary classifies each distinct path once per push, by its bytes.
    rows: Sequence[bytes] = ()


class UpdateFacts(Frozen):
    """What git says about one ref update, its range listed and settled: made once from
    the plan ``ranges.py`` fills (``settle_plans``); the rules read it."""

    update: RefUpdate
    protected: bool
    notes: bool
    commit: Oid | None = None  # `new` peeled to a commit
    fast_forward: bool | None = None
    base: Oid | None = None
    revlist: tuple[str, ...] | None = None  # rev-list arguments for the range; None: not judged
    # rev-list's lines for the range: commit ids, and with `--boundary` the boundary
    # commits as `-<oid>`; ``commits`` are its commit ids alone
    listed: Sequence[str] = ()
    commits: Sequence[Oid] = ()
    named_ref: bool = True  # False for `check` ranges: no ref-name rules
    # the update creates [rules].base itself, which does not exist here (a first push)
    creates_base: bool = False


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


class Entry(NamedTuple):
    """One file of a manifest. A gitlink has only ``mode`` and ``blob`` (the commit)."""

    mode: str
    blob: str  # the blob id (a gitlink: its commit); "" when hashed from disk alone
    size: int | None = None
    sha256: str | None = None
    lfs: str | None = None  # "sha256:<hex> <size>" when the blob is an LFS pointer

    def as_json(self) -> dict[str, Any]:
        if self.mode == GITLINK_MODE:
            return {"mode": self.mode, "commit": self.blob}
        doc: dict[str, Any] = {
            "mode": self.mode,
            "blob": self.blob,
            "size": self.size,
            "sha256": self.sha256,
        }
        if self.lfs is not None:
            oid, _, size = self.lfs.partition(" ")
            doc["lfs"] = {"oid": oid, "size": int(size)}
        return doc

    @property
    def digest(self) -> str:
        if self.mode == GITLINK_MODE:
            return f"commit:{self.blob}"
        return f"sha256:{self.sha256}"


class Drift(NamedTuple):
    path: str
    kind: str  # added | removed | modified | mode | lfs
    old: Entry | None
    new: Entry | None

    def describe(self) -> str:
        """``PATH: KIND (OLD -> NEW)``: the drift in one phrase."""
        if self.kind == "mode":
            return f"{self.path}: mode {self.change()[1:-1]}"
        return f"{self.path}: {self.kind} {self.change()}"

    def change(self) -> str:
        """``(OLD -> NEW)``: digests, or modes for a mode change."""
        if self.kind == "mode":
            return f"({self.old.mode if self.old else '-'} -> {self.new.mode if self.new else '-'})"
        # 12 hex digits name a file's bytes well enough to compare by eye, and keep a
        # drift line inside 80 columns under a host's prefix
        old = self.old.digest.removeprefix("sha256:")[:12] if self.old else "-"
        new = self.new.digest.removeprefix("sha256:")[:12] if self.new else "-"
        return f"({old} -> {new})"


class LockRef(NamedTuple):
    commit: Oid  # the commit the note is attached to
    blob: Oid  # the note blob


class LockFacts(Frozen):
    """What the lock says about one ref update (lock/check.py reads it from git)."""

    found: LockRef | None = None
    invalid: str | None = None
    breach: Sequence[Drift] | None = None  # new vs the base's own manifest
    stale: Sequence[Drift] | None = None  # base vs the lock in force
    digest: str | None = None


class FileProblem(Frozen):
    """A policy or labels file that does not parse, where it is left (a tip's, or the
    index's) and why."""

    kind: FileKind
    path: str
    problem: str


class UpdateBundle(Frozen):
    """Everything gathered about one update, for the decide pass: its facts, its
    commits' summaries (a merge that kept an older copy of evidence charged with it),
    the lock, the ledger and quota problems, the files the tip leaves that do not parse,
    and the problems of the notes it pushes."""

    facts: UpdateFacts
    commits: Sequence[CommitSummary] = ()
    lock: LockFacts | None = None  # None: the lock was not asked (nothing judged)
    ledger: AppendProblems = ()
    quota: AppendProblems = ()
    files: Sequence[FileProblem] = ()
    notes: Sequence[str] = ()  # a lock writer's notes that are no locks of their commit
    verdicts: Sequence[str] = ()  # a verdict writer's notes that are no verdicts
    policy_changed: bool = False  # a protected ref whose policy file the update changes


class PushFacts(Frozen):
    """Every update of one push (or range, or the staged change) as gathered, and who
    gathered them (``entry``): the decide pass words a few findings for it."""

    updates: Sequence[UpdateBundle]
    entry: EntryPoint = "pre-receive"
    # pre-receive, when an update changes a protected ref's policy file: why the
    # server could not read its policy once the push is applied
    after_push: FileProblem | None = None
    # pre-commit: the branch the staged change is on is protected, and evidence alone
    # is a proposal there
    staged_protected: bool = False
    staged_proposal: bool = False


class RefView(NamedTuple):
    """The refs an update is judged against: the server's current refs, or on a client
    what it knows of the remote's (its remote-tracking refs)."""

    protected: Mapping[str, Oid]  # protected ref → current oid (existing ones only)
    base: Oid | None  # current oid of the base ref
    notes: bool = False  # the lock notes ref exists here


class LedgerProblem(NamedTuple):
    """What is wrong with an append-only ledger (the freeze ledger, the retry quota): the
    rule it breaks, the line (None: the file as a whole), why."""

    # rules.RuleId's two ledger rules (the ledger cannot import the rules, which type
    # against it)
    rule: Literal["ledger-rewrite", "ledger-entry"]
    line: int | None
    message: str
