from conftest import Work


def test_product_only_push_is_allowed(work: Work) -> None:
    work.commit("fix", {"src/app.py": "print('fixed')\n"})
    result = work.push("origin", "HEAD:main", pusher="agent-bot")
    assert result.returncode == 0, result.stderr
    assert "allowed 1 ref update" in result.stderr


def test_mixed_commit_is_refused(work: Work) -> None:
    sha = work.commit("fix", {"src/app.py": "x\n", "tests/fixtures/a.json": "{}\n"})
    result = work.push("origin", "HEAD:main", pusher="agent-bot")
    assert result.returncode != 0
    print(result.stderr)
    assert f"remote: mixed-commit: refs/heads/main {sha[:12]}" in result.stderr
