"""The root ``action.yml`` and the workflow files a team copies: what they declare, what
they never do (check out or run the head in the fence, pass a secret, skip a required
job), and, slow, the action's steps run as the runner runs them (each ``run:`` a bash
script, the inputs in its ``env:``, ``$GITHUB_PATH`` and ``$GITHUB_OUTPUT`` honoured)
in a clean virtual environment against a real repository."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]
from helpers.repos import PROJECT, clone_of, git, make_remote

ACTION = PROJECT / "action.yml"
FENCE = PROJECT / "docs" / "github-evidence-fence.yml"
JUDGE = PROJECT / "docs" / "github-evidence-judge.yml"
GITLAB = PROJECT / "docs" / "gitlab-ci-evidence.yml"
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def triggers(workflow: dict[Any, Any]) -> set[str]:
    # YAML 1.1 reads the key `on` as True
    return set(workflow.get("on") or workflow.get(True) or ())


def test_the_action_is_composite_with_the_documented_inputs() -> None:
    action = load(ACTION)
    assert action["runs"]["using"] == "composite"
    assert set(action["inputs"]) == {
        "version",
        "token",
        "sarif",
        "judge",
        "properties",
        "shards",
        "merge",
    }
    for step in action["runs"]["steps"]:
        assert step["shell"] == "bash"
        # inputs reach a script through env only: an input is never pasted into shell
        assert not EXPRESSION.search(step["run"]), step["name"]


def test_the_fence_workflow_runs_nothing_of_the_head() -> None:
    workflow = load(FENCE)
    assert triggers(workflow) == {"pull_request_target"}
    text = FENCE.read_text()
    assert "secrets." not in text
    (job,) = workflow["jobs"].values()
    assert "if" not in job  # a skipped required job would report success
    for step in job["steps"]:
        assert "run" not in step
        assert "ref" not in (step.get("with") or {})


def test_the_fence_is_judged_again_when_the_base_head_or_draft_state_changes() -> None:
    workflow = load(FENCE)
    on = workflow.get("on") or workflow[True]
    types = set(on["pull_request_target"]["types"])
    assert {"opened", "synchronize", "reopened", "edited"} <= types
    assert {"ready_for_review", "converted_to_draft"} <= types
    assert workflow["permissions"] == {}
    assert workflow["jobs"]["fence"]["permissions"] == {"contents": "read", "pull-requests": "read"}


def test_the_reusable_workflow_runs_the_fence_from_the_release_it_is_given() -> None:
    reusable = load(PROJECT / ".github" / "workflows" / "evidence.yml")
    call = triggers(reusable)
    assert call == {"workflow_call"}
    assert (reusable.get("on") or reusable[True])["workflow_call"]["inputs"]["release"]["required"]
    (job,) = reusable["jobs"].values()
    assert "if" not in job  # a required check
    assert job["permissions"] == {"contents": "read", "pull-requests": "read"}
    checkouts = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout@")]
    assert "ref" not in checkouts[0]["with"]  # the base, never the head
    assert checkouts[1]["with"]["ref"] == "${{ inputs.release }}"
    assert job["steps"][-1]["uses"] == "./.git-evidence-action"


def test_the_judge_lifts_the_apparmor_restriction_before_bubblewrap_runs() -> None:
    knob = "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
    steps = load(JUDGE)["jobs"]["shard"]["steps"]
    lifted = next(i for i, s in enumerate(steps) if knob in s.get("run", ""))
    judged = next(i for i, s in enumerate(steps) if s.get("id") == "judge")
    assert lifted < judged
    action_steps = load(ACTION)["runs"]["steps"]
    names = [s["name"] for s in action_steps if s.get("if") == "inputs.judge == 'true'"]
    assert names[0].startswith("Sandbox") and names[-1].startswith("Judge")
    assert knob in action_steps[[s["name"] for s in action_steps].index(names[0])]["run"]


def test_the_judge_workflow_runs_on_pull_request_without_secrets() -> None:
    workflow = load(JUDGE)
    assert triggers(workflow) == {"pull_request"}
    assert "secrets." not in JUDGE.read_text()
    assert workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"] == [1, 2, 3, 4]
    assert "if" not in workflow["jobs"]["shard"]


def test_the_gitlab_template_has_both_jobs_and_the_code_quality_report() -> None:
    template = load(GITLAB)
    fence = template["evidence-fence"]
    assert "rules" not in fence and "git evidence ci" in fence["script"][0]
    assert fence["artifacts"]["reports"]["codequality"] == "gl-code-quality-report.json"
    assert template["evidence-judge-shard"]["parallel"] == 4
    assert template["evidence-judge"]["needs"] == ["evidence-judge-shard"]
    assert template["variables"]["GIT_DEPTH"] == "0"


# -- the steps, as the runner runs them --------------------------------------------------


def _condition(expression: str, inputs: dict[str, str]) -> bool:
    """``inputs.X == 'V'``, ``!=``, and ``always() && ...`` of those (the steps run on
    success here, so ``always()`` adds nothing)."""
    parts = [p.strip() for p in expression.split("&&")]
    if len(parts) > 1:
        return all(p == "always()" or _condition(p, inputs) for p in parts)
    match = re.fullmatch(r"inputs\.(\w+) (==|!=) '([^']*)'", expression.strip())
    assert match, f"an `if:` this emulation cannot read: {expression}"
    name, op, value = match.groups()
    return (inputs[name] == value) == (op == "==")


def _substitute(text: str, inputs: dict[str, str]) -> str:
    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "github.action_path":
            return str(PROJECT)
        if name == "github.token":
            return ""  # no forge to ask: the fence judges the event's base
        assert name.startswith("inputs."), name
        return inputs[name.removeprefix("inputs.")]

    return EXPRESSION.sub(one, text)


def run_action(
    given: dict[str, str], env: dict[str, str], cwd: Path, temp: Path
) -> tuple[list[subprocess.CompletedProcess[str]], dict[str, str]]:
    action = load(ACTION)
    inputs = {
        name: _substitute(str(spec.get("default", "")), {})
        for name, spec in action["inputs"].items()
    }
    inputs.update(given)
    temp.mkdir(exist_ok=True)
    path_file, output_file = temp / "github_path", temp / "github_output"
    for name in (path_file, output_file):
        name.write_text("")
    base = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    done = []
    for number, step in enumerate(action["runs"]["steps"]):
        if "if" in step and not _condition(step["if"], inputs):
            continue
        script = temp / f"step{number}.sh"
        script.write_text(step["run"])
        added = [line for line in path_file.read_text().splitlines() if line][::-1]
        full = {
            **base,
            **env,
            **{k: _substitute(str(v), inputs) for k, v in (step.get("env") or {}).items()},
            "RUNNER_TEMP": str(temp),
            "GITHUB_PATH": str(path_file),
            "GITHUB_OUTPUT": str(output_file),
            "PATH": os.pathsep.join([*added, base["PATH"]]),
        }
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=cwd,
            env=full,
            capture_output=True,
            text=True,
            check=False,
        )
        done.append(proc)
        if proc.returncode != 0:
            break
    outputs = dict(
        line.split("=", 1) for line in output_file.read_text().splitlines() if "=" in line
    )
    return done, outputs


POLICY = """\
[identities]
evidence_writers = ["alice"]

[judge]
repeat = 2
seeds = 3

[[judge.property]]
id = "thirds"
command = ["sh", "-c", "test $((EVIDENCE_SEED % 3)) -ne 1"]
"""


@pytest.mark.slow
def test_the_actions_steps_run_the_fence_and_a_sharded_judge(tmp_path: Path) -> None:
    remote = make_remote(tmp_path, {".git-evidence.toml": POLICY})
    work = clone_of(tmp_path, remote)
    base = work.head()
    head = work.commit("agent", {"src/app.py": "print(3)\n", "tests/fixtures/a.json": "{}\n"})
    work.git("push", "-q", "origin", f"{head}:refs/pull/9/head")
    job = tmp_path / "job"
    git(tmp_path, "clone", "-q", f"file://{remote}", str(job))
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps(
            {
                "number": 9,
                "pull_request": {
                    "number": 9,
                    "base": {"ref": "main", "sha": base},
                    "head": {"ref": "agent", "sha": head},
                    "user": {"login": "copilot-swe-agent"},
                },
                "sender": {"login": "copilot-swe-agent"},
            }
        )
    )
    summary = tmp_path / "summary.md"
    github = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request_target",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_STEP_SUMMARY": str(summary),
    }
    steps, _ = run_action({}, github, job, tmp_path / "runner")
    install, fence = steps
    assert install.returncode == 0, install.stderr
    venv = tmp_path / "runner" / "git-evidence-venv"
    assert (venv / "bin" / "git-evidence").is_file()
    assert fence.returncode == 1, fence.stdout + fence.stderr
    assert "::error file=tests/fixtures/a.json,title=mixed-commit::" in fence.stdout
    assert "git evidence: refused (reject)" in summary.read_text()

    # the judge, in two shards and a merge, on the base (a pull_request job's checkout)
    judge_env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    parts = []
    for shard in ("1/2", "2/2"):
        temp = tmp_path / f"runner-{shard[0]}"
        steps, outputs = run_action({"judge": "true", "shards": shard}, judge_env, job, temp)
        assert steps[0].returncode == 0, steps[0].stderr
        assert steps[-1].returncode in (0, 1), steps[-1].stderr
        part = Path(outputs["verdict"])
        assert json.loads(part.read_text())["shard"]["index"] == int(shard[0])
        parts.append(part)
    merged_steps, outputs = run_action(
        {"judge": "true", "merge": " ".join(map(str, parts))}, judge_env, job, tmp_path / "m"
    )
    assert merged_steps[-1].returncode == 1, merged_steps[-1].stderr
    assert "::error title=property_fail::property thirds: seed 1" in merged_steps[-1].stdout
    record = json.loads(Path(outputs["verdict"]).read_text())
    assert record["class"] == "property_fail" and record["shards"]["count"] == 2
