"""What a split did: its records (the halves of each mixed commit, the commits written,
the ref moved) and their JSON and text. Pure: the records are built by
``splitter.py``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from git_evidence.core.errors import PREFIX
from git_evidence.core.oids import Oid
from git_evidence.core.paths import PathClass
from git_evidence.gate.report import show_path
from git_evidence.policy.schema import Policy

if TYPE_CHECKING:
    from git_evidence.plumbing.objects import TreeEdit

EVIDENCE, PRODUCT = "evidence", "product"
SHOWN_PATHS = 8


@dataclass
class Halves:
    """A mixed commit's changes by the side they go to: its evidence changes, and the
    rest (neutral paths ride with the product)."""

    edits: dict[str, list[TreeEdit]] = field(default_factory=lambda: {EVIDENCE: [], PRODUCT: []})
    paths: dict[str, dict[PathClass, list[str]]] = field(
        default_factory=lambda: {EVIDENCE: {}, PRODUCT: {}}
    )


@dataclass
class Split:
    commit: Oid
    subject: str
    evidence: Oid
    product: Oid
    halves: Halves


@dataclass
class Outcome:
    ref: str
    old: Oid
    new: Oid
    order: str
    policy: Policy
    splits: list[Split] = field(default_factory=list)
    replayed: int = 0
    evidence_branch: tuple[str, Oid] | None = None  # (ref, commit)
    dry_run: bool = False  # computed and checked, nothing written, no ref moved


def short_ref(ref: str) -> str:
    return ref.removeprefix("refs/heads/")


def as_json(outcome: Outcome) -> dict[str, object]:
    return {
        "decision": "split" if outcome.splits else "unchanged",
        "dry_run": outcome.dry_run,
        "ref": outcome.ref,
        "old": outcome.old,
        "new": outcome.new,
        "order": outcome.order,
        "policy": {"source": outcome.policy.source, "digest": outcome.policy.digest},
        "splits": [
            {
                "commit": s.commit,
                "evidence": s.evidence,
                "product": s.product,
                "paths": s.halves.paths,
            }
            for s in outcome.splits
        ],
        "replayed": outcome.replayed,
        "evidence_branch": None
        if outcome.evidence_branch is None
        else {"ref": outcome.evidence_branch[0], "commit": outcome.evidence_branch[1]},
    }


def as_text(outcome: Outcome) -> str:
    draft = (
        f"{PREFIX}: classified under the {outcome.policy.source}\n"
        if outcome.policy.origin == "draft"
        else ""
    )
    if not outcome.splits:
        return f"{draft}{PREFIX}: nothing to split: no commit mixes evidence with other changes\n"
    lines = [draft.rstrip("\n")] if draft else []
    if outcome.dry_run:
        lines.append(f"{PREFIX}: dry run: nothing was written and no branch moved")
    for s in outcome.splits:
        lines.append(f"split {s.commit[:12]} {s.subject}")
        for side, oid in ((EVIDENCE, s.evidence), (PRODUCT, s.product)):
            lines.append(f"  {oid[:12]} ({side})")
            for klass, found in s.halves.paths[side].items():
                shown = ", ".join(show_path(p) for p in found[:SHOWN_PATHS])
                more = f" and {len(found) - SHOWN_PATHS} more" if len(found) > SHOWN_PATHS else ""
                lines.append(f"    {klass}: {shown}{more}")
    replayed = f"; {outcome.replayed} later commit(s) replayed" if outcome.replayed else ""
    would = " (would move)" if outcome.dry_run else ""
    lines.append(
        f"{short_ref(outcome.ref)}: {outcome.old[:12]} -> {outcome.new[:12]}{replayed}{would}"
    )
    if outcome.evidence_branch is not None:
        branch, commit = outcome.evidence_branch
        if outcome.dry_run:
            lines.append(
                f"{short_ref(branch)}: {commit[:12]} (would be created: the evidence commit)"
            )
        else:
            lines.append(
                f"{short_ref(branch)}: {commit[:12]} (the evidence commit, for a reviewer); the "
                "index and working tree still hold its change, which `git status` now shows"
            )
    if not outcome.dry_run:
        lines.append(f"undo: git update-ref {outcome.ref} {outcome.old}")
    return "\n".join(lines) + "\n"
