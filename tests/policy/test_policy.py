"""Policy validation: every error names the file, the key and the line."""

from __future__ import annotations

import pytest

from git_evidence.core.errors import PolicyError
from git_evidence.policy.parsing import parse_policy
from git_evidence.policy.schema import Policy


def error(text: str) -> PolicyError:
    with pytest.raises(PolicyError) as caught:
        parse_policy(text.encode(), "base:.git-evidence.toml")
    return caught.value


def test_defaults_parse_from_an_empty_file() -> None:
    policy = parse_policy(b"", "x")
    assert policy.protected == ("refs/heads/main",)
    assert policy.digest == Policy(source="other").digest


def test_unknown_key_names_key_and_line() -> None:
    exc = error("[rules]\nother_path = 'hold'\nskip = true\n")
    assert exc.line == 3
    assert str(exc).startswith("base:.git-evidence.toml:3: rules.skip: unknown key")


def test_unknown_table_is_an_error() -> None:
    assert "unknown table" in str(error("[bypass]\nall = true\n"))


def test_wrong_type_names_the_key() -> None:
    exc = error("[lock]\nrequired = 'yes'\n")
    assert exc.key == "lock.required" and exc.line == 2


def test_bad_decision_is_an_error() -> None:
    assert "expected one of allow, hold, reject" in str(error("[rules]\nother_path = 'maybe'\n"))


def test_glob_with_dotdot_is_an_error() -> None:
    exc = error("[paths]\nproduct = ['src/../tests/**']\n")
    assert "may not contain `..`" in str(exc) and exc.line == 2


def test_negated_glob_outside_the_class_lists_is_an_error() -> None:
    # Class lists accept `!`; the lock's exclude list does not.
    exc = error("[lock]\nexclude = ['!tests/fixtures/keep/**']\n")
    assert "not supported" in str(exc) and exc.key == "lock.exclude" and exc.line == 2


def test_unparsable_toml_names_the_line() -> None:
    exc = error("[rules]\nprotected = [\n")
    assert exc.line is not None and "not valid TOML" in str(exc)


def test_dot_slash_spellings_are_canonicalised() -> None:
    policy = parse_policy(b"[paths]\nfixture = ['./tests//fixtures/**']\n", "x")
    assert policy.paths["fixture"] == ("tests/fixtures/**",)


def test_builtin_policy_globs_cannot_be_dropped() -> None:
    policy = parse_policy(b"[paths]\npolicy = []\nfixture = []\n", "x")
    assert policy.classifier().classify(".gitattributes").klass == "policy"
    assert policy.classifier().classify("tests/freeze.jsonl").klass == "freeze_ledger"


def test_protected_refs_must_be_full_names() -> None:
    assert "full ref name" in str(error("[rules]\nprotected = ['main']\n"))


def test_max_window_must_be_positive_integer() -> None:
    assert "positive integer" in str(error("[ledger]\nmax_window_hours = true\n"))


def test_non_utf8_policy_is_an_error() -> None:
    with pytest.raises(PolicyError, match="not UTF-8"):
        parse_policy(b"[rules]\n\xff = 1\n", "x")


def test_judge_env_names_the_variables_a_run_also_sees() -> None:
    policy = parse_policy(b'[judge]\nenv = ["CI", "CI", "MY_VAR_2"]\n', "x")
    assert policy.judge.env == ("CI", "MY_VAR_2")
    assert policy.judge.as_dict()["env"] == ["CI", "MY_VAR_2"]
    assert "env" not in parse_policy(b"[judge]\nrepeat = 2\n", "x").judge.as_dict()


def test_judge_env_refuses_what_is_not_a_variable_name() -> None:
    wrong = error('[judge]\nenv = ["GITHUB_TOKEN=x"]\n')
    assert "judge.env" in str(wrong) and "is not a variable name" in str(wrong)
    assert "expected a list of variable names" in str(error('[judge]\nenv = "CI"\n'))


def test_judge_hide_names_more_paths_no_run_may_read() -> None:
    policy = parse_policy(b'[judge]\nhide = ["/srv/keys", "$CI_BUILDS_DIR/x", "/srv/keys"]\n', "x")
    assert policy.judge.hide == ("/srv/keys", "$CI_BUILDS_DIR/x")
    assert policy.judge.as_dict()["hide"] == ["/srv/keys", "$CI_BUILDS_DIR/x"]
    assert "hide" not in parse_policy(b"[judge]\nrepeat = 2\n", "x").judge.as_dict()


def test_judge_hide_refuses_relative_paths_and_the_root() -> None:
    wrong = error('[judge]\nhide = ["keys"]\n')
    assert "judge.hide" in str(wrong) and "expected an absolute path" in str(wrong)
    assert "the root directory" in str(error('[judge]\nhide = ["//"]\n'))
    assert "expected a list of absolute paths" in str(error('[judge]\nhide = "/srv"\n'))
