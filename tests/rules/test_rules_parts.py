"""The rules' smaller parts, in process and without git: how a commit's raw rows are
summarized, how the endpoint asks whether a commit set a value, how a hold settles,
what the pre-commit hook says about a staged change, and the policy and labels file
findings. Fast enough to run on each mutation (bench/mutation.py)."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from helpers.rule_facts import AGENT, ALICE, BASE_POLICY, CI, NEW, facts, row, summary, who
from hypothesis import given
from hypothesis import strategies as st

from git_evidence.core import path_globs, paths
from git_evidence.core.errors import PolicyError
from git_evidence.core.facts import CommitDiff, CommitSummary, LedgerProblem
from git_evidence.core.oids import Oid
from git_evidence.plumbing.raw_diff import LinkResolver, parse_raw
from git_evidence.policy import labels
from git_evidence.policy.parsing import parse_policy
from git_evidence.policy.schema import Policy
from git_evidence.rules import findings as rules_findings
from git_evidence.rules import table as rules_table
from git_evidence.rules.commits import decide_staged, decide_update
from git_evidence.rules.files import decide_labels_file, decide_ledger, decide_policy_file
from git_evidence.rules.findings import Finding, hold_target, holds_block, restore_args, settle_hold
from git_evidence.rules.range_rules import mix_message
from git_evidence.rules.summaries import sets_value, summarize, value_key, with_kept
from git_evidence.rules.table import HOLD, REJECT, STAGED

# One decider for a file pushed or staged: the staged wording is a flag.
decide_staged_policy = functools.partial(decide_policy_file, staged=True)
decide_staged_labels = functools.partial(decide_labels_file, staged=True)

# -- summarize: raw rows (the push's stream) and parsed rows say the same -----------------

LEDGER = path_globs.fold_path(BASE_POLICY.ledger_path)
QUOTA = path_globs.fold_path(BASE_POLICY.quota_path)
PATHS = [
    "src/app.py",
    "src/lib/util.py",
    "tests/test_app.py",
    "tests/unit/test_b.py",
    "tests/fixtures/a.json",
    "tests/goldens/out.txt",
    "tests/properties/p.py",
    BASE_POLICY.ledger_path,
    BASE_POLICY.quota_path,
    "tests/freezes/other.jsonl",
    ".git-evidence.toml",
    "docs/guide.md",
    "Makefile",
]
ROW = st.tuples(
    st.sampled_from(["A", "M", "D"]),
    st.sampled_from(PATHS),
    st.sampled_from(["1" * 40, "2" * 40, "3" * 40]),
    st.sampled_from(["100644", "100755"]),
)


class _NoGit:
    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"asked git for {name}")


def _diffs(rows: list[tuple[str, str, str, str]], *, plain_rows: bool) -> CommitDiff:
    tokens = [NEW.encode()]
    for status, path, oid, mode in rows:
        old_mode, new_mode = ("000000", mode) if status == "A" else (mode, mode)
        if status == "D":
            new_mode = "000000"
        old_oid = "0" * 40 if status == "A" else "9" * 40
        new_oid = "0" * 40 if status == "D" else oid
        tokens += row(f":{old_mode} {new_mode} {old_oid} {new_oid} {status}", path)
    resolver = LinkResolver(_NoGit(), _NoGit())  # type: ignore[arg-type]
    (diff,) = parse_raw(iter(tokens), resolver, plain_rows=plain_rows)
    return diff


@given(st.lists(ROW, min_size=1, max_size=12, unique_by=lambda r: r[1]))
def test_raw_rows_summarize_as_parsed_rows_do(rows: list[tuple[str, str, str, str]]) -> None:
    classifier = BASE_POLICY.classifier()
    raw = _diffs(rows, plain_rows=True)
    parsed = _diffs(rows, plain_rows=False)
    assert raw.rows and not parsed.rows
    assert summarize(raw, classifier, LEDGER, QUOTA) == summarize(
        parsed, BASE_POLICY.classifier(), LEDGER, QUOTA
    )


def test_raw_rows_keep_tests_evidence_values_and_the_append_only_files() -> None:
    rows = [
        ("A", "tests/test_new.py", "1" * 40, "100644"),
        ("M", "tests/test_app.py", "1" * 40, "100644"),
        ("M", "tests/fixtures/a.json", "2" * 40, "100755"),
        ("M", BASE_POLICY.ledger_path, "3" * 40, "100644"),
        ("A", BASE_POLICY.quota_path, "1" * 40, "100644"),
        ("M", "src/app.py", "1" * 40, "100644"),
    ]
    done = summarize(_diffs(rows, plain_rows=True), BASE_POLICY.classifier(), LEDGER, QUOTA)
    assert done.added_tests == ("tests/test_new.py",)
    assert done.changed_tests == ("tests/test_app.py",)
    assert done.evidence_values[:2] == ("tests/fixtures/a.json", value_key("100755", "2" * 40))
    assert done.ledger == (("M", "9" * 40, "3" * 40, BASE_POLICY.ledger_path),)
    assert done.quota == (("A", "0" * 40, "1" * 40, BASE_POLICY.quota_path),)
    assert dict(done.by_class)[paths.PRODUCT] == ("src/app.py",)
    assert dict(done.by_class)[paths.TEST] == ("tests/test_new.py", "tests/test_app.py")


def test_without_the_ledger_path_no_change_is_kept_for_the_append_check() -> None:
    rows = [("M", BASE_POLICY.ledger_path, "3" * 40, "100644")]
    done = summarize(_diffs(rows, plain_rows=True), BASE_POLICY.classifier())
    assert done.ledger == () and done.quota == ()


# -- sets_value: the commit's own diff sets (path, mode, id) ----------------------------------


def _setting(*values: tuple[str, str, str]) -> CommitSummary:
    flat: tuple[str | bytes, ...] = ()
    for path, mode, oid in values:
        flat += (path, value_key(mode, oid))
    return CommitSummary(Oid(NEW), False, (), frozenset(), evidence_values=flat)


def test_sets_value_finds_each_value_the_commit_sets() -> None:
    commit = _setting(
        ("a", "100644", "1" * 40), ("b", "100644", "2" * 40), ("a", "100755", "3" * 40)
    )
    assert sets_value(commit, ("a", "100644", "1" * 40))  # the first pair
    assert sets_value(commit, ("b", "100644", "2" * 40))  # the second
    assert sets_value(commit, ("a", "100755", "3" * 40))  # the path's second pair


def test_sets_value_refuses_another_value_of_the_path_and_a_path_it_does_not_set() -> None:
    commit = _setting(("a", "100644", "1" * 40), ("b", "100644", "2" * 40))
    assert not sets_value(commit, ("a", "100644", "2" * 40))  # b's value, on a
    assert not sets_value(commit, ("b", "100755", "2" * 40))  # another mode
    assert not sets_value(commit, ("c", "100644", "1" * 40))
    assert not sets_value(_setting(), ("a", "100644", "1" * 40))


# -- with_kept: a merge judged as changing what it brought back -------------------------------


def test_with_kept_adds_each_path_once_to_its_class_and_to_kept() -> None:
    merge = summary("src/app.py", "tests/fixtures/a.json", merge=True)
    kept = with_kept(
        merge,
        [
            (paths.FIXTURE, "tests/fixtures/a.json"),
            (paths.ORACLE, "tests/properties/p.py"),
            (paths.ORACLE, "tests/properties/p.py"),
        ],
    )
    by_class = dict(kept.by_class)
    assert by_class[paths.FIXTURE] == ("tests/fixtures/a.json",)
    assert by_class[paths.ORACLE] == ("tests/properties/p.py",)
    assert kept.kept == ("tests/fixtures/a.json", "tests/properties/p.py")
    assert paths.ORACLE in kept.classes


# -- holds: who settles them, where they are accepted -------------------------------------


def _hold() -> Finding:
    return Finding("added-test", HOLD, "refs/heads/topic", None, {}, "new test", "hint")


def test_a_finding_that_is_not_a_hold_never_settles() -> None:
    rejected = _hold()._replace(decision=REJECT)
    assert settle_hold(rejected, BASE_POLICY, who(ALICE), bound=False) is rejected
    assert settle_hold(rejected, BASE_POLICY, who(ALICE), bound=True) is rejected


def test_a_hold_bound_for_nothing_protected_is_reported_not_blocking() -> None:
    settled = settle_hold(_hold(), BASE_POLICY, who(AGENT), bound=False)
    assert settled.blocking is False and settled.accepted_by is None
    assert settled.message == f"new test: {rules_table.HELD}"


def test_a_bound_hold_is_accepted_by_a_reviewer_and_blocks_anyone_else() -> None:
    accepted = settle_hold(_hold(), BASE_POLICY, who(ALICE), bound=True)
    assert accepted.blocking is False and accepted.accepted_by == ALICE
    blocked = settle_hold(_hold(), BASE_POLICY, who(AGENT), bound=True)
    assert blocked.blocking is True and blocked.accepted_by is None


def test_where_a_hold_is_accepted_and_whether_it_blocks() -> None:
    protected, topic = facts(), facts(ref="refs/heads/topic", protected=False)
    checked = facts(ref="refs/heads/topic", protected=False, named_ref=False)
    assert hold_target(protected, BASE_POLICY) == "refs/heads/main"
    assert hold_target(topic, BASE_POLICY) == BASE_POLICY.base
    assert (
        hold_target(facts(ref="refs/heads/rel", named_ref=False), BASE_POLICY) == "refs/heads/main"
    )
    assert holds_block(protected) and holds_block(checked) and not holds_block(topic)


def test_with_no_reviewer_a_hold_says_the_policy_lists_none() -> None:
    nobody = parse_policy(
        b'[identities]\nevidence_writers = ["alice"]\nreviewers = []\n', "base:x.toml"
    )
    (held,) = decide_update(facts(), [summary("A:tests/test_new.py")], nobody, who(AGENT)).findings
    assert held.rule == "added-test" and held.blocking
    assert "by pushing it to refs/heads/main (the policy lists no reviewers" in held.hint
    (named,) = decide_update(
        facts(), [summary("A:tests/test_new.py")], BASE_POLICY, who(AGENT)
    ).findings
    assert "a reviewer (alice) accepts the held change by pushing it, or a merge" in named.hint


# -- the staged change: what pre-commit says ---------------------------------------------------


def _staged(*changed: str, pusher: str = AGENT, protected: bool = True) -> list[Finding]:
    staged = summary(*changed)._replace(oid=STAGED)
    update = facts(ref="refs/heads/main" if protected else "refs/heads/topic", protected=protected)
    return list(
        decide_staged(update, staged, BASE_POLICY, who(pusher), protected=protected).findings
    )


def test_staged_evidence_is_taken_out_with_git_restore_naming_its_paths() -> None:
    (finding,) = _staged("tests/fixtures/a b.json")
    assert finding.rule == "evidence-untrusted" and finding.commit is None
    assert "git restore --staged -- 'tests/fixtures/a b.json'" in finding.hint
    assert "leave it to an evidence writer (alice)" in finding.hint


def test_a_staged_ledger_change_is_left_to_a_ledger_writer() -> None:
    (finding,) = _staged(BASE_POLICY.ledger_path)
    assert f"git restore --staged -- {BASE_POLICY.ledger_path}" in finding.hint
    assert "leave it to a ledger writer (ci-bot)" in finding.hint


def test_a_staged_hold_on_a_protected_branch_says_to_commit_it_apart() -> None:
    (finding,) = _staged("A:tests/test_new.py")
    assert finding.rule == "added-test" and finding.blocking
    assert "commit them on a branch of their own (`git switch -c for-review`" in finding.hint
    assert "for a reviewer to accept (alice)" in finding.hint


def test_a_staged_hold_on_another_branch_is_accepted_when_merged() -> None:
    (finding,) = _staged("A:tests/test_new.py", protected=False)
    assert not finding.blocking
    assert (
        "a reviewer (alice) accepts the held change when this branch is merged into "
        "refs/heads/main" in finding.hint
    )


def test_a_staged_hold_a_reviewer_accepts_keeps_its_hint() -> None:
    (finding,) = _staged("A:tests/test_new.py", pusher=ALICE)
    assert finding.accepted_by == ALICE
    assert "switch -c" not in finding.hint and "when this branch is merged" not in finding.hint


def test_restore_args_lists_up_to_eight_paths_then_their_directories() -> None:
    eight = [f"tests/fixtures/{i}.json" for i in range(8)]
    assert restore_args(eight) == " ".join(sorted(eight))
    nine = [f"tests/fixtures/d{i % 2}/{i}.json" for i in range(9)]
    assert restore_args(nine) == "tests/fixtures/d0 tests/fixtures/d1"
    top = [f"f{i}.json" for i in range(9)]  # no directory: the paths themselves
    assert restore_args(top) == "PATH... (each evidence path listed above)"
    dirs = [f"d{i}/f{i}.json" for i in range(9)]
    assert restore_args(dirs) == "PATH... (each evidence path listed above)"
    few_dirs = [f"d{i % 8}/f{i}.json" for i in range(9)]
    assert restore_args(few_dirs) == " ".join(f"d{i}" for i in range(8))
    assert restore_args(["a", "a"]) == "a"


# -- what a mixed commit mixes ----------------------------------------------------------------


def test_mix_message_names_every_evidence_class_in_order_and_what_is_beside() -> None:
    mixed = summary("tests/goldens/out.txt", "tests/fixtures/a.json", "src/app.py", "Makefile")
    assert mix_message(mixed) == ("commit mixes evidence (fixture) with product and other paths")
    both = summary("tests/properties/p.py", "tests/fixtures/a.json", "tests/test_app.py")
    assert mix_message(both) == "commit mixes evidence (fixture, oracle) with test code"
    assert mix_message(both._replace(oid=STAGED)).startswith("the staged change mixes")
    assert mix_message(both._replace(merge=True)).startswith("merge mixes")


def test_mix_message_of_a_merge_names_what_it_brought_back() -> None:
    merge = summary("src/app.py", merge=True)
    kept = with_kept(merge, [(paths.ORACLE, "tests/properties/p.py")])
    assert mix_message(kept) == (
        "merge brings back an older copy of evidence (oracle) and mixes it with product"
    )


# -- the policy and labels files a push or a commit leaves -------------------------------------


def test_a_file_that_parses_leaves_no_finding() -> None:
    for decide in (
        decide_policy_file,
        decide_labels_file,
        decide_staged_policy,
        decide_staged_labels,
    ):
        assert decide(facts(), None, "tests/labels.tsv") == []


def test_a_file_that_does_not_parse_is_policy_invalid_naming_it() -> None:
    for decide in (
        decide_policy_file,
        decide_labels_file,
        decide_staged_policy,
        decide_staged_labels,
    ):
        (finding,) = decide(facts(), "line 2: no tab", "tests/labels.tsv")
        assert (finding.rule, finding.decision) == ("policy-invalid", REJECT)
        assert finding.paths == {paths.POLICY: ["tests/labels.tsv"]}
        assert finding.message == "line 2: no tab"


def test_braces_in_a_labels_path_are_shown_as_written() -> None:
    (pushed,) = decide_labels_file(facts(), "line 1: bad", "tests/{x}.tsv")
    assert "correct tests/{x}.tsv at the line named" in pushed.hint
    (staged,) = decide_staged_labels(facts(), "line 1: bad", "tests/{x}}.tsv")
    assert "correct tests/{x}}.tsv at the line named" in staged.hint


# -- append-only findings: the hint for a range with a base and without -------------------------


def test_an_append_only_problem_takes_the_hint_for_its_range() -> None:
    hints = {"ledger-rewrite": ("with a base {base}", "without a base")}
    problem = LedgerProblem("ledger-rewrite", 3, "line 3 changed")
    (based,) = decide_ledger(facts(), [(None, problem)], "q.jsonl", hints)  # type: ignore[arg-type]
    (rootless,) = decide_ledger(facts(base=None), [(None, problem)], "q.jsonl", hints)  # type: ignore[arg-type]
    assert based.hint == f"with a base {facts().base[:12]}"  # type: ignore[index]
    assert rootless.hint == "without a base"
    assert based.message == "q.jsonl: line 3: line 3 changed"


# -- paths: the parts the policy tables do not reach ------------------------------------------


def test_a_lock_root_no_glob_names_raises_each_directory_above_it_to_evidence() -> None:
    classifier = paths.Classifier({paths.PRODUCT: ("src/**",)}, extra_roots=("data/locked",))
    above, at = classifier.structural("data"), classifier.structural("data/locked")
    assert (above.klass, above.reason) == (paths.FIXTURE, "above evidence root data/locked/")
    assert (at.klass, at.reason) == (paths.FIXTURE, "at evidence root data/locked/")
    assert classifier.structural("src/app.py").klass == paths.PRODUCT


def test_a_row_with_no_ids_and_no_raw_row_has_empty_ids() -> None:
    assert paths.Change("M", "100644", "100644", "", "", "p").object_ids() == ("", "")
    raw = paths.Change("M", "100644", "100644", "", "", "p", raw_meta=b":100644 100644 a b M")
    assert raw.object_ids() == ("a", "b")


def test_an_error_finding_blocks() -> None:
    finding = rules_findings.error_finding("usage-error", "bad", "fix it")
    assert finding.blocking is True and finding.decision == REJECT


def test_a_hint_names_the_commit_short_and_nothing_when_there_is_none() -> None:
    def hint(commit: str | None) -> str:
        oid = None if commit is None else Oid(commit)
        return rules_findings._finding(
            "mixed-commit", "refs/heads/x", commit=oid, message="m", hint="[{commit}] {ref}"
        ).hint

    assert hint("0123456789abcdef" * 2 + "01234567") == "[0123456789ab] refs/heads/x"
    assert hint(None) == "[] refs/heads/x"


# -- the policy's [labels] table and its derived names ------------------------------------------

IDENTITIES = '[identities]\nevidence_writers = ["alice"]\n'


def _labels_policy(table: str) -> Policy:
    return parse_policy(f"{IDENTITIES}[labels]\n{table}".encode(), "base:.git-evidence.toml")


def _labels_error(table: str) -> str:
    with pytest.raises(PolicyError) as caught:
        _labels_policy(table)
    return str(caught.value)


def test_labels_paths_are_plain_paths_kept_without_their_slashes() -> None:
    assert _labels_policy('path = "/tests/labels.tsv/"\n').labels_path == "tests/labels.tsv"
    assert _labels_policy('quota_path = "§"\n').quota_path == "§"  # a name, not a marker
    assert _labels_policy('path = "/tests/§/"\n').labels_path == "tests/§"
    assert "must be a plain path" in _labels_error('path = "tests/*.tsv"\n')
    assert "must be a plain path" in _labels_error('quota_path = "tests/q[12].jsonl"\n')
    assert "empty glob" in _labels_error('path = "/"\n')


@pytest.mark.parametrize("value", ["true", '"2"', "-1", "11", "2.0"])
def test_retries_outside_zero_to_ten_whole_numbers_are_refused(value: str) -> None:
    assert "expected a whole number from 0 to 10" in _labels_error(f"retries = {value}\n")


def test_retries_take_every_whole_number_from_zero_to_ten() -> None:
    assert labels.MAX_RETRIES == 10
    assert [_labels_policy(f"retries = {n}\n").retries for n in (0, 1, 10)] == [0, 1, 10]
    assert parse_policy(IDENTITIES.encode(), "base:x").retries == 2  # the default


def test_verdict_writers_default_to_the_lock_writers() -> None:
    assert BASE_POLICY.verdict_writer_names == BASE_POLICY.lock_writers == frozenset({CI})
    named = BASE_POLICY._replace(verdict_writers=frozenset({"judge-bot"}))
    assert named.verdict_writer_names == frozenset({"judge-bot"})


def test_a_ledger_and_quota_elsewhere_are_still_classified_as_ledger() -> None:
    text = f'{IDENTITIES}[ledger]\npath = "ci/freeze.jsonl"\n[labels]\nquota_path = "ci/q.jsonl"\n'
    moved = parse_policy(text.encode(), "base:x")
    classifier = moved.classifier()
    assert classifier.classify("ci/freeze.jsonl").klass == paths.LEDGER
    assert classifier.classify("ci/q.jsonl").klass == paths.LEDGER
    assert classifier.classify("other/ci/freeze.jsonl").klass != paths.LEDGER  # anchored


def test_the_rules_legend_explains_each_placeholder_and_nothing_written_out() -> None:
    # `git evidence rules` lists a field with its meaning; a field filled with words
    # ("an evidence writer …", "[rules].base") is read as it stands.
    for name, (shown, meaning) in rules_table.FIELDS.items():
        assert bool(meaning) == shown.isupper(), name
