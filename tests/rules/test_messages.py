"""Messages that say what to do, in the place they are read: pre-commit speaks of the
index (never of pushes), mixed-commit says what it mixes, a branch with no common
history says so, no hint shows a placeholder, `verify --worktree` ends with a line that
agrees with its exit status and compares files as git checks them in, post-receive
prints a short pin digest, and a broken committed policy says how to commit the fix."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from helpers.pushes import refused, remote
from helpers.repos import SEED, Work, clone_of, evidence, git, make_remote, make_server

from git_evidence.core import paths
from git_evidence.core.facts import CommitSummary
from git_evidence.core.oids import Oid
from git_evidence.core.paths import PathClass
from git_evidence.rules import table
from git_evidence.rules.range_rules import mix_message
from git_evidence.rules.table import RuleId

AGENT = "agent-bot"
NOTES = "refs/notes/evidence"
# Words a message about the staged change must not use: nothing is pushed yet.
PUSH_WORDS = ("push", "ref update", "<base>")


@pytest.fixture
def hooked(tmp_path: Path) -> Work:
    """A clone with the client hooks, of a remote with no server hook."""
    work = clone_of(tmp_path, make_remote(tmp_path), "hooked")
    assert evidence(work.path, "install").returncode == 0
    return work


def joined(text: str) -> str:
    """Wrapped report lines joined back into one line each."""
    return re.sub(r"\n {4}(?![a-z_]+: )", " ", text)


def no_push_words(text: str) -> None:
    lowered = text.lower()
    for word in PUSH_WORDS:
        assert word not in lowered, f"{word!r} in pre-commit output:\n{text}"


def commit_fails(work: Work, message: str) -> str:
    result = work.git("commit", "-m", message, check=False)
    assert result.returncode != 0, result.stderr
    return result.stderr


# -- pre-commit ---------------------------------------------------------------------------


def test_pre_commit_mixed_commit_says_how_to_take_the_evidence_out(hooked: Work) -> None:
    hooked.write("src/app.py", "bug\n")
    hooked.write("tests/fixtures/a.json", "{}\n")
    hooked.write("tests/fixtures/интервью 1.json", "{}\n")
    hooked.git("add", "-A")
    said = joined(commit_fails(hooked, "mixed"))
    assert (
        "mixed-commit: refs/heads/main: the staged change mixes evidence (fixture) with product"
        in said
    )
    assert "fixture: tests/fixtures/a.json" in said
    assert (
        "`git restore --staged -- tests/fixtures/a.json 'tests/fixtures/интервью 1.json'`" in said
    )
    assert "once committed, `git evidence split`" in said
    assert "git config evidence.trusted true" in said
    assert "refused: the staged change (this clone;" in said
    no_push_words(said)


def test_pre_commit_restore_command_takes_exactly_the_evidence_out(hooked: Work) -> None:
    hooked.write("src/app.py", "bug\n")
    hooked.write("tests/fixtures/a.json", "{}\n")
    hooked.git("add", "-A")
    said = joined(commit_fails(hooked, "mixed"))
    command = re.search(r"`(git restore --staged -- [^`]+)`", said)
    assert command is not None, said
    subprocess.run(command.group(1), shell=True, cwd=hooked.path, check=True)
    staged = hooked.git("diff", "--cached", "--name-only").stdout.split()
    assert staged == ["src/app.py"]
    assert hooked.git("commit", "-qm", "product alone", check=False).returncode == 0


def test_pre_commit_evidence_in_an_untrusted_clone_names_the_writers(hooked: Work) -> None:
    hooked.write("tests/goldens/out.txt", "moved\n")
    hooked.git("add", "-A")
    said = joined(commit_fails(hooked, "golden"))
    assert "evidence-untrusted: refs/heads/main: this clone may not change evidence" in said
    assert "`git restore --staged -- tests/goldens/out.txt`" in said
    assert "leave it to an evidence writer (alice)" in said
    assert "in a person's own clone, `git config evidence.trusted true`" in said
    no_push_words(said)


def test_pre_commit_hold_on_main_says_how_to_reach_a_reviewer(hooked: Work) -> None:
    hooked.write("tests/test_new.py", "def test(): pass\n")
    hooked.git("add", "-A")
    said = joined(commit_fails(hooked, "test"))
    assert "added-test: refs/heads/main: new test files" in said
    assert "`git switch -c for-review` keeps what is staged" in said
    no_push_words(said)


def test_pre_commit_hold_on_a_branch_speaks_of_merging_not_pushing(hooked: Work) -> None:
    hooked.git("checkout", "-qb", "feat")
    hooked.write(".github/workflows/ci.yml", "on: push\n")
    hooked.git("add", "-A")
    result = hooked.git("commit", "-m", "ci", check=False)
    assert result.returncode == 0, result.stderr
    said = joined(result.stderr)
    assert "other-path: refs/heads/feat: paths in no class: held for review" in said
    assert "when this branch is merged into refs/heads/main" in said
    assert "allowed: the staged change" in said
    no_push_words(said.replace(".github/workflows/ci.yml", "CI"))


def test_pre_commit_refuses_a_staged_policy_that_does_not_parse(hooked: Work) -> None:
    hooked.git("config", "evidence.trusted", "true")
    hooked.write(".git-evidence.toml", "[rules]\nbogus = 1\n")
    hooked.git("add", "-A")
    said = joined(commit_fails(hooked, "policy"))
    assert "policy-invalid: refs/heads/main: staged:.git-evidence.toml:2: rules.bogus" in said
    assert "git add -- .git-evidence.toml" in said
    no_push_words(said)


def _break_the_remote_policy(work: Work) -> None:
    """A broken policy reaches the remote's main around the hooks (from before they
    were installed, say), and this clone fetches it."""
    work.write(".git-evidence.toml", "[rules]\nbogus = 1\n")
    work.git("commit", "-qam", "broken policy", "--no-verify")
    assert work.git("push", "-q", "--no-verify", "origin", "HEAD:main", check=False).returncode == 0
    work.git("fetch", "-q", "origin", "+refs/heads/main:refs/remotes/origin/main")


def test_broken_committed_policy_says_how_to_commit_the_fix(hooked: Work) -> None:
    _break_the_remote_policy(hooked)
    hooked.write("src/app.py", "v2\n")
    hooked.git("add", "-A")
    result = hooked.git("commit", "-m", "product", check=False)
    assert result.returncode != 0
    said = joined(result.stderr)
    assert "policy-error: base:.git-evidence.toml:2: rules.bogus: unknown key" in said
    assert "fix .git-evidence.toml and commit it alone" in said
    assert "the server validates it (policy-invalid)" in said
    no_push_words(said)


def test_broken_committed_policy_lets_the_fix_alone_through(hooked: Work) -> None:
    _break_the_remote_policy(hooked)
    hooked.write(".git-evidence.toml", SEED[".git-evidence.toml"])
    hooked.git("add", "-A")
    result = hooked.git("commit", "-m", "fix the policy", check=False)
    assert result.returncode == 0, result.stderr
    assert "this commit corrects .git-evidence.toml alone" in joined(result.stderr)
    no_push_words(result.stderr)


def test_broken_policy_fix_with_a_product_change_is_refused(hooked: Work) -> None:
    _break_the_remote_policy(hooked)
    hooked.write(".git-evidence.toml", SEED[".git-evidence.toml"])
    hooked.write("src/app.py", "v2\n")
    hooked.git("add", "-A")
    assert "fix .git-evidence.toml and commit it alone" in joined(commit_fails(hooked, "both"))


def test_broken_committed_policy_in_pre_push_says_how_to_commit_the_fix(hooked: Work) -> None:
    _break_the_remote_policy(hooked)
    hooked.git("checkout", "-qb", "feat")
    hooked.write("src/app.py", "v2\n")
    hooked.git("commit", "-qam", "product", "--no-verify")
    result = hooked.push("origin", "feat")
    assert result.returncode != 0
    said = joined(result.stderr)
    assert "fix .git-evidence.toml and commit it alone" in said
    assert "policy-invalid" in said


# -- mixed-commit names what it mixes --------------------------------------------------------


def summary(*classes: PathClass, merge: bool = False) -> CommitSummary:
    by_class = tuple((k, (f"{k}/x",)) for k in classes)
    return CommitSummary(Oid("c" * 40), merge, by_class, frozenset(classes))


@pytest.mark.parametrize(
    ("classes", "said"),
    [
        ((paths.FIXTURE, paths.TEST), "commit mixes evidence (fixture) with test code"),
        ((paths.FIXTURE, paths.PRODUCT), "commit mixes evidence (fixture) with product"),
        ((paths.ORACLE, paths.OTHER), "commit mixes evidence (oracle) with other paths"),
        (
            (paths.OTHER, paths.ORACLE, paths.TEST, paths.FIXTURE, paths.PRODUCT),
            "commit mixes evidence (fixture, oracle) with product, test code and other paths",
        ),
        ((paths.POLICY, paths.PRODUCT, paths.TEST), "with product and test code"),
    ],
)
def test_mixed_commit_message_names_what_it_mixes(
    classes: tuple[PathClass, ...], said: str
) -> None:
    assert said in mix_message(summary(*classes))


def test_mixed_merge_says_merge() -> None:
    message = mix_message(summary(paths.FIXTURE, paths.PRODUCT, merge=True))
    assert message == "merge mixes evidence (fixture) with product"


def test_pushed_mixed_commit_with_test_code_says_so(work: Work) -> None:
    work.commit("mixed", {"tests/test_app.py": "t\n", "tests/goldens/out.txt": "g\n"})
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert refused(result, "mixed-commit")
    assert "commit mixes evidence (fixture) with test code" in remote(result)


# -- placeholders ---------------------------------------------------------------------------

SAMPLE = {
    "commit": "1a2b3c4d5e6f",
    "ref": "refs/heads/feat",
    "base_ref": "refs/heads/main",
    "locked": "0f1e2d3c4b5a",
    "path": "tests/freeze.jsonl",
    "writers": "alice",
    "role": "an evidence writer",
    "namespaces": "refs/heads/, refs/tags/",
    "accept": "a reviewer (bob) accepts the held change by pushing it to refs/heads/main",
}


@pytest.mark.parametrize("base", ["9f8e7d6c5b4a", None, ""])
@pytest.mark.parametrize("rule", sorted(table.RULES))
def test_every_hint_is_filled(rule: RuleId, base: str | None) -> None:
    hint = table.fill(rule, table.RULES[rule][1], base=base, **SAMPLE)
    assert "<" not in hint
    assert "{" not in hint and "}" not in hint, hint
    if not base:
        assert "`git rebase -i `" not in hint and "lock  " not in hint and "  " not in hint


def test_every_hint_without_a_base_says_why() -> None:
    for rule, template in table.NO_BASE.items():
        hint = table.fill(rule, table.RULES[rule][1], base=None, **SAMPLE)
        assert hint == template.format(**SAMPLE)
        assert "9f8e7d6c5b4a" not in hint


def test_staged_hints_are_filled() -> None:
    for rule in table.STAGED_HINTS:
        hint = table.STAGED_HINTS[rule].format(evidence="tests/fixtures/a.json", **SAMPLE)
        no_push_words(hint)


def test_rules_command_fills_or_explains_every_placeholder() -> None:
    result = evidence(".", "rules")
    assert result.returncode == 0
    assert "{" not in result.stdout and "<base>" not in result.stdout
    listing, _, legend = result.stdout.partition("\n\n")
    explained = {line.split(":")[0].strip() for line in legend.splitlines() if line}
    used = set(re.findall(r"\b[A-Z]{3,}\b", listing)) - {"HEAD"}
    assert used <= explained, used - explained
    assert {"BASE", "COMMIT", "REF"} <= explained


def test_no_rule_text_says_nobody_yet() -> None:
    text = " ".join(h for _, h in table.RULES.values()) + " ".join(table.NO_BASE.values())
    assert "nobody" not in text


def test_no_writers_listed_says_how_to_add_one(tmp_path: Path) -> None:
    work = clone_of(tmp_path, make_server(tmp_path, {".git-evidence.toml": ""}))
    work.commit("golden", {"tests/goldens/out.txt": "moved\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    said = remote(result)
    assert (
        "the policy lists no evidence writers: add one in [identities] with a reviewed "
        "policy change" in said
    )
    assert "nobody" not in said


# -- a branch with no common history --------------------------------------------------------


def test_branch_with_no_common_history_says_so(work: Work) -> None:
    work.git("checkout", "-q", "--orphan", "lone")
    work.git("rm", "-rqf", ".")
    tip = work.commit("orphan", {"src/x.py": "p\n", "tests/fixtures/z.json": "{}\n"})
    result = work.push("origin", "lone", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    said = remote(result)
    assert "refs/heads/lone: reject (1 commit, no history in common with the base)" in said
    assert "refs/heads/lone has no history in common with refs/heads/main" in said
    assert "`git rebase -i --root`" in said
    assert f"since {tip[:12]}" not in said
    assert f"rebase -i {tip[:12]}" not in said
    assert "<base>" not in said and "--range" not in said


def test_first_push_of_the_base_says_it_creates_it_not_that_it_shares_no_history(
    tmp_path: Path,
) -> None:
    bare = tmp_path / "empty.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    assert evidence(bare, "install", "--server").returncode == 0
    work = Work(tmp_path / "w")
    git(tmp_path, "init", "-q", str(work.path))
    work.commit("seed", {"src/x.py": "p\n", "tests/fixtures/z.json": "{}\n"})
    result = work.push(str(bare), "HEAD:refs/heads/main", pusher=AGENT)
    assert refused(result, "evidence-untrusted")
    said = remote(result)
    assert "refs/heads/main: reject (1 commit, creating the base)" in said
    assert "refs/heads/main does not exist yet: this push creates it" in said
    assert "has no history in common" not in said


def test_a_case_variant_of_an_existing_base_is_not_said_to_create_it(work: Work) -> None:
    work.git("checkout", "-q", "--orphan", "other")
    work.git("rm", "-rqf", ".")
    work.commit("orphan", {"src/x.py": "p\n", "tests/fixtures/z.json": "{}\n"})
    result = work.push("origin", "HEAD:refs/heads/Main", pusher=AGENT)
    said = remote(result)
    assert refused(result, "evidence-untrusted")
    assert "refs/heads/Main has no history in common with refs/heads/main" in said
    assert "does not exist yet" not in said and "creating the base" not in said


def test_check_of_the_base_with_no_common_history_is_not_said_to_create_it(work: Work) -> None:
    work.git("checkout", "-q", "--orphan", "lone")
    work.git("rm", "-rqf", ".")
    work.commit("orphan", {"src/x.py": "p\n", "tests/fixtures/z.json": "{}\n"})
    work.git("branch", "-f", "main", "lone")
    result = evidence(work.path, "check", "refs/heads/main", "--as", AGENT)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "does not exist yet" not in result.stdout
    assert "creating the base" not in result.stdout


def test_check_of_a_branch_with_no_common_history_says_so(work: Work) -> None:
    work.git("checkout", "-q", "--orphan", "lone")
    work.git("rm", "-rqf", ".")
    work.commit("orphan", {"src/x.py": "p\n", "tests/fixtures/z.json": "{}\n"})
    result = evidence(work.path, "check", "origin/main..lone", "--as", AGENT)
    assert result.returncode == 1
    assert "no history in common with refs/heads/main" in joined(result.stdout)
    assert "<base>" not in result.stdout


# -- verify --worktree ------------------------------------------------------------------------


def pin_main(work: Work) -> None:
    work.git("fetch", "-q", "origin")
    assert evidence(work.path, "lock", "origin/main").returncode == 0
    assert work.push("origin", NOTES, pusher="ci-bot").returncode == 0


def last_line(result: subprocess.CompletedProcess[str]) -> str:
    return result.stdout.rstrip("\n").splitlines()[-1]


def test_verify_worktree_last_line_agrees_with_the_exit_status(work: Work) -> None:
    pin_main(work)
    clean = evidence(work.path, "verify", "--worktree")
    assert clean.returncode == 0, clean.stdout
    assert last_line(clean).startswith("git-evidence: verified: the working tree matches")
    work.write("tests/fixtures/a.json", '{"a": 2}\n')
    drifted = evidence(work.path, "verify", "--worktree")
    assert drifted.returncode == 1
    assert last_line(drifted) == (
        "git-evidence: not verified: the working tree differs from the lock in 1 file(s)"
    )


def test_verify_last_line_names_a_refused_range(work: Work) -> None:
    pin_main(work)
    base = work.head()
    work.commit("new test", {"tests/test_new.py": "def test(): pass\n"})
    result = evidence(work.path, "verify", "--base", base)
    assert result.returncode == 1
    assert last_line(result) == "git-evidence: not verified: the range is not allowed"


def test_verify_reasons_too_long_for_the_last_line_go_above_it(work: Work) -> None:
    pin_main(work)
    base = work.head()
    work.commit("new test", {"tests/test_new.py": "def test(): pass\n"})
    work.write("tests/fixtures/a.json", '{"a": 2}\n')
    result = evidence(work.path, "verify", "--worktree", "--base", base)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert [line for line in lines if len(line) > 80] == []
    assert lines[-1] == "git-evidence: not verified: for the 2 reasons above"
    assert lines[-3:-1] == [
        "  the working tree differs from the lock in 1 file(s)",
        "  the range is not allowed",
    ]


CRLF = {
    ".gitattributes": "tests/fixtures/** text eol=crlf\n",
    "tests/fixtures/интервью.json": '{"k": "v"}\n{"k": 2}\n',
    'tests/fixtures/"quoted"\\back.txt': "a\nb\n",
    "tests/fixtures/new\nline.txt": "x\ny\n",
}


def test_verify_worktree_matches_a_crlf_checkout(tmp_path: Path) -> None:
    server = make_server(tmp_path, CRLF)
    work = clone_of(tmp_path, server, "crlf")
    on_disk = (work.path / "tests/fixtures/a.json").read_bytes()
    assert on_disk == b'{"a": 1}\r\n'  # git converted it at checkout
    assert (work.path / "tests/fixtures/new\nline.txt").read_bytes() == b"x\r\ny\r\n"
    pin_main(work)
    result = evidence(work.path, "verify", "--worktree")
    assert result.returncode == 0, result.stdout
    assert "differs" not in result.stdout
    assert last_line(result).startswith("git-evidence: verified:")


def test_verify_worktree_still_sees_a_changed_crlf_fixture(tmp_path: Path) -> None:
    work = clone_of(tmp_path, make_server(tmp_path, CRLF), "crlf")
    pin_main(work)
    (work.path / "tests/fixtures/new\nline.txt").write_bytes(b"x\r\nz\r\n")
    result = evidence(work.path, "verify", "--worktree")
    assert result.returncode == 1
    assert 'modified: "tests/fixtures/new\\nline.txt" (' in result.stdout
    assert last_line(result).startswith("git-evidence: not verified:")


def test_verify_worktree_sees_a_line_ending_change_without_attributes(work: Work) -> None:
    pin_main(work)
    (work.path / "tests/fixtures/a.json").write_bytes(b'{"a": 1}\r\n')
    result = evidence(work.path, "verify", "--worktree")
    assert result.returncode == 1
    assert "modified: tests/fixtures/a.json" in result.stdout


# -- post-receive ----------------------------------------------------------------------------


def test_post_receive_pinned_line_prints_a_short_digest(work: Work) -> None:
    work.commit("product", {"src/app.py": "v2\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    line = next(x for x in remote(result).splitlines() if "pinned refs/heads/main" in x)
    assert re.fullmatch(
        rf"git-evidence: pinned refs/heads/main at {work.head()[:12]}: sha256:[0-9a-f]{{12}}",
        line,
    ), line
