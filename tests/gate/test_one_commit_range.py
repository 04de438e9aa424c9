"""A range of one commit on its only parent (the everyday push, `check HEAD~1..HEAD`)
is listed from the lookups already open, with no `rev-list`: judged as the listing
would judge it. Any other range (a merge, a commit on another base, a longer range)
is still listed by git. What git was asked is read from GIT_TRACE, never mocked."""

from __future__ import annotations

from pathlib import Path

from helpers.repos import Work, clone_of, evidence, git, make_server

AGENT = "agent-bot"


def _traced(cwd: Path, tmp_path: Path, *args: str, stdin: str = "") -> tuple[int, str, str]:
    trace = tmp_path / f"trace-{len(list(tmp_path.glob('trace-*')))}"
    result = evidence(
        cwd,
        *args,
        input=stdin.encode() if stdin else None,
        env={"GIT_TRACE": str(trace), "GIT_EVIDENCE_PUSHER": AGENT},
    )
    lines = trace.read_text().splitlines() if trace.exists() else []
    commands = [line.split("trace: built-in: ", 1)[1] for line in lines if "built-in: " in line]
    return result.returncode, result.stdout + result.stderr, "\n".join(commands)


def _server_with(tmp_path: Path, files: dict[str, str]) -> tuple[Path, Work, str, str]:
    """A server, and a commit of ``files`` on main's tip already in it (under a
    feature branch), for pre-receive to be fed main's move to it."""
    bare = make_server(tmp_path)
    work = clone_of(tmp_path, bare)
    old = work.head()
    new = work.commit("one commit", files)
    work.git("push", "-q", "origin", "HEAD:refs/heads/feature")
    return bare, work, old, new


def test_a_one_commit_product_push_starts_no_rev_list(tmp_path: Path) -> None:
    bare, _work, old, new = _server_with(tmp_path, {"src/app.py": "print('bye')\n"})
    code, said, commands = _traced(
        bare, tmp_path, "pre-receive", stdin=f"{old} {new} refs/heads/main\n"
    )
    assert code == 0, said
    assert "rev-list --parents" not in commands


def test_a_one_commit_push_that_edits_a_fixture_is_still_refused(tmp_path: Path) -> None:
    bare, _work, old, new = _server_with(tmp_path, {"tests/fixtures/a.json": '{"a": 9}\n'})
    code, said, commands = _traced(
        bare, tmp_path, "pre-receive", stdin=f"{old} {new} refs/heads/main\n"
    )
    assert code == 1, said
    assert "tests/fixtures/a.json" in said
    assert "rev-list --parents" not in commands


def test_a_commit_on_an_older_base_is_listed_and_refused_as_no_fast_forward(
    tmp_path: Path,
) -> None:
    bare = make_server(tmp_path)
    work = clone_of(tmp_path, bare)
    older = work.head()
    work.commit("main moves", {"src/app.py": "print('two')\n"})
    work.git("push", "-q", "origin", "HEAD:refs/heads/main")
    tip = work.head()
    work.git("checkout", "-q", "-b", "side", older)
    side = work.commit("off the older tip", {"src/other.py": "x = 1\n"})
    work.git("push", "-q", "origin", "HEAD:refs/heads/side")
    code, said, commands = _traced(
        bare, tmp_path, "pre-receive", stdin=f"{tip} {side} refs/heads/main\n"
    )
    assert code == 1, said
    assert "fast-forward" in said
    assert "rev-list --parents" in commands


def test_a_merge_on_the_tip_is_listed_by_git(tmp_path: Path) -> None:
    bare = make_server(tmp_path)
    work = clone_of(tmp_path, bare)
    old = work.head()
    work.git("checkout", "-q", "-b", "topic")
    work.commit("topic", {"src/topic.py": "t = 1\n"})
    work.git("checkout", "-q", "main")
    work.git("merge", "-q", "--no-ff", "-m", "merge topic", "topic")
    new = work.head()
    work.git("push", "-q", "origin", "HEAD:refs/heads/feature")
    code, said, commands = _traced(
        bare, tmp_path, "pre-receive", stdin=f"{old} {new} refs/heads/main\n"
    )
    assert code == 0, said
    assert "rev-list --parents" in commands


def test_check_of_one_commit_starts_no_rev_list_and_still_refuses(tmp_path: Path) -> None:
    bare = make_server(tmp_path)
    work = clone_of(tmp_path, bare)
    work.commit("a fixture edited", {"tests/fixtures/b.json": '{"b": 3}\n'})
    code, said, commands = _traced(work.path, tmp_path, "check", "HEAD~1..HEAD")
    assert code == 1, said
    assert "tests/fixtures/b.json" in said
    assert "rev-list --parents" not in commands
    git(work.path, "commit", "-q", "--allow-empty", "-m", "another")
    code, said, commands = _traced(work.path, tmp_path, "check", "HEAD~2..HEAD")
    assert code == 1, said
    assert "rev-list --parents" in commands  # two commits: git lists them
