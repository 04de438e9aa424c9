"""The failure fingerprint, defined once for ``judge``, ``freeze add`` and
``freeze status``. Pure.

A fingerprint names *how* a test failed, stable from run to run: the test id (pytest's
node id, as ``outcomes`` reads it from JUnit; the property id without JUnit), its
outcome, the failure type and the first line of the failure message with the parts
that change every run (numbers, addresses, ids) replaced by ``#``. A digest of a run's
whole output is no fingerprint: timings and addresses make it differ every run."""

from __future__ import annotations

import hashlib
import re

FINGERPRINT_HEX = 16
# Hex ids first (an address `0x7f3a…`, a commit or object id), so each becomes one `#`;
# then every remaining run of digits.
_HEX_ID = re.compile(r"0[xX][0-9a-fA-F]+|\b(?=[0-9a-fA-F]*[0-9])[0-9a-fA-F]{8,}\b")
_DIGITS = re.compile(r"[0-9]+")


def normalize_message(message: str) -> str:
    """The first line of ``message`` with digit runs and hex ids replaced by ``#``."""
    lines = message.strip().splitlines()
    first = lines[0].strip() if lines else ""
    return _DIGITS.sub("#", _HEX_ID.sub("#", first))


def fingerprint(test_id: str, outcome: str, failure_type: str = "", message: str = "") -> str:
    """``sha256(test_id \\0 outcome \\0 failure type \\0 normalized message)``, 16 hex."""
    return _digest(test_id, outcome, failure_type, normalize_message(message))


def exit_fingerprint(test_id: str, code: int | str) -> str:
    """Without JUnit: the test id is the property (or ``--test``) id and the message is
    ``exit=<code>`` (``exit=timeout`` for a run stopped at its timeout). The code is
    kept as it is, not normalized: exit 1 (tests failed) and exit 2 (interrupted, a
    collection error) are different failures, and a freeze of one never covers the
    other."""
    return _digest(test_id, "failed", "", f"exit={code}")


def _digest(test_id: str, outcome: str, failure_type: str, message: str) -> str:
    text = "\0".join((test_id, outcome, failure_type, message))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:FINGERPRINT_HEX]
