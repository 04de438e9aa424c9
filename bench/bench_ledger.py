"""Benchmark the freeze ledger check on a 100,000-line ledger.

Reports medians of: `ledger.check_change` for a one-line append (the prefix comparison
plus the appended line only), and `git evidence pre-receive` judging a one-commit push
that appends that line, beside the same push of a product-only commit.

Usage: python bench/bench_ledger.py [--lines N] [--runs N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from common import compile_package, git  # noqa: E402

from git_evidence.ledger import entries  # noqa: E402


def line(n: int, pin: str, now: datetime) -> bytes:
    doc = {
        "test_id": f"tests/test_{n % 500}.py::test_{n}",
        "fingerprint": f"{n:016x}",
        "seed": n,
        "pin": pin,
        "reproduced": True,
        "runs": 10,
        "failures": 3,
        "writer": "ci-bot",
        "frozen_at": (now - timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "until": (now + timedelta(hours=24)).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }
    return json.dumps(doc, separators=(",", ":")).encode() + b"\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    compile_package()
    now = datetime.now(timezone.utc)
    pin = "sha256:" + "a" * 64
    old = b"".join(line(n, pin, now) for n in range(args.lines))
    new = old + line(args.lines, pin, now)
    times = []
    for _ in range(args.runs):
        start = time.perf_counter()
        problems = entries.check_change(
            old, new, max_window_hours=72, now=now, writers={"ci-bot"}, pin_exists=lambda p: True
        )
        times.append(time.perf_counter() - start)
        assert not problems, problems
    print(
        f"{args.lines}-line ledger ({len(old) / 1e6:.1f} MB), one-line append: "
        f"check_change {statistics.median(times) * 1000:.2f} ms"
    )
    start = time.perf_counter()
    entries.parse_ledger(new, 72)
    print(f"  (parsing every line instead: {(time.perf_counter() - start) * 1000:.0f} ms)")

    tmp = Path(tempfile.mkdtemp(prefix="bench-ledger-"))
    try:
        env = {
            "GIT_AUTHOR_NAME": "b",
            "GIT_AUTHOR_EMAIL": "b@x",
            "GIT_COMMITTER_NAME": "b",
            "GIT_COMMITTER_EMAIL": "b@x",
        }
        os.environ.update(env)
        repo = tmp / "r"
        git(tmp, "init", "-q", "-b", "main", str(repo))
        (repo / "tests").mkdir()
        (repo / "src").mkdir()
        (repo / ".git-evidence.toml").write_text(
            '[identities]\nledger_writers = ["ci-bot"]\nlock_writers = ["ci-bot"]\n'
        )
        (repo / "tests/fixtures").mkdir()
        (repo / "tests/fixtures/a.json").write_text("{}\n")
        (repo / "src/app.py").write_text("x = 1\n")
        (repo / "tests/freeze.jsonl").write_bytes(b"")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "seed")
        subprocess.run(
            [sys.executable, "-m", "git_evidence", "lock"],
            cwd=repo,
            check=True,
            capture_output=True,
        )
        real = json.loads(git(repo, "notes", "--ref=refs/notes/evidence", "show", "HEAD"))
        del real
        shown = subprocess.run(
            [sys.executable, "-m", "git_evidence", "show-lock", "--format", "json"],
            cwd=repo,
            check=True,
            capture_output=True,
        ).stdout
        pin = json.loads(shown)["digest"]
        (repo / "tests/freeze.jsonl").write_bytes(
            b"".join(line(n, pin, now) for n in range(args.lines))
        )
        git(repo, "commit", "-qam", "a long ledger")
        subprocess.run(
            [sys.executable, "-m", "git_evidence", "lock"],
            cwd=repo,
            check=True,
            capture_output=True,
        )
        base = git(repo, "rev-parse", "HEAD")
        with open(repo / "tests/freeze.jsonl", "ab") as handle:
            handle.write(line(args.lines, pin, now))
        git(repo, "commit", "-qam", "append one freeze")
        appended = git(repo, "rev-parse", "HEAD")
        git(repo, "reset", "-q", "--hard", base)
        (repo / "src/app.py").write_text("x = 2\n")
        git(repo, "commit", "-qam", "product")
        product = git(repo, "rev-parse", "HEAD")
        hook = [sys.executable, "-m", "git_evidence", "pre-receive"]
        hook_env = {**os.environ, "GIT_EVIDENCE_PUSHER": "ci-bot"}

        def push(tip: str) -> float:
            start = time.perf_counter()
            proc = subprocess.run(
                hook,
                cwd=repo,
                input=f"{base} {tip} refs/heads/main\n".encode(),
                capture_output=True,
                env=hook_env,
                check=False,
            )
            if proc.returncode != 0:
                raise SystemExit(proc.stderr.decode())
            return time.perf_counter() - start

        a, b = [], []
        for _ in range(args.runs):
            a.append(push(appended))
            b.append(push(product))
        print(
            f"pre-receive, one-line append to the {args.lines}-line ledger: "
            f"{statistics.median(a) * 1000:.0f} ms; a product-only commit: "
            f"{statistics.median(b) * 1000:.0f} ms"
        )
    finally:
        if os.environ.get("BENCH_KEEP"):
            print(f"kept {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
