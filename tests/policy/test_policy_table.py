"""The policy, table by table (policy/parsing.py, policy/schema.py, policy/identity.py):
who may write what, every error a policy file can carry (its key and line), the values
each key gives, protected refs, and where a policy is read from. No git runs here, fast
enough to run on each mutation (bench/mutation.py)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from helpers.repos import POLICY
from helpers.rule_facts import BASE_POLICY, who

from git_evidence.core.errors import PolicyError
from git_evidence.policy.identity import Identity, client_identity, server_pusher
from git_evidence.policy.parsing import parse_policy
from git_evidence.policy.schema import Policy

# Three identities, three different writers: no permission borrows another's list.
SPLIT_POLICY = parse_policy(
    b'[identities]\nevidence_writers = ["alice"]\nledger_writers = ["ledger-bot"]\n'
    b'lock_writers = ["lock-bot"]\n',
    "base:.git-evidence.toml",
)


# -- identities: who may write what ------------------------------------------------------------

IDENTITY_TABLE = [
    # name, evidence, ledger, lock (under SPLIT_POLICY)
    ("alice", True, False, False),
    ("ledger-bot", False, True, False),
    ("lock-bot", False, False, True),
    ("agent-bot", False, False, False),
    (None, False, False, False),
]


@pytest.mark.parametrize(("name", "evidence", "ledger_", "lock"), IDENTITY_TABLE)
def test_each_writer_list_grants_only_its_own_permission(
    name: str | None, evidence: bool, ledger_: bool, lock: bool
) -> None:
    person = who(name)
    assert person.evidence_writer(SPLIT_POLICY) is evidence
    assert person.ledger_writer(SPLIT_POLICY) is ledger_
    assert person.lock_writer(SPLIT_POLICY) is lock


def test_the_pusher_is_the_first_variable_set() -> None:
    assert server_pusher({"GL_USER": "bob", "REMOTE_USER": "carol"}) == Identity("bob", "GL_USER")
    assert server_pusher({"GIT_EVIDENCE_PUSHER": " ", "REMOTE_USER": "carol"}).name == "carol"
    assert server_pusher({}) == Identity(None, "no pusher variable set")
    assert who(None).describe() == "anonymous"
    assert Identity("bob", "x", trusted_clone=True).describe() == "bob (trusted clone)"
    assert client_identity(False, "bob") == Identity("bob", "--as")
    assert not client_identity(False).evidence_writer(BASE_POLICY)


# -- policy -------------------------------------------------------------------------------------

POLICY_ERROR_TABLE = [
    # (text, key, line)
    ('[rules]\nallow_namespaces = ["refs/heads"]\n', "rules.allow_namespaces", 2),
    ('[rules]\nallow_namespaces = ["heads/"]\n', "rules.allow_namespaces", 2),
    ('[rules]\nallow_namespaces = ["refs/../x/"]\n', "rules.allow_namespaces", 2),
    ('[rules]\nallow_namespaces = "refs/heads/"\n', "rules.allow_namespaces", 2),
    ('[rules]\nprotected = ["main"]\n', "rules.protected", 2),
    ('[rules]\nprotected = ["refs/heads/[z-a]"]\n', "rules.protected", 2),
    ('[rules]\nbase = "refs/heads/*"\n', "rules.base", 2),
    ("[rules]\nbase = 1\n", "rules.base", 2),
    ('[rules]\nbase = "refs/heads/dev"\n', "rules.base", 2),
    ('[rules]\nprotected = ["refs/heads/dev"]\n', "rules.protected", 2),
    ('[rules]\nother_path = "maybe"\n', "rules.other_path", 2),
    ("[rules]\nadded_test = true\n", "rules.added_test", 2),
    ('[rules]\ntest_edit = "no"\n', "rules.test_edit", 2),
    ("[rules]\ntime_budget_s = 0\n", "rules.time_budget_s", 2),
    ("[rules]\ntime_budget_s = 3601\n", "rules.time_budget_s", 2),
    ("[rules]\ntime_budget_s = true\n", "rules.time_budget_s", 2),
    ('[rules]\ntime_budget_s = "1"\n', "rules.time_budget_s", 2),
    ("[ledger]\nmax_window_hours = 0\n", "ledger.max_window_hours", 2),
    ("[ledger]\nmax_window_hours = 8761\n", "ledger.max_window_hours", 2),
    ("[ledger]\nmax_window_hours = 1.5\n", "ledger.max_window_hours", 2),
    ("[ledger]\nmax_window_hours = true\n", "ledger.max_window_hours", 2),
    ('[ledger]\npath = "tests/*.jsonl"\n', "ledger.path", 2),
    ('[ledger]\npath = "a/../b"\n', "ledger.path", 2),
    ("[ledger]\npath = 1\n", "ledger.path", 2),
    ('[ledger]\npath = "!tests/f.jsonl"\n', "ledger.path", 2),
    ('[lock]\nroots = ["tests/*"]\n', "lock.roots", 2),
    ('[lock]\nnotes_ref = "refs/heads/x"\n', "lock.notes_ref", 2),
    ('[lock]\nnotes_ref = "notes/x"\n', "lock.notes_ref", 2),
    ('[lock]\nrequired = "yes"\n', "lock.required", 2),
    ('[lock]\nexclude = ["a/../b"]\n', "lock.exclude", 2),
    ('[paths]\nfixture = ["../x"]\n', "paths.fixture", 2),
    ('[paths]\nfixture = "tests/**"\n', "paths.fixture", 2),
    ('[identities]\nevidence_writers = "alice"\n', "identities.evidence_writers", 2),
    ("[identities]\nevidence_writers = [1]\n", "identities.evidence_writers", 2),
    ("[identities]\nadmins = []\n", "identities.admins", 2),
    ("[nope]\n", "[nope]", 1),
    ('["rules"]\nother_path = "maybe"\n', "rules.other_path", 2),
    ("[ 'rules' ] # quoted\n\nother_path = 'maybe'\n", "rules.other_path", 3),
    ('[identities]\nx = 1\n["rules"]\nother_path = 1\n', "identities.x", 2),
    ("rules = 1\n", "[rules]", None),
]


@pytest.mark.parametrize(("text", "key", "line"), POLICY_ERROR_TABLE)
def test_policy_error_table(text: str, key: str, line: int | None) -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy(text.encode(), "base:.git-evidence.toml")
    assert caught.value.key == key
    assert caught.value.line == line


POLICY_VALUE_TABLE: list[tuple[str, str, object]] = [
    # the defaults
    ("", "other_path", "hold"),
    ("", "added_test", "hold"),
    ("", "test_edit", "hold"),
    ("", "protected", ("refs/heads/main",)),
    ("", "base", "refs/heads/main"),
    ("", "max_window_hours", 72),
    ("", "time_budget_s", 4.5),
    ("", "ledger_path", "tests/freeze.jsonl"),
    ("", "notes_ref", "refs/notes/evidence"),
    ("", "lock_required", False),
    ("", "lock_roots", ("tests/fixtures", "tests/goldens", "testdata", "tests/properties")),
    ("", "evidence_writers", frozenset()),
    # what a file sets
    ("", "allow_namespaces", ("refs/heads/", "refs/tags/")),
    (
        '[rules]\nallow_namespaces = ["refs/heads/", "refs/for/"]\n',
        "allow_namespaces",
        ("refs/heads/", "refs/for/"),
    ),
    ('[rules]\nother_path = "allow"\n', "other_path", "allow"),
    ('[rules]\nadded_test = "reject"\n', "added_test", "reject"),
    ('[rules]\ntest_edit = "allow"\n', "test_edit", "allow"),
    ("[rules]\ntime_budget_s = 3600\n", "time_budget_s", 3600.0),
    ("[rules]\ntime_budget_s = 0.5\n", "time_budget_s", 0.5),
    ("[ledger]\nmax_window_hours = 8760\n", "max_window_hours", 8760),
    ("[ledger]\nmax_window_hours = 1\n", "max_window_hours", 1),
    ('[ledger]\npath = "./ci//flakes.jsonl"\n', "ledger_path", "ci/flakes.jsonl"),
    ('[lock]\nroots = ["data/golden/", "/x"]\n', "lock_roots", ("data/golden", "x")),
    ('[lock]\nroots = ["gold\u00a7/"]\n', "lock_roots", ("gold\u00a7",)),
    ('[ledger]\npath = "/ci/f\u00a7"\n', "ledger_path", "ci/f\u00a7"),
    ("[lock]\nrequired = true\n", "lock_required", True),
    ('[lock]\nnotes_ref = "refs/notes/mine"\n', "notes_ref", "refs/notes/mine"),
    ('[lock]\nexclude = ["**/*.tmp"]\n', "lock_exclude", ("**/*.tmp",)),
    ('[rules]\nprotected = ["refs/heads/*"]\nbase = "refs/heads/dev"\n', "base", "refs/heads/dev"),
    ('[identities]\nlock_writers = ["x"]\n', "lock_writers", frozenset({"x"})),
    ("\ufeff[rules]\nother_path = 'allow'\n", "other_path", "allow"),
]


@pytest.mark.parametrize(("text", "attribute", "value"), POLICY_VALUE_TABLE)
def test_policy_value_table(text: str, attribute: str, value: object) -> None:
    assert getattr(parse_policy(text.encode(), "x"), attribute) == value


def test_the_writer_lists_stay_apart() -> None:
    assert SPLIT_POLICY.evidence_writers == {"alice"}
    assert SPLIT_POLICY.ledger_writers == {"ledger-bot"}
    assert SPLIT_POLICY.lock_writers == {"lock-bot"}
    identities = SPLIT_POLICY.as_dict()["identities"]
    assert identities == {
        "evidence_writers": ["alice"],
        "ledger_writers": ["ledger-bot"],
        "lock_writers": ["lock-bot"],
        "reviewers": ["alice"],  # by default the evidence writers, listed apart
    }


PROTECTED_TABLE = [
    (
        '[rules]\nprotected = ["refs/heads/main", "refs/heads/release/*"]\n',
        "refs/heads/release/1",
        True,
    ),
    (
        '[rules]\nprotected = ["refs/heads/main", "refs/heads/release/*"]\n',
        "refs/heads/release/1/x",
        False,
    ),
    (
        '[rules]\nprotected = ["refs/heads/main", "refs/heads/release/**"]\n',
        "refs/heads/release/1/x",
        True,
    ),
    ("", "refs/heads/MAIN", True),
    ("", "refs/heads/main2", False),
    ("", "refs/heads/mai", False),
]


@pytest.mark.parametrize(("text", "ref", "protected"), PROTECTED_TABLE)
def test_protected_table(text: str, ref: str, protected: bool) -> None:
    assert parse_policy(text.encode(), "x").is_protected(ref) is protected


def test_effective_globs_add_the_builtins_and_the_ledger_once() -> None:
    pol = parse_policy(b'[ledger]\npath = "ci/f.jsonl"\n', "x")
    effective = pol.effective_globs()
    assert effective["policy"][:4] == (
        ".git-evidence.toml",
        ".gitattributes",
        "/.gitmodules",
        "/.lfsconfig",
    )
    # the ledger, then the retry quota, which sits in the ledger's class
    assert effective["freeze_ledger"][-2:] == ("/ci/f.jsonl", "/tests/retry-quota.jsonl")
    again = Policy(paths={"freeze_ledger": ("/tests/freeze.jsonl",)})
    # listed once, however often the policy lists them
    assert again.effective_globs()["freeze_ledger"] == (
        "/tests/freeze.jsonl",
        "/tests/retry-quota.jsonl",
    )


def test_a_policy_is_a_value() -> None:
    with pytest.raises(AttributeError):
        BASE_POLICY.other_path = "allow"  # type: ignore[misc]


def test_the_digest_is_the_sha256_of_the_canonical_json() -> None:
    import hashlib

    canonical = json.dumps(BASE_POLICY.as_dict(), sort_keys=True, separators=(",", ":"))
    assert BASE_POLICY.digest == "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()


def test_the_digest_follows_the_content_not_the_source() -> None:
    one = parse_policy(POLICY.encode(), "a")
    assert one.digest == parse_policy(POLICY.encode(), "b").digest
    assert one.digest != SPLIT_POLICY.digest
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", one.digest)


def test_errors_name_the_source_the_key_and_the_line() -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy(b'# c\n[rules]\n\nother_path = "x"\n', "sealed:/p.toml")
    assert str(caught.value).startswith("sealed:/p.toml:4: rules.other_path: expected one of")


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (b"[rules\n", "src:1: not valid TOML: Expected ']' at the end of a table declaration"),
        (b'a = "', "src:1: not valid TOML: Unterminated string (the file ends early)"),
        (b"x = 1\ny = [\n", "src:2: not valid TOML: Invalid value (the file ends early)"),
    ],
)
def test_toml_errors_name_the_line_and_say_when_the_file_ends_early(text: bytes, said: str) -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policy(text, "src")
    assert str(caught.value) == said


def _iter_keys() -> Iterator[str]:
    yield from ("paths", "rules", "identities", "lock", "ledger", "labels", "judge")
    yield "verdict_writers"  # listed on its own, only when set


def test_every_table_accepts_its_documented_keys() -> None:
    text = (
        '[paths]\nproduct = ["src/**"]\n'
        '[rules]\nother_path = "hold"\nadded_test = "hold"\ntest_edit = "hold"\n'
        'protected = ["refs/heads/main"]\nbase = "refs/heads/main"\n'
        'allow_namespaces = ["refs/heads/"]\ntime_budget_s = 1\n'
        "[identities]\nevidence_writers = []\nledger_writers = []\nlock_writers = []\n"
        "reviewers = []\nverdict_writers = []\n"
        '[lock]\nroots = ["x"]\nexclude = []\nnotes_ref = "refs/notes/x"\nrequired = false\n'
        '[ledger]\npath = "f.jsonl"\nmax_window_hours = 1\n'
        '[labels]\npath = "l.tsv"\nquota_path = "q.jsonl"\nretries = 1\n'
        '[judge]\nnotes_ref = "refs/notes/v"\nrepeat = 2\nseeds = 1\ntimeout_s = 5\n'
    )
    assert set(parse_policy(text.encode(), "x").as_dict()) == set(_iter_keys())


def test_the_policy_comes_from_the_file_or_the_defaults(tmp_path: Any) -> None:
    from git_evidence.policy.parsing import load_at, read_sealed

    assert (
        load_at(None, "c" * 40).source == f"built-in defaults (no .git-evidence.toml at {'c' * 12})"
    )
    assert load_at(None, None).source == "built-in defaults (no base revision)"
    assert load_at(POLICY.encode(), "c" * 40) == BASE_POLICY
    sealed = tmp_path / "policy.toml"
    sealed.write_bytes(POLICY.encode())
    assert read_sealed(str(sealed)).evidence_writers == {"alice"}
    assert read_sealed(str(sealed)).source == f"sealed:{sealed}"
    with pytest.raises(PolicyError, match="cannot read the sealed policy"):
        read_sealed(str(tmp_path / "missing.toml"))
