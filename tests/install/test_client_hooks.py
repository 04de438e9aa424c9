"""Client hooks in a real clone: `git commit` and `git push` run them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.repos import Work, clone_of, evidence, git, make_remote

PROJECT = Path(__file__).resolve().parents[2]
AGENT = "agent-bot"

# The import roots a hook is given: this source tree first; on Python 3.10 the folder
# of its TOML reader (tomli) after it, which an isolated interpreter would not find.
FIRST_ROOT = re.escape(str(PROJECT)) + rf"(?:{re.escape(os.pathsep)}\S+)?"


@pytest.fixture
def unguarded(tmp_path: Path) -> Path:
    """A bare remote with no server hook: only the client hooks stand."""
    return make_remote(tmp_path)


@pytest.fixture
def clone(tmp_path: Path, unguarded: Path) -> Work:
    work = clone_of(tmp_path, unguarded, "clone")
    result = evidence(work.path, "install")
    assert result.returncode == 0, result.stderr
    return work


def test_install_writes_client_hooks_and_the_notes_refspec(clone: Work) -> None:
    hooks = clone.path / ".git" / "hooks"
    for name in ("pre-commit", "pre-push"):
        text = (hooks / name).read_text()
        assert "installed by git-evidence" in text
        # the isolated interpreter, this source tree first on its path, the hook's name
        assert " -I -c " in text and re.search(rf" {FIRST_ROOT} {name} ", text), text
        assert os.access(hooks / name, os.X_OK)
    fetch = clone.git("config", "--get-all", "remote.origin.fetch").stdout.split()
    assert "+refs/notes/evidence*:refs/notes/evidence*" in fetch


def test_install_is_idempotent(clone: Work) -> None:
    again = evidence(clone.path, "install")
    assert again.returncode == 0, again.stderr
    fetch = clone.git("config", "--get-all", "remote.origin.fetch").stdout.split()
    assert fetch.count("+refs/notes/evidence*:refs/notes/evidence*") == 1


def test_install_refuses_to_overwrite_a_foreign_hook(tmp_path: Path) -> None:
    work = Work(tmp_path / "w")
    git(tmp_path, "init", "-q", str(work.path))
    hook = work.path / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)  # a repository may start without hooks/
    hook.write_text("#!/bin/sh\necho mine\n")
    result = evidence(work.path, "install")
    assert result.returncode == 2
    assert f"{hook} exists and was not written by git evidence" in result.stderr
    assert "--force" in result.stderr
    assert hook.read_text() == "#!/bin/sh\necho mine\n"
    assert not (work.path / ".git" / "hooks" / "pre-commit").exists()
    forced = evidence(work.path, "install", "--force")
    assert forced.returncode == 0
    assert "installed by git-evidence" in hook.read_text()


def test_install_honours_core_hooks_path(tmp_path: Path) -> None:
    work = Work(tmp_path / "w")
    git(tmp_path, "init", "-q", str(work.path))
    work.git("config", "core.hooksPath", "githooks")
    assert evidence(work.path, "install").returncode == 0
    assert (work.path / "githooks" / "pre-commit").exists()
    assert not (work.path / ".git" / "hooks" / "pre-commit").exists()


def test_install_server_writes_pre_receive_into_a_bare_repository(tmp_path: Path) -> None:
    bare = tmp_path / "b.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    assert evidence(bare, "install", "--server").returncode == 0
    assert (bare / "hooks" / "pre-receive").exists()
    assert evidence(bare, "install", "--server").returncode == 0


def test_install_outside_a_repository_fails_clearly(tmp_path: Path) -> None:
    result = evidence(tmp_path, "install")
    assert result.returncode == 2
    assert "is not a git repository" in result.stderr


def test_pre_commit_hook_refuses_a_mixed_commit(clone: Work) -> None:
    clone.write("src/app.py", "bug\n")
    clone.write("tests/fixtures/a.json", "{}\n")
    clone.git("add", "-A")
    result = clone.git("commit", "-m", "mixed", check=False)
    assert result.returncode != 0
    assert "mixed-commit: " in result.stderr
    assert "fixture: tests/fixtures/a.json" in result.stderr
    assert clone.git("rev-list", "--count", "HEAD").stdout.strip() == "1"


def test_pre_commit_hook_allows_a_product_commit(clone: Work) -> None:
    clone.write("src/app.py", "fixed\n")
    clone.git("add", "-A")
    assert clone.git("commit", "-qm", "fix", check=False).returncode == 0


def test_pre_commit_refuses_evidence_in_an_untrusted_clone(clone: Work) -> None:
    clone.write("tests/goldens/out.txt", "moved\n")
    clone.git("add", "-A")
    result = clone.git("commit", "-m", "golden", check=False)
    assert result.returncode != 0
    assert "evidence-untrusted: " in result.stderr


def test_pre_commit_allows_evidence_only_in_a_trusted_clone(clone: Work) -> None:
    clone.git("config", "evidence.trusted", "true")
    clone.write("tests/goldens/out.txt", "moved\n")
    clone.git("add", "-A")
    assert clone.git("commit", "-qm", "golden", check=False).returncode == 0


def test_pre_commit_of_a_merge_judges_only_what_the_merge_adds(clone: Work) -> None:
    clone.git("config", "evidence.trusted", "true")
    clone.git("checkout", "-qb", "feat")
    clone.commit("feature", {"src/feat.py": "f\n"})
    clone.git("checkout", "-q", "main")
    clone.commit("golden", {"tests/goldens/out.txt": "v2\n"})
    clone.git("checkout", "-q", "feat")
    clone.git("merge", "--no-commit", "--no-ff", "main")
    result = clone.git("commit", "-m", "merge main", check=False)
    assert result.returncode == 0, result.stderr


def test_pre_push_hook_refuses_a_mixed_push(clone: Work, unguarded: Path) -> None:
    clone.write("src/app.py", "bug\n")
    clone.write("tests/fixtures/a.json", "{}\n")
    clone.git("add", "-A")
    clone.git("commit", "-qm", "mixed", "--no-verify")
    result = clone.push("origin", "main")
    assert result.returncode != 0
    assert "mixed-commit: refs/heads/main" in result.stderr
    assert "failed to push" in result.stderr
    tip = git(unguarded, "rev-parse", "main").stdout.strip()
    assert tip != clone.head()


def test_pre_push_hook_allows_a_product_push(clone: Work) -> None:
    clone.commit("fix", {"src/app.py": "ok\n"})
    result = clone.push("origin", "main")
    assert result.returncode == 0, result.stderr


def test_pre_push_judges_a_new_branch_against_the_remote_main(clone: Work) -> None:
    clone.git("checkout", "-qb", "feat")
    clone.commit("product", {"src/x.py": "x\n"})
    clone.git("commit", "-q", "--allow-empty", "-m", "noop")
    assert clone.push("origin", "feat").returncode == 0
    clone.git("config", "evidence.trusted", "true")
    clone.commit("fixture", {"tests/fixtures/z.json": "{}\n"})
    clone.git("config", "evidence.trusted", "false")
    result = clone.push("origin", "feat")
    assert result.returncode != 0
    assert "evidence-untrusted: refs/heads/feat" in result.stderr


def test_pre_push_sees_through_a_client_side_replace_ref(clone: Work) -> None:
    clone.write("src/app.py", "bug\n")
    clone.write("tests/fixtures/a.json", "{}\n")
    clone.git("add", "-A")
    clone.git("commit", "-qm", "mixed", "--no-verify")
    mixed = clone.head()
    clone.git("checkout", "-q", "HEAD~")
    clone.commit("look-alike", {"src/app.py": "bug\n"})
    clone.git("checkout", "-q", "main")
    clone.git("replace", mixed, clone.head("HEAD@{1}"))
    result = clone.push("origin", "main")
    assert result.returncode != 0
    assert "mixed-commit: refs/heads/main" in result.stderr


def test_no_verify_skips_client_hooks_but_the_server_holds(tmp_path: Path, server: Path) -> None:
    work = Work(tmp_path / "w")
    git(tmp_path, "clone", "-q", str(server), str(work.path))
    assert evidence(work.path, "install").returncode == 0
    work.write("src/app.py", "bug\n")
    work.write("tests/fixtures/a.json", "{}\n")
    work.git("add", "-A")
    work.git("commit", "-qm", "mixed", "--no-verify")
    result = work.push("--no-verify", "origin", "main", pusher=AGENT)
    assert result.returncode != 0
    assert "remote: mixed-commit: refs/heads/main" in result.stderr


# -- the pre-commit framework ------------------------------------------------------------


def _pre_commit(work: Work, *args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(PROJECT), *args, "--verbose"],
        cwd=work.path,
        capture_output=True,
        text=True,
        check=False,
    )
    return proc


@pytest.mark.slow
def test_pre_commit_framework_commit_stage(clone: Work) -> None:
    clone.write("src/app.py", "bug\n")
    clone.write("tests/fixtures/a.json", "{}\n")
    clone.git("add", "-A")
    result = _pre_commit(clone, "git-evidence-commit")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "mixed-commit" in result.stdout
    clone.git("reset", "-q", "--hard")
    clone.write("src/app.py", "fix\n")
    clone.git("add", "-A")
    ok = _pre_commit(clone, "git-evidence-commit")
    assert ok.returncode == 0, ok.stdout + ok.stderr


@pytest.mark.slow
def test_pre_commit_framework_push_stage(clone: Work) -> None:
    base = clone.head()
    clone.write("src/app.py", "bug\n")
    clone.write("tests/fixtures/a.json", "{}\n")
    clone.git("add", "-A")
    clone.git("commit", "-qm", "mixed", "--no-verify")
    args = (
        "git-evidence-push",
        "--hook-stage",
        "pre-push",
        "--remote-name",
        "origin",
        "--remote-branch",
        "refs/heads/main",
        "--local-branch",
        "refs/heads/main",
        "--remote-url",
        "file:///remote.git",
    )
    result = _pre_commit(clone, *args, "--from-ref", base, "--to-ref", clone.head())
    assert result.returncode == 1, result.stdout + result.stderr
    assert "mixed-commit" in result.stdout
    assert "judged" in result.stdout
    # A root-commit push: pre-commit passes no from/to refs; the branch is judged.
    fallback = _pre_commit(clone, *args)
    assert fallback.returncode == 1, fallback.stdout + fallback.stderr
    assert "the local branch" in fallback.stdout


@pytest.mark.slow
def test_pre_commit_framework_in_ci_judges_the_branch_not_the_staged_change(clone: Work) -> None:
    clone.write("src/app.py", "bug\n")
    clone.write("tests/fixtures/a.json", "{}\n")
    clone.git("add", "-A")
    clone.git("commit", "-qm", "mixed", "--no-verify")
    # CI's `pre-commit run --all-files`: nothing is staged, so the commit hook passes
    staged = _pre_commit(clone, "git-evidence-commit", "--all-files")
    assert staged.returncode == 0, staged.stdout + staged.stderr
    branch = _pre_commit(clone, "git-evidence-branch", "--hook-stage", "manual", "--all-files")
    assert branch.returncode == 1, branch.stdout + branch.stderr
    assert "mixed-commit" in branch.stdout


def test_pre_commit_follows_links_in_the_index(clone: Work) -> None:
    clone.git("config", "evidence.trusted", "true")
    os.symlink("../tests/goldens", clone.path / "src/gold")
    clone.git("add", "-A")
    assert clone.git("commit", "-qm", "trusted link", check=False).returncode == 0
    clone.git("config", "evidence.trusted", "false")
    os.symlink("gold/out.txt", clone.path / "src/expected.txt")
    clone.git("add", "-A")
    result = clone.git("commit", "-m", "chain", check=False)
    assert result.returncode != 0
    assert "fixture: src/expected.txt" in result.stderr


def test_pre_push_to_a_url_judges_only_what_the_branch_adds(clone: Work, unguarded: Path) -> None:
    clone.git("checkout", "-qb", "feat")
    clone.commit("product", {"src/x.py": "x\n"})
    clone.git("config", "evidence.verbose", "true")  # a hook that allows is silent otherwise
    result = clone.push(str(unguarded), "feat")
    assert result.returncode == 0, result.stderr
    assert "allowed 1 ref update" in result.stderr


def test_install_server_seals_a_policy_and_names_the_settings_it_left(tmp_path: Path) -> None:
    bare = tmp_path / "b.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    sealed = tmp_path / "policy.toml"
    sealed.write_text('[identities]\nevidence_writers = ["alice"]\n')
    result = evidence(bare, "install", "--server", "--policy", str(sealed))
    assert result.returncode == 0, result.stderr
    assert git(bare, "config", "evidence.policyFile").stdout.strip() == str(sealed)
    assert "recommended, not changed: git config receive.fsckObjects true" in result.stdout
    git(bare, "config", "receive.fsckObjects", "true")
    again = evidence(bare, "install", "--server", "--policy", str(sealed))
    assert "receive.fsckObjects" not in again.stdout


def test_install_server_refuses_a_policy_that_does_not_parse(tmp_path: Path) -> None:
    bare = tmp_path / "b.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    sealed = tmp_path / "policy.toml"
    sealed.write_text("[rules]\nbogus = 1\n")
    result = evidence(bare, "install", "--server", "--policy", str(sealed))
    assert result.returncode == 2
    assert "rules.bogus: unknown key" in result.stderr
    assert not (bare / "hooks" / "pre-receive").exists()
    assert git(bare, "config", "evidence.policyFile", check=False).returncode == 1


def test_install_server_prints_the_chain_lines_for_a_foreign_hook(tmp_path: Path) -> None:
    bare = tmp_path / "b.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    hook = bare / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)  # a repository may start without hooks/
    hook.write_text("#!/bin/sh\nexit 0\n")
    result = evidence(bare, "install", "--server")
    assert result.returncode == 2
    assert "input=$(cat)" in result.stderr
    assert " -I -c " in result.stderr
    assert re.search(rf" {FIRST_ROOT} pre-receive ", result.stderr), result.stderr
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"


def test_doctor_reports_what_is_missing_then_nothing(tmp_path: Path) -> None:
    bare = tmp_path / "b.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    before = evidence(bare, "doctor")
    assert before.returncode == 1
    assert "missing: pre-receive hook" in before.stdout
    assert evidence(bare, "install", "--server").returncode == 0
    after = evidence(bare, "doctor", env={"REMOTE_USER": "alice"})
    assert after.returncode == 0, after.stdout
    assert "ok: pre-receive hook installed by git evidence" in after.stdout
    assert "pusher identity visible here: alice (from REMOTE_USER)" in after.stdout


def test_doctor_on_a_broken_policy_says_every_push_is_refused(tmp_path: Path) -> None:
    bare = tmp_path / "b.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    sealed = tmp_path / "policy.toml"
    sealed.write_text("not toml [\n")
    git(bare, "config", "evidence.policyFile", str(sealed))
    result = evidence(bare, "doctor")
    assert result.returncode == 1
    assert "every push is refused" in result.stdout


def test_gitlab_sees_messages_with_its_prefix(server: Path, tmp_path: Path) -> None:
    work = Work(tmp_path / "gl")
    git(tmp_path, "clone", "-q", str(server), str(work.path))
    work.commit("mixed", {"src/app.py": "bug\n", "tests/fixtures/a.json": "{}\n"})
    result = work.push("origin", "HEAD:main", env={"GL_ID": "user-7", "GL_USERNAME": "bot"})
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.startswith("remote: ")]
    assert lines and all(line.startswith("remote: GL-HOOK-ERR: ") for line in lines)
    assert "remote: GL-HOOK-ERR: mixed-commit: refs/heads/main" in result.stderr
