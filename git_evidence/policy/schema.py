"""Load and validate the policy.

The policy is read from the base revision (or a sealed file named by
``git config evidence.policyFile``), never from the revision under judgement.

Over 300 lines on purpose: one schema, every key validated with its file and line."""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from functools import lru_cache
from types import MappingProxyType
from typing import Any, Final, Literal, NamedTuple, cast

from git_evidence.core import paths
from git_evidence.core.errors import PolicyError
from git_evidence.core.globs import has_wildcard, ref_glob_regex
from git_evidence.core.paths import Classifier, PathClass
from git_evidence.policy.properties import JudgeConfig, judge_section

# The TOML parser, the records (the digest) and the labels' limits are imported where
# they are used: a repository without a policy file, and the agent's hook, which
# classifies and never digests, start without them.

POLICY_FILE = ".git-evidence.toml"
# A rule's decision, in order of severity: what a finding decides
# (rules.table.ALLOW, HOLD, REJECT) and what [rules] sets for other_path, added_test and
# test_edit. Defined here, where the policy reads it: the rules type against the policy.
Decision = Literal["allow", "hold", "reject"]
DECISIONS: Final[tuple[Decision, ...]] = ("allow", "hold", "reject")

DEFAULT_PATHS: Mapping[PathClass, tuple[str, ...]] = MappingProxyType(
    {
        paths.PRODUCT: ("src/**",),
        paths.FIXTURE: ("tests/fixtures/**", "tests/goldens/**", "testdata/**"),
        paths.ORACLE: (
            "tests/properties/**",
            "tests/oracles/**",
            "**/*.snap",
            "**/__snapshots__/**",
        ),
        paths.LEDGER: ("tests/freeze.jsonl", "flake_freeze.json", "tests/freezes/**"),
        paths.POLICY: (),
        paths.TEST: ("tests/**",),
        paths.NEUTRAL: ("docs/**", "README*", "CHANGELOG*", "LICENSE*"),
    }
)  # read-only: every default Policy shares it
# Always policy, whatever the file says: the gate's own file and what changes the
# bytes tests read (attributes, submodules, LFS).
BUILTIN_POLICY_GLOBS = (POLICY_FILE, ".gitattributes", "/.gitmodules", "/.lfsconfig")
MAX_WINDOW_HOURS = 8760  # a year
MAX_TIME_BUDGET_S = 3600


def ref_matcher(globs: Sequence[str]) -> re.Pattern[str]:
    """One regex for ref-name globs, matched case-folded: on a server whose file
    system folds case, ``refs/heads/MAIN`` is the loose ref file of ``refs/heads/main``."""
    alternatives = [f"(?:{ref_glob_regex(g.casefold())})" for g in globs]
    return re.compile("|".join(alternatives) or "(?!)")


@lru_cache(maxsize=16)
def _protected_matcher(globs: tuple[str, ...]) -> re.Pattern[str]:
    return ref_matcher(globs)


class Policy(NamedTuple):
    paths: Mapping[PathClass, tuple[str, ...]] = DEFAULT_PATHS
    other_path: Decision = "hold"
    added_test: Decision = "hold"
    test_edit: Decision = "hold"
    protected: tuple[str, ...] = ("refs/heads/main",)
    base: str = "refs/heads/main"
    allow_namespaces: tuple[str, ...] = ("refs/heads/", "refs/tags/")
    evidence_writers: frozenset[str] = frozenset()
    ledger_writers: frozenset[str] = frozenset()
    lock_writers: frozenset[str] = frozenset()
    # Who accepts a hold by pushing; None: the evidence writers.
    reviewers: frozenset[str] | None = None
    lock_roots: tuple[str, ...] = (
        "tests/fixtures",
        "tests/goldens",
        "testdata",
        "tests/properties",
    )
    lock_exclude: tuple[str, ...] = ("**/__pycache__/**", "**/*.pyc", "**/.*.sw?", "**/.DS_Store")
    notes_ref: str = "refs/notes/evidence"
    lock_required: bool = False
    ledger_path: str = "tests/freeze.jsonl"
    max_window_hours: int = 72
    labels_path: str = "tests/evidence-labels.tsv"  # [labels]
    quota_path: str = "tests/retry-quota.jsonl"
    retries: int = 2
    time_budget_s: float = 4.5  # under GitHub Enterprise Server's shared 5 s
    # An evidence-only change to a branch outside [rules].protected, by a pusher who may
    # not write evidence, is allowed as a proposal (rule evidence-proposed); false: refused.
    proposals: bool = True
    source: str = "built-in defaults"
    judge: JudgeConfig = JudgeConfig()
    verdict_writers: frozenset[str] | None = None  # None: the lock writers

    @property
    def verdict_writer_names(self) -> frozenset[str]:
        return self.lock_writers if self.verdict_writers is None else self.verdict_writers

    @property
    def review_names(self) -> frozenset[str]:
        """The reviewers in force: ``[identities].reviewers``, else the evidence writers."""
        return self.evidence_writers if self.reviewers is None else self.reviewers

    def effective_globs(self) -> dict[PathClass, tuple[str, ...]]:
        """The globs classification uses: the file's, plus the built-in policy globs,
        the ledger path and the labels and quota paths, which no policy can drop.

        The labels file is policy (evidence writers change it). The retry quota is
        append-only like the freeze ledger, so it is in the ledger's class: the same
        prefix rule at push, and ledger writers (CI) append spends to it; grants come
        from evidence writers, which ``rules.commits.decide_update`` lets through for this one
        path and ``quota.check_change`` then holds to each line's kind."""
        globs = {k: tuple(v) for k, v in self.paths.items()}
        globs[paths.POLICY] = (*BUILTIN_POLICY_GLOBS, *globs.get(paths.POLICY, ()))
        files: tuple[tuple[PathClass, str], ...] = (
            (paths.LEDGER, self.ledger_path),
            (paths.LEDGER, self.quota_path),
            (paths.POLICY, self.labels_path),
        )
        for klass, path in files:
            if "/" + path not in globs.get(klass, ()):
                globs[klass] = (*globs.get(klass, ()), "/" + path)
        return globs

    def classifier(self) -> Classifier:
        # The built-in policy globs, the labels file, the ledger and the retry quota are
        # forced: matched before the class's own globs, so no negation takes them back.
        forced: dict[PathClass, tuple[str, ...]] = {
            paths.POLICY: (*BUILTIN_POLICY_GLOBS, "/" + self.labels_path),
            paths.LEDGER: ("/" + self.ledger_path, "/" + self.quota_path),
        }
        return Classifier(self.paths, extra_roots=self.lock_roots, forced=forced)

    def is_protected(self, ref: str) -> bool:
        """Whether ``ref`` is protected: ``[rules].protected`` entries are ref names or
        globs over them (``*`` within a component, ``**`` across), case-insensitive.
        Every place that asks goes through here."""
        return _protected_matcher(self.protected).fullmatch(ref.casefold()) is not None

    def as_dict(self) -> dict[str, Any]:
        return {
            "paths": {k: list(v) for k, v in self.effective_globs().items()},
            "rules": {
                "other_path": self.other_path,
                "added_test": self.added_test,
                "test_edit": self.test_edit,
                "protected": list(self.protected),
                "base": self.base,
                "allow_namespaces": list(self.allow_namespaces),
                "time_budget_s": self.time_budget_s,
                # only when refused, so the digest of every other policy stays what it was
                **({} if self.proposals else {"proposals": False}),
            },
            "identities": {
                "evidence_writers": sorted(self.evidence_writers),
                "ledger_writers": sorted(self.ledger_writers),
                "lock_writers": sorted(self.lock_writers),
                "reviewers": sorted(self.review_names),
            },
            "lock": {
                "roots": list(self.lock_roots),
                "exclude": list(self.lock_exclude),
                "notes_ref": self.notes_ref,
                "required": self.lock_required,
            },
            "ledger": {"path": self.ledger_path, "max_window_hours": self.max_window_hours},
            **self._judge_dict(),
            "labels": {
                "path": self.labels_path,
                "quota_path": self.quota_path,
                "retries": self.retries,
            },
        }

    def _judge_dict(self) -> dict[str, Any]:
        """Only when set, so the digest of a policy without them stays what it was."""
        out: dict[str, Any] = {}
        if self.judge != JudgeConfig():
            out["judge"] = self.judge.as_dict()
        if self.verdict_writers is not None:
            out["verdict_writers"] = sorted(self.verdict_writers)
        return out

    @property
    def digest(self) -> str:
        from git_evidence.core.records import record_digest

        return record_digest(self.as_dict())


# -- parsing -------------------------------------------------------------------------

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
            raise self.fail(table, key, f"expected a list of strings, got {_kind(value)}")
        return tuple(value)

    def globs(
        self, table: str, key: str, value: object, *, negation: bool = False
    ) -> tuple[str, ...]:
        out = []
        for glob in self.str_list(table, key, value):
            problem = paths.glob_problem(glob, negation=negation)
            if problem:
                raise self.fail(table, key, f"{glob!r}: {problem}")
            out.append(paths.canonical_glob(glob))
        return tuple(out)

    def ref(
        self, table: str, key: str, value: object, *, prefix: bool = False, glob: bool = False
    ) -> str:
        """A full ref name; ``prefix``: a namespace ending in ``/``; ``glob``: wildcards
        allowed (and checked to compile)."""
        if not isinstance(value, str):
            raise self.fail(table, key, f"expected a string, got {_kind(value)}")
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


def _kind(value: object) -> str:
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a table",
    }.get(type(value), type(value).__name__)


TABLE_KEYS: dict[str, set[str]] = {
    "paths": set(DEFAULT_PATHS),
    "rules": {
        "other_path",
        "added_test",
        "test_edit",
        "protected",
        "base",
        "allow_namespaces",
        "time_budget_s",
        "proposals",
    },
    "identities": {
        "evidence_writers",
        "ledger_writers",
        "lock_writers",
        "reviewers",
        "verdict_writers",
    },
    "lock": {"roots", "exclude", "notes_ref", "required"},
    "ledger": {"path", "max_window_hours"},
    "judge": {
        "notes_ref",
        "repeat",
        "seeds",
        "timeout_s",
        "sandbox",
        "network",
        "pythonpath",
        "property",
    },
    "labels": {"path", "quota_path", "retries"},
}


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
    return Policy(**values)


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
                "lock", "required", f"expected true or false, got {_kind(table['required'])}"
            )
        out["lock_required"] = table["required"]
    return out


def _ledger(reader: _Reader, table: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "path" in table:
        value = table["path"]
        if not isinstance(value, str):
            raise reader.fail("ledger", "path", f"expected a string, got {_kind(value)}")
        problem = paths.glob_problem(value, negation=False)
        if problem or any(c in value for c in "*?["):
            raise reader.fail("ledger", "path", f"{value!r}: {problem or 'must be a plain path'}")
        out["ledger_path"] = paths.canonical_glob(value).strip("/")
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
        raise reader.fail(table, key, f"expected a string, got {_kind(value)}")
    problem = paths.glob_problem(value)
    if problem or any(c in value for c in "*?[!") or not value.strip("/"):
        raise reader.fail(table, key, f"{value!r}: {problem or 'must be a plain path'}")
    return paths.canonical_glob(value).strip("/")


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
    seen = {paths.fold_path(POLICY_FILE): "the policy file"}
    for (table, key), path in named.items():
        folded = paths.fold_path(path)
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
    return parse_policy(data, source)


def load_at(blob: bytes | None, rev: str | None) -> Policy:
    """The policy a revision carries: its file, or the defaults when it has none."""
    if blob is None:
        where = f"no {POLICY_FILE} at {rev[:12]}" if rev else "no base revision"
        return Policy(source=f"built-in defaults ({where})")
    return parse_policy(blob, f"base:{POLICY_FILE}")
