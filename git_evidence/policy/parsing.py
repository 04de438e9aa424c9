"""The policy file read: ``.git-evidence.toml`` parsed (TOML) and validated table by
table, every problem a ``PolicyError`` naming the file, the key and its line; from
bytes, from a sealed file, or from the blob a revision carries (none: the defaults).
Pure: bytes in, a ``schema.Policy`` out.

Apart from schema.py, which says what a policy is: only what reads a file loads the
TOML parser (a repository without a policy file starts without it)."""

from __future__ import annotations

import re
import sys
from typing import Any, cast

from git_evidence.core import path_globs
from git_evidence.core.errors import PolicyError
from git_evidence.core.globs import has_wildcard
from git_evidence.core.paths import PathClass
from git_evidence.policy.properties import judge_section, kind_of
from git_evidence.policy.schema import (
    DECISIONS,
    DEFAULT_PATHS,
    MAX_TIME_BUDGET_S,
    MAX_WINDOW_HOURS,
    POLICY_FILE,
    TABLE_KEYS,
    Origin,
    Policy,
    ref_matcher,
)

_LINE_NO = re.compile(r"\(at line (\d+), column \d+\)")


_DEFAULT = Policy()  # the built-in defaults, for what a file leaves out


class _Reader:
    """Validates one table at a time and names the line of each bad key."""

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self.lines = text.splitlines()

    def line_of(self, table: str, key: str | None = None) -> int | None:
        current = ""
        header = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\"' -]+?)\s*\]\s*(#.*)?$")
        for number, line in enumerate(self.lines, start=1):
            found = header.match(line)
            if found:
                current = found.group(1).replace('"', "").replace("'", "").strip()
                if key is None and current == table:
                    return number
                continue
            if (
                key is not None
                and current == table
                and re.match(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=", line)
            ):
                return number
        return None

    def fail(self, table: str, key: str | None, message: str) -> PolicyError:
        name = f"{table}.{key}" if key else f"[{table}]"
        return PolicyError(self.source, message, key=name, line=self.line_of(table, key))

    def str_list(self, table: str, key: str, value: object) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self.fail(table, key, f"expected a list of strings, got {kind_of(value)}")
        return tuple(value)

    def globs(
        self, table: str, key: str, value: object, *, negation: bool = False
    ) -> tuple[str, ...]:
        out = []
        for glob in self.str_list(table, key, value):
            problem = path_globs.glob_problem(glob, negation=negation)
            if problem:
                raise self.fail(table, key, f"{glob!r}: {problem}")
            out.append(path_globs.canonical_glob(glob))
        return tuple(out)

    def ref(
        self, table: str, key: str, value: object, *, prefix: bool = False, glob: bool = False
    ) -> str:
        """A full ref name; ``prefix``: a namespace ending in ``/``; ``glob``: wildcards
        allowed (and checked to compile)."""
        if not isinstance(value, str):
            raise self.fail(table, key, f"expected a string, got {kind_of(value)}")
        if not value.startswith("refs/") or ".." in value or (prefix and not value.endswith("/")):
            shape = "refs/<namespace>/" if prefix else "refs/heads/<name>"
            raise self.fail(table, key, f"{value!r} is not a full ref name like {shape}")
        if has_wildcard(value) and not glob:
            raise self.fail(
                table, key, f"{value!r}: wildcards (`*`, `?`, `[`) are not allowed here"
            )
        try:
            ref_matcher([value])
        except (re.error, ValueError) as exc:
            raise self.fail(table, key, f"{value!r} is not a valid ref glob: {exc}") from None
        return value


def parse_policy(data: bytes, source: str) -> Policy:
    """Parse and validate policy bytes; any problem is a PolicyError naming the line."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib  # type: ignore[import-not-found, no-redef, unused-ignore]

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise PolicyError(source, f"not UTF-8 (byte {exc.start})") from None
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = _LINE_NO.search(str(exc))
        message = _LINE_NO.sub("", str(exc)).strip()
        line = int(found.group(1)) if found else max(1, len(text.splitlines()))
        message = message.replace("(at end of document)", "").strip()
        raise PolicyError(
            source,
            f"not valid TOML: {message} (the file ends early)"
            if not found
            else f"not valid TOML: {message}",
            line=line,
        ) from None
    reader = _Reader(source, text)
    values: dict[str, Any] = {"source": source}
    for table, body in doc.items():
        if table not in TABLE_KEYS:
            raise reader.fail(
                table, None, f"unknown table; expected one of {', '.join(sorted(TABLE_KEYS))}"
            )
        if not isinstance(body, dict):
            raise reader.fail(table, None, "expected a table")
        for key in body:
            if key not in TABLE_KEYS[table]:
                raise reader.fail(
                    table,
                    key,
                    f"unknown key; expected one of {', '.join(sorted(TABLE_KEYS[table]))}",
                )
    values.update(_paths(reader, doc.get("paths", {})))
    values.update(_rules(reader, doc.get("rules", {})))
    for key, value in doc.get("identities", {}).items():
        values[key] = frozenset(reader.str_list("identities", key, value))
    values.update(_lock(reader, doc.get("lock", {})))
    values.update(_ledger(reader, doc.get("ledger", {})))
    lock_ref = doc.get("lock", {}).get("notes_ref", _DEFAULT.notes_ref)
    values.update(judge_section(reader, doc.get("judge", {}), lock_ref))
    values.update(_labels(reader, doc.get("labels", {})))
    _distinct_files(reader, values)
    # A file's policy; read_sealed, in_force's draft and the guard's pin say otherwise.
    return Policy(**values, origin="base")


def _paths(reader: _Reader, table: dict[str, Any]) -> dict[str, Any]:
    merged = dict(DEFAULT_PATHS)
    for key, value in table.items():  # each key is a class: checked against TABLE_KEYS
        merged[cast(PathClass, key)] = reader.globs("paths", key, value, negation=True)
    return {"paths": merged}


def _rules(reader: _Reader, table: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in ("other_path", "added_test", "test_edit"):
        if key in table:
            if table[key] not in DECISIONS:
                raise reader.fail(
                    "rules", key, f"expected one of {', '.join(DECISIONS)}, got {table[key]!r}"
                )
            out[key] = table[key]
    if "protected" in table:
        refs = reader.str_list("rules", "protected", table["protected"])
        out["protected"] = tuple(reader.ref("rules", "protected", r, glob=True) for r in refs)
    if "base" in table:
        out["base"] = reader.ref("rules", "base", table["base"])
    protected = out.get("protected", _DEFAULT.protected)
    base = out.get("base", _DEFAULT.base)
    if not ref_matcher(protected).fullmatch(base.casefold()):
        raise reader.fail(
            "rules",
            "base" if "base" in table else "protected",
            f"the base {base} must be protected: list it (or a glob matching it) in "
            "[rules].protected",
        )
    if "allow_namespaces" in table:
        spaces = reader.str_list("rules", "allow_namespaces", table["allow_namespaces"])
        # A namespace is a prefix that ends in `/`: `refs/heads` would allow `refs/headsX`.
        out["allow_namespaces"] = tuple(
            reader.ref("rules", "allow_namespaces", s, prefix=True) for s in spaces
        )
    if "time_budget_s" in table:
        value = table["time_budget_s"]
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not (0 < value <= MAX_TIME_BUDGET_S)
        ):
            raise reader.fail(
                "rules",
                "time_budget_s",
                f"expected seconds between 0 and {MAX_TIME_BUDGET_S}, got {value!r}",
            )
        out["time_budget_s"] = float(value)
    if "proposals" in table:
        if not isinstance(table["proposals"], bool):
            raise reader.fail(
                "rules", "proposals", f"expected true or false, got {table['proposals']!r}"
            )
        out["proposals"] = table["proposals"]
    return out


def _lock(reader: _Reader, table: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "roots" in table:
        roots = reader.globs("lock", "roots", table["roots"])
        for root in roots:
            if has_wildcard(root):
                raise reader.fail(
                    "lock",
                    "roots",
                    f"{root!r}: a lock root is a directory, not a glob (no `*`, `?` or `[`)",
                )
        out["lock_roots"] = tuple(r.strip("/") for r in roots)
    if "exclude" in table:
        out["lock_exclude"] = reader.globs("lock", "exclude", table["exclude"])
    if "notes_ref" in table:
        ref = reader.ref("lock", "notes_ref", table["notes_ref"])
        if not ref.startswith("refs/notes/"):
            raise reader.fail("lock", "notes_ref", f"{ref!r} must be under refs/notes/")
        out["notes_ref"] = ref
    if "required" in table:
        if not isinstance(table["required"], bool):
            raise reader.fail(
                "lock", "required", f"expected true or false, got {kind_of(table['required'])}"
            )
        out["lock_required"] = table["required"]
    return out


def _ledger(reader: _Reader, table: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "path" in table:
        value = table["path"]
        if not isinstance(value, str):
            raise reader.fail("ledger", "path", f"expected a string, got {kind_of(value)}")
        problem = path_globs.glob_problem(value, negation=False)
        if problem or any(c in value for c in "*?["):
            raise reader.fail("ledger", "path", f"{value!r}: {problem or 'must be a plain path'}")
        out["ledger_path"] = path_globs.canonical_glob(value).strip("/")
    if "max_window_hours" in table:
        value = table["max_window_hours"]
        if (
            isinstance(value, bool)
            or not isinstance(value, int)
            or not 0 < value <= MAX_WINDOW_HOURS
        ):
            raise reader.fail(
                "ledger",
                "max_window_hours",
                f"expected a positive integer of at most {MAX_WINDOW_HOURS} hours, got {value!r}",
            )
        out["max_window_hours"] = value
    return out


def _plain_path(reader: _Reader, table: str, key: str, value: object) -> str:
    if not isinstance(value, str):
        raise reader.fail(table, key, f"expected a string, got {kind_of(value)}")
    problem = path_globs.glob_problem(value)
    if problem or any(c in value for c in "*?[!") or not value.strip("/"):
        raise reader.fail(table, key, f"{value!r}: {problem or 'must be a plain path'}")
    return path_globs.canonical_glob(value).strip("/")


def _labels(reader: _Reader, table: dict[str, Any]) -> dict[str, Any]:
    """``[labels]``: the sealed test labels, the retry quota, the retries a
    nondeterministic test may use."""
    out: dict[str, Any] = {}
    if "path" in table:
        out["labels_path"] = _plain_path(reader, "labels", "path", table["path"])
    if "quota_path" in table:
        out["quota_path"] = _plain_path(reader, "labels", "quota_path", table["quota_path"])
    if "retries" in table:
        from git_evidence.policy.labels import MAX_RETRIES

        value = table["retries"]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_RETRIES:
            raise reader.fail(
                "labels",
                "retries",
                f"expected a whole number from 0 to {MAX_RETRIES}, got {value!r}",
            )
        out["retries"] = value
    return out


def _distinct_files(reader: _Reader, values: dict[str, Any]) -> None:
    """The ledger, the labels, the quota and the policy file are four different files."""
    named = {
        ("ledger", "path"): values.get("ledger_path", _DEFAULT.ledger_path),
        ("labels", "path"): values.get("labels_path", _DEFAULT.labels_path),
        ("labels", "quota_path"): values.get("quota_path", _DEFAULT.quota_path),
    }
    seen = {path_globs.fold_path(POLICY_FILE): "the policy file"}
    for (table, key), path in named.items():
        folded = path_globs.fold_path(path)
        if folded in seen:
            raise reader.fail(table, key, f"{path!r} is already {seen[folded]}")
        seen[folded] = f"{table}.{key}"


# -- where the policy comes from -----------------------------------------------------


def read_sealed(path: str) -> Policy:
    source = f"sealed:{path}"
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise PolicyError(source, f"cannot read the sealed policy: {exc.strerror}") from None
    return parse_policy(data, source)._replace(origin="sealed")


BASE_SOURCE = f"base:{POLICY_FILE}"  # a policy read from a commit
DRAFT_SOURCE = "draft policy {path} (not in force)"  # --policy FILE
PINNED_SOURCE = "pinned:{path}"  # the agent guard's copy
# How each origin's source text begins, for a record that keeps only the text.
_SOURCE_STARTS: tuple[tuple[str, Origin], ...] = (
    ("draft policy ", "draft"),
    ("sealed:", "sealed"),
    ("pinned:", "pinned"),
    ("base:", "base"),
)


def recorded_origin(text: str) -> Origin:
    """Where a policy came from, read back from the source text a record kept of it
    (a verdict, a shard): the one reader of that text. A live ``Policy`` says it in
    ``origin``."""
    for start, origin in _SOURCE_STARTS:
        if text.startswith(start):
            return origin
    return "default"


def load_at(blob: bytes | None, rev: str | None) -> Policy:
    """The policy a revision carries: its file, or the defaults when it has none."""
    if blob is None:
        where = f"no {POLICY_FILE} at {rev[:12]}" if rev else "no base revision"
        return Policy(source=f"built-in defaults ({where})", origin="default")
    return parse_policy(blob, BASE_SOURCE)
