"""A real-shaped project to judge: its files and policy, a pinned repository copied from
a template, and what the runs left behind."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from helpers.repos import Work, evidence

PY = json.dumps(sys.executable)  # a TOML basic string


CI = "ci-bot"


POLICY = f"""\
[identities]
evidence_writers = ["alice"]
ledger_writers = ["{CI}"]
lock_writers = ["{CI}"]

[judge]
repeat = 2
seeds = 1
timeout_s = 60
env = ["PYTEST_DISABLE_PLUGIN_AUTOLOAD", "JUDGE_MARKER", "JUDGE_SECRET"]

[[judge.property]]
id = "suite"
command = [{PY}, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/properties"]
min_hits = 5

[[judge.property]]
id = "junit"
command = [{PY}, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/properties",
           "--junitxml={{junitxml}}"]
junit = true

[[judge.property]]
id = "fixtures"
command = [{PY}, "tests/properties/check_fixture.py"]
must_fail = ["tests/fixtures/bad.json"]
must_pass = ["tests/fixtures/a.json"]

[[judge.property]]
id = "hang"
command = ["sh", "-c", "sleep 29.0417 & wait"]
timeout_s = 0.5
"""


APP = """\
import os


def check(seed):
    return True


def accepts(doc):
    return doc.get("a") == 1


def cases():
    return list(range(5))
"""


PROPERTY_TEST = """\
import json
import os
import sys

sys.path.insert(0, "src")
import app


def test_seeded_property():
    marker = os.environ.get("JUDGE_MARKER")
    if marker:
        with open(marker, "a") as handle:
            handle.write(f"{os.environ['EVIDENCE_SEED']} {os.environ['EVIDENCE_RUN']}\\n")
    with open("tests/fixtures/a.json") as handle:
        assert json.load(handle) == {"a": 1}
    cases = app.cases()
    with open(os.environ["EVIDENCE_HITS_FILE"], "a") as handle:
        handle.write(f"test_seeded_property {len(cases)}\\n")
    assert app.check(int(os.environ["EVIDENCE_SEED"]))
"""


CHECK_FIXTURE = """\
import json
import sys

sys.path.insert(0, "src")
import app

if len(sys.argv) < 2:  # the plain runs: nothing to check without a fixture
    sys.exit(0)
with open(sys.argv[-1]) as handle:
    sys.exit(0 if app.accepts(json.load(handle)) else 1)
"""


FILES = {
    ".git-evidence.toml": POLICY,
    ".gitignore": "*.local\n__pycache__/\n",
    "pytest.ini": "[pytest]\n",
    "src/app.py": APP,
    "tests/properties/test_prop.py": PROPERTY_TEST,
    "tests/properties/check_fixture.py": CHECK_FIXTURE,
    "tests/fixtures/a.json": '{"a": 1}\n',
    "tests/fixtures/bad.json": '{"a": 2}\n',
    "tests/test_other.py": "def test_other():\n    pass\n",
    "tests/freeze.jsonl": "",
}


FAST = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}


MARKER = "ran.local"  # written by the property into its workspace (JUDGE_MARKER)


KEPT: list[Path] = []


def markers(kept: Path, name: str = MARKER) -> list[str]:
    """What the runs wrote to ``name`` in every workspace of a kept judgement."""
    return [
        line
        for space in sorted(kept.glob("ws-*"))
        if (space / name).exists()
        for line in (space / name).read_text().splitlines()
    ]


class Repo(Work):
    def judge(
        self, *args: str, env: dict[str, str] | None = None
    ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
        result = evidence(
            self.path, "judge", "--format", "json", *args, env={**FAST, **(env or {})}
        )
        assert result.stdout.strip(), result.stderr
        return result, json.loads(result.stdout)

    def judge_kept(
        self, *args: str, env: dict[str, str] | None = None
    ) -> tuple[subprocess.CompletedProcess[str], dict[str, Any], Path]:
        """``judge --keep``: the runs' workspaces stay for the test to read what the
        runs wrote there (the sandbox lets a run write nothing else), then go."""
        result, doc = self.judge("--keep", *args, env=env)
        kept = Path(result.stderr.split("workspace kept in ", 1)[1].split()[0])
        KEPT.append(kept)
        return result, doc, kept

    def product(self, app: str, message: str = "product change") -> str:
        return self.commit(message, {"src/app.py": app})

    def patch_of(self, tmp: Path, change: dict[str, str], remove: tuple[str, ...] = ()) -> Path:
        """A patch against main made on a scratch branch (then dropped)."""
        self.git("checkout", "-qb", "scratch", "main")
        for rel, content in change.items():
            self.write(rel, content)
            self.git("add", "-f", "--", rel)  # ignored files too
        self.commit("scratch", remove=remove)
        patch = tmp / "candidate.patch"
        patch.write_bytes(
            subprocess.run(
                ["git", "diff", "--binary", "main", "scratch"],
                cwd=self.path,
                capture_output=True,
                check=True,
            ).stdout
        )
        self.git("checkout", "-q", "main")
        self.git("branch", "-qD", "scratch")
        return patch


def running(needle: str) -> list[int]:
    """Every process on the machine whose command line holds ``needle``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = (Path("/proc") / entry / "cmdline").read_bytes()
            except OSError:
                continue
            if needle.encode() in cmdline.replace(b"\0", b" "):
                found.append(int(entry))
    return found


def pinned_repo(tmp_path: Path, template: Path) -> Repo:
    """A copy of the session's pinned repository, on a fresh branch `feat`."""
    repo = Repo(tmp_path / "repo")
    shutil.copytree(template, repo.path, symlinks=True)
    repo.git("checkout", "-qb", "feat")
    return repo


def alive(pid: int) -> bool:
    """Running, not a zombie nobody has reaped yet (PID 1 may not reap them)."""
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return False
        if state in ("Z", "X"):
            return False
        time.sleep(0.05)
    return True


FLAKY_APP = APP.replace(
    "return True", "return not (seed == 0 and os.environ['EVIDENCE_RUN'] == '2')"
)


def flaky_on_main(repo: Repo) -> None:
    """The flake is the base's already: main gets FLAKY_APP (pinned again), the
    candidate rebases onto it with a product change of its own."""
    repo.git("checkout", "-q", "main")
    repo.product(FLAKY_APP, "a flaky product")
    assert evidence(repo.path, "lock").returncode == 0
    repo.git("checkout", "-q", "feat")
    repo.git("rebase", "-q", "main")
    repo.product(FLAKY_APP + "\n# a comment\n")
