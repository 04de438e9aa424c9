"""A pull request is judged against the base it has now: retargeting it from an
unprotected branch to ``main`` (GitHub sends ``edited`` with ``changes.base``) is judged
again and refused, and a re-run of an older event asks the forge for the current base
(a real HTTP server answers as GitHub's REST API does) instead of trusting the payload."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from helpers.forge_jobs import Api, Forge, branch, serving

EVIDENCE_ONLY = {"tests/fixtures/a.json": '{"a": 2}\n'}


@pytest.fixture
def api() -> Iterator[Api]:
    with serving() as served:
        yield served


def _feature_branch(forge: Forge) -> str:
    forge.work.git("push", "-q", "origin", f"{forge.base}:refs/heads/feature-x")
    return branch(forge.work, EVIDENCE_ONLY)


def test_retargeting_an_evidence_only_request_at_main_is_refused(forge: Forge) -> None:
    head = _feature_branch(forge)
    into_feature = forge.pull_request(head, target="feature-x")
    assert into_feature.returncode == 0, into_feature.stdout  # proposed, for review
    # GitHub's `edited` payload: pull_request.base is the new base, changes.base the old
    retargeted = forge.pull_request(
        head,
        target="main",
        payload_file="github-pull_request_target-edited.json",
        values={"FROM_REF": "feature-x", "FROM_SHA": forge.base},
        args=("--format", "json"),
    )
    assert retargeted.returncode == 1, retargeted.stdout
    doc = json.loads(retargeted.stdout)
    assert doc["updates"][0]["ref"] == "refs/heads/main"
    assert "the base changed from feature-x to main" in doc["notes"]


def test_a_rerun_of_the_opened_event_is_judged_against_the_current_base(
    forge: Forge, api: Api
) -> None:
    head = _feature_branch(forge)
    api.base = {"ref": "main", "sha": forge.base}
    rerun = forge.pull_request(head, target="feature-x", env=api.env(), args=("--format", "json"))
    assert rerun.returncode == 1, rerun.stdout + rerun.stderr
    assert api.asked == [("/repos/octo-org/octo-repo/pulls/7", "Bearer ghs_job_token")]
    doc = json.loads(rerun.stdout)
    assert doc["updates"][0]["ref"] == "refs/heads/main"
    assert any("base is now main (the event said feature-x)" in n for n in doc["notes"])


def test_a_token_the_forge_refuses_cannot_decide_and_names_the_permission(
    forge: Forge, api: Api
) -> None:
    head = _feature_branch(forge)
    api.status = 403
    result = forge.pull_request(head, target="feature-x", env=api.env())
    assert result.returncode == 2, result.stdout
    assert "HTTP 403" in result.stderr and "pull-requests: read" in result.stderr
    assert "Traceback" not in result.stderr


def test_without_a_token_the_events_base_is_judged_and_said(forge: Forge) -> None:
    head = _feature_branch(forge)
    result = forge.pull_request(head, target="feature-x", args=("--format", "json"))
    assert result.returncode == 0, result.stdout
    notes = json.loads(result.stdout)["notes"]
    assert any("no GITHUB_TOKEN" in n for n in notes)
