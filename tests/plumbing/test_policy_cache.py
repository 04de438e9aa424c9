"""The parsed policy kept by blob id: the same policy as parsing gives, read again by
the next process, and never a policy that today's parser would not give."""

from __future__ import annotations

import marshal
import os
from pathlib import Path

import pytest
from helpers.repos import Work, git

from git_evidence.core.errors import PolicyError
from git_evidence.core.oids import Oid
from git_evidence.plumbing import policy_cache
from git_evidence.plumbing.context import policy_at
from git_evidence.plumbing.git import Git
from git_evidence.policy.parsing import parse_policy

POLICY = """\
[paths]
product = ["src/**"]
fixture = ["tests/data/**"]

[rules]
protected = ["refs/heads/main", "refs/heads/release/*"]

[identities]
evidence_writers = ["alice"]
lock_writers = ["ci-bot"]

[lock]
roots = ["tests/data"]

[[judge.property]]
id = "suite"
command = ["python", "-m", "pytest", "-q"]
seeds = 2
repeat = 2
must_pass = ["tests/test_a.py::test_one"]
"""
PERMISSIVE = '[identities]\nevidence_writers = ["agent-bot"]\n'


@pytest.fixture
def repo(tmp_path: Path) -> Work:
    work = Work(tmp_path / "r")
    git(tmp_path, "init", "-q", "-b", "main", str(work.path))
    work.commit("policy", {".git-evidence.toml": POLICY})
    return work


def _entries(work: Work) -> list[Path]:
    folder = work.path / ".git" / "git-evidence" / policy_cache.CACHE_DIR
    return sorted(folder.iterdir()) if folder.exists() else []


def _blob(work: Work) -> Oid:
    return work.head("HEAD:.git-evidence.toml")


def test_a_kept_policy_is_the_policy_parsing_gives(repo: Work) -> None:
    expected = parse_policy(POLICY.encode(), "base:.git-evidence.toml")
    first = policy_at(Git(cwd=str(repo.path)), "HEAD")
    assert [p.name for p in _entries(repo)] == [_blob(repo)]
    second = policy_at(Git(cwd=str(repo.path)), "HEAD")
    assert first == expected and second == expected
    assert type(second.judge.properties[0]) is type(expected.judge.properties[0])


def test_plain_values_round_trip_every_field() -> None:
    policy = parse_policy(POLICY.encode(), "base:.git-evidence.toml")
    values = marshal.loads(marshal.dumps(policy_cache.to_plain(policy)))
    assert policy_cache.from_plain(values) == policy


def test_a_planted_entry_from_other_code_is_not_taken(repo: Work) -> None:
    """An entry whose signature is not today's parser's (another version, or forged
    by hand) says nothing: the blob is parsed again."""
    permissive = parse_policy(PERMISSIVE.encode(), "base:.git-evidence.toml")
    path = repo.path / ".git" / "git-evidence" / policy_cache.CACHE_DIR / _blob(repo)
    path.parent.mkdir(parents=True)
    path.write_bytes(marshal.dumps((("policies-v0",), policy_cache.to_plain(permissive))))
    policy = policy_at(Git(cwd=str(repo.path)), "HEAD")
    assert "alice" in policy.evidence_writers and "agent-bot" not in policy.evidence_writers


def test_an_entry_kept_before_the_parser_changed_is_not_taken(repo: Work) -> None:
    policy_at(Git(cwd=str(repo.path)), "HEAD")
    assert len(_entries(repo)) == 1
    module = Path(policy_cache.__file__).parents[1] / "policy" / "parsing.py"
    stat = module.stat()
    try:
        os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        assert policy_cache.get(Git(cwd=str(repo.path)), _blob(repo), "x") is None
    finally:
        os.utime(module, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert policy_cache.get(Git(cwd=str(repo.path)), _blob(repo), "x") is not None


def test_a_broken_entry_is_parsed_again(repo: Work) -> None:
    policy_at(Git(cwd=str(repo.path)), "HEAD")
    (entry,) = _entries(repo)
    entry.write_bytes(b"\x00not marshal")
    policy = policy_at(Git(cwd=str(repo.path)), "HEAD")
    assert policy.lock_roots == ("tests/data",)


def test_a_policy_that_does_not_parse_is_never_kept(repo: Work) -> None:
    repo.commit("broken", {".git-evidence.toml": "[paths\n"})
    for _ in range(2):
        with pytest.raises(PolicyError, match="not valid TOML"):
            policy_at(Git(cwd=str(repo.path)), "HEAD")
    assert [p.name for p in _entries(repo)] == []


def test_a_cache_that_cannot_be_written_keeps_nothing_and_still_reads(repo: Work) -> None:
    blocker = repo.path / ".git" / "git-evidence" / policy_cache.CACHE_DIR
    blocker.parent.mkdir()
    blocker.write_text("a file where the folder would be\n")
    for _ in range(2):
        assert policy_at(Git(cwd=str(repo.path)), "HEAD").lock_roots == ("tests/data",)
    assert blocker.read_text() == "a file where the folder would be\n"
    assert sorted(p.name for p in blocker.parent.iterdir()) == [policy_cache.CACHE_DIR]
