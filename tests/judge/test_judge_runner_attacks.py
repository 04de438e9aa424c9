"""Attacks on what judges the candidate: a runner, a plugin, a path hook or startup code
the candidate ships in its own tree. Each is a failing product that would be
``accept`` if the workspace's copy ran; the judge holds it for a person instead, naming
the file, and nothing from the workspace loads."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from helpers.judge_repos import APP, Repo, markers

BROKEN = APP.replace("return True", "return False")
# a module that reports success whatever the tests say
FAKE_PYTEST = "import sys\nprint('1 passed')\nsys.exit(0)\n"


def _held(doc: dict[str, object], *files: str) -> None:
    assert doc["class"] == "held" and doc["exit"] == 1, doc["reason"]
    said = "\n".join([str(doc["reason"]), *map(str, doc["details"])])  # type: ignore[call-overload]
    for name in files:
        assert name in said, said


def test_a_src_pytest_py_shadowing_the_runner_is_held(repo: Repo) -> None:
    repo.commit("faster tests", {"src/app.py": BROKEN, "src/pytest.py": FAKE_PYTEST})
    _, doc = repo.judge("--property", "suite")
    _held(doc, "runner module from the workspace: pytest from src/pytest.py")
    assert doc["properties"] == [], "nothing ran"


def test_a_src_pluggy_package_shadowing_what_pytest_loads_is_held(repo: Repo) -> None:
    repo.commit(
        "vendored",
        {"src/app.py": BROKEN, "src/pluggy/__init__.py": "raise SystemExit(0)\n"},
    )
    _, doc = repo.judge("--property", "suite")
    _held(doc, "pluggy from src/pluggy/__init__.py")


def test_a_shadowed_plugin_is_held_whatever_the_command(repo: Repo) -> None:
    """A command whose interpreter the preflight cannot tell (``sh -c``): the tree is
    read for the runner's modules all the same."""
    repo.commit("ours", {"src/app.py": BROKEN, "src/git_evidence/__init__.py": ""})
    _, doc = repo.judge("--", "sh", "-c", f"{sys.executable} -m pytest -q tests/properties")
    _held(doc, "git_evidence from src/git_evidence/__init__.py")


# -- the record as a channel -----------------------------------------------------------

SECRET = "s3cr3t-token-4f9a7c"
# a passing product that writes what it can read into the files whose lines reach the
# record: a module name of the workspace's own package, an outside "module", hit ids
LEAK = """
import json, os

def _leak():
    secret = os.environ.get("JUDGE_SECRET", "none")
    with open(os.environ["EVIDENCE_ORIGINS_FILE"], "a") as handle:
        handle.write(json.dumps({"modules": {
            "app." + secret.replace("-", "_"): os.path.abspath(__file__),
            "app": os.path.abspath(__file__),
            secret: "/etc/passwd",
            "app_" + secret.replace("-", "_"): "/" + secret,
        }}) + "\\n")
    with open(os.environ["EVIDENCE_HITS_FILE"], "a") as handle:
        handle.write(f"{secret} 5\\n")

_leak()
"""


def test_a_secret_written_as_a_module_name_reaches_no_output(repo: Repo, tmp_path: Path) -> None:
    candidate = repo.product(APP + LEAK)
    out = tmp_path / "verdict.json"
    result, doc = repo.judge(
        "--property", "suite", "--out", str(out), "--note", env={"JUDGE_SECRET": SECRET}
    )
    assert doc["class"] == "accept", doc["reason"]
    # each run: two origins lines and two hit ids (the secret, the test's own name)
    assert doc["dropped"] == {"hit_ids": 4, "import_origins": 4}, doc["dropped"]
    assert doc["import_origins"] == {"suite": {"app": "src/app.py"}}
    blob = repo.git("notes", "--ref=refs/notes/evidence-verdicts", "list", candidate).stdout
    note = repo.git("cat-file", "blob", blob.strip()).stdout
    for where, text in {
        "stdout": result.stdout,
        "stderr": result.stderr,
        "--out": out.read_text(),
        "the note": note,
    }.items():
        for form in (SECRET, SECRET.replace("-", "_")):
            assert form not in text, f"{form} in {where}"


def test_a_secret_as_a_submodule_imported_from_outside_is_not_in_the_reason(
    repo: Repo, tmp_path: Path
) -> None:
    leak = LEAK.replace(
        'os.path.abspath(__file__),\n            "app"', '"/etc/passwd",\n            "app"'
    )
    assert leak != LEAK
    repo.product(APP + leak)
    out = tmp_path / "verdict.json"
    result, doc = repo.judge("--property", "suite", "--out", str(out), env={"JUDGE_SECRET": SECRET})
    assert doc["class"] == "undecided", doc["reason"]
    assert "tested code from outside the workspace: app from /etc/passwd" in doc["reason"]
    for text in (result.stdout, result.stderr, out.read_text()):
        assert SECRET.replace("-", "_") not in text and SECRET not in text


# -- plugins, path hooks and startup code from the workspace ----------------------------

EVIL_PLUGIN = (
    "import pytest\n\n\ndef pytest_collection_modifyitems(items):\n"
    "    for item in items:\n        item.add_marker(pytest.mark.skip(reason='all good'))\n"
)
DIST = "src/evil-1.0.dist-info"
PLUGIN_FILES = {
    "src/app.py": BROKEN,
    "src/evil_plugin.py": EVIL_PLUGIN,
    f"{DIST}/METADATA": "Metadata-Version: 2.1\nName: evil\nVersion: 1.0\n",
    f"{DIST}/entry_points.txt": "[pytest11]\nevil = evil_plugin\n",
}
AUTOLOAD = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": ""}  # pytest loads every plugin it finds


def _draft(repo: Repo, tmp_path: Path, extra: str) -> str:
    text = (repo.path / ".git-evidence.toml").read_text()
    draft = tmp_path / "draft.toml"
    draft.write_text(text.replace("[judge]\n", f"{extra}\n[judge]\n", 1))
    return str(draft)


def test_a_pytest_plugin_shipped_as_dist_info_in_the_workspace_is_held(repo: Repo) -> None:
    repo.commit("plugin", PLUGIN_FILES)
    _, doc = repo.judge("--property", "suite", env=AUTOLOAD)
    _held(doc, f"{DIST}/entry_points.txt", f"{DIST}/METADATA")


def test_a_pth_or_egg_info_in_the_workspace_is_held(repo: Repo) -> None:
    repo.commit(
        "hooks",
        {
            "src/app.py": BROKEN,
            "src/zz-first.pth": "import evil_plugin\n",
            "src/evil.egg-info/entry_points.txt": "[pytest11]\nevil = evil_plugin\n",
        },
    )
    _, doc = repo.judge("--property", "suite")
    _held(doc, "src/zz-first.pth", "src/evil.egg-info/entry_points.txt")


def test_a_workspace_plugin_allowed_through_never_loads_in_the_sandbox(
    repo: Repo, tmp_path: Path
) -> None:
    repo.commit("plugin", PLUGIN_FILES)
    allow = '[rules]\nother_path = "allow"\nadded_test = "allow"\n'
    # without the sandbox, the plugin loads and skips every test: a failing product
    # passes (the hole the sandbox closes; "junit" asks for no hits)
    loose = _draft(repo, tmp_path, allow)
    Path(loose).write_text(
        Path(loose).read_text().replace("[judge]\n", '[judge]\nsandbox = "none"\n', 1)
    )
    _, doc = repo.judge("--policy", loose, "--property", "junit", env=AUTOLOAD)
    assert doc["class"] == "accept", doc["reason"]
    held_in = tmp_path / "held"
    held_in.mkdir()
    _, doc = repo.judge(
        "--policy", _draft(repo, held_in, allow), "--property", "junit", env=AUTOLOAD
    )
    assert doc["class"] == "property_fail", doc["reason"]


# -- a clean environment ---------------------------------------------------------------

SEES = (
    "import json, os\n"
    "open('env.local', 'w').write(json.dumps(sorted(os.environ)))\n"
    "raise SystemExit(1 if 'CLOUD_TOKEN' in os.environ or 'GITHUB_TOKEN' in os.environ else 0)"
)


def test_a_secret_in_the_judges_environment_is_not_visible_to_a_run(repo: Repo) -> None:
    repo.product(APP)
    secrets = {"CLOUD_TOKEN": SECRET, "GITHUB_TOKEN": SECRET, "JUDGE_MARKER": "m.local"}
    result, doc, kept = repo.judge_kept("--", sys.executable, "-c", SEES, env=secrets)
    assert doc["class"] == "accept", doc["reason"]
    seen = {name for line in markers(kept, "env.local") for name in json.loads(line)}
    assert "CLOUD_TOKEN" not in seen and "GITHUB_TOKEN" not in seen, seen
    assert {"PATH", "JUDGE_MARKER", "EVIDENCE_SEED", "HOME"} <= seen, seen  # [judge].env
    assert SECRET not in result.stdout + result.stderr
