"""Hostile attacks on the judge's sandbox: the repository, the user's HOME, the judge's
outputs and the pinned fixtures, each attacked as a candidate would, by every route a
program inside the sandbox has (the paths it is told or can find, ``/proc``, and the
mount calls of a process that is root in its own namespaces). A route the sandbox
blocks writes ``blocked …`` to ``reach.local`` in its workspace, one that gets through
``REACHED …``; each test asserts the class or exit code, that every route was blocked,
and that the thing attacked is unchanged."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

import pytest
from helpers.judge_attacks import (
    KIT,
    armed,
    assert_accepted_and_unchanged,
    assert_blocked,
    attack,
    home,
    host_state,
)
from helpers.judge_repos import APP, FAST, POLICY, Repo, markers
from helpers.repos import evidence


@pytest.fixture
def target(repo: Repo) -> Repo:
    return armed(repo)


# -- the repository and HOME -----------------------------------------------------------


def test_a_run_holds_no_capability_in_its_namespaces(target: Repo) -> None:
    code = """
caps = [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")]
reach("effective capabilities", lambda: caps if int(caps[0], 16) else fail("none"))
"""
    _, doc, kept = attack(target, code)
    assert_blocked(kept)
    assert doc["class"] == "accept", doc["reason"]


def test_a_run_cannot_find_the_repository_from_proc_or_its_folders(
    target: Repo, tmp_path: Path
) -> None:
    scratch = tmp_path / "tmp"  # the workspaces in a sibling folder of the repository
    scratch.mkdir()
    code = r"""
def cwds():
    out = []
    for pid in [p for p in os.listdir("/proc") if p.isdigit()] + [str(os.getppid())]:
        try:
            out.append(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            pass
    return out


def near(start):
    found, here = [], start
    while here != "/":
        here = os.path.dirname(here)
        for top, dirs, _ in os.walk(here):
            if ".git" in dirs:
                found.append(top)
            if top.count("/") - here.count("/") >= 2:
                dirs[:] = []
        if here in ("/dev", "/tmp", "/var"):
            break
    return found


def found(places):
    places = [p for p in places if os.path.exists(os.path.join(p, ".git", "HEAD"))]
    return places if places else fail("no repository")


def lift_and_look():
    start = os.getcwd()
    for point in ("/proc", "/dev", "/tmp"):
        umount(point)
    return found(cwds() + near(start))


reach("/proc/<pid>/cwd", lambda: found(cwds()))
reach("up from the workspace", lambda: found(near(os.getcwd())))
reach("up from TMPDIR", lambda: found(near(os.path.join(os.environ["TMPDIR"], "x"))))
reach("lift the mounts, look again", lift_and_look)
"""
    before = host_state(target)
    _, doc, kept = attack(target, code, env={"TMPDIR": str(scratch)})
    assert_blocked(kept, 4)
    assert_accepted_and_unchanged(doc, target, before)


def test_a_run_cannot_move_refs_heads_main(target: Repo) -> None:
    repo, feat = str(target.path), target.head()
    code = f"""
REPO, FEAT = {repo!r}, {feat!r}
REF = REPO + "/.git/refs/heads/main"
update = ("update-ref", "refs/heads/main", FEAT)
gitdir = dict(os.environ, GIT_DIR=REPO + "/.git")
reach("git -C the repository", lambda: git("-C", REPO, *update))
reach("GIT_DIR", lambda: git(*update, env=gitdir))
reach("the loose ref", lambda: append_existing(REF, ""))
reach("uncovered", lambda: (uncover(REPO + "/.git/HEAD"), git("-C", REPO, *update)))
reach("the loose ref, uncovered", lambda: open(uncover(REF), "w").write(FEAT + "\\n"))
"""
    before = host_state(target)
    _, doc, kept = attack(target, code)
    assert_blocked(kept, 5)
    assert_accepted_and_unchanged(doc, target, before)
    assert target.head("main") != feat


def test_a_run_cannot_set_core_hookspath_in_the_repositorys_config(target: Repo) -> None:
    code = f"""
CONFIG = {str(target.path / ".git/config")!r}
line = "[core]\\n\\thooksPath = /tmp/evil\\n"
reach("append to .git/config", lambda: append_existing(CONFIG, line))
reach("git config", lambda: git("config", "-f", existing(CONFIG), "core.hooksPath", "/x"))
reach("uncovered", lambda: append_existing(uncover(CONFIG), line))
"""
    before = host_state(target)
    _, doc, kept = attack(target, code)
    assert_blocked(kept, 3)
    assert_accepted_and_unchanged(doc, target, before)
    assert "hooksPath" not in (target.path / ".git/config").read_text()


def test_a_run_cannot_write_the_users_gitconfig(target: Repo) -> None:
    real = str(home() / ".gitconfig")
    code = f"""
REAL = {real!r}
line = "[alias]\\n\\tst = !touch /tmp/pwned\\n"
reach("HOME is the user's", lambda: os.environ["HOME"] if os.environ["HOME"] == {str(home())!r}
      else fail(os.environ["HOME"]))
reach("append to the real ~/.gitconfig", lambda: append_existing(REAL, line))
reach("git config --global", lambda: git("config", "-f", existing(REAL), "alias.st", "!x"))
reach("uncovered", lambda: append_existing(uncover(REAL), line))
"""
    before = host_state(target)
    _, doc, kept = attack(target, code)
    assert_blocked(kept, 4)
    assert_accepted_and_unchanged(doc, target, before)
    assert (home() / ".gitconfig").read_text() == "[user]\n\tname = Real User\n"


def test_a_run_cannot_forge_a_verdict_note(target: Repo) -> None:
    repo, feat = str(target.path), target.head()
    code = f"""
REPO, FEAT = {repo!r}, {feat!r}
note = ("notes", "--ref=refs/notes/evidence-verdicts", "add", "-f", "-m", '{{"class":"accept"}}')
reach("git notes in the repository", lambda: git("-C", REPO, *note, FEAT))
reach("uncovered", lambda: (uncover(REPO + "/.git/HEAD"), git("-C", REPO, *note, FEAT)))
"""
    before = host_state(target)
    _, doc, kept = attack(target, code)
    assert_blocked(kept, 2)
    assert_accepted_and_unchanged(doc, target, before)
    assert target.git("notes", "--ref=refs/notes/evidence-verdicts", "list").stdout == ""


# -- the judge's outputs ---------------------------------------------------------------


def test_a_run_cannot_find_or_append_to_the_judges_log(target: Repo, tmp_path: Path) -> None:
    log = tmp_path / "logs" / "judge.log"
    log.parent.mkdir()
    log.write_text('{"earlier":"line"}\n')
    code = f"""
LOG = {str(log)!r}


def logs():
    out = []
    for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
        try:
            argv = open(f"/proc/{{pid}}/cmdline", "rb").read().split(b"\\0")
        except OSError:
            continue
        out += [a.decode() for a in argv if a.endswith(b".log")]
    return out if out else fail("no log on any command line")


forged = '{{"class":"accept","forged":true}}\\n'
reach("the log's path in /proc/*/cmdline", logs)
reach("the log's path once /proc is lifted", lambda: (umount("/proc"), logs()))
reach("append to the log", lambda: append_existing(LOG, forged))
reach("uncovered", lambda: append_existing(uncover(LOG), forged))
"""
    before = host_state(target)
    result, doc, kept = attack(target, code, "--log", str(log), own=True)
    assert str(log) in result.args  # the judge's own command line names it
    assert_blocked(kept, 4)
    assert_accepted_and_unchanged(doc, target, before)
    lines = log.read_text().splitlines()
    assert lines[0] == '{"earlier":"line"}' and len(lines) == 2, lines
    assert json.loads(lines[1])["class"] == "accept" and "forged" not in lines[1]


@pytest.mark.parametrize("option", ["--out", "--log"])
def test_a_symlink_planted_at_an_output_path_is_refused_and_its_target_kept(
    target: Repo, tmp_path: Path, option: str
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    planted = tmp_path / "outputs" / "verdict.json"
    planted.parent.mkdir()
    planted.symlink_to(victim)
    result = evidence(target.path, "judge", option, str(planted), "--", "true", env=FAST)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "a symbolic link stands there (refused)" in result.stderr
    assert victim.read_text() == "precious\n"
    assert planted.is_symlink() and os.readlink(planted) == str(victim)


# -- the pinned fixtures ---------------------------------------------------------------

# accepts the bad fixture's value too: the must-fail fixture tests/fixtures/bad.json
# catches it, unless the product changes what that file says while it runs
BUGGY = APP.replace('doc.get("a") == 1', 'doc.get("a") in (1, 2)')


def fixture_attack(code: str) -> str:
    """A buggy product that attacks its fixtures when imported: KIT, then ``code``."""
    return KIT + code + "\n\n" + BUGGY


def test_a_product_rewriting_a_fixture_at_import_and_restoring_it_at_exit_is_caught(
    repo: Repo,
) -> None:
    repo.product(
        fixture_attack(
            """
import atexit
BAD = "tests/fixtures/bad.json"
pinned, stamp = open(BAD, "rb").read(), os.stat(BAD)


def restore():
    with open(BAD, "wb") as handle:
        handle.write(pinned)
    os.utime(BAD, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))


def rewrite():
    with open(BAD, "wb") as handle:
        handle.write(b'{"a": 3}\\n')
    atexit.register(restore)


def replace():
    with open("tests/fixtures/.bad.tmp", "wb") as handle:
        handle.write(b'{"a": 3}\\n')
    os.replace("tests/fixtures/.bad.tmp", BAD)
    atexit.register(restore)


reach("rewrite the fixture", rewrite)
reach("replace it by a rename", replace)
reach("rewrite it after a remount", lambda: (uncover(os.path.abspath(BAD)), rewrite()))
"""
        )
    )
    result, doc, kept = repo.judge_kept("--property", "fixtures")
    lines = assert_blocked(kept, 3)
    assert "Errno 30" in lines[0] and "Errno 30" in lines[1]  # EROFS: a read-only root
    assert doc["class"] == "property_miss" and result.returncode == 1, doc["reason"]
    assert any("must-fail fixture tests/fixtures/bad.json" in m for m in doc["misses"])
    assert doc["drift"]["after"] == []
    for space in kept.glob("ws-*"):
        assert (space / "tests/fixtures/bad.json").read_text() == '{"a": 2}\n'


FORGED_JUNIT = """
import atexit, sys

INJECTED = "tests/test_ok.py::test_ok\\n::error file=src/app.py::forged by the product"


def forge():
    path = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml="))
    with open(path, "w") as handle:
        handle.write('<testsuites><testsuite name="pytest">'
                     f'<testcase classname="" name="{INJECTED.replace(chr(10), "&#10;")}"/>'
                     '</testsuite></testsuites>')


if any(a.startswith("--junitxml=") for a in sys.argv):
    atexit.register(forge)  # after pytest has written its own
"""


def test_a_product_forging_a_junit_test_id_with_a_line_break_is_not_recorded(
    repo: Repo,
) -> None:
    """A JUnit id is the run's claim, and it reaches the record, its note and the CI
    log: one with a line break (a workflow command on a line of its own) is not read
    as JUnit, so the run fails and the id is nowhere."""
    repo.product(APP + FORGED_JUNIT)
    result, doc = repo.judge("--property", "junit")
    assert doc["class"] == "property_fail" and result.returncode == 1, doc["reason"]
    assert "unsafe character U+000A" in doc["reason"]
    assert "\n::error" not in result.stdout + result.stderr
    assert not any("forged" in t for t in doc["passed_tests"] + doc["failed_tests"])


def test_a_product_moving_the_fixtures_aside_for_a_doctored_copy_is_caught(repo: Repo) -> None:
    repo.product(
        fixture_attack(
            """
import atexit, shutil


def move(src, dst, fixtures):
    os.rename(src, dst)
    os.makedirs("tests", exist_ok=True)
    shutil.copytree(fixtures, "tests/fixtures")
    with open("tests/fixtures/bad.json", "w") as handle:
        handle.write('{"a": 3}\\n')
    atexit.register(lambda: (shutil.rmtree("tests/fixtures"), os.rename(dst, src)))


def bind_over():
    shutil.copytree("tests/fixtures", "doctored.local", dirs_exist_ok=True)
    with open("doctored.local/bad.json", "w") as handle:
        handle.write('{"a": 3}\\n')
    _call(_LIBC.mount(b"doctored.local", b"tests/fixtures", None, 4096, None), "bind")


moved = "tests/fixtures.local"
reach("rename tests/fixtures aside", lambda: move("tests/fixtures", moved, moved))
reach("rename tests/ aside", lambda: move("tests", "tests.local", "tests.local/fixtures"))
reach("unmount the lock root", lambda: umount(os.path.abspath("tests/fixtures")))
reach("bind a doctored copy over it", bind_over)
"""
        )
    )
    result, doc, kept = repo.judge_kept("--property", "fixtures")
    lines = assert_blocked(kept, 4)
    assert "Errno 16" in lines[0] and "Errno 16" in lines[1]  # EBUSY: mount points
    assert doc["class"] == "property_miss" and result.returncode == 1, doc["reason"]
    assert doc["drift"]["after"] == []


# -- no sandbox, and no bwrap ------------------------------------------------------------


def unsandboxed_on_main(repo: Repo) -> None:
    """main's policy says sandbox = "none" (pinned again); feat rebased onto it."""
    repo.git("checkout", "-q", "main")
    policy = POLICY.replace("timeout_s = 60\n", 'timeout_s = 60\nsandbox = "none"\n')
    repo.commit("judge unsandboxed", {".git-evidence.toml": policy})
    assert evidence(repo.path, "lock").returncode == 0
    repo.git("checkout", "-q", "feat")
    repo.git("rebase", "-q", "main")
    repo.product(APP)


def test_sandbox_none_is_recorded_and_the_text_says_unsandboxed(repo: Repo) -> None:
    unsandboxed_on_main(repo)
    _, doc = repo.judge("--", sys.executable, "-c", "pass")
    assert doc["class"] == "accept", doc["reason"]
    assert doc["sandbox"]["kind"] == "none"
    text = evidence(repo.path, "judge", "--", sys.executable, "-c", "pass", env=FAST)
    assert text.returncode == 0 and text.stdout.startswith("accept\n")
    line = (
        '  unsandboxed: the candidate ran with the judge\'s own rights ([judge] sandbox = "none")'
    )
    assert line in text.stdout.splitlines()


def test_unsandboxed_a_run_that_writes_the_repository_is_caught_by_its_fingerprint(
    repo: Repo,
) -> None:
    unsandboxed_on_main(repo)
    code = (
        f"import subprocess; subprocess.run(['git', '-C', {str(repo.path)!r}, 'update-ref', "
        f"'refs/heads/side', 'HEAD'], check=True); "
        f"open({str(repo.path / '.git/config')!r}, 'a').write('[core]\\n\\thooksPath = x\\n')"
    )
    result, doc = repo.judge("--", sys.executable, "-c", code)
    assert result.returncode == 2 and doc["class"] == "undecided"
    assert "the repository changed during the judgement" in doc["reason"]
    assert "added: " + os.path.realpath(repo.path / ".git/refs/heads/side") in doc["reason"]
    assert "changed: " + os.path.realpath(repo.path / ".git/config") in doc["reason"]


def bin_dir(tmp_path: Path, fake_bwrap: str | None = None) -> str:
    """A PATH with git, sh and this Python, and no bwrap (or a fake one)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("git", "sh"):
        found = shutil.which(name)
        assert found is not None, f"no {name} on PATH"
        (folder / name).symlink_to(Path(found))
    (folder / "python").symlink_to(sys.executable)
    if fake_bwrap is not None:
        (folder / "bwrap").write_text(fake_bwrap)
        (folder / "bwrap").chmod(0o755)
    return str(folder)


def test_without_bwrap_the_judge_exits_2_naming_the_package_and_the_setting(
    repo: Repo, tmp_path: Path
) -> None:
    repo.product(APP)
    path = bin_dir(tmp_path)
    result, doc, kept = repo.judge_kept(
        "--", "python", "-c", "open('ran.local', 'w')", env={"PATH": path}
    )
    assert result.returncode == 2 and doc["class"] == "undecided", doc["reason"]
    assert "bwrap is not installed" in doc["reason"]
    assert "bubblewrap" in doc["next"] and 'sandbox = "none"' in doc["next"]
    assert markers(kept, "ran.local") == [] and not list(kept.glob("ws-*/ran.local"))


def test_a_bwrap_that_cannot_make_its_namespaces_stops_the_judge_with_exit_2(
    repo: Repo, tmp_path: Path
) -> None:
    repo.product(APP)
    fake = "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n"
    path = bin_dir(tmp_path, fake)
    result, doc, kept = repo.judge_kept(
        "--", "python", "-c", "open('ran.local', 'w')", env={"PATH": path}
    )
    assert result.returncode == 2 and doc["class"] == "undecided", doc["reason"]
    assert "bwrap cannot make its sandbox here: bwrap: setting up uid map" in doc["reason"]
    assert "bubblewrap" in doc["next"] and 'sandbox = "none"' in doc["next"]
    assert not list(kept.glob("ws-*/ran.local"))
