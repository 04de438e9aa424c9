"""The retry quota's findings: the ledger's rule, the quota's own hints, no placeholder."""

from __future__ import annotations

from test_rules_table import OLD, facts

from git_evidence import quota
from git_evidence.ledger import Problem
from git_evidence.oids import Oid

QUOTA = "tests/retry-quota.jsonl"
REWRITE = [(Oid("c" * 40), Problem("ledger-rewrite", 2, "line 2 was changed"))]


def test_a_rewrite_with_a_base_says_how_to_restore_it_from_there() -> None:
    (finding,) = quota.decide_quota(facts(), REWRITE, QUOTA)
    assert f"git checkout {OLD[:12]} -- {QUOTA}" in finding.hint
    assert finding.message == f"{QUOTA}: line 2: line 2 was changed"
    assert finding.decision == "reject"


def test_a_rewrite_without_a_base_shows_no_placeholder() -> None:
    (finding,) = quota.decide_quota(facts(base=None), REWRITE, QUOTA)
    assert "<base>" not in finding.hint and "{" not in finding.hint
    assert "retry quota is append-only" in finding.hint
