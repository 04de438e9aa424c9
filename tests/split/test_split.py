"""`git evidence split`: a mixed commit becomes an evidence commit and a product commit,
built from git objects; the results are pushed for real into a protected server."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.pushes import AGENT, refused, remote, server_tip
from helpers.repos import Work, evidence, git

Kind = Callable[[Work], tuple[set[str], set[str]]]
IDENTITY = "--format=%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd"
# The mixed commits are made by someone else, at another time, than the split is run.
MADE_BY = {
    "GIT_AUTHOR_NAME": "Ann Author",
    "GIT_AUTHOR_EMAIL": "ann@example.org",
    "GIT_AUTHOR_DATE": "2025-03-04T05:06:07+02:00",
    "GIT_COMMITTER_NAME": "Carl Committer",
    "GIT_COMMITTER_EMAIL": "carl@example.org",
    "GIT_COMMITTER_DATE": "2025-03-05T01:02:03-07:00",
}
SPLIT_BY = {
    "GIT_AUTHOR_NAME": "Somebody Else",
    "GIT_COMMITTER_NAME": "Somebody Else",
    "GIT_AUTHOR_DATE": "2030-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2030-01-01T00:00:00Z",
}


def split(work: Work, *args: str, env: dict[str, str] | None = None) -> str:
    """Run the split; it must succeed. Its standard output."""
    result = evidence(work.path, "split", *args, env={**SPLIT_BY, **(env or {})})
    assert result.returncode == 0, result.stderr
    return result.stdout


def split_fails(work: Work, *args: str) -> str:
    """Run the split; it must refuse with exit 2 and one line. That line."""
    result = evidence(work.path, "split", *args)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    return result.stderr


def commit_all(work: Work, message: str) -> str:
    work.git("add", "-A")
    work.git("commit", "-q", "-m", message, "-m", "Why: the body stays.", env=MADE_BY)
    return work.head()


def changed_raw(work: Work, rev: str) -> list[bytes]:
    """The paths ``rev`` changes, as bytes (``diff-tree -z``)."""
    out = subprocess.run(
        ["git", "diff-tree", "--root", "--no-renames", "-r", "-z", "--name-only", rev],
        cwd=work.path,
        capture_output=True,
        check=True,
    ).stdout
    return [p for p in out.split(b"\0")[1:] if p]


def changed(work: Work, rev: str) -> set[str]:
    return {os.fsdecode(p) for p in changed_raw(work, rev)}


def tree_git_would_build(work: Work, commit: str, paths: set[str], tmp: Path) -> str:
    """The tree git itself makes of ``commit``'s parent with ``commit``'s changes to
    ``paths`` applied: a temporary index, `update-index --index-info`, `write-tree`."""
    env = {"GIT_INDEX_FILE": str(tmp / f"expected-{commit}")}
    parent = work.git("log", "-1", "--format=%P", commit).stdout.split()
    work.git("read-tree", *(parent[:1] or ["--empty"]), env=env)
    raw = subprocess.run(
        ["git", "diff-tree", "--root", "--no-renames", "-r", "-z", "--raw", commit],
        cwd=work.path,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")[1:-1]
    rows = b""
    for meta, path in zip(raw[::2], raw[1::2], strict=True):
        if os.fsdecode(path) in paths:
            _, new_mode, _, new_oid, _ = meta.split()
            rows += b"%s %s\t%s\0" % (new_mode, new_oid, path)
    work.git("update-index", "-z", "--index-info", input=rows, env=env)
    return work.git("write-tree", env=env).stdout.strip()


def message(work: Work, rev: str) -> str:
    return work.git("log", "-1", "--format=%B", rev).stdout


def assert_split(
    work: Work, original: str, evidence_paths: set[str], product_paths: set[str]
) -> None:
    """HEAD is the product half on the evidence half on the original's parent, with the
    original's tree, identities and message."""
    ev, product = work.head("HEAD~1"), work.head()
    parents = work.git("log", "-1", "--format=%P", original).stdout.split()
    assert work.git("log", "-1", "--format=%P", ev).stdout.split() == parents
    assert changed(work, ev) == evidence_paths
    assert changed(work, product) == product_paths
    expected = tree_git_would_build(work, original, evidence_paths, work.path.parent)
    assert work.head(f"{ev}^{{tree}}") == expected
    assert work.head("HEAD^{tree}") == work.head(f"{original}^{{tree}}")
    for half in (ev, product):
        identity = work.git("log", "-1", IDENTITY, "--date=raw", half).stdout
        assert identity == work.git("log", "-1", IDENTITY, "--date=raw", original).stdout
    subject, _, body = message(work, original).partition("\n")
    assert message(work, ev) == f"{subject} (evidence)\n{body}"
    assert message(work, product) == f"{subject} (product)\n{body}"


# -- each kind of mixed commit, split, then pushed by an evidence writer -------------


def modified(work: Work) -> tuple[set[str], set[str]]:
    work.write("src/app.py", "print('fixed')\n")
    work.write("tests/fixtures/a.json", '{"a": 2}\n')
    work.write("docs/guide.md", "neutral rides with the product\n")
    return {"tests/fixtures/a.json"}, {"src/app.py", "docs/guide.md"}


def oracle(work: Work) -> tuple[set[str], set[str]]:
    work.write("src/app.py", "print('v2')\n")
    work.write("tests/oracles/prop.txt", "loosened\n")
    return {"tests/oracles/prop.txt"}, {"src/app.py"}


def beside_test_code(work: Work) -> tuple[set[str], set[str]]:
    work.write("tests/test_app.py", "def test_app():\n    assert True\n")
    work.write("tests/goldens/out.txt", "new golden\n")
    return {"tests/goldens/out.txt"}, {"tests/test_app.py"}


def symlink(work: Work) -> tuple[set[str], set[str]]:
    work.write("src/app.py", "print('reads the link')\n")
    os.symlink("../tests/fixtures", work.path / "src/data")
    return {"src/data"}, {"src/app.py"}


def gitlink(work: Work) -> tuple[set[str], set[str]]:
    work.write("src/app.py", "print('vendored')\n")
    vendor = Work(work.path / "tests/fixtures/vendor")
    git(work.path, "init", "-q", str(vendor.path))
    vendor.commit("vendored", {"data.json": "{}\n"})
    return {"tests/fixtures/vendor"}, {"src/app.py"}


def mode_only(work: Work) -> tuple[set[str], set[str]]:
    work.write("src/app.py", "print('exec')\n")
    target = work.path / "tests/fixtures/a.json"
    target.chmod(target.stat().st_mode | stat.S_IXUSR)
    work.git("update-index", "--chmod=+x", "tests/fixtures/a.json")
    return {"tests/fixtures/a.json"}, {"src/app.py"}


def deletion(work: Work) -> tuple[set[str], set[str]]:
    (work.path / "tests/fixtures/b.json").unlink()
    (work.path / "docs/guide.md").unlink()
    work.write("src/app.py", "print('no b')\n")
    return {"tests/fixtures/b.json"}, {"src/app.py", "docs/guide.md"}


def emptied_directory(work: Work) -> tuple[set[str], set[str]]:
    (work.path / "tests/goldens/out.txt").unlink()
    work.write("src/app.py", "print('no golden')\n")
    return {"tests/goldens/out.txt"}, {"src/app.py"}


def directory_becomes_file(work: Work) -> tuple[set[str], set[str]]:
    work.write("tests/fixtures/set/one.json", "1\n")
    work.write("tests/fixtures/set/two.json", "2\n")
    commit_all(work, "a fixture set")
    shutil.rmtree(work.path / "tests/fixtures/set")
    work.write("tests/fixtures/set", "one file now\n")
    work.write("src/app.py", "print('reads one file')\n")
    paths = {"tests/fixtures/set", "tests/fixtures/set/one.json", "tests/fixtures/set/two.json"}
    return paths, {"src/app.py"}


def rename_across(work: Work) -> tuple[set[str], set[str]]:
    work.write("src/util.py", "print('util')\n")
    commit_all(work, "util")
    work.git("mv", "src/util.py", "tests/fixtures/util.py")
    work.write("src/app.py", "print('no util')\n")
    return {"tests/fixtures/util.py"}, {"src/util.py", "src/app.py"}


def gitattributes(work: Work) -> tuple[set[str], set[str]]:
    work.write(".gitattributes", "*.json -text\n")
    work.write("src/app.py", "print('attrs')\n")
    return {".gitattributes"}, {"src/app.py"}


def policy_file(work: Work) -> tuple[set[str], set[str]]:
    policy = work.path / ".git-evidence.toml"
    policy.write_text(policy.read_text() + "# reviewed\n")
    work.write("src/app.py", "print('policy')\n")
    return {".git-evidence.toml"}, {"src/app.py"}


KINDS: list[Kind] = [
    modified,
    oracle,
    symlink,
    gitlink,
    mode_only,
    deletion,
    emptied_directory,
    directory_becomes_file,
    rename_across,
    gitattributes,
    policy_file,
]


@pytest.mark.parametrize("kind", KINDS, ids=lambda kind: kind.__name__)
def test_mixed_commit_splits_and_an_evidence_writer_pushes_both(work: Work, kind: Kind) -> None:
    evidence_paths, product_paths = kind(work)
    original = commit_all(work, f"mixed: {kind.__name__}")
    assert refused(work.push("origin", "HEAD:main", pusher="alice"), "mixed-commit")
    out = split(work)
    assert f"split {original[:12]} mixed: {kind.__name__}" in out
    assert_split(work, original, evidence_paths, product_paths)
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr
    assert server_tip(work) == work.head()


def test_test_code_beside_a_golden_splits_into_halves_held_only_for_review(work: Work) -> None:
    evidence_paths, product_paths = beside_test_code(work)
    original = commit_all(work, "loosen the test and the golden")
    split(work)
    assert_split(work, original, evidence_paths, product_paths)
    # alice, an evidence writer, is a reviewer by default: her push accepts the hold.
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr
    assert "accepted by alice: test-edit" in remote(result)
    assert "mixed-commit" not in remote(result)


def test_split_result_is_judged_clean_by_check(work: Work) -> None:
    modified(work)
    commit_all(work, "fix")
    assert evidence(work.path, "check", "--as", "alice").returncode == 1
    split(work)
    result = evidence(work.path, "check", "--as", "alice")
    assert result.returncode == 0, result.stdout + result.stderr


def test_split_is_deterministic(work: Work) -> None:
    modified(work)
    original = commit_all(work, "fix")
    split(work)
    first = work.head()
    work.git("update-ref", "refs/heads/main", original)
    split(work, env={"GIT_COMMITTER_DATE": "2040-02-02T00:00:00Z"})
    assert work.head() == first


def test_signature_of_the_original_is_dropped(work: Work) -> None:
    modified(work)
    original = commit_all(work, "signed")
    raw = work.git("cat-file", "commit", original).stdout
    head, _, body = raw.partition("\n\n")
    signature = "-----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----"
    signed = f"{head}\ngpgsig {signature}\n\n{body}"
    fake = work.git("hash-object", "-t", "commit", "-w", "--stdin", input=signed.encode())
    work.git("update-ref", "refs/heads/main", fake.stdout.strip())
    split(work)
    for half in ("HEAD", "HEAD~1"):
        assert "gpgsig" not in work.git("cat-file", "commit", half).stdout
    assert_split(
        work, fake.stdout.strip(), {"tests/fixtures/a.json"}, {"src/app.py", "docs/guide.md"}
    )


def raw_commit(work: Work, rev: str) -> bytes:
    return subprocess.run(
        ["git", "cat-file", "commit", rev], cwd=work.path, capture_output=True, check=True
    ).stdout


def test_message_bytes_are_kept_but_for_the_suffix(work: Work) -> None:
    modified(work)
    original = commit_all(work, "plain")
    head = raw_commit(work, original).partition(b"\n\n")[0]
    latin1 = head + b"\nencoding ISO-8859-1\n\ncaf\xe9 fix\r\n\r\nbody, no final newline"
    made = work.git("hash-object", "-t", "commit", "-w", "--stdin", input=latin1).stdout.strip()
    work.git("update-ref", "refs/heads/main", made)
    split(work)
    for rev, suffix in (("HEAD~1", b" (evidence)"), ("HEAD", b" (product)")):
        new_head, _, new_message = raw_commit(work, rev).partition(b"\n\n")
        assert b"\nencoding ISO-8859-1" in new_head
        assert new_message == b"caf\xe9 fix" + suffix + b"\r\n\r\nbody, no final newline"


def test_root_commit_is_split(tmp_path: Path) -> None:
    work = Work(tmp_path / "fresh")
    git(tmp_path, "init", "-q", str(work.path))
    work.write("src/app.py", "print('first')\n")
    work.write("tests/fixtures/a.json", "{}\n")
    original = commit_all(work, "first commit")
    split(work)
    assert work.git("log", "-1", "--format=%P", "HEAD~1").stdout.strip() == ""
    assert_split(work, original, {"tests/fixtures/a.json"}, {"src/app.py"})


def test_sha256_repository_is_split(tmp_path: Path) -> None:
    work = Work(tmp_path / "sha256")
    git(tmp_path, "init", "-q", "--object-format=sha256", str(work.path))
    work.write("src/app.py", "print('first')\n")
    commit_all(work, "seed")
    work.write("src/app.py", "print('second')\n")
    work.write("tests/fixtures/deep/er/a.json", "{}\n")
    original = commit_all(work, "mixed")
    split(work)
    assert len(work.head()) == 64
    assert_split(work, original, {"tests/fixtures/deep/er/a.json"}, {"src/app.py"})
    assert work.git("fsck", "--strict").returncode == 0


def test_clean_commit_is_left_alone(work: Work) -> None:
    work.write("src/app.py", "print('product only')\n")
    original = commit_all(work, "product")
    out = split(work)
    assert "nothing to split" in out
    assert work.head() == original


def test_fixture_with_docs_is_not_mixed_and_left_alone(work: Work) -> None:
    work.write("tests/fixtures/a.json", "{}\n")
    work.write("README.md", "neutral\n")
    original = commit_all(work, "golden and readme")
    doc = json.loads(split(work, "--format", "json"))
    assert doc["decision"] == "unchanged" and doc["splits"] == []
    assert work.head() == original


# -- order, evidence branch ----------------------------------------------------------


def test_product_first_lets_an_untrusted_pusher_push_the_product_commit_alone(
    work: Work,
) -> None:
    modified(work)
    original = commit_all(work, "fix")
    split(work, "--order", "product-first")
    product, ev = work.head("HEAD~1"), work.head()
    assert changed(work, product) == {"src/app.py", "docs/guide.md"}
    assert changed(work, ev) == {"tests/fixtures/a.json"}
    assert message(work, ev).startswith("fix (evidence)\n")
    assert work.head("HEAD^{tree}") == work.head(f"{original}^{{tree}}")
    result = work.push("origin", f"{product}:refs/heads/main", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    assert refused(work.push("origin", "HEAD:main", pusher=AGENT), "evidence-untrusted")
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr


def test_evidence_branch_holds_the_evidence_commit_for_a_reviewer(work: Work) -> None:
    modified(work)
    original = commit_all(work, "fix")
    parent = work.head("HEAD~1")
    out = split(work, "--evidence-branch", "golden-update")
    assert "golden-update" in out
    ev = work.head("golden-update")
    assert work.head("HEAD~1") == parent and work.head("golden-update~1") == parent
    assert changed(work, "HEAD") == {"src/app.py", "docs/guide.md"}
    assert changed(work, ev) == {"tests/fixtures/a.json"}
    assert message(work, ev).startswith("fix (evidence)\n")
    assert work.head("HEAD^{tree}") != work.head(f"{original}^{{tree}}")
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    # the agent may propose the evidence commit on its branch, never tag or land it
    assert refused(
        work.push("origin", "golden-update:refs/tags/golden", pusher=AGENT), "evidence-untrusted"
    )
    proposed = work.push("origin", "golden-update", pusher=AGENT)
    assert proposed.returncode == 0, proposed.stderr
    assert "evidence-proposed: refs/heads/golden-update" in remote(proposed)
    result = work.push("origin", "golden-update", pusher="alice")
    assert result.returncode == 0, result.stderr
    assert server_tip(work, "refs/heads/golden-update") == ev


def test_evidence_branch_that_exists_is_refused(work: Work) -> None:
    modified(work)
    original = commit_all(work, "fix")
    work.git("branch", "taken")
    said = split_fails(work, "--evidence-branch", "taken")
    assert "branch taken exists already" in said
    assert work.head() == original and work.head("taken") == original


def test_evidence_branch_below_the_tip_is_refused(work: Work) -> None:
    modified(work)
    original = commit_all(work, "fix")
    work.write("src/later.py", "later\n")
    tip = commit_all(work, "later")
    said = split_fails(work, original, "--evidence-branch", "golden")
    assert "is not the tip" in said
    assert work.head() == tip
    assert work.git("rev-parse", "--verify", "-q", "golden", check=False).returncode != 0


# -- below the tip, and ranges -------------------------------------------------------


def test_split_below_the_tip_replays_later_commits_with_their_trees(work: Work) -> None:
    modified(work)
    original = commit_all(work, "fix")
    later = []
    for n in range(3):
        work.write(f"src/later{n}.py", f"{n}\n")
        later.append(commit_all(work, f"later {n}"))
    out = split(work, original)
    assert "3 later commit(s) replayed" in out
    for n, old in enumerate(reversed(later)):
        new = f"HEAD~{n}"
        assert work.head(f"{new}^{{tree}}") == work.head(f"{old}^{{tree}}")
        assert message(work, new) == message(work, old)
        assert work.head(new) != old
    assert message(work, "HEAD~3").startswith("fix (product)")
    assert message(work, "HEAD~4").startswith("fix (evidence)")
    assert work.head("HEAD~5") == work.head(f"{original}~1")


def test_merge_after_the_split_commit_is_replayed_onto_the_new_halves(work: Work) -> None:
    modified(work)
    original = commit_all(work, "fix")
    work.git("checkout", "-qb", "side", "HEAD~1")
    work.write("src/side.py", "side\n")
    side = commit_all(work, "side")
    work.git("checkout", "-q", "main")
    work.git("merge", "-q", "--no-ff", "--no-edit", "side")
    merge = work.head()
    split(work, original)
    assert work.head("HEAD^{tree}") == work.head(f"{merge}^{{tree}}")
    assert work.git("log", "-1", "--format=%P", "HEAD").stdout.split() == [
        work.head("HEAD^1"),
        side,
    ]
    assert message(work, "HEAD^1").startswith("fix (product)")
    assert message(work, "HEAD^1~1").startswith("fix (evidence)")
    assert work.head("side") == side


def test_range_splits_every_mixed_commit_and_keeps_the_final_tree(work: Work) -> None:
    base = work.head()
    clean_before = []
    for n in range(2):
        work.write(f"src/early{n}.py", f"{n}\n")
        clean_before.append(commit_all(work, f"early {n}"))
    mixed = []
    for n in range(5):
        work.write(f"src/m{n}.py", f"{n}\n")
        work.write(f"tests/fixtures/m{n}.json", f"{n}\n")
        mixed.append(commit_all(work, f"mixed {n}"))
        if n % 2 == 0:
            work.write(f"docs/between{n}.md", f"{n}\n")
            commit_all(work, f"clean {n}")
    tip_tree = work.head("HEAD^{tree}")
    count = len(work.git("rev-list", f"{base}..HEAD").stdout.split())
    assert evidence(work.path, "check", "--as", "alice").returncode == 1
    doc = json.loads(split(work, "--range", f"{base}..HEAD", "--format", "json"))
    assert [s["commit"] for s in doc["splits"]] == mixed
    assert work.head("HEAD^{tree}") == tip_tree
    assert len(work.git("rev-list", f"{base}..HEAD").stdout.split()) == count + 5
    listed = work.git("rev-list", "--reverse", f"{base}..HEAD").stdout.split()
    assert listed[:2] == clean_before
    for s in doc["splits"]:
        assert s["paths"]["evidence"] == {
            "fixture": [f"tests/fixtures/m{mixed.index(s['commit'])}.json"]
        }
        assert changed(work, s["evidence"]) == set(s["paths"]["evidence"]["fixture"])
    result = evidence(work.path, "check", "--as", "alice")
    assert result.returncode == 0, result.stdout + result.stderr
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr


def test_range_may_end_at_a_branch_that_is_not_checked_out(work: Work) -> None:
    base = work.head()
    work.git("checkout", "-qb", "topic")
    modified(work)
    mixed = commit_all(work, "fix")
    work.git("checkout", "-q", "-")
    doc = json.loads(split(work, "--range", f"{base}..topic", "--format", "json"))
    assert doc["ref"] == "refs/heads/topic"
    assert [s["commit"] for s in doc["splits"]] == [mixed]
    assert work.head() == base  # the branch checked out is left alone
    assert work.head("topic^{tree}") == work.git("rev-parse", f"{mixed}^{{tree}}").stdout.strip()
    assert work.head("topic") != mixed


def _range_with_a_merge(work: Work) -> tuple[str, str, str]:
    """Mixed commits on main and on a side branch merged into it: (base, side, merge)."""
    base = work.head()
    modified(work)
    commit_all(work, "fix")
    work.git("checkout", "-qb", "side", base)
    work.write("src/side.py", "side\n")
    work.write("tests/fixtures/side.json", "{}\n")
    side = commit_all(work, "side")
    work.git("checkout", "-q", "main")
    work.git("merge", "-q", "--no-ff", "--no-edit", "side")
    return base, side, work.head()


def test_checks_printed_split_range_over_a_merge_runs_as_printed(work: Work) -> None:
    base, side, merge = _range_with_a_merge(work)
    said = evidence(work.path, "check", f"{base}..HEAD").stdout
    printed = re.search(r"`(git evidence split --range [^`]+)`", " ".join(said.split()))
    assert printed, said
    words = shlex.split(printed.group(1))
    result = evidence(work.path, *words[2:])
    assert result.returncode == 0, result.stderr
    assert work.head("HEAD^{tree}") == work.head(f"{merge}^{{tree}}")
    again = evidence(work.path, "check", f"{base}..HEAD", "--format", "json")
    rules = {f["rule"] for u in json.loads(again.stdout)["updates"] for f in u["findings"]}
    assert "mixed-commit" not in rules
    parents = work.git("log", "-1", "--format=%P", "HEAD").stdout.split()
    assert len(parents) == 2 and side not in parents  # the merge kept, its side split
    assert message(work, parents[1]).startswith("side (product)")


def test_split_dry_run_shows_the_ids_the_split_makes(work: Work) -> None:
    base, _, _ = _range_with_a_merge(work)
    shown = split(work, "--dry-run", "--range", f"{base}..HEAD", "--format", "json")
    later = {**SPLIT_BY, "GIT_COMMITTER_DATE": "2031-06-01T00:00:00Z"}
    made = split(work, "--range", f"{base}..HEAD", "--format", "json", env=later)
    dry, real = json.loads(shown), json.loads(made)
    assert dry["splits"] and dry["splits"] == real["splits"]
    assert dry["new"] == real["new"] == work.head()


def test_merge_given_is_refused(work: Work) -> None:
    base = work.head()
    work.git("checkout", "-qb", "side")
    work.write("src/side.py", "side\n")
    commit_all(work, "side")
    work.git("checkout", "-q", "main")
    work.write("tests/fixtures/a.json", "{}\n")
    commit_all(work, "golden")
    work.git("merge", "-q", "--no-ff", "--no-edit", "side")
    merge = work.head()
    assert base != merge
    said = split_fails(work, "HEAD")
    assert f"{merge[:12]} is a merge" in said
    assert work.head() == merge


# -- the working tree, the index, and the ref ---------------------------------------


def snapshot(work: Work) -> dict[str, bytes | str]:
    """The index file's bytes, every working file's bytes, and what status and diff say
    (with optional locks off, so reading does not refresh the index)."""
    seen: dict[str, bytes | str] = {"index": (work.path / ".git/index").read_bytes()}
    for path in sorted(work.path.rglob("*")):
        if ".git" not in path.relative_to(work.path).parts and path.is_file():
            seen[str(path)] = path.read_bytes()
    quiet = {"GIT_OPTIONAL_LOCKS": "0"}
    seen["status"] = work.git("status", "--porcelain=v2", "--untracked-files=all", env=quiet).stdout
    seen["diff"] = work.git("diff", env=quiet).stdout
    seen["cached"] = work.git("diff", "--cached", env=quiet).stdout
    return seen


@pytest.mark.parametrize("rev", ["HEAD", "HEAD~1"])
def test_working_tree_and_index_stay_byte_identical(work: Work, rev: str) -> None:
    modified(work)
    commit_all(work, "fix")
    if rev != "HEAD":
        work.write("src/later.py", "later\n")
        commit_all(work, "later")
    work.write("src/app.py", "unstaged edit\n")
    work.write("tests/fixtures/b.json", "staged edit\n")
    work.git("add", "tests/fixtures/b.json")
    work.write("untracked.txt", "untracked\n")
    index = work.path / ".git/index"
    before_stat = index.stat()
    before = snapshot(work)
    split(work, rev)
    assert index.stat().st_mtime_ns == before_stat.st_mtime_ns
    assert snapshot(work) == before


def test_branch_moved_during_the_split_is_not_overwritten(work: Work, tmp_path: Path) -> None:
    modified(work)
    original = commit_all(work, "fix")
    elsewhere = work.head("HEAD~1")
    real = shutil.which("git")
    assert real is not None
    wrapper = tmp_path / "bin" / "git"
    wrapper.parent.mkdir()
    # Another process moves the branch just before the split moves it: a real git,
    # run at the one moment a race would hit.
    wrapper.write_text(
        "#!/bin/sh\n"
        'if [ "$1" = update-ref ] && [ ! -e "$MOVED" ]; then\n'
        '  : > "$MOVED"\n'
        f'  "{real}" update-ref refs/heads/main {elsewhere}\n'
        "fi\n"
        f'exec "{real}" "$@"\n'
    )
    wrapper.chmod(0o755)
    env = {
        "PATH": f"{wrapper.parent}{os.pathsep}{os.environ['PATH']}",
        "MOVED": str(tmp_path / "m"),
    }
    result = evidence(work.path, "split", env=env)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "refs/heads/main changed while this ran" in result.stderr
    assert (tmp_path / "m").exists()
    assert work.head() == elsewhere != original


def test_file_and_directory_swap_refuses_one_order_and_splits_in_the_other(work: Work) -> None:
    work.write("src/snap", "a file\n")
    commit_all(work, "file")
    (work.path / "src/snap").unlink()
    work.write("src/snap/out.snap", "a snapshot\n")
    original = commit_all(work, "file becomes a snapshot directory")
    said = split_fails(work)
    assert "--order product-first" in said
    assert work.head() == original
    split(work, "--order", "product-first")
    assert changed(work, "HEAD~1") == {"src/snap"}
    assert changed(work, "HEAD") == {"src/snap/out.snap"}
    assert work.head("HEAD^{tree}") == work.head(f"{original}^{{tree}}")


def test_non_utf8_and_newline_paths_are_split(work: Work) -> None:
    fixtures = [b"tests/fixtures/caf\xe9.json", b"tests/fixtures/new\nline.json"]
    product = b"src/\xff.py"
    for rel in (*fixtures, product):
        work.write(rel, b"bytes\n")
    original = commit_all(work, "hostile names")
    split(work)
    assert sorted(changed_raw(work, "HEAD~1")) == sorted(fixtures)
    assert changed_raw(work, "HEAD") == [product]
    assert work.head("HEAD^{tree}") == work.head(f"{original}^{{tree}}")
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr


# -- the command line and the hint -----------------------------------------------------


def test_mixed_commit_hint_names_the_split_command_and_following_it_works(work: Work) -> None:
    modified(work)
    original = commit_all(work, "fix")
    said = remote(work.push("origin", "HEAD:main", pusher="alice"))
    assert f"git evidence split {original[:12]}" in " ".join(said.split())
    split(work, original[:12])
    assert work.push("origin", "HEAD:main", pusher="alice").returncode == 0


def test_json_output_names_the_halves(work: Work) -> None:
    modified(work)
    original = commit_all(work, "fix")
    doc = json.loads(split(work, "--format", "json"))
    assert doc["decision"] == "split"
    assert doc["ref"] == "refs/heads/main" and doc["old"] == original
    assert doc["new"] == work.head()
    (only,) = doc["splits"]
    assert only["evidence"] == work.head("HEAD~1") and only["product"] == work.head()
    assert only["paths"] == {
        "evidence": {"fixture": ["tests/fixtures/a.json"]},
        "product": {"neutral": ["docs/guide.md"], "product": ["src/app.py"]},
    }


def test_bad_revision_is_one_line_and_exit_2(work: Work) -> None:
    said = split_fails(work, "no-such-rev")
    assert "'no-such-rev' does not name a commit" in said


def test_error_as_json(work: Work) -> None:
    result = evidence(work.path, "split", "no-such-rev", "--format", "json")
    assert result.returncode == 2
    doc = json.loads(result.stdout)
    assert doc["decision"] == "error"
    assert set(doc["error"]) == {"rule", "message", "hint"}


def test_outside_a_repository(tmp_path: Path) -> None:
    result = evidence(tmp_path, "split")
    assert result.returncode == 2
    assert result.stderr.strip().endswith(
        "not a git repository (to fix: run it inside the repository)"
    )


def test_detached_head_is_split_in_place(work: Work) -> None:
    modified(work)
    original = commit_all(work, "fix")
    work.git("checkout", "-q", "--detach")
    split(work)
    assert_split(work, original, {"tests/fixtures/a.json"}, {"src/app.py", "docs/guide.md"})
    assert work.head("main") == original
