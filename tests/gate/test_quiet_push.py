"""Quiet when nothing happened: an allowed push that changes no lock root prints no
`remote:` line from either server hook; what is said (a pin, a proposal, a refusal)
fits 80 columns, and a notice that refuses nothing is not put under "To fix". Real
pushes into a bare server with both hooks installed, read as git relays them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from helpers.locks import pin_main, push_without_post_receive, run_hook
from helpers.pushes import AGENT, refused, remote, server_tip
from helpers.repos import Work, git

GOLDEN = {"tests/goldens/out.txt": "a new expected output\n"}


def relayed(result: subprocess.CompletedProcess[str]) -> list[str]:
    """The `remote:` lines of a push, git's clearing padding removed."""
    return [line.rstrip() for line in result.stderr.splitlines() if line.startswith("remote:")]


def too_wide(result: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in relayed(result) if len(line) > 80]


def test_an_ordinary_push_prints_no_remote_line(work: Work, server: Path) -> None:
    pin_main(work)
    for n in range(3):  # the second and third find the pin before them further back
        work.commit(f"product {n}", {"src/app.py": f"v{n}\n"})
        result = work.push("origin", "HEAD:main", pusher=AGENT)
        assert result.returncode == 0, result.stderr
        assert relayed(result) == [], result.stderr
        assert server_tip(work) == work.head()


def test_a_server_set_to_verbose_says_the_allow(work: Work, server: Path) -> None:
    pin_main(work)
    git(server, "config", "evidence.verbose", "true")
    work.commit("product", {"src/app.py": "v2\n"})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    assert "allowed 1 ref update (agent-bot;" in remote(result)
    assert "pinned" not in remote(result)


def test_a_push_that_changes_a_lock_root_says_what_it_pinned(work: Work, server: Path) -> None:
    pin_main(work)
    work.commit("new golden", GOLDEN)
    result = work.push("origin", "HEAD:main", pusher="alice")
    assert result.returncode == 0, result.stderr
    said = remote(result).splitlines()  # no allow line: only the pin
    assert len(said) == 1 and said[0].startswith("git-evidence: pinned refs/heads/main at ")
    assert not too_wide(result), result.stderr


def test_a_proposal_is_a_next_step_not_a_fix(work: Work, server: Path) -> None:
    pin_main(work)
    work.git("checkout", "-qb", "agent/golden")
    work.commit("new case", GOLDEN)
    result = work.push("origin", "agent/golden", pusher=AGENT)
    assert result.returncode == 0, result.stderr
    said = remote(result)
    assert "evidence-proposed: refs/heads/agent/golden" in said
    assert "To fix" not in said
    assert "\n  Next: " in said
    assert not too_wide(result), result.stderr


def test_a_refusal_keeps_to_fix_and_fits_80_columns(work: Work, server: Path) -> None:
    pin_main(work)
    work.commit("mixed", {"src/app.py": "v2\n", **GOLDEN})
    result = work.push("origin", "HEAD:main", pusher=AGENT)
    assert refused(result, "evidence-untrusted") or refused(result, "mixed-commit")
    assert "To fix: " in remote(result)
    assert not too_wide(result), result.stderr


# -- pre-receive's word to post-receive: no second interpreter for an ordinary push ------


def traced_push(
    work: Work, tmp_path: Path, pusher: str
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Push main with GIT_TRACE on (git hands it to receive-pack and the hooks): the
    exit status and every git command run after post-receive started."""
    trace = tmp_path / "trace"
    trace.unlink(missing_ok=True)
    result = work.push("origin", "HEAD:main", pusher=pusher, env={"GIT_TRACE": str(trace)})
    text = trace.read_text()
    after = text[text.index("hooks/post-receive") :]
    run = [
        line.split("built-in: git ", 1)[1]
        for line in after.splitlines()
        if "built-in: git " in line
    ]
    return result, [c for c in run if not c.startswith("gc --auto")]


def test_an_ordinary_push_starts_no_post_receive_interpreter(
    work: Work, server: Path, tmp_path: Path
) -> None:
    pin_main(work)
    work.commit("product", {"src/app.py": "v2\n"})
    result, after = traced_push(work, tmp_path, AGENT)
    assert result.returncode == 0
    assert after == []  # post-receive asked git nothing: it stopped in the shell
    quiet = server / "git-evidence" / "quiet"
    assert [f.stat().st_size for f in quiet.iterdir()] == [0]  # used, then emptied
    work.commit("product again", {"src/app.py": "v3\n"})
    result, after = traced_push(work, tmp_path, AGENT)
    assert (result.returncode, after) == (0, [])
    assert [f.stat().st_size for f in quiet.iterdir()] == [0]  # the used one swept


def test_a_push_that_changes_a_lock_root_gets_no_word_and_is_pinned(
    work: Work, server: Path, tmp_path: Path
) -> None:
    pin_main(work)
    work.commit("new golden", GOLDEN)
    result, after = traced_push(work, tmp_path, "alice")
    assert result.returncode == 0
    assert any(c.startswith("fast-import") for c in after), after


def test_a_word_left_for_other_lines_does_not_stop_the_pin(work: Work, server: Path) -> None:
    """A word that does not match the lines git gives (another push's, a push that
    died, a ref that failed to move) stops nothing: post-receive pins as always."""
    pin_main(work)
    old = work.head()
    work.commit("new golden", GOLDEN)
    new = work.head()
    push_without_post_receive(work, server, "alice")
    word = server / "git-evidence" / "quiet" / str(os.getpid())
    word.parent.mkdir(parents=True, exist_ok=True)
    word.write_text(f"{old} {old} refs/heads/main\n")
    result = run_hook(server, "post-receive", f"{old} {new} refs/heads/main\n")
    assert result.returncode == 0, result.stderr
    assert f"pinned refs/heads/main at {new[:12]}" in result.stderr
    assert word.read_text() == ""  # used once, then emptied
    notes = git(server, "notes", "--ref=refs/notes/evidence", "list", new).stdout
    assert notes.strip()


def test_a_long_push_leaves_the_walk_to_post_receive_and_stays_quiet(
    work: Work, server: Path, tmp_path: Path
) -> None:
    """pre-receive walks a push for post-receive only when it is short (the walk of a
    long one would eat its time budget): post-receive runs, finds nothing to pin, and
    says nothing."""
    pin_main(work)
    notes = git(server, "rev-parse", "refs/notes/evidence").stdout
    for n in range(65):
        work.commit(f"product {n}", {"src/app.py": f"v{n}\n"})
    result, after = traced_push(work, tmp_path, AGENT)
    assert result.returncode == 0
    assert relayed(result) == [], result.stderr
    assert any(c.startswith("rev-list --first-parent") for c in after), after
    assert git(server, "rev-parse", "refs/notes/evidence").stdout == notes


def test_a_stale_word_with_the_same_lines_does_not_stop_the_pin(work: Work, server: Path) -> None:
    """A word left by an earlier push whose refs never moved (post-receive never ran
    to empty it), under a receive-pack id a later push gets again, with the very same
    lines: the later push's pre-receive, which finds a pin is needed, takes it back,
    and post-receive pins."""
    pin_main(work)
    old = work.head()
    work.commit("new golden", GOLDEN)
    new = work.head()
    push_without_post_receive(work, server, "alice")
    lines = f"{old} {new} refs/heads/main\n"
    word = server / "git-evidence" / "quiet" / str(os.getpid())
    word.parent.mkdir(parents=True, exist_ok=True)
    word.write_text(lines)  # the earlier push's word, same parent id, same lines
    judged = run_hook(server, "pre-receive", lines)
    assert judged.returncode == 0, judged.stderr
    result = run_hook(server, "post-receive", lines)
    assert result.returncode == 0, result.stderr
    assert f"pinned refs/heads/main at {new[:12]}" in result.stderr
    notes = git(server, "notes", "--ref=refs/notes/evidence", "list", new).stdout
    assert notes.strip()
