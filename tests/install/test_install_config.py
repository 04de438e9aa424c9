"""`install` and `doctor` read and write a repository's configuration as `git config`
does: the cases where another parser of git's config files (GitPython's) reads or
writes them otherwise, each checked against git itself."""

from __future__ import annotations

from pathlib import Path

from helpers.repos import clone_of, evidence, git, make_remote, make_server

GLOB = "+refs/notes/evidence*:refs/notes/evidence*"


def _append(config: Path, text: str) -> None:
    with open(config, "a", encoding="utf-8") as handle:
        handle.write(text)


def test_doctor_reads_a_setting_without_a_value_as_true_and_an_empty_one_as_false(
    tmp_path: Path,
) -> None:
    bare = make_server(tmp_path)
    _append(bare / "config", "[receive]\n\tfsckObjects\n\tdenyDeletes =\n")
    # what git itself reads
    assert git(bare, "config", "--type=bool", "receive.fsckObjects").stdout == "true\n"
    assert git(bare, "config", "--type=bool", "receive.denyDeletes").stdout == "false\n"
    said = evidence(bare, "doctor").stdout
    assert "ok: receive.fsckObjects = true" in said
    assert "warning: receive.denyDeletes is not true" in said


def test_install_adds_the_notes_refspecs_to_a_remote_of_the_older_spelling(
    tmp_path: Path,
) -> None:
    work = clone_of(tmp_path, make_remote(tmp_path), "clone")
    # `[remote.up]` is git's older spelling of `[remote "up"]`
    _append(work.path / ".git" / "config", "[remote.up]\n\turl = ../elsewhere.git\n")
    assert work.git("remote").stdout.split() == ["origin", "up"]
    result = evidence(work.path, "install")
    assert result.returncode == 0, result.stderr
    assert work.git("config", "--get-all", "remote.up.fetch").stdout.split() == [GLOB]
    assert GLOB in work.git("config", "--get-all", "remote.origin.fetch").stdout.split()


def test_install_keeps_every_comment_of_the_config_it_adds_to(tmp_path: Path) -> None:
    work = clone_of(tmp_path, make_remote(tmp_path), "clone")
    config = work.path / ".git" / "config"
    _append(config, "# the team's note\n[receive]\n\t; why this is off\n\tdenyDeletes = false\n")
    before = config.read_text(encoding="utf-8")
    assert evidence(work.path, "install").returncode == 0
    after = config.read_text(encoding="utf-8")
    assert "# the team's note\n" in after and "\t; why this is off\n" in after
    # only the refspec was added: every line of before is still there, in order
    kept = [line for line in after.splitlines() if line in before.splitlines()]
    assert kept == before.splitlines()


def test_install_and_doctor_read_a_config_that_includes_on_a_remotes_url(
    tmp_path: Path,
) -> None:
    bare = make_server(tmp_path)
    (bare / "extra.config").write_text("[receive]\n\tdenyNonFastForwards = true\n")
    git(bare, "remote", "add", "mirror", str(tmp_path / "mirror.git"))
    git(bare, "config", f"includeIf.hasconfig:remote.*.url:{tmp_path}/*.git.path", "extra.config")
    assert git(bare, "config", "receive.denyNonFastForwards").stdout == "true\n"
    doctor = evidence(bare, "doctor")
    assert "ok: receive.denyNonFastForwards = true" in doctor.stdout, doctor.stderr
    installed = evidence(bare, "install", "--server")
    assert installed.returncode == 0, installed.stderr
    assert "receive.denyNonFastForwards" not in installed.stdout  # set: not recommended
