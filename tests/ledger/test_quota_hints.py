"""The retry quota's findings: the ledger's rule, the quota's own hints, no placeholder."""

from __future__ import annotations

import pytest
from helpers.repos import Work
from helpers.rule_facts import OLD, facts

from git_evidence.core.errors import EvidenceError
from git_evidence.core.facts import LedgerProblem
from git_evidence.core.oids import Oid
from git_evidence.ledger.freezes import append_lines
from git_evidence.plumbing.git import Git
from git_evidence.rules.files import decide_quota

QUOTA = "tests/retry-quota.jsonl"
REWRITE = [(Oid("c" * 40), LedgerProblem("ledger-rewrite", 2, "line 2 was changed"))]


def test_a_rewrite_with_a_base_says_how_to_restore_it_from_there() -> None:
    (finding,) = decide_quota(facts(), REWRITE, QUOTA)
    assert f"git checkout {OLD[:12]} -- {QUOTA}" in finding.hint
    assert finding.message == f"{QUOTA}: line 2: line 2 was changed"
    assert finding.decision == "reject"


def test_a_rewrite_without_a_base_shows_no_placeholder() -> None:
    (finding,) = decide_quota(facts(base=None), REWRITE, QUOTA)
    assert "<base>" not in finding.hint and "{" not in finding.hint
    assert "retry quota is append-only" in finding.hint


def test_appending_after_a_last_line_without_newline_is_refused_and_changes_nothing(
    work: Work,
) -> None:
    path = work.path / QUOTA
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"one line")
    with pytest.raises(EvidenceError, match="its last line has no newline") as caught:
        append_lines(Git(cwd=str(work.path)), QUOTA, b"two\n", "file")
    assert f"git checkout -- {QUOTA}" in caught.value.fix
    assert path.read_bytes() == b"one line"
    append_lines(Git(cwd=str(work.path)), "tests/new/file.jsonl", b"two\n", "file")
    assert (work.path / "tests/new/file.jsonl").read_bytes() == b"two\n"
