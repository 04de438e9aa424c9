"""Splitting a commit the gate calls mixed into an evidence commit and a product
commit (``split``: one commit, a range, or the evidence half on a branch of its own),
the library call behind ``git evidence split``.

"Mixed" is the gate's own verdict: the commits stream through the same ``diff-tree``
and classifier as a push (raw_diff.parse_raw, summaries.summarize) under the policy the
client hooks use (in_force.resolve). The new commits are built from git objects
(objects.py): the working tree and the index are never read or written, and since
every commit after a split keeps its own tree, the branch tip keeps its tree too.
Author and committer (names, emails, dates) are copied from the commit split, so the
same split gives the same commit ids on every machine; only the first line of the
message changes, suffixed ``(evidence)`` / ``(product)``.

Over 300 lines on purpose: the plan, the rewritten commits and the checked ref
moves of one split."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator, Sequence
from typing import NoReturn

from git_evidence.core.errors import EvidenceError, UsageError
from git_evidence.core.facts import CommitDiff
from git_evidence.core.oids import Oid
from git_evidence.core.paths import EVIDENCE_CLASSES, Classifier, PathClass
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.in_force import resolve
from git_evidence.plumbing.objects import (
    TreeBuilder,
    TreeEdit,
    move_refs,
    object_id,
    ref_value,
    rewrite_commit,
    tree_of,
    write_objects,
)
from git_evidence.plumbing.raw_diff import LinkResolver, parse_raw
from git_evidence.plumbing.stream import diff_tree_stream
from git_evidence.policy.schema import Policy
from git_evidence.rules import table
from git_evidence.rules.summaries import summarize
from git_evidence.split.outcome import (
    EVIDENCE,
    PRODUCT,
    Halves,
    Outcome,
    Split,
    short_ref,
)

EVIDENCE_FIRST, PRODUCT_FIRST = "evidence-first", "product-first"
SUFFIX = {EVIDENCE: b" (evidence)", PRODUCT: b" (product)"}


def split(
    rev: str | None = None,
    *,
    commits: str | None = None,
    evidence_branch: str | None = None,
    order: str = EVIDENCE_FIRST,
    draft: str | None = None,
    dry_run: bool = False,
) -> Outcome:
    """Split ``rev`` (HEAD by default), or every mixed commit of ``commits``
    (``BASE..TOP``), in the repository of the current directory, under the policy the
    client hooks use (or the ``draft`` file). ``evidence_branch``: the evidence half
    of ``rev`` on a new branch of that name instead. ``dry_run``: every object is
    written to a scratch store and thrown away, no ref moves. What was done, or would
    be; an ``EvidenceError`` says why nothing was."""
    git = Git()
    if not git.is_repository():
        raise UsageError("not a git repository", fix="run it inside the repository")
    if commits and rev:
        raise UsageError("give a revision or --range, not both")
    if commits and evidence_branch:
        raise UsageError(
            "--evidence-branch takes one commit, not a range",
            fix="split the range first, or one commit with --evidence-branch",
        )
    if not dry_run:
        return _split(git, rev, commits, evidence_branch, order, draft, dry_run=False)
    with tempfile.TemporaryDirectory(prefix="git-evidence-split-") as scratch:
        aside = _scratch_git(git, scratch)
        return _split(aside, rev, commits, evidence_branch, order, draft, dry_run=True)


def _scratch_git(git: Git, scratch: str) -> Git:
    """``git`` writing new objects into ``scratch`` and reading the repository's own
    through it (an alternate): a dry run checks the halves as a split does, and leaves
    the repository's object store as it was."""
    for name in ("pack", "info"):
        os.mkdir(os.path.join(scratch, name))
    objects = git.git_path("objects")
    alternates = os.pathsep.join(
        [objects, *filter(None, [os.environ.get("GIT_ALTERNATE_OBJECT_DIRECTORIES")])]
    )
    env = {
        **os.environ,
        "GIT_OBJECT_DIRECTORY": scratch,
        "GIT_ALTERNATE_OBJECT_DIRECTORIES": alternates,
    }
    return Git(env=env)


def _split(
    git: Git,
    rev: str | None,
    commits: str | None,
    evidence_branch: str | None,
    order: str,
    draft: str | None,
    *,
    dry_run: bool,
) -> Outcome:
    policy = resolve(git, draft=draft).policy
    with CatFile(git) as cat, TreeBuilder(git, cat) as trees:
        splitter = _Splitter(git, cat, trees, policy, order, dry_run)
        if commits:
            return splitter.split_range(commits)
        return splitter.split_one(rev or "HEAD", evidence_branch)


class _Splitter:
    def __init__(
        self,
        git: Git,
        cat: CatFile,
        trees: TreeBuilder,
        policy: Policy,
        order: str,
        dry_run: bool = False,
    ) -> None:
        self.dry_run = dry_run
        self.git = git
        self.cat = cat
        self.trees = trees
        self.policy = policy
        self.classifier: Classifier = policy.classifier()
        self.order = order
        self.objects: list[tuple[Oid, str, bytes]] = []  # written at the end, in one pack

    # -- what to split -----------------------------------------------------------------

    def split_one(self, rev: str, evidence_branch: str | None) -> Outcome:
        ref, tip = self._current()
        commit = self._commit(rev)
        parents = self._parents(commit)
        if len(parents) > 1:
            raise UsageError(
                f"{commit[:12]} is a merge: split takes a commit with one parent (or none)",
                fix="split the commits the merge brings, on their branch",
            )
        if not self.git.is_ancestor(commit, tip):
            raise UsageError(
                f"{commit[:12]} is not on {short_ref(ref)}",
                fix=f"check out the branch that holds it, then `git evidence split {rev}`",
            )
        outcome = Outcome(ref, tip, tip, self.order, self.policy, dry_run=self.dry_run)
        mixed = self._mixed(("--no-walk", commit))
        if commit not in mixed:
            return outcome
        if evidence_branch:
            return self._split_aside(outcome, commit, parents, mixed[commit], evidence_branch)
        after = self._listed("--ancestry-path", f"{commit}..{tip}")
        return self._rewrite(outcome, [(commit, parents), *after], mixed)

    def split_range(self, text: str) -> Outcome:
        start, sep, end = text.partition("..")
        if not sep or end.startswith(".") or not start:
            raise UsageError(
                f"--range takes BASE..TOP, not {text!r}", fix="e.g. --range origin/main..HEAD"
            )
        base = self._commit(start)
        ref, tip = self._range_target(end or "HEAD")
        # Merges are kept: each is written again with its parents' new ids and its own
        # tree, so what it merged (its combined diff) is what it was. The commits on
        # either side of it are split like any other.
        commits = self._listed(tip, "--not", base)
        outcome = Outcome(ref, tip, tip, self.order, self.policy, dry_run=self.dry_run)
        mixed = self._mixed((tip, "--not", base))
        if not mixed:
            return outcome
        return self._rewrite(outcome, commits, mixed)

    def _current(self) -> tuple[str, Oid]:
        """The ref a split moves (HEAD's branch, or HEAD when detached), and its
        commit."""
        ref = self.git.head_branch() or "HEAD"
        tip = ref_value(self.git, ref)
        if tip is None:
            raise UsageError(f"{ref} has no commit yet: nothing to split")
        return ref, tip

    def _range_target(self, top: str) -> tuple[str, Oid]:
        """The ref a range's top names: HEAD (its branch), or a branch."""
        if top == "HEAD":
            return self._current()
        full = self.git.full_ref_name(top) or ""
        tip = ref_value(self.git, full) if full.startswith("refs/heads/") else None
        if tip is not None:
            return full, tip
        commit = self._commit(top)
        ref, tip = self._current()
        if commit != tip:
            raise UsageError(
                f"the range ends at {top!r}, which is neither HEAD nor a branch",
                fix="end the range at a branch (`main..my-branch`) or HEAD",
            )
        return ref, tip

    def _commit(self, rev: str) -> Oid:
        oid = self.git.resolve_commit(rev)
        if oid is None:
            raise UsageError(
                f"{rev!r} does not name a commit",
                fix="name one: HEAD~2, a branch, an id from `git log`",
            )
        return oid

    def _listed(self, *revs: str) -> list[tuple[Oid, list[Oid]]]:
        """``(commit, parents)`` of ``rev-list revs``, parents before children."""
        return self.git.topo_parents(*revs)

    def _parents(self, commit: Oid) -> list[Oid]:
        head = self.cat.read(commit).partition(b"\n\n")[0]
        return [Oid(line[7:].decode()) for line in head.split(b"\n") if line.startswith(b"parent ")]

    # -- classifying ---------------------------------------------------------------------

    def _classified(
        self, revlist: Sequence[str]
    ) -> Iterator[tuple[CommitDiff, frozenset[PathClass]]]:
        """Each commit ``rev-list revlist`` lists, with its classes as the gate sees them
        (links followed through the commit's own tree)."""
        tokens = diff_tree_stream(self.git, [revlist], [[]])
        for commit in parse_raw(tokens, LinkResolver(self.git, self.cat)):
            yield commit, summarize(commit, self.classifier).classes

    def _mixed(self, revlist: Sequence[str]) -> dict[Oid, Halves]:
        """The commits the gate's `mixed-commit` rule fires on, their changes sorted."""
        found: dict[Oid, Halves] = {}
        for commit, classes in self._classified(revlist):
            if commit.merge or not _is_mixed(classes):
                continue
            halves = Halves()
            for change in commit.changes:
                klass = self.classifier.classify_change(change).klass
                side = EVIDENCE if klass in EVIDENCE_CLASSES else PRODUCT
                path = change.path.encode("utf-8", "surrogateescape")
                new = Oid(change.object_ids()[1])  # decoded from the row diff-tree printed
                halves.edits[side].append(TreeEdit(change.new_mode, new, path))
                halves.paths[side].setdefault(klass, []).append(change.path)
            found[commit.oid] = halves
        return found

    # -- writing -------------------------------------------------------------------------

    def _new_commit(
        self, raw: bytes, tree: Oid, parents: Sequence[Oid], suffix: bytes = b""
    ) -> Oid:
        data = rewrite_commit(raw, tree, parents, suffix)
        oid = object_id("commit", data, tree)
        self.objects.append((oid, "commit", data))
        return oid

    def _rewrite(
        self, outcome: Outcome, commits: Sequence[tuple[Oid, list[Oid]]], mixed: dict[Oid, Halves]
    ) -> Outcome:
        """Split the mixed ``commits`` and give every later one its new parents, keeping
        its tree: the tip's tree, and so the working tree's status, do not change."""
        mapping: dict[Oid, Oid] = {}
        first, second = (EVIDENCE, PRODUCT) if self.order == EVIDENCE_FIRST else (PRODUCT, EVIDENCE)
        for oid, parents in commits:
            new_parents = [mapping.get(p, p) for p in parents]
            halves = mixed.get(oid)
            if halves is None and new_parents == parents:
                continue  # nothing before it changed: it keeps its id
            raw = self.cat.read(oid)
            if halves is None:
                mapping[oid] = self._new_commit(raw, tree_of(raw), new_parents)
                outcome.replayed += 1
                continue
            middle = self.trees.build(self._parent_tree(parents), halves.edits[first])
            made = {first: self._new_commit(raw, middle, new_parents, SUFFIX[first])}
            made[second] = self._new_commit(raw, tree_of(raw), [made[first]], SUFFIX[second])
            mapping[oid] = made[second]
            outcome.splits.append(Split(oid, _subject(raw), made[EVIDENCE], made[PRODUCT], halves))
        outcome.new = mapping.get(outcome.old, outcome.old)
        self._finish(outcome, [(outcome.ref, outcome.new, outcome.old)])
        return outcome

    def _split_aside(
        self, outcome: Outcome, commit: Oid, parents: list[Oid], halves: Halves, name: str
    ) -> Outcome:
        """``--evidence-branch``: both halves on the commit's parent; the branch keeps
        the product half, a new branch takes the evidence half."""
        name = name.removeprefix("refs/heads/")
        branch = f"refs/heads/{name}"
        if not self.git.valid_ref_name(branch):
            raise UsageError(f"{name!r} is not a valid branch name")
        if ref_value(self.git, branch) is not None:
            raise UsageError(f"branch {name} exists already", fix="choose another name")
        if commit != outcome.old:
            raise UsageError(
                f"{commit[:12]} is not the tip of {short_ref(outcome.ref)}: the commits after "
                "it would keep its evidence change",
                fix="split it in place (without --evidence-branch), or split the tip",
            )
        raw = self.cat.read(commit)
        base = self._parent_tree(parents)
        made = {
            side: self._new_commit(
                raw, self.trees.build(base, halves.edits[side]), parents, SUFFIX[side]
            )
            for side in (EVIDENCE, PRODUCT)
        }
        outcome.splits.append(Split(commit, _subject(raw), made[EVIDENCE], made[PRODUCT], halves))
        outcome.new = made[PRODUCT]
        outcome.evidence_branch = (branch, made[EVIDENCE])
        self._finish(
            outcome, [(outcome.ref, outcome.new, outcome.old), (branch, made[EVIDENCE], None)]
        )
        return outcome

    def _parent_tree(self, parents: Sequence[Oid]) -> Oid | None:
        return tree_of(self.cat.read(parents[0])) if parents else None

    def _finish(self, outcome: Outcome, moves: list[tuple[str, Oid, Oid | None]]) -> None:
        """Write the commits, check that the gate calls every half clean, then move the
        refs (each only from where it was read)."""
        write_objects(self.git, self.objects)
        self._check_halves(outcome)
        if self.dry_run:
            return
        named = ", ".join(s.commit[:12] for s in outcome.splits[:3])
        more = f" and {len(outcome.splits) - 3} more" if len(outcome.splits) > 3 else ""
        move_refs(self.git, moves, f"evidence split: {named}{more}")

    def _check_halves(self, outcome: Outcome) -> None:
        """Judge the new halves again: a path of one side that takes the place of a file
        or directory of the other drags that change into the wrong half in one order."""
        side = {s.evidence: (EVIDENCE, s) for s in outcome.splits}
        side.update({s.product: (PRODUCT, s) for s in outcome.splits})
        for commit, classes in self._classified(("--no-walk", *side)):
            which, source = side.pop(commit.oid)
            # the evidence half holds evidence alone; the product half none
            wrong = classes - EVIDENCE_CLASSES if which == EVIDENCE else classes & EVIDENCE_CLASSES
            if wrong:
                listed = ", ".join(sorted(wrong))
                self._unsplittable(source, f"its {which} commit would change {listed} paths")
            if not classes:
                self._unsplittable(source, f"its {which} commit would change nothing")
        for which, source in side.values():
            self._unsplittable(source, f"its {which} commit was not written")

    def _unsplittable(self, source: Split, why: str) -> NoReturn:
        other = PRODUCT_FIRST if self.order == EVIDENCE_FIRST else EVIDENCE_FIRST
        raise EvidenceError(
            f"cannot split {source.commit[:12]} {self.order}: {why} (a path of one side "
            "takes the place of a file or directory of the other); nothing was moved",
            fix=f"try `--order {other}`, or split it by hand (`git rebase -i`)",
        )


def _is_mixed(classes: frozenset[PathClass]) -> bool:
    # rules.decide_update's `mixed-commit`: evidence beside any non-neutral other class.
    return bool(classes & EVIDENCE_CLASSES) and bool(classes & table.NON_EVIDENCE_SIDE)


# -- output --------------------------------------------------------------------------------


def _subject(raw: bytes) -> str:
    message = raw.partition(b"\n\n")[2]
    return message.split(b"\n", 1)[0].decode("utf-8", "replace").strip()
