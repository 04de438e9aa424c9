"""Facts built by hand for the rules, in process: identities, a ref update's facts, a
commit's summary, raw diff rows."""

from __future__ import annotations

from git_evidence.core.facts import CommitDiff, CommitSummary, RefUpdate, UpdateFacts
from git_evidence.core.oids import Oid
from git_evidence.core.path_globs import fold_path
from git_evidence.core.paths import Change
from git_evidence.policy.identity import Identity
from git_evidence.policy.parsing import parse_policy
from git_evidence.policy.schema import Policy
from git_evidence.rules.summaries import summarize
from helpers.repos import POLICY

OLD, NEW = Oid("a" * 40), Oid("b" * 40)


BASE_POLICY = parse_policy(POLICY.encode(), "base:.git-evidence.toml")


def who(name: str | None) -> Identity:
    return Identity(name, "GIT_EVIDENCE_PUSHER")


def facts(
    ref: str = "refs/heads/main",
    *,
    old: str = OLD,
    new: str = NEW,
    protected: bool = True,
    notes: bool = False,
    commit: str | None = NEW,
    fast_forward: bool | None = True,
    base: str | None = OLD,
    named_ref: bool = True,
    revlist: tuple[str, ...] | None = ("--boundary", NEW, "--not", OLD),
    creates_base: bool = False,
) -> UpdateFacts:
    return UpdateFacts(
        RefUpdate(Oid(old), Oid(new), ref),
        protected=protected,
        notes=notes,
        commit=None if commit is None else Oid(commit),
        fast_forward=fast_forward,
        base=None if base is None else Oid(base),
        revlist=revlist,
        named_ref=named_ref,
        creates_base=creates_base,
    )


def change(path: str, status: str = "M") -> Change:
    old_mode = "000000" if status == "A" else "100644"
    new_mode = "000000" if status == "D" else "100644"
    return Change(status, old_mode, new_mode, "1" * 40, "2" * 40, path)


def summary(
    *changed: str, merge: bool = False, pol: Policy = BASE_POLICY, n: int = 0
) -> CommitSummary:
    """A commit of ``changed`` paths; a path may carry its status: ``A:tests/t.py``."""
    rows = []
    for item in changed:
        status, _, path = item.rpartition(":") if ":" in item else ("M", "", item)
        rows.append(change(path, status))
    diff = CommitDiff(Oid(f"{n:040x}"), merge, tuple(rows))
    return summarize(diff, pol.classifier(), fold_path(pol.ledger_path))


AGENT, ALICE, CI = "agent-bot", "alice", "ci-bot"


def row(meta: str, path: str) -> list[bytes]:
    return [meta.encode(), path.encode()]
