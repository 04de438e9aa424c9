"""The scorecard in ``git evidence judge``'s verdict, end to end: real
repositories whose base has test labels and a retry quota, a real pytest property run
by ``sys.executable -m pytest`` — without ``--evidence``: the judge switches the plugin
on and hands it the base's labels and quota — and the exit the scorecard decides."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from helpers.repos import Work, evidence, git

PY = json.dumps(sys.executable)

POLICY = f"""\
[identities]
evidence_writers = ["alice"]
ledger_writers = ["ci-bot"]
lock_writers = ["ci-bot"]

[judge]
repeat = 2
seeds = 1
timeout_s = 60

[[judge.property]]
id = "suite"
command = [{PY}, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/properties"]
"""

APP = "def ping():\n    return True\n"

# The first call in a process fails: the test fails its first attempt in every run and
# passes on a retry, so each run of the property uses one retry.
FLAKY_APP = """\
_calls = []


def ping():
    _calls.append(1)
    return len(_calls) > 1
"""

TEST_NET = """\
import sys

sys.path.insert(0, "src")
import app


def test_net():
    assert app.ping()


def test_math():
    assert 1 + 1 == 2
"""

NET, MATH = "tests/properties/test_net.py::test_net", "tests/properties/test_net.py::test_math"
LABELS = f"# node id<TAB>kind\n{NET}\tnondeterministic\n{MATH}\tinvariant\n"
LABELS_PATH = "tests/evidence-labels.tsv"
QUOTA_PATH = "tests/retry-quota.jsonl"


def grant(amount: int) -> str:
    if not amount:
        return ""  # a quota file with nothing granted
    return (
        json.dumps(
            {
                "kind": "grant",
                "amount": amount,
                "writer": "alice",
                "at": "2026-01-01T00:00:00Z",
                "reason": "the network test",
            },
            separators=(",", ":"),
        )
        + "\n"
    )


FAST = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


class Repo(Work):
    def judge(self, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
        result = evidence(self.path, "judge", "--format", "json", *args, env=FAST)
        assert result.stdout.strip(), result.stderr
        return result, json.loads(result.stdout)


def make_repo(tmp_path: Path, granted: int | None = 1, labels: str | None = LABELS) -> Repo:
    """main with the property suite, the labels and a grant of ``granted`` retries,
    pinned; then a branch ``feat`` for the candidate."""
    repo = Repo(tmp_path / "repo")
    git(tmp_path, "init", "-q", str(repo.path))
    files = {
        ".git-evidence.toml": POLICY,
        ".gitignore": "__pycache__/\n",
        "pytest.ini": "[pytest]\n",
        "src/app.py": APP,
        "tests/properties/test_net.py": TEST_NET,
        "tests/fixtures/a.json": '{"a": 1}\n',
    }
    if labels is not None:
        files[LABELS_PATH] = labels
    if granted is not None:
        files[QUOTA_PATH] = grant(granted)
    repo.commit("seed", files)
    pinned = evidence(repo.path, "lock")
    assert pinned.returncode == 0, pinned.stderr
    repo.git("checkout", "-qb", "feat")
    return repo


def digest_of(text: str | bytes) -> str:
    data = text.encode() if isinstance(text, str) else text
    return "sha256:" + hashlib.sha256(data).hexdigest()


def votes(doc: dict[str, Any]) -> dict[str, str]:
    return {name: vote["vote"] for name, vote in doc["scorecard"]["votes"].items()}


# -- the three votes -------------------------------------------------------------------


def test_retries_past_the_quota_reject_a_candidate_whose_properties_pass(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, granted=1)
    repo.commit("product", {"src/app.py": FLAKY_APP})
    log = tmp_path / "judge.log"
    result, doc = repo.judge("--log", str(log))
    # every run passed (on a retry each), so the class is accept: the quota rejects
    assert doc["class"] == "accept"
    assert votes(doc) == {"properties": "pass", "fixtures": "pass", "quota": "fail"}
    quota = doc["scorecard"]["votes"]["quota"]
    assert (quota["remaining"], quota["retries_used"], quota["refused"]) == (1, 2, 0)
    assert doc["scorecard"]["result"] == "reject"
    assert result.returncode == 1 and doc["exit"] == 1 and doc["result"] == "FAILED"
    assert doc["next"].startswith("do not merge: the scorecard rejects it (quota fails)")
    assert f"suite seed 0 run 2: {NET}: 2 attempt(s), passed" in quota["evidence"]
    logged = json.loads(log.read_text())
    assert (logged["class"], logged["exit"], logged["scorecard"]) == ("accept", 1, "reject")


def test_properties_fixtures_and_quota_passing_merge(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, granted=5)
    repo.commit("product", {"src/app.py": FLAKY_APP})
    result, doc = repo.judge()
    assert doc["class"] == "accept"
    assert votes(doc) == {"properties": "pass", "fixtures": "pass", "quota": "pass"}
    assert doc["scorecard"]["votes"]["quota"]["retries_used"] == 2
    assert doc["scorecard"]["result"] == "merge"
    assert result.returncode == 0 and doc["exit"] == 0 and doc["result"] == "PASSED"


def test_a_candidate_that_retries_nothing_abstains_and_merges_under_the_plugin(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path, granted=None)  # no quota file: no retries
    repo.commit("product", {"src/app.py": APP + "\n\ndef pong():\n    return False\n"})
    result, doc = repo.judge()
    assert votes(doc) == {"properties": "pass", "fixtures": "pass", "quota": "abstain"}
    assert doc["scorecard"]["result"] == "merge" and result.returncode == 0
    # the property's command does not ask for the plugin: the judge switched it on, and
    # both runs' sessions report the base's labels
    evidence_lines = doc["scorecard"]["votes"]["properties"]["evidence"]
    assert f"2 pytest session(s) held to the labels {digest_of(LABELS)}" in evidence_lines
    assert doc["scorecard"]["labels"] == {
        "source": f"base:{LABELS_PATH}",
        "digest": digest_of(LABELS),
        "rows": 2,
    }
    assert doc["scorecard"]["votes"]["quota"]["source"] == (f"base:{QUOTA_PATH} (none: no retries)")


def test_a_fixture_changed_by_the_candidate_fails_the_fixtures_vote(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, granted=5)
    repo.commit("product", {"tests/fixtures/a.json": '{"a": 2}\n'})
    result, doc = repo.judge()
    assert doc["class"] == "fixture_breach" and result.returncode == 1
    assert votes(doc) == {"properties": "fail", "fixtures": "fail", "quota": "abstain"}
    assert doc["scorecard"]["votes"]["properties"]["evidence"] == [
        "nothing ran: the class is fixture_breach"
    ]
    assert doc["scorecard"]["result"] == "reject" and doc["exit"] == 1


# -- the labels are the base's ---------------------------------------------------------


def test_a_candidate_relabelling_its_flaky_test_is_an_oracle_rewrite_and_rejected(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path, granted=0, labels=LABELS.replace("nondeterministic", "invariant"))
    repo.commit(
        "product and a label",
        {"src/app.py": FLAKY_APP, LABELS_PATH: LABELS},  # NET nondeterministic now
    )
    result, doc = repo.judge()
    assert doc["class"] == "oracle_rewrite" and result.returncode == 1
    assert doc["scorecard"]["labels"]["digest"] == digest_of(
        LABELS.replace("nondeterministic", "invariant")
    )
    assert doc["scorecard"]["result"] == "reject"


def test_a_product_rewriting_the_labels_file_in_its_workspace_cannot_relabel_its_test(
    tmp_path: Path,
) -> None:
    """The base labels the network test invariant. The candidate's product, when
    imported, writes a labels file calling it nondeterministic into the workspace, where
    the next run would find it if the labels were read from there. They are not: every
    run is held to the base's labels, the test flickers as an invariant in both runs."""
    base_labels = LABELS.replace("nondeterministic", "invariant")
    repo = make_repo(tmp_path, granted=5, labels=base_labels)
    rewrite = (
        "import pathlib\n"
        f"pathlib.Path({LABELS_PATH!r}).write_text({LABELS!r})\n"
        "pathlib.Path('tests/relabelled').write_text('yes')\n"
    )
    repo.commit("product", {"src/app.py": rewrite + FLAKY_APP})
    result, doc = repo.judge("--keep")
    kept = result.stderr.split("workspace kept in ")[1].split()[0]
    assert (Path(kept) / "ws-1" / "tests" / "relabelled").exists()  # the rewrite happened
    assert (Path(kept) / "ws-1" / LABELS_PATH).read_text() == LABELS
    assert doc["class"] == "property_fail"  # both runs: a flicker on an invariant
    assert votes(doc)["properties"] == "fail"
    assert not any("ran under labels" in line for line in json.dumps(doc).split('","'))
    assert doc["scorecard"]["labels"]["digest"] == digest_of(base_labels)
    assert doc["scorecard"]["votes"]["quota"]["retries_used"] == 0


def test_a_sealed_labels_file_wins_over_the_base(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, granted=5, labels=LABELS.replace("nondeterministic", "invariant"))
    sealed = tmp_path / "sealed-labels.tsv"
    sealed.write_text(LABELS)
    repo.git("config", "evidence.labelsFile", str(sealed))
    repo.commit("product", {"src/app.py": FLAKY_APP})
    result, doc = repo.judge()
    assert doc["scorecard"]["labels"]["source"] == f"sealed:{sealed}"
    assert doc["scorecard"]["labels"]["digest"] == digest_of(LABELS)
    # sealed: NET is nondeterministic, so it retries within the base's quota and passes
    assert doc["class"] == "accept" and votes(doc)["quota"] == "pass"
    assert result.returncode == 0


def test_a_labels_file_that_does_not_parse_at_the_base_is_undecided(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, labels=LABELS + "tests/x.py::test_y\tflaky\n")
    repo.commit("product", {"src/app.py": APP + "\n"})
    result, doc = repo.judge()
    assert result.returncode == 2 and doc["class"] == "undecided"
    assert f"base:{LABELS_PATH}:4: unknown kind 'flaky'" in doc["reason"]
    assert "scorecard" not in doc


def test_without_a_labels_file_the_verdict_has_no_scorecard(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, granted=0, labels=None)
    repo.commit("product", {"src/app.py": APP + "\n"})
    result, doc = repo.judge()
    assert doc["class"] == "accept" and result.returncode == 0
    assert "scorecard" not in doc


# -- shown ------------------------------------------------------------------------------


def test_show_verdict_and_the_text_output_show_the_scorecard(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, granted=1)
    candidate = repo.commit("product", {"src/app.py": FLAKY_APP})
    text = evidence(repo.path, "judge", "--note", env=FAST)
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    assert lines[0] == "accept"
    card = "  scorecard: reject (properties pass, fixtures pass, quota fail)"
    assert card in lines
    assert "    quota: 2 used by the runs together" in lines
    shown = evidence(repo.path, "show-verdict", candidate)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert card in shown.stdout.splitlines()
    as_json = json.loads(evidence(repo.path, "show-verdict", "--format", "json").stdout)
    assert as_json["verdict"]["exit"] == 1
    assert as_json["verdict"]["scorecard"]["result"] == "reject"
