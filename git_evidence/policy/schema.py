"""The policy as a value: ``Policy``, every key's default, the three decisions a rule
may take, the tables and keys a policy file may hold, and the matching of protected
refs. Pure.

What every reader of the policy imports; reading a file into one (TOML, validation,
errors naming file, key and line) is parsing.py's. The policy is read from the base
revision (or a sealed file named by ``git config evidence.policyFile``), never from the
revision under judgement."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Final, Literal, NamedTuple

from git_evidence.core import paths
from git_evidence.core.globs import ref_glob_regex
from git_evidence.core.paths import Classifier, PathClass
from git_evidence.policy.properties import JudgeConfig

# The records (the digest) are imported where they are used: the agent's hook, which
# classifies and never digests, starts without them.

POLICY_FILE = ".git-evidence.toml"
# A rule's decision, in order of severity: what a finding decides
# (rules.table.ALLOW, HOLD, REJECT) and what [rules] sets for other_path, added_test and
# test_edit. Defined here, where the policy reads it: the rules type against the policy.
Decision = Literal["allow", "hold", "reject"]
# Where the policy in force came from (``plumbing/in_force.py`` says which, and only it
# sets it): a draft tried with ``--policy FILE``; the file sealed outside the repository
# (``evidence.policyFile``); the agent guard's pinned copy; a commit's file; the
# built-in defaults (no file where it was read).
Origin = Literal["draft", "sealed", "pinned", "base", "default"]
ORIGINS: Final[tuple[Origin, ...]] = ("draft", "sealed", "pinned", "base", "default")
DECISIONS: Final[tuple[Decision, ...]] = ("allow", "hold", "reject")

DEFAULT_PATHS: Mapping[PathClass, tuple[str, ...]] = MappingProxyType(
    {
        paths.PRODUCT: ("src/**",),
        paths.FIXTURE: ("tests/fixtures/**", "tests/goldens/**", "testdata/**"),
        paths.ORACLE: (
            "tests/properties/**",
            "tests/oracles/**",
            "**/*.snap",
            "**/__snapshots__/**",
        ),
        paths.LEDGER: ("tests/freeze.jsonl", "flake_freeze.json", "tests/freezes/**"),
        paths.POLICY: (),
        paths.TEST: ("tests/**",),
        paths.NEUTRAL: ("docs/**", "README*", "CHANGELOG*", "LICENSE*"),
    }
)  # read-only: every default Policy shares it
# Always policy, whatever the file says: the gate's own file and what changes the
# bytes tests read (attributes, submodules, LFS).
BUILTIN_POLICY_GLOBS = (POLICY_FILE, ".gitattributes", "/.gitmodules", "/.lfsconfig")
MAX_WINDOW_HOURS = 8760  # a year
MAX_TIME_BUDGET_S = 3600


def ref_matcher(globs: Sequence[str]) -> re.Pattern[str]:
    """One regex for ref-name globs, matched case-folded: on a server whose file
    system folds case, ``refs/heads/MAIN`` is the loose ref file of ``refs/heads/main``."""
    alternatives = [f"(?:{ref_glob_regex(g.casefold())})" for g in globs]
    return re.compile("|".join(alternatives) or "(?!)")


@lru_cache(maxsize=16)
def _protected_matcher(globs: tuple[str, ...]) -> re.Pattern[str]:
    return ref_matcher(globs)


_KNOWN_DIGESTS: dict[int, tuple[Policy, str]] = {}


def knows_digest(policy: Policy, digest: str) -> None:
    """``policy.digest`` is ``digest``, as the policy cache recorded it when the blob
    was parsed: the report's digest then needs neither hashing nor JSON. Kept with
    the policy itself, so that a new policy at the same address is never taken for
    it; a changed copy (``_replace``) computes its own."""
    _KNOWN_DIGESTS[id(policy)] = (policy, digest)


class Policy(NamedTuple):
    paths: Mapping[PathClass, tuple[str, ...]] = DEFAULT_PATHS
    other_path: Decision = "hold"
    added_test: Decision = "hold"
    test_edit: Decision = "hold"
    protected: tuple[str, ...] = ("refs/heads/main",)
    base: str = "refs/heads/main"
    allow_namespaces: tuple[str, ...] = ("refs/heads/", "refs/tags/")
    evidence_writers: frozenset[str] = frozenset()
    ledger_writers: frozenset[str] = frozenset()
    lock_writers: frozenset[str] = frozenset()
    # Who accepts a hold by pushing; None: the evidence writers.
    reviewers: frozenset[str] | None = None
    lock_roots: tuple[str, ...] = (
        "tests/fixtures",
        "tests/goldens",
        "testdata",
        "tests/properties",
    )
    lock_exclude: tuple[str, ...] = ("**/__pycache__/**", "**/*.pyc", "**/.*.sw?", "**/.DS_Store")
    notes_ref: str = "refs/notes/evidence"
    lock_required: bool = False
    ledger_path: str = "tests/freeze.jsonl"
    max_window_hours: int = 72
    labels_path: str = "tests/evidence-labels.tsv"  # [labels]
    quota_path: str = "tests/retry-quota.jsonl"
    retries: int = 2
    time_budget_s: float = 4.5  # under GitHub Enterprise Server's shared 5 s
    # An evidence-only change to a branch outside [rules].protected, by a pusher who may
    # not write evidence, is allowed as a proposal (rule evidence-proposed); false: refused.
    proposals: bool = True
    source: str = "built-in defaults"
    origin: Origin = "default"  # where it came from; not part of the digest
    judge: JudgeConfig = JudgeConfig()
    verdict_writers: frozenset[str] | None = None  # None: the lock writers

    @property
    def verdict_writer_names(self) -> frozenset[str]:
        return self.lock_writers if self.verdict_writers is None else self.verdict_writers

    @property
    def review_names(self) -> frozenset[str]:
        """The reviewers in force: ``[identities].reviewers``, else the evidence writers."""
        return self.evidence_writers if self.reviewers is None else self.reviewers

    def effective_globs(self) -> dict[PathClass, tuple[str, ...]]:
        """The globs classification uses: the file's, plus the built-in policy globs,
        the ledger path and the labels and quota paths, which no policy can drop.

        The labels file is policy (evidence writers change it). The retry quota is
        append-only like the freeze ledger, so it is in the ledger's class: the same
        prefix rule at push, and ledger writers (CI) append spends to it; grants come
        from evidence writers, which ``rules.range_rules.evidence_writes`` lets through
        for this one path and ``quota.check_change`` then holds to each line's kind."""
        globs = {k: tuple(v) for k, v in self.paths.items()}
        globs[paths.POLICY] = (*BUILTIN_POLICY_GLOBS, *globs.get(paths.POLICY, ()))
        files: tuple[tuple[PathClass, str], ...] = (
            (paths.LEDGER, self.ledger_path),
            (paths.LEDGER, self.quota_path),
            (paths.POLICY, self.labels_path),
        )
        for klass, path in files:
            if "/" + path not in globs.get(klass, ()):
                globs[klass] = (*globs.get(klass, ()), "/" + path)
        return globs

    def classifier(self) -> Classifier:
        # The built-in policy globs, the labels file, the ledger and the retry quota are
        # forced: matched before the class's own globs, so no negation takes them back.
        forced: dict[PathClass, tuple[str, ...]] = {
            paths.POLICY: (*BUILTIN_POLICY_GLOBS, "/" + self.labels_path),
            paths.LEDGER: ("/" + self.ledger_path, "/" + self.quota_path),
        }
        return Classifier(self.paths, extra_roots=self.lock_roots, forced=forced)

    def is_protected(self, ref: str) -> bool:
        """Whether ``ref`` is protected: ``[rules].protected`` entries are ref names or
        globs over them (``*`` within a component, ``**`` across), case-insensitive.
        Every place that asks goes through here."""
        return _protected_matcher(self.protected).fullmatch(ref.casefold()) is not None

    def as_dict(self) -> dict[str, Any]:
        return {
            "paths": {k: list(v) for k, v in self.effective_globs().items()},
            "rules": {
                "other_path": self.other_path,
                "added_test": self.added_test,
                "test_edit": self.test_edit,
                "protected": list(self.protected),
                "base": self.base,
                "allow_namespaces": list(self.allow_namespaces),
                "time_budget_s": self.time_budget_s,
                # only when refused, so the digest of every other policy stays what it was
                **({} if self.proposals else {"proposals": False}),
            },
            "identities": {
                "evidence_writers": sorted(self.evidence_writers),
                "ledger_writers": sorted(self.ledger_writers),
                "lock_writers": sorted(self.lock_writers),
                "reviewers": sorted(self.review_names),
            },
            "lock": {
                "roots": list(self.lock_roots),
                "exclude": list(self.lock_exclude),
                "notes_ref": self.notes_ref,
                "required": self.lock_required,
            },
            "ledger": {"path": self.ledger_path, "max_window_hours": self.max_window_hours},
            **self._judge_dict(),
            "labels": {
                "path": self.labels_path,
                "quota_path": self.quota_path,
                "retries": self.retries,
            },
        }

    def _judge_dict(self) -> dict[str, Any]:
        """Only when set, so the digest of a policy without them stays what it was."""
        out: dict[str, Any] = {}
        if self.judge != JudgeConfig():
            out["judge"] = self.judge.as_dict()
        if self.verdict_writers is not None:
            out["verdict_writers"] = sorted(self.verdict_writers)
        return out

    @property
    def digest(self) -> str:
        known = _KNOWN_DIGESTS.get(id(self))
        if known is not None and known[0] is self:
            return known[1]
        from git_evidence.core.records import record_digest

        return record_digest(self.as_dict())


TABLE_KEYS: dict[str, set[str]] = {
    "paths": set(DEFAULT_PATHS),
    "rules": {
        "other_path",
        "added_test",
        "test_edit",
        "protected",
        "base",
        "allow_namespaces",
        "time_budget_s",
        "proposals",
    },
    "identities": {
        "evidence_writers",
        "ledger_writers",
        "lock_writers",
        "reviewers",
        "verdict_writers",
    },
    "lock": {"roots", "exclude", "notes_ref", "required"},
    "ledger": {"path", "max_window_hours"},
    "judge": {
        "notes_ref",
        "repeat",
        "seeds",
        "timeout_s",
        "sandbox",
        "network",
        "pythonpath",
        "env",
        "hide",
        "property",
    },
    "labels": {"path", "quota_path", "retries"},
}
