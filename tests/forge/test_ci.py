"""``git evidence ci`` end to end: a real remote repository (no hooks: on a forge no
server hook runs), a real clone as the CI job has it (full, or shallow as
``actions/checkout`` and GitLab make it), and the event payloads and variables the
forges document, from tests/data/forge/, filled with the real commits."""

from __future__ import annotations

import json

from helpers.forge_jobs import AGENT, PERSON, WORKFLOW, Forge, branch, fill, printed_commands
from helpers.repos import evidence, git


def test_an_agents_clean_pull_request_is_allowed(forge: Forge) -> None:
    head = branch(forge.work, {"src/app.py": "print('hi')\n"})
    result = forge.pull_request(head)
    assert result.returncode == 0, result.stdout + result.stderr
    assert not [a for a in printed_commands(result.stdout) if a.startswith("::error")]
    summary = forge.summary.read_text()
    assert "git evidence: allowed (allow)" in summary
    assert f"`{AGENT}` (github pull_request.user.login)" in summary


def test_a_mixed_pull_request_is_refused_with_annotations_on_its_paths(forge: Forge) -> None:
    head = branch(forge.work, {"src/app.py": "print('hi')\n", "tests/fixtures/a.json": "{}\n"})
    result = forge.pull_request(head)
    assert result.returncode == 1, result.stdout + result.stderr
    found = printed_commands(result.stdout)
    assert any(
        a.startswith("::error file=tests/fixtures/a.json,title=mixed-commit::") for a in found
    )
    assert any(a.startswith("::error file=src/app.py,title=mixed-commit::") for a in found)
    assert any(
        a.startswith("::error file=tests/fixtures/a.json,title=evidence-untrusted::") for a in found
    )
    summary = forge.summary.read_text()
    assert "| `mixed-commit` | error | 1 |" in summary
    assert f"git evidence check {forge.base}..{head} --as {AGENT}" in summary
    assert "git evidence split" in summary  # the fix command


def test_an_agents_evidence_only_pull_request_is_refused_and_a_writers_allowed(
    forge: Forge,
) -> None:
    head = branch(forge.work, {"tests/fixtures/a.json": '{"a": 2}\n'})
    refused = forge.pull_request(head)
    assert refused.returncode == 1, refused.stdout
    assert any(
        a.startswith("::error file=tests/fixtures/a.json,title=evidence-untrusted::")
        for a in printed_commands(refused.stdout)
    )
    allowed = forge.pull_request(head, author=PERSON)
    assert allowed.returncode == 0, allowed.stdout


def test_a_head_editing_the_workflow_and_the_policy_is_judged_by_the_bases_policy(
    forge: Forge,
) -> None:
    looser = f'[identities]\nevidence_writers = ["alice", "{AGENT}"]\n'
    head = branch(
        forge.work,
        {WORKFLOW: "on: push\n", ".git-evidence.toml": looser, "src/app.py": "x = 1\n"},
    )
    result = forge.pull_request(head, args=("--format", "json"))
    assert result.returncode == 1, result.stdout
    doc = json.loads(result.stdout)
    base_policy = json.loads(
        evidence(forge.work.path, "policy", "--base", forge.base, "--format", "json").stdout
    )
    assert doc["policy"]["digest"] == base_policy["digest"]
    findings = {f["rule"]: f for u in doc["updates"] for f in u["findings"]}
    assert findings["evidence-untrusted"]["paths"] == {"policy": [".git-evidence.toml"]}
    assert findings["other-path"]["paths"] == {"other": [WORKFLOW]}


def test_a_force_pushed_head_is_judged_as_it_now_is(forge: Forge) -> None:
    first = branch(forge.work, {"src/app.py": "y = 1\n", "tests/fixtures/a.json": "{}\n"})
    assert forge.pull_request(first).returncode == 1
    forge.work.git("reset", "-q", "--hard", forge.base)
    again = forge.work.commit("agent change, redone", {"src/app.py": "y = 2\n"})
    result = forge.pull_request(again)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_force_push_to_a_protected_branch_is_refused_as_non_fast_forward(forge: Forge) -> None:
    old = forge.work.commit("on main", {"src/app.py": "z = 1\n"})
    forge.work.git("push", "-q", "origin", "HEAD:main")
    forge.work.git("reset", "-q", "--hard", forge.base)
    new = forge.work.commit("rewritten", {"src/app.py": "z = 2\n"})
    forge.work.git("push", "-q", "-f", "origin", "HEAD:main")
    event = forge.root / "push.json"
    event.write_text(
        fill(
            "github-push.json",
            REF="refs/heads/main",
            BEFORE_SHA=old,
            HEAD_SHA=new,
            FORCED="true",
            PUSHER_LOGIN=PERSON,
        )
    )
    env = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": str(event)}
    result = evidence(forge.job(), "ci", "--format", "json", env=env)
    assert result.returncode == 1, result.stdout + result.stderr
    rules = [f["rule"] for u in json.loads(result.stdout)["updates"] for f in u["findings"]]
    assert rules == ["non-fast-forward"]


def test_a_shallow_clone_fetches_the_head_and_deepens_to_the_merge_base(forge: Forge) -> None:
    head = branch(forge.work, {"src/app.py": "w = 1\n", "tests/fixtures/a.json": "{}\n"})
    forge.work.git("checkout", "-q", "-B", "main", "origin/main")
    for number in range(3):  # main moves on: the request's base is its new tip
        forge.work.commit(f"main {number}", {f"docs/n{number}.md": "n\n"})
    forge.work.git("push", "-q", "origin", "main")
    tip = forge.work.head()
    job = forge.job("--depth", "1")
    assert git(job, "rev-parse", "--is-shallow-repository").stdout.strip() == "true"
    result = forge.pull_request(head, base=tip, job=job, args=("--format", "json"))
    assert result.returncode == 1, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    (update,) = doc["updates"]
    assert update["commits"] == 1 and update["base"] == forge.base
    assert any(n.startswith("fetched head") for n in doc["notes"])
    assert any("deepened" in n or "whole history" in n for n in doc["notes"])


def test_a_shallow_clone_with_no_fetch_names_the_fetch_depth_to_set(forge: Forge) -> None:
    head = branch(forge.work, {"src/app.py": "v = 1\n"})
    result = forge.pull_request(head, job=forge.job("--depth", "1"), args=("--no-fetch",))
    assert result.returncode == 2
    assert "fetch-depth: 0" in result.stderr and "GIT_DEPTH: 0" in result.stderr
    assert head[:12] in result.stderr


def test_an_agents_push_to_a_persons_pull_request_is_judged_as_the_agent_too(
    forge: Forge,
) -> None:
    head = branch(forge.work, {"tests/fixtures/b.json": '{"b": 3}\n'})
    result = forge.pull_request(head, author=PERSON, sender=AGENT, args=("--format", "json"))
    assert result.returncode == 1, result.stdout
    doc = json.loads(result.stdout)
    assert doc["pusher"] == AGENT
    assert any(n.startswith(f"also judged as {PERSON}") for n in doc["notes"])


def test_the_target_branch_decides_whether_a_hold_blocks(forge: Forge) -> None:
    forge.work.git("push", "-q", "origin", f"{forge.base}:refs/heads/develop")
    head = branch(forge.work, {"tests/test_new.py": "def test_new():\n    pass\n"})
    into_main = forge.pull_request(head)
    assert into_main.returncode == 1
    assert any(
        a.startswith("::warning file=tests/test_new.py,title=added-test::")
        for a in printed_commands(into_main.stdout)
    )
    into_develop = forge.pull_request(head, target="develop")
    assert into_develop.returncode == 0, into_develop.stdout
    assert any(
        a.startswith("::notice file=tests/test_new.py,title=added-test::")
        for a in printed_commands(into_develop.stdout)
    )


def test_a_hostile_path_cannot_end_or_inject_a_workflow_command(forge: Forge) -> None:
    hostile = "tests/fixtures/50%,a:b\n::add-mask::x.json"
    head = branch(forge.work, {hostile: "{}\n", "src/app.py": "u = 1\n"})
    result = forge.pull_request(head)
    assert result.returncode == 1
    found = printed_commands(result.stdout)
    escaped = "file=tests/fixtures/50%25%2Ca%3Ab%0A%3A%3Aadd-mask%3A%3Ax.json,"
    assert any(escaped in a for a in found), found
    assert all(a.startswith(("::error ", "::warning ", "::notice ")) for a in found)
    # the text report between stop-commands and its token holds no command of ours
    text = result.stdout.split("::stop-commands::", 1)[1]
    token = text.split("\n", 1)[0]
    assert text.rstrip().endswith(f"::{token}::") and len(token) == 32


def test_a_payload_without_the_head_is_an_error_naming_the_field(forge: Forge) -> None:
    payload = json.loads(
        fill(
            "github-pull_request_target.json",
            AUTHOR_LOGIN=AGENT,
            SENDER_LOGIN=AGENT,
            BASE_SHA=forge.base,
            HEAD_SHA=forge.base,
            BEFORE_SHA=forge.base,
            BASE_REF="main",
        )
    )
    del payload["pull_request"]["head"]["sha"]
    event = forge.root / "broken.json"
    event.write_text(json.dumps(payload))
    env = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
    }
    result = evidence(forge.job(), "ci", env=env)
    assert result.returncode == 2
    assert "pull_request.head.sha" in result.stderr and "Traceback" not in result.stderr


def test_outside_ci_it_says_what_to_run_instead(forge: Forge) -> None:
    result = evidence(forge.job(), "ci")
    assert result.returncode == 2
    assert "GITHUB_ACTIONS or GITLAB_CI set to 'true'" in result.stderr
    assert "GITHUB_ACTIONS unset, GITLAB_CI unset" in result.stderr
    assert "no policy" not in result.stderr
    assert "git evidence check" in result.stderr


def test_github_actions_without_the_event_names_what_it_read_and_what_is_missing(
    forge: Forge,
) -> None:
    result = evidence(forge.job(), "ci", env={"GITHUB_ACTIONS": "true"})
    assert result.returncode == 2
    assert "GITHUB_EVENT_NAME and GITHUB_EVENT_PATH are not set" in result.stderr
    assert "read: GITHUB_ACTIONS='true', GITHUB_EVENT_NAME unset" in result.stderr
    assert "no policy" not in result.stderr
    named = evidence(forge.job(), "ci", env={"GITHUB_EVENT_NAME": "push"})
    assert "set GITHUB_ACTIONS=true beside GITHUB_EVENT_NAME" in named.stderr


def gitlab_env(name: str, **values: str) -> dict[str, str]:
    env: dict[str, str] = json.loads(fill(name, **values))
    return env


def test_a_gitlab_merge_request_prints_text_and_writes_stable_code_quality(forge: Forge) -> None:
    head = branch(forge.work, {"src/app.py": "t = 1\n", "tests/fixtures/a.json": "{}\n"})
    forge.work.git("push", "-q", "origin", f"{head}:refs/merge-requests/7/head")
    env = gitlab_env(
        "gitlab-merge_request.env.json", HEAD_SHA=head, BASE_SHA=forge.base, AUTHOR_LOGIN=AGENT
    )
    reports = []
    for _ in range(2):
        job = forge.job("--depth", "1")
        result = evidence(job, "ci", env=env)
        assert result.returncode == 1, result.stdout + result.stderr
        assert "refs/heads/main: reject" in result.stdout
        assert f"({AGENT};" in result.stdout
        reports.append(json.loads((job / "gl-code-quality-report.json").read_text()))
    first, second = reports
    assert first == second  # fingerprints (and all else) stable across runs
    paths = {(i["check_name"], i["location"]["path"]) for i in first}
    assert ("mixed-commit", "src/app.py") in paths
    assert ("mixed-commit", "tests/fixtures/a.json") in paths
    for issue in first:
        assert set(issue) >= {"description", "check_name", "fingerprint", "severity", "location"}
        assert issue["severity"] == "blocker" and issue["location"]["lines"]["begin"] == 1
    assert len({i["fingerprint"] for i in first}) == len(first)


def test_a_gitlab_push_pipeline_judges_before_to_after(forge: Forge) -> None:
    forge.work.git("checkout", "-q", "-b", "feature")
    before = forge.work.commit("first", {"src/app.py": "s = 1\n"})
    forge.work.git("push", "-q", "origin", "feature")
    after = forge.work.commit("second", {"tests/goldens/out.txt": "changed\n"})
    forge.work.git("push", "-q", "origin", "feature")
    env = gitlab_env(
        "gitlab-push.env.json",
        HEAD_SHA=after,
        BEFORE_SHA=before,
        BRANCH="feature",
        PUSHER_LOGIN=AGENT,
    )
    result = evidence(forge.job(), "ci", "--format", "json", "--codequality", "-", env=env)
    # evidence alone on an unprotected branch is a proposal: allowed, and said
    assert result.returncode == 0, result.stdout + result.stderr
    (update,) = json.loads(result.stdout)["updates"]
    assert update["ref"] == "refs/heads/feature" and update["commits"] == 1
    assert update["findings"][0]["rule"] == "evidence-proposed"
    assert update["findings"][0]["paths"] == {"fixture": ["tests/goldens/out.txt"]}
