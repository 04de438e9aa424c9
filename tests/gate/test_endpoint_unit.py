"""The endpoint rule and ref aliases on small hand-built histories, judged in
process (no push): what differs between base and new, which commit of the range
answers for it, and how a symbolic ref is judged."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from helpers.repos import Work, git

from git_evidence.core.facts import CommitSummary, RefUpdate, RefView, UpdateFacts
from git_evidence.core.oids import Oid
from git_evidence.core.paths import FIXTURE, LEDGER, ORACLE, PRODUCT, PathClass
from git_evidence.gate import endpoint, pipeline
from git_evidence.gate.ranges import plan_updates, settle_plans, stream_commits
from git_evidence.gate.report import Report
from git_evidence.plumbing.batch import CatFile
from git_evidence.plumbing.context import judged_refs
from git_evidence.plumbing.git import Git
from git_evidence.plumbing.raw_diff import LinkResolver
from git_evidence.policy.identity import Identity
from git_evidence.policy.schema import Policy
from git_evidence.rules import table
from git_evidence.rules.commits import decide_update
from git_evidence.rules.findings import Finding
from git_evidence.rules.summaries import summarize, with_kept

ORACLE_PATH = "tests/oracles/o.txt"
MAIN = "refs/heads/main"
POLICY = Policy(evidence_writers=frozenset({"alice"}), ledger_writers=frozenset({"ci-bot"}))
AGENT = Identity("agent-bot", "test")
ALICE = Identity("alice", "test")
ZERO = Oid("0" * 40)
OLD, NEW = Oid("a" * 40), Oid("b" * 40)


@pytest.fixture
def repo(tmp_path: Path) -> Work:
    """main: a product file, a fixture, an oracle and a two-line ledger."""
    work = Work(tmp_path / "repo")
    git(tmp_path, "init", "-q", "-b", "main", str(work.path))
    work.commit(
        "seed",
        {
            "src/app.py": "v1\n",
            "tests/fixtures/a.json": "{}\n",
            ORACLE_PATH: "loose\n",
            "tests/freeze.jsonl": "",
        },
    )
    return work


def fork(repo: Work, name: str = "feat", files: dict[str, str] | None = None) -> str:
    repo.git("checkout", "-qb", name)
    head = repo.commit("feature", files or {"src/feature.py": "f\n"})
    repo.git("checkout", "-q", "main")
    return head


def merge(
    repo: Work, branch: str, keep: tuple[str, ...] = (), also: dict[str, str] | None = None
) -> Oid:
    """Merge ``branch`` into main, keeping ``branch``'s copy of ``keep``."""
    repo.git("merge", "-q", "--no-ff", "--no-commit", branch)
    for path in keep:
        repo.git("checkout", branch, "--", path)
    for rel, content in (also or {}).items():
        repo.write(rel, content)
    repo.git("add", "-A")
    repo.git("commit", "-qm", f"Merge {branch}")
    return repo.head()


def protected_facts(old: Oid, new: Oid) -> UpdateFacts:
    return UpdateFacts(
        RefUpdate(old, new, MAIN),
        protected=True,
        notes=False,
        commit=new,
        base=old,
        revlist=("--boundary", new, "--not", old),
    )


def decide_main(repo: Work, old: Oid, who: Identity = AGENT) -> Report:
    new = repo.head()
    view = RefView({MAIN: old}, old)
    return pipeline.decide(Git(str(repo.path)), [RefUpdate(old, new, MAIN)], POLICY, view, who)


def rules_of(report: Report) -> dict[str, list[Finding]]:
    found: dict[str, list[Finding]] = {}
    for outcome in report.decisions:
        for finding in outcome.findings:
            found.setdefault(finding.rule, []).append(finding)
    return found


# -- the pure part ---------------------------------------------------------------------


def test_with_kept_makes_a_product_merge_a_mixed_commit() -> None:
    product = CommitSummary(Oid("m1"), True, ((PRODUCT, ("src/a",)),), frozenset({PRODUCT}))
    merged = with_kept(product, [(ORACLE, ORACLE_PATH)])
    assert merged.classes == {PRODUCT, ORACLE}
    assert dict(merged.by_class)[ORACLE] == (ORACLE_PATH,)
    assert merged.kept == (ORACLE_PATH,)
    facts = protected_facts(OLD, Oid("m1"))
    outcome = decide_update(facts, [merged], POLICY, ALICE)
    assert [f.rule for f in outcome.findings] == ["mixed-commit"]
    assert outcome.findings[0].message.startswith("merge brings back an older copy of evidence")


# -- what differs between base and new ---------------------------------------------------


def test_endpoint_rows_are_the_evidence_that_differs(repo: Work) -> None:
    base = repo.head()
    repo.write("tests/fixtures/a.json", '{"a": 1}\n')
    repo.write("src/app.py", "v2\n")
    os.chmod(repo.path / ORACLE_PATH, 0o755)
    repo.git("rm", "-q", "tests/freeze.jsonl")
    os.symlink("../tests/fixtures", repo.path / "src" / "fx")
    new = repo.commit("everything")
    g = Git(str(repo.path))
    with CatFile(g) as cat:
        rows = endpoint.evidence_rows(g, LinkResolver(g, cat), POLICY.classifier(), base, new)
    by_path = {path: (klass, mode, oid) for klass, path, mode, oid in rows}
    assert set(by_path) == {"tests/fixtures/a.json", ORACLE_PATH, "tests/freeze.jsonl", "src/fx"}
    assert by_path[ORACLE_PATH][:2] == (ORACLE, "100755")
    assert by_path["tests/freeze.jsonl"] == (LEDGER, "000000", ZERO)
    assert by_path["src/fx"][:2] == (FIXTURE, "120000")
    assert by_path["tests/fixtures/a.json"][2] == repo.head(f"{new}:tests/fixtures/a.json")


def test_equal_trees_have_no_endpoint_rows(repo: Work) -> None:
    base = repo.head()
    g = Git(str(repo.path))
    with CatFile(g) as cat:
        assert (
            endpoint.evidence_rows(g, LinkResolver(g, cat), POLICY.classifier(), base, base) == []
        )


# -- which commit answers for a value the range does not set ----------------------------


def answering(
    repo: Work, old: Oid, new: Oid, *, protected: bool = True, not_: Oid | None = None
) -> dict[Oid, list[tuple[PathClass, str]]]:
    """What the gate computes for ``old -> new`` on main (protected), or for a new
    branch ``refs/heads/topic`` judged against ``old`` with ``not_`` excluded."""
    g = Git(str(repo.path))
    if protected:
        update, view = RefUpdate(old, new, MAIN), RefView({MAIN: old}, old)
    else:
        exclude = not_ or old
        update, view = RefUpdate(ZERO, new, "refs/heads/topic"), RefView({MAIN: exclude}, old)
    plans = plan_updates(g, [update], POLICY, view)
    classifier = POLICY.classifier()
    parents: dict[str, list[str]] = {}
    summaries = {
        c.oid: summarize(c, classifier, "tests/freeze.jsonl")
        for c in stream_commits(g, plans, parents)
    }
    plans[0].base = old
    (facts,) = settle_plans(plans)
    with CatFile(g) as cat:
        rows = endpoint.evidence_rows(g, LinkResolver(g, cat), classifier, old, new)
    return endpoint.answering(g, facts, rows, summaries, parents)


def test_the_merge_that_took_the_older_copy_answers_for_it(repo: Work) -> None:
    fork(repo)
    old = repo.commit("tighten", {ORACLE_PATH: "tight\n"})
    merged = merge(repo, "feat", keep=(ORACLE_PATH,))
    assert answering(repo, old, merged) == {merged: [(ORACLE, ORACLE_PATH)]}


def test_every_merge_that_takes_the_older_copy_answers_for_it(repo: Work) -> None:
    fork(repo)
    old = repo.commit("tighten", {ORACLE_PATH: "tight\n"})
    first = merge(repo, "feat", keep=(ORACLE_PATH,))
    repo.git("checkout", "-qb", "again", old)
    repo.commit("other", {"src/other.py": "o\n"})
    repo.git("checkout", "-q", "main")
    second = merge(repo, "again")
    # the second merge, too, keeps the older copy against its second parent's newer one
    assert set(answering(repo, old, second)) == {first, second}


def test_a_commit_setting_the_same_bytes_off_the_values_history_explains_nothing(
    repo: Work,
) -> None:
    """A decoy: a side branch sets the oracle back to its old bytes and then forward
    again; the copy the tip carries comes from the feature branch that forked before
    the tightening."""
    fork(repo)
    old = repo.commit("tighten", {ORACLE_PATH: "tight\n"})
    repo.git("checkout", "-qb", "decoy", old)
    repo.commit("decoy revert", {ORACLE_PATH: "loose\n"})
    repo.commit("decoy again", {ORACLE_PATH: "tight\n"})
    repo.git("checkout", "-q", "main")
    merged = merge(repo, "feat", keep=(ORACLE_PATH,))
    tip = merge(repo, "decoy", keep=())
    assert repo.head(f"{tip}:{ORACLE_PATH}") == repo.head(f"{merged}:{ORACLE_PATH}")
    assert merged in answering(repo, old, tip)


def test_an_older_copy_beside_an_evidence_commit_with_the_same_bytes_still_answers(
    repo: Work,
) -> None:
    """Both parents of the last merge carry the old bytes, one through a trusted
    revert: the merge that kept the older copy over the tightened one answers for it
    all the same."""
    fork(repo)
    old = repo.commit("tighten", {ORACLE_PATH: "tight\n"})
    repo.git("checkout", "-qb", "revert", old)
    repo.commit("revert the tightening", {ORACLE_PATH: "loose\n"})
    repo.git("checkout", "-q", "main")
    merged = merge(repo, "feat", keep=(ORACLE_PATH,))
    tip = merge(repo, "revert")
    assert set(answering(repo, old, tip)) == {merged}


def test_a_trusted_revert_merged_with_an_old_branch_answers_for_itself(repo: Work) -> None:
    """The revert comes first on main; the older branch merged after it agrees with
    it, so no merge took anything over a newer copy."""
    fork(repo)
    old = repo.commit("tighten", {ORACLE_PATH: "tight\n"})
    repo.commit("revert the tightening", {ORACLE_PATH: "loose\n"})
    tip = merge(repo, "feat")
    assert answering(repo, old, tip) == {}


def test_an_evidence_commit_on_the_values_history_explains_it(repo: Work) -> None:
    fork(repo, "tighten", {ORACLE_PATH: "tight\n"})
    old = repo.commit("product", {"src/app.py": "v2\n"})
    merged = merge(repo, "tighten")
    assert answering(repo, old, merged) == {}


def test_merges_past_a_branch_point_of_the_range_answer_for_an_older_copy(
    repo: Work,
) -> None:
    """The range forks inside itself: a side line merges the old branch keeping its
    copy, and main then takes the side line's copy over its own."""
    fork(repo)
    old = repo.commit("tighten", {ORACLE_PATH: "tight\n"})
    repo.commit("branch point", {"src/app.py": "x\n"})
    repo.git("checkout", "-qb", "side")
    repo.commit("side product", {"src/side.py": "s\n"})
    first = merge(repo, "feat", keep=(ORACLE_PATH,))
    repo.git("checkout", "-q", "main")
    repo.commit("main product", {"src/app.py": "y\n"})
    second = merge(repo, "side")
    assert repo.head(f"{second}:{ORACLE_PATH}") == repo.head(f"{first}:{ORACLE_PATH}")
    assert set(answering(repo, old, second)) == {first, second}


def test_many_paths_kept_by_one_merge_all_answer(repo: Work) -> None:
    """Past a few paths the merges' diffs are read whole and filtered."""
    paths = [f"tests/fixtures/f{i:02d}.json" for i in range(40)]
    repo.commit("fixtures", dict.fromkeys(paths, "old\n"))
    fork(repo)
    old = repo.commit("update fixtures", dict.fromkeys(paths, "new\n"))
    merged = merge(repo, "feat", keep=tuple(paths))
    kept = answering(repo, old, merged)
    assert set(kept) == {merged}
    assert sorted(path for _, path in kept[merged]) == paths


def test_a_protected_tip_answers_when_no_commit_of_the_range_sets_it(repo: Work) -> None:
    """Fail closed: a protected ref's new history is its whole range; here the range
    is cut short so that the commit setting the value lies outside it."""
    old = repo.head()
    setter = repo.commit("tighten", {ORACLE_PATH: "tight\n"})
    tip = repo.commit("product", {"src/app.py": "v2\n"})
    g = Git(str(repo.path))
    plans = plan_updates(g, [RefUpdate(setter, tip, MAIN)], POLICY, RefView({MAIN: setter}, setter))
    classifier = POLICY.classifier()
    parents: dict[str, list[str]] = {}
    summaries = {c.oid: summarize(c, classifier) for c in stream_commits(g, plans, parents)}
    plans[0].base = old
    (facts,) = settle_plans(plans)
    with CatFile(g) as cat:
        rows = endpoint.evidence_rows(g, LinkResolver(g, cat), classifier, old, tip)
    assert endpoint.answering(g, facts, rows, summaries, parents) == {tip: [(ORACLE, ORACLE_PATH)]}


def test_values_from_excluded_history_are_left_to_that_history(repo: Work) -> None:
    """On an unprotected ref, a value set by commits another protected ref holds was
    judged when they were pushed."""
    old = repo.head()
    release = repo.commit("release oracle", {ORACLE_PATH: "release\n"})
    tip = repo.commit("product", {"src/app.py": "v2\n"})
    assert answering(repo, old, tip, protected=False, not_=release) == {}


# -- the whole judgement ---------------------------------------------------------------------


def test_untrusted_merge_keeping_an_older_oracle_is_evidence_untrusted(repo: Work) -> None:
    fork(repo)
    old = repo.commit("tighten", {ORACLE_PATH: "tight\n"})
    merge(repo, "feat", keep=(ORACLE_PATH,))
    found = rules_of(decide_main(repo, old))
    assert found["evidence-untrusted"][0].paths == {ORACLE: [ORACLE_PATH]}


def test_untrusted_merge_keeping_mains_oracle_is_allowed(repo: Work) -> None:
    fork(repo)
    old = repo.commit("tighten", {ORACLE_PATH: "tight\n"})
    merge(repo, "feat")
    assert decide_main(repo, old).decision == table.ALLOW


def test_trusted_product_merge_keeping_an_older_oracle_is_a_mixed_commit(repo: Work) -> None:
    fork(repo)
    old = repo.commit("tighten", {ORACLE_PATH: "tight\n"})
    merged = merge(repo, "feat", keep=(ORACLE_PATH,), also={"src/app.py": "fixed\n"})
    found = rules_of(decide_main(repo, old, ALICE))
    assert [f.commit for f in found["mixed-commit"]] == [merged]
    assert "evidence-untrusted" not in found


def test_merge_undoing_a_mode_change_is_judged(repo: Work) -> None:
    fork(repo)
    os.chmod(repo.path / ORACLE_PATH, 0o755)
    old = repo.commit("oracle is a script now")
    merge(repo, "feat", keep=(ORACLE_PATH,))
    assert "evidence-untrusted" in rules_of(decide_main(repo, old))


def test_merge_shrinking_the_ledger_is_a_rewrite(repo: Work) -> None:
    fork(repo)
    old = repo.commit("freeze", {"tests/freeze.jsonl": "{}\n"})
    merge(repo, "feat", keep=("tests/freeze.jsonl",))
    found = rules_of(decide_main(repo, old, Identity("ci-bot", "test")))
    assert "ledger-rewrite" in found
    assert "evidence-untrusted" not in found


def test_merge_of_a_branch_with_its_own_evidence_commit_is_explained(repo: Work) -> None:
    """A trusted evidence commit on the merged branch sets the value: the merge that
    takes it changes nothing of its own."""
    fork(repo, "tighten", {ORACLE_PATH: "tight\n"})
    old = repo.commit("product", {"src/app.py": "v2\n"})
    merge(repo, "tighten", also={"src/app.py": "v3\n"})
    found = rules_of(decide_main(repo, old, ALICE))
    assert "mixed-commit" not in found


# -- symbolic refs ---------------------------------------------------------------------------


def test_a_pushed_symbolic_ref_is_judged_as_its_target() -> None:
    updates = [RefUpdate(OLD, NEW, "refs/heads/master")]
    judged, notes = judged_refs(updates, {"refs/heads/master": MAIN}, {MAIN})
    assert judged == [RefUpdate(OLD, NEW, MAIN)]
    assert notes == [
        "refs/heads/master is a symbolic ref to refs/heads/main on this server: "
        "judged as refs/heads/main"
    ]


def test_a_ref_a_protected_symbolic_ref_names_is_judged_as_protected() -> None:
    updates = [RefUpdate(OLD, NEW, "refs/heads/trunk")]
    judged, _ = judged_refs(updates, {MAIN: "refs/heads/trunk"}, {MAIN})
    assert judged[0].ref == MAIN


def test_an_alias_of_an_alias_of_main_is_judged_as_main() -> None:
    updates = [RefUpdate(OLD, NEW, "refs/heads/x")]
    judged, _ = judged_refs(
        updates, {"refs/heads/x": "refs/heads/trunk", MAIN: "refs/heads/trunk"}, {MAIN}
    )
    assert judged[0].ref == MAIN


def test_plain_refs_are_judged_as_themselves() -> None:
    updates = [RefUpdate(OLD, NEW, "refs/heads/feat")]
    assert judged_refs(updates, {"refs/heads/master": MAIN}, {MAIN}) == (updates, [])


def test_git_lists_symbolic_refs_with_their_final_target(repo: Work) -> None:
    repo.git("symbolic-ref", "refs/heads/master", MAIN)
    repo.git("symbolic-ref", "refs/heads/chain", "refs/heads/master")
    repo.git("symbolic-ref", "refs/heads/dangling", "refs/heads/nothing")
    g = Git(str(repo.path))
    aliases = g.symrefs()
    assert aliases["refs/heads/master"] == MAIN
    assert aliases["refs/heads/chain"] == MAIN
    assert "refs/heads/dangling" not in aliases
    assert g.symref_target("refs/heads/dangling") == "refs/heads/nothing"
    assert g.symref_target(MAIN) is None


def test_on_a_long_range_the_merge_that_kept_the_older_copy_answers_for_it(repo: Work) -> None:
    """Thousands of commits after the merge: the base-to-tip diff runs beside the stream
    (it ends long before the stream does) and the merge, not the tip, answers for the
    older copy it kept."""
    fork(repo)
    old = repo.commit("tighten", {ORACLE_PATH: "tight\n"})
    merged = merge(repo, "feat", keep=(ORACLE_PATH,), also={"src/app.py": "v3\n"})
    stream = b"".join(
        b"commit refs/heads/main\ncommitter T <t@example.com> 1700000000 +0000\n"
        + b"data 2\np\n"
        + (b"from %s\n" % merged.encode() if i == 0 else b"")
        + b"M 100644 inline src/p%d.py\ndata 2\n%d\n\n" % (i, i % 10)
        for i in range(2000)
    )
    repo.git("fast-import", "--quiet", input=stream)
    found = rules_of(decide_main(repo, old))
    (mixed,) = found["mixed-commit"]  # the merge: its own product change, the kept oracle
    assert mixed.commit == merged
    assert mixed.message.startswith("merge brings back an older copy of evidence (oracle)")
