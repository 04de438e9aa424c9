"""What a run leaves behind, read after it: its output's digest, its JUnit XML (test id
→ passed, failed, error or skipped, from pytest's or Surefire's reports), and the files
it may write claims to (hits, retries, import origins). Pure but for reading those
files and looking, inside the run's workspace, for the test modules JUnit names.

A test id is pytest's node id (``tests/test_a.py::TestX::test_y``) wherever one can be
told: JUnit's dotted ``classname`` (``tests.test_a.TestX``) is turned back into a path by
the longest prefix that is a ``.py`` file of the workspace. Anything else (Surefire's
Java classes, a module the workspace does not have) keeps ``classname::name``."""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Sequence
from typing import IO, NamedTuple

PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"
FAILING = frozenset({FAILED, ERROR})
JUNIT_MAX_BYTES = 64 << 20
# A JUnit file's test ids are the run's claims, and they go into the verdict record,
# its note and the CI log: a file that names more cases than this, or an id longer
# than this or with an unsafe character (_check_id: a line break, an escape, a
# direction override), is not read as JUnit (the run then fails).
JUNIT_MAX_CASES = 200_000
TEST_ID_MAX_CHARS = 4096
CLAIM_MAX_BYTES = 16 << 20  # hits, retries and origins files
MAX_COUNT_DIGITS = 9  # a hits count past 999,999,999 is no count
MAX_CLASS_PARTS = 64  # a classname's dotted parts looked for as folders and modules


class CaseResult(NamedTuple):
    """One JUnit ``<testcase>``: its outcome and, when it failed, how."""

    outcome: str
    type: str = ""
    message: str = ""


def _open_regular(path: str) -> IO[bytes]:
    """A file the run left, opened without following a link and without blocking on a
    FIFO; OSError unless it is a regular file. The run chose what stands at the path:
    the judge, reading it with its own rights, must not be led elsewhere or held."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_junit(
    path: str, workspace: str | None = None
) -> tuple[dict[str, CaseResult] | None, str | None]:
    """The JUnit XML a run wrote, its test ids as node ids of ``workspace`` where the
    workspace has the module a classname names."""
    try:
        with _open_regular(path) as handle:
            data = handle.read(JUNIT_MAX_BYTES + 1)
    except OSError:
        return None, "the run wrote no JUnit XML (or not as a file)"
    if len(data) > JUNIT_MAX_BYTES:
        return None, f"the JUnit XML is more than {JUNIT_MAX_BYTES} bytes"
    try:
        return parse_junit(data, module_parts(workspace) if workspace else None), None
    except ValueError as exc:
        return None, f"the JUnit XML is unreadable: {exc}"


ModuleParts = Callable[[Sequence[str]], int]


def module_parts(workspace: str) -> ModuleParts:
    """How many leading parts of a dotted classname name a test module of the
    workspace (``a.b.c.D``: 3 when ``a/b/c.py`` is a file there; 0 when none does). The
    classname is the run's claim: only parts that are identifiers are looked at (no
    ``..``, no ``/``), each folder on the way must be a folder and the module a regular
    file, none of them a link; nothing is read, and nothing outside the workspace is
    looked at."""
    known: dict[tuple[str, ...], int] = {}

    def kind(path: str) -> int:
        try:
            return os.lstat(path).st_mode
        except (OSError, ValueError):
            return 0

    def count(parts: Sequence[str]) -> int:
        key = tuple(parts[:MAX_CLASS_PARTS])
        if key in known:
            return known[key]
        found, folder = 0, workspace
        for index, part in enumerate(key):
            if not part.isidentifier():
                break
            if stat.S_ISREG(kind(os.path.join(folder, part + ".py"))):
                found = index + 1
            folder = os.path.join(folder, part)
            if not stat.S_ISDIR(kind(folder)):
                break
        known[key] = found
        return found

    return count


def node_id(classname: str, name: str, modules: ModuleParts | None = None) -> str:
    """A JUnit test case's id: pytest's node id (``a/b/c.py::D::name``) when the
    leading parts of ``classname`` name a module (``modules``), else
    ``classname::name`` (or ``name`` alone without a classname)."""
    if not classname:
        return name
    parts = classname.split(".")
    length = modules(parts) if modules is not None else 0
    if not length:
        return f"{classname}::{name}"
    return "::".join(["/".join(parts[:length]) + ".py", *parts[length:], name])


def parse_junit(
    data: bytes, modules: ModuleParts | None = None, most: int = JUNIT_MAX_CASES
) -> dict[str, CaseResult]:
    """Test id (``node_id``) → outcome, from JUnit XML (pytest's, Surefire's). A test
    listed twice keeps its worst outcome. ValueError when it is not JUnit, names more
    than ``most`` cases, or an id the record could not carry as it stands."""
    import xml.etree.ElementTree as ElementTree  # only JUnit properties pay for it

    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise ValueError("a DOCTYPE or ENTITY declaration (refused: JUnit needs neither)")
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        raise ValueError(str(exc)) from None
    if root.tag not in ("testsuites", "testsuite"):
        raise ValueError(f"the root element is <{root.tag}>, not <testsuites> or <testsuite>")
    rank = {PASSED: 0, SKIPPED: 1, FAILED: 2, ERROR: 3}
    tests: dict[str, CaseResult] = {}
    for number, case in enumerate(root.iter("testcase"), start=1):
        if number > most:
            raise ValueError(f"more than {most} test cases")
        test_id = node_id(case.get("classname", ""), case.get("name", ""), modules)
        _check_id(test_id)
        found = CaseResult(PASSED)
        for child in case:
            if child.tag in ("failure", "error"):
                message = child.get("message") or (child.text or "")
                found = CaseResult(
                    FAILED if child.tag == "failure" else ERROR, child.get("type", ""), message
                )
                break
            if child.tag == "skipped":
                found = CaseResult(SKIPPED)
        known = tests.get(test_id)
        if known is None or rank[found.outcome] > rank[known.outcome]:
            tests[test_id] = found
    return tests


# What no id may hold: controls (C0, C1: a line break, a terminal's escape), the line
# and paragraph separators, and the bidirectional embeddings, overrides and isolates
# (text shown in another order than it is stored). Marks such as U+200F and other
# characters of names stay: a test's name may be in any script.
_UNSAFE_CATEGORIES = ("Cc", "Zl", "Zp")
_REORDERING = frozenset(range(0x202A, 0x202F)) | frozenset(range(0x2066, 0x206A))


def _check_id(test_id: str) -> None:
    """ValueError for a test id no record or log takes as it stands: empty, too long,
    or with a character that breaks a line or reorders text."""
    if not test_id:
        raise ValueError("a test case with neither a classname nor a name")
    if len(test_id) > TEST_ID_MAX_CHARS:
        raise ValueError(f"a test id of more than {TEST_ID_MAX_CHARS} characters")
    if test_id.isascii() and test_id.isprintable():
        return  # the common case, decided in one pass
    import unicodedata  # only for ids beyond printable ASCII

    for char in test_id:
        if ord(char) in _REORDERING or unicodedata.category(char) in _UNSAFE_CATEGORIES:
            shown = ascii(test_id[:80])
            raise ValueError(f"the test id {shown} has the unsafe character U+{ord(char):04X}")


def output_digest(out: IO[bytes], err: IO[bytes]) -> str:
    sha = hashlib.sha256()
    for index, handle in enumerate((out, err)):
        handle.seek(0)
        if index:
            sha.update(b"\0")
        while chunk := handle.read(1 << 20):
            sha.update(chunk)
    return "sha256:" + sha.hexdigest()


OUTPUT_TAIL_MAX = 4096  # bytes of a failing run's output the record keeps


def output_tail(out: IO[bytes], err: IO[bytes], most: int = OUTPUT_TAIL_MAX) -> str:
    """The last bytes of a run's output, stdout's then stderr's, at most ``most`` in
    all (each stream half of it, or all of it when the other is empty), decoded with
    replacement: what the run printed last, as it printed it."""
    sizes = []
    for handle in (out, err):
        handle.seek(0, os.SEEK_END)
        sizes.append(handle.tell())
    budget = [most, 0] if not sizes[1] else [0, most] if not sizes[0] else [most // 2] * 2
    for index in (0, 1):  # what one stream leaves unused, the other may take
        spare = budget[index] - min(budget[index], sizes[index])
        budget[1 - index] += spare
        budget[index] -= spare
    parts: list[str] = []
    labels = ("", "[stderr]\n")
    for handle, size, take, label in zip((out, err), sizes, budget, labels, strict=True):
        take = min(take, size)
        if not take:
            continue
        handle.seek(size - take)
        text = handle.read(take).decode("utf-8", "replace")
        parts.append(label + text if parts else text)
    return "\n".join(p.rstrip("\n") for p in parts)


def read_claim(path: str) -> bytes | None:
    """What the run wrote to one of its files (at most 16 MiB), None when nothing."""
    try:
        with _open_regular(path) as handle:
            return handle.read(CLAIM_MAX_BYTES)
    except OSError:
        return None


def read_hits(path: str) -> dict[str, int]:
    """Lines ``ID N`` or a bare ``N`` the run appended; anything else is ignored (a
    hits line is a claim the run makes, never trusted to be more than a count)."""
    data = read_claim(path)
    if data is None:
        return {}
    hits: dict[str, int] = {}
    for raw in data.decode("utf-8", "replace").splitlines():
        parts = raw.split()
        if not parts:
            continue
        key, count = ("", parts[0]) if len(parts) == 1 else (" ".join(parts[:-1]), parts[-1])
        if count.isdigit() and count.isascii() and len(count) <= MAX_COUNT_DIGITS:
            hits[key] = hits.get(key, 0) + int(count)
    return hits
