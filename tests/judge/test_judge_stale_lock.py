"""The judge on a base whose lock in force is stale: the base's own files are the pin."""

from __future__ import annotations

from pathlib import Path

from helpers.judge_repos import APP, Repo, pinned_repo


def stale_main(repo: Repo) -> None:
    """main gains a fixture after its pin, and no one re-pins it."""
    repo.git("checkout", "-q", "main")
    repo.commit("a new fixture", {"tests/fixtures/extra.json": '{"extra": 1}\n'})
    repo.git("checkout", "-qB", "feat")


def test_a_product_fix_on_a_stale_base_is_accepted_not_a_breach(
    tmp_path: Path, template: Path
) -> None:
    repo = pinned_repo(tmp_path, template)
    stale_main(repo)
    repo.product(APP.replace("return True", "return seed >= 0"))
    result, doc = repo.judge("--property", "suite")
    assert doc["class"] == "accept", doc["reason"]
    assert result.returncode == 0
    assert doc["pin"]["stale_lock"] is True and doc["pin"]["unpinned"] is True
    assert doc["pin"]["commit"] == repo.head("main~1")  # the lock in force, stale


def test_a_candidate_changing_a_fixture_on_a_stale_base_is_still_a_breach(
    tmp_path: Path, template: Path
) -> None:
    repo = pinned_repo(tmp_path, template)
    stale_main(repo)
    repo.commit("sneak", {"tests/fixtures/extra.json": '{"extra": 2}\n'})
    result, doc = repo.judge("--property", "suite")
    assert doc["class"] != "accept"
    assert result.returncode != 0
    assert "tests/fixtures/extra.json" in str(doc)


def test_a_base_matching_its_older_lock_keeps_the_lock_as_its_pin(
    tmp_path: Path, template: Path
) -> None:
    repo = pinned_repo(tmp_path, template)
    repo.git("checkout", "-q", "main")
    repo.commit("docs only", {"docs/more.md": "more\n"})  # the lock still matches
    repo.git("checkout", "-qB", "feat")
    repo.product(APP.replace("return True", "return seed >= 0"))
    _result, doc = repo.judge("--property", "suite")
    assert doc["class"] == "accept", doc["reason"]
    assert doc["pin"]["unpinned"] is False and "stale_lock" not in doc["pin"]
