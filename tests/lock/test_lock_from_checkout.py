"""A cold `lock` in a checkout hashes the blobs its files hold from disk, and records
what a lock of the same commit in a bare repository (every blob read from git)
records: a file stands for its blob only when its git object id is the blob's. A file
changed with the same size and time, a file its attributes convert, a link or a FIFO
where a file was: each is read from git instead. What git was asked is read from
GIT_TRACE."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from helpers.examples import examples
from helpers.locks import NOTES
from helpers.repos import Work, evidence, git
from hypothesis import given, settings
from hypothesis import strategies as st

READER = "cat-file --batch --buffer"  # the bulk blob reader (plumbing/batch.py)


def cold_lock(where: Path, tmp_path: Path) -> tuple[dict[str, Any], str]:
    """A lock of HEAD from nothing in ``where``: its record without who and when, and
    the git commands it ran."""
    git(where, "update-ref", "-d", NOTES, check=False)
    subprocess.run(["rm", "-rf", str(where / ".git" / "git-evidence")], check=True)
    subprocess.run(["rm", "-rf", str(where / "git-evidence")], check=True)  # a bare one's
    trace = tmp_path / f"trace-{len(list(tmp_path.glob('trace-*')))}"
    result = evidence(where, "lock", "HEAD", env={"GIT_TRACE": str(trace)})
    assert result.returncode == 0, result.stderr
    doc = json.loads(git(where, "notes", f"--ref={NOTES}", "show", "HEAD").stdout)
    commands = "\n".join(
        line.split("trace: built-in: git ", 1)[1]
        for line in trace.read_text().splitlines()
        if "trace: built-in: git " in line
    )
    return {k: v for k, v in doc.items() if k not in ("pinned_at", "pinned_by")}, commands


def bare_lock(work: Work, tmp_path: Path) -> dict[str, Any]:
    """The same commit locked in a bare clone: every blob read from git."""
    bare = tmp_path / "bare.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(work.path), str(bare)], check=True)
    doc, commands = cold_lock(bare, tmp_path)
    assert READER in commands
    return doc


@pytest.fixture
def fixtures(work: Work) -> Work:
    big = bytes(range(256)) * (5 * 4096 + 17)
    pointer = "version https://git-lfs.github.com/spec/v1\noid sha256:" + "a" * 64 + "\nsize 9\n"
    work.commit(
        "fixtures",
        {
            "tests/fixtures/a.json": '{"a": 1}\n',
            "tests/fixtures/deep/b.txt": "b\n" * 100,
            "tests/fixtures/интервью.json": '{"q": "?"}\n',
            "tests/fixtures/pointer.bin": pointer,
            "tests/fixtures/empty": "",
            "tests/fixtures/run.sh": "echo\n",
        },
    )
    work.write("tests/fixtures/big.bin", big)
    os.chmod(work.path / "tests/fixtures/run.sh", 0o755)
    work.git("add", "-A")
    work.commit_link("a link", "tests/fixtures/link", "a.json")
    return work


def test_cold_lock_in_a_checkout_reads_no_blob_from_git_and_equals_a_bare_lock(
    fixtures: Work, tmp_path: Path
) -> None:
    doc, commands = cold_lock(fixtures.path, tmp_path)
    assert READER in commands  # the link's text is a blob only git holds
    assert doc == bare_lock(fixtures, tmp_path)
    assert doc["files"]["tests/fixtures/pointer.bin"]["lfs"]["size"] == 9


def test_clean_checkout_without_links_reads_no_blob_from_git(work: Work, tmp_path: Path) -> None:
    work.commit("fixtures", {"tests/fixtures/a.json": "1\n", "tests/fixtures/b.json": "2\n"})
    doc, commands = cold_lock(work.path, tmp_path)
    assert READER not in commands, commands
    assert doc == bare_lock(work, tmp_path)


def test_a_file_changed_with_the_same_size_and_mtime_is_read_from_git(
    fixtures: Work, tmp_path: Path
) -> None:
    path = fixtures.path / "tests/fixtures/a.json"
    before = path.stat()
    path.write_text('{"a": 2}\n')  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    doc, commands = cold_lock(fixtures.path, tmp_path)
    assert READER in commands
    assert doc == bare_lock(fixtures, tmp_path)  # the committed bytes, not the disk's


def test_a_file_its_attributes_convert_is_read_from_git(work: Work, tmp_path: Path) -> None:
    work.commit("attributes", {".gitattributes": "*.txt eol=crlf\n"})
    work.commit("fixture", {"tests/fixtures/lines.txt": "one\ntwo\n"})
    (work.path / "tests/fixtures/lines.txt").unlink()
    work.git("checkout", "--", "tests/fixtures/lines.txt")  # written with CRLF
    assert b"\r\n" in (work.path / "tests/fixtures/lines.txt").read_bytes()
    doc, commands = cold_lock(work.path, tmp_path)
    assert READER in commands
    assert doc == bare_lock(work, tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_or_a_link_where_a_file_was_is_not_read(fixtures: Work, tmp_path: Path) -> None:
    (fixtures.path / "tests/fixtures/a.json").unlink()
    os.mkfifo(fixtures.path / "tests/fixtures/a.json")  # would block a plain open
    (fixtures.path / "tests/fixtures/deep/b.txt").unlink()
    (fixtures.path / "tests/fixtures/deep/b.txt").symlink_to("../a.json")
    doc, _ = cold_lock(fixtures.path, tmp_path)
    assert doc == bare_lock(fixtures, tmp_path)


def slow_quote(raw: bytes) -> bytes:
    """C-style quoting, byte by byte, as git's unquote_c_style reads it back."""
    out = b'"'
    for byte in raw:
        if byte in b'"\\':
            out += b"\\" + bytes([byte])
        elif byte < 0x20 or byte >= 0x7F:
            out += b"\\%03o" % byte
        else:
            out += bytes([byte])
    return out + b'"'


@given(st.binary(max_size=24) | st.text(max_size=12).map(str.encode))
@settings(max_examples=examples(300))
def test_a_path_needing_no_escape_is_quoted_as_the_byte_by_byte_quoting_does(raw: bytes) -> None:
    from git_evidence.plumbing.checkout import c_quote

    assert c_quote(raw) == slow_quote(raw)
