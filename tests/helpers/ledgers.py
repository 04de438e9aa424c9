"""The freeze ledger's lines as the tests write them: entries, stamps, appends committed
by the ledger writer."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from helpers.repos import Work

LEDGER = "tests/freeze.jsonl"


CI = "ci-bot"


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def entry(pin: str, **over: object) -> dict[str, object]:
    now = datetime.now(timezone.utc)
    doc: dict[str, object] = {
        "test_id": "tests/test_app.py::test_app",
        "fingerprint": "f00d",
        "seed": 7,
        "pin": pin,
        "reproduced": True,
        "runs": 10,
        "failures": 3,
        "writer": CI,
        "frozen_at": stamp(now - timedelta(hours=1)),
        "until": stamp(now + timedelta(hours=24)),
    }
    doc.update(over)
    return doc


def line(doc: dict[str, object]) -> str:
    return json.dumps(doc, separators=(",", ":")) + "\n"


def append(work: Work, text: str | bytes, message: str = "freeze") -> None:
    path = work.path / LEDGER
    data = text.encode() if isinstance(text, str) else text
    path.write_bytes(path.read_bytes() + data)
    work.git("add", "-A")
    work.git("commit", "-qm", message)
