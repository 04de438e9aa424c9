"""The judge's part of the policy: ``[judge]`` and its
``[[judge.property]]`` tables, validated like the rest of the policy (errors name the
file, the key — ``judge.property[2].repeat`` — and the line). ``parsing.py`` calls
``judge_section`` with its reader; nothing here reads git."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any, NamedTuple, Protocol

from git_evidence.core.errors import PolicyError


class Reader(Protocol):
    """What parsing.py's table reader offers: the file's name and lines, and errors
    that name the key and its line."""

    source: str
    lines: list[str]

    def line_of(self, table: str, key: str | None = None) -> int | None: ...

    def fail(self, table: str, key: str | None, message: str) -> PolicyError: ...

    def ref(self, table: str, key: str, value: object, *, prefix: bool = False) -> str: ...


VERDICT_NOTES_REF = "refs/notes/evidence-verdicts"


class JudgeProperty(NamedTuple):
    """One ``[[judge.property]]``: a command the judge runs ``repeat``
    times for each seed."""

    id: str
    command: tuple[str, ...]
    seeds: tuple[int, ...]
    repeat: int
    timeout_s: float
    min_hits: int = 0
    must_fail: tuple[str, ...] = ()
    must_pass: tuple[str, ...] = ()
    junit: bool = False
    source: str = "policy"  # or "command line" (`judge -- CMD…`)

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "command": list(self.command),
            "seeds": list(self.seeds),
            "repeat": self.repeat,
            "timeout_s": self.timeout_s,
            "min_hits": self.min_hits,
            "must_fail": list(self.must_fail),
            "must_pass": list(self.must_pass),
            "junit": self.junit,
            "source": self.source,
        }


SANDBOXES = ("bwrap", "none")


class JudgeConfig(NamedTuple):
    """``[judge]``: where verdicts are noted, defaults for properties, the sandbox every
    run is held in, the workspace's import roots, the properties."""

    notes_ref: str = VERDICT_NOTES_REF
    repeat: int = 3
    seeds: int = 3
    timeout_s: float = 600.0
    properties: tuple[JudgeProperty, ...] = ()
    sandbox: str = "bwrap"  # or "none", said by a person and recorded in the verdict
    network: bool = False
    # workspace-relative directories put first on PYTHONPATH; None: "src" when the
    # workspace has one, else "."
    pythonpath: tuple[str, ...] | None = None
    # variables of the judge's environment a run also sees (beyond PATH, the locale and
    # TZ): names only, their values are the judge's
    env: tuple[str, ...] = ()
    # more paths of the judge's machine no run may read (absolute, ``$NAME`` expanded
    # from the judge's environment when the runs are held)
    hide: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "notes_ref": self.notes_ref,
            "repeat": self.repeat,
            "seeds": self.seeds,
            "timeout_s": self.timeout_s,
            "sandbox": self.sandbox,
            "network": self.network,
        }
        if self.pythonpath is not None:
            out["pythonpath"] = list(self.pythonpath)
        if self.env:
            out["env"] = list(self.env)
        if self.hide:
            out["hide"] = list(self.hide)
        out["properties"] = [p.as_dict() for p in self.properties]
        return out


PROPERTY_KEYS = {
    "id",
    "command",
    "seed",
    "seeds",
    "seed_list",
    "repeat",
    "timeout_s",
    "min_hits",
    "must_fail",
    "must_pass",
    "junit",
}
JUNIT_PLACEHOLDER = "{junitxml}"
_PROPERTY_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:/-]{0,99}")
MAX_SEEDS = 1000
MAX_REPEAT = 1000
MAX_TIMEOUT_S = 86400
MAX_SEED = 2**63 - 1


def judge_section(reader: Reader, table: dict[str, Any], lock_notes_ref: str) -> dict[str, Any]:
    """``[judge]`` → ``{"judge": JudgeConfig}`` (nothing when the table is absent)."""
    if not table:
        return {}
    values: dict[str, Any] = {}
    if "notes_ref" in table:
        ref = reader.ref("judge", "notes_ref", table["notes_ref"])
        if not ref.startswith("refs/notes/"):
            raise reader.fail("judge", "notes_ref", f"{ref!r} must be under refs/notes/")
        if ref == lock_notes_ref:
            raise reader.fail(
                "judge", "notes_ref", f"{ref!r} is the lock's notes ref: verdicts need their own"
            )
        values["notes_ref"] = ref
    for key, low, high in (("repeat", 2, MAX_REPEAT), ("seeds", 1, MAX_SEEDS)):
        if key in table:
            values[key] = _bounded_int(table[key], low, high, partial(reader.fail, "judge", key))
    if "timeout_s" in table:
        values["timeout_s"] = _timeout(
            table["timeout_s"], lambda m: reader.fail("judge", "timeout_s", m)
        )
    if "sandbox" in table:
        if table["sandbox"] not in SANDBOXES:
            raise reader.fail(
                "judge",
                "sandbox",
                f'expected "bwrap" (every run in a bubblewrap sandbox) or "none" (no '
                f"sandbox: the candidate runs with the judge's rights), got {table['sandbox']!r}",
            )
        values["sandbox"] = table["sandbox"]
    if "network" in table:
        if not isinstance(table["network"], bool):
            raise reader.fail(
                "judge", "network", f"expected true or false, got {kind_of(table['network'])}"
            )
        values["network"] = table["network"]
    if "pythonpath" in table:
        values["pythonpath"] = _fixture_paths(
            table["pythonpath"], partial(reader.fail, "judge", "pythonpath"), dot=True
        )
    if "env" in table:
        values["env"] = _env_names(table["env"], partial(reader.fail, "judge", "env"))
    if "hide" in table:
        values["hide"] = _hidden_paths(table["hide"], partial(reader.fail, "judge", "hide"))
    defaults = JudgeConfig(**values)
    raw = table.get("property", [])
    if not isinstance(raw, list) or not all(isinstance(p, dict) for p in raw):
        raise reader.fail("judge", "property", "expected [[judge.property]] tables")
    props = tuple(_property(reader, index, body, defaults) for index, body in enumerate(raw))
    seen: set[str] = set()
    for index, prop in enumerate(props):
        if prop.id in seen:
            raise _property_error(reader, index, "id", f"{prop.id!r} is defined twice")
        seen.add(prop.id)
    return {"judge": JudgeConfig(**values, properties=props)}


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")


def _env_names(value: object, fail: Callable[[str], PolicyError]) -> tuple[str, ...]:
    """``[judge].env``: names of environment variables, each once."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fail(f"expected a list of variable names, got {kind_of(value)}")
    for name in value:
        if not _ENV_NAME.fullmatch(name):
            raise fail(f"{name!r} is not a variable name (letters, digits and _)")
    return tuple(dict.fromkeys(value))


MAX_HIDE = 100


def _hidden_paths(value: object, fail: Callable[[str], PolicyError]) -> tuple[str, ...]:
    """``[judge].hide``: absolute paths, or paths that start with ``$NAME`` or
    ``${NAME}`` (expanded later), never the root directory."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fail(f"expected a list of absolute paths, got {kind_of(value)}")
    if len(value) > MAX_HIDE:
        raise fail(f"expected at most {MAX_HIDE} paths, got {len(value)}")
    for path in value:
        if not path.startswith(("/", "$")) or "\0" in path or len(path) > 4096:
            raise fail(f"{path!r}: expected an absolute path (or one that starts with $NAME)")
        if not path.strip("/"):
            raise fail(f"{path!r} is the root directory: a run needs it")
    return tuple(dict.fromkeys(value))


def _property(
    reader: Reader, index: int, body: dict[str, Any], defaults: JudgeConfig
) -> JudgeProperty:
    def fail(key: str, message: str) -> PolicyError:
        return _property_error(reader, index, key, message)

    for key in body:
        if key not in PROPERTY_KEYS:
            raise fail(key, f"unknown key; expected one of {', '.join(sorted(PROPERTY_KEYS))}")
    prop_id = body.get("id")
    if not isinstance(prop_id, str) or not _PROPERTY_ID.fullmatch(prop_id):
        raise fail(
            "id",
            f"expected a name of letters, digits and _.:/- (it names the property in "
            f"verdicts, hits lines and freezes), got {prop_id!r}",
        )
    command = body.get("command")
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(a, str) for a in command)
        or not command[0]
    ):
        raise fail(
            "command", f"expected a non-empty list of strings (argv), got {kind_of(command)}"
        )
    junit = body.get("junit", False)
    if not isinstance(junit, bool):
        raise fail("junit", f"expected true or false, got {kind_of(junit)}")
    has_placeholder = any(JUNIT_PLACEHOLDER in a for a in command)
    if junit and not has_placeholder:
        raise fail("command", f"junit = true needs {JUNIT_PLACEHOLDER} in the command")
    if has_placeholder and not junit:
        raise fail("junit", f"the command names {JUNIT_PLACEHOLDER}: set junit = true")
    repeat = defaults.repeat
    if "repeat" in body:
        repeat = _bounded_int(body["repeat"], 2, MAX_REPEAT, lambda m: fail("repeat", m))
    timeout = defaults.timeout_s
    if "timeout_s" in body:
        timeout = _timeout(body["timeout_s"], lambda m: fail("timeout_s", m))
    min_hits = 0
    if "min_hits" in body:
        min_hits = _bounded_int(body["min_hits"], 0, 2**31, lambda m: fail("min_hits", m))
    fixtures = {}
    for key in ("must_fail", "must_pass"):
        fixtures[key] = _fixture_paths(body.get(key, []), partial(fail, key))
    return JudgeProperty(
        prop_id,
        tuple(command),
        _seeds(body, defaults, fail),
        repeat,
        timeout,
        min_hits,
        fixtures["must_fail"],
        fixtures["must_pass"],
        junit,
    )


def _seeds(
    body: dict[str, Any], defaults: JudgeConfig, fail: Callable[[str, str], PolicyError]
) -> tuple[int, ...]:
    if "seed_list" in body:
        if "seed" in body or "seeds" in body:
            raise fail("seed_list", "give either seed_list or seed and seeds, not both")
        listed = body["seed_list"]
        if not isinstance(listed, list) or not listed or len(listed) > MAX_SEEDS:
            raise fail("seed_list", f"expected 1 to {MAX_SEEDS} seeds, got {kind_of(listed)}")
        seeds = [_bounded_int(s, 0, MAX_SEED, lambda m: fail("seed_list", m)) for s in listed]
        if len(set(seeds)) != len(seeds):
            raise fail("seed_list", "a seed is listed twice")
        return tuple(seeds)
    first = _bounded_int(body.get("seed", 0), 0, MAX_SEED, lambda m: fail("seed", m))
    count = defaults.seeds
    if "seeds" in body:
        count = _bounded_int(body["seeds"], 1, MAX_SEEDS, lambda m: fail("seeds", m))
    if first + count - 1 > MAX_SEED:
        raise fail("seed", "seed + seeds - 1 is past the largest seed")
    return tuple(range(first, first + count))


def _fixture_paths(
    value: object, fail: Callable[[str], PolicyError], *, dot: bool = False
) -> tuple[str, ...]:
    """Plain relative paths (``dot``: ``"."``, the root itself, is one too)."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise fail(f"expected a list of paths, got {kind_of(value)}")
    out = []
    for path in value:
        if dot and path == ".":
            out.append(path)
            continue
        parts = path.split("/")
        if (
            not path
            or path.startswith("/")
            or "\\" in path
            or any(p in ("", ".", "..") for p in parts)
        ):
            raise fail(f"{path!r}: expected a plain path relative to the repository root")
        out.append(path)
    return tuple(out)


def _bounded_int(value: object, low: int, high: int, fail: Callable[[str], PolicyError]) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise fail(f"expected a whole number from {low} to {high}, got {value!r}")
    return value


def _timeout(value: object, fail: Callable[[str], PolicyError]) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not 0 < value <= MAX_TIMEOUT_S
    ):
        raise fail(f"expected seconds between 0 and {MAX_TIMEOUT_S}, got {value!r}")
    return float(value)


def _property_error(reader: Reader, index: int, key: str, message: str) -> PolicyError:
    """Names the key inside the ``index``-th ``[[judge.property]]`` table, and its line."""
    return PolicyError(
        reader.source,
        message,
        key=f"judge.property[{index}].{key}",
        line=_property_line(reader, index, key),
    )


def _property_line(reader: Reader, index: int, key: str) -> int | None:
    header = re.compile(r"^\s*\[\[\s*judge\s*\.\s*property\s*\]\]\s*(#.*)?$")
    assignment = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    count = -1
    start = None
    for number, line in enumerate(reader.lines, start=1):
        if header.match(line):
            count += 1
            if count == index:
                start = number
            elif start is not None:
                break
            continue
        if start is not None and line.lstrip().startswith("["):
            break
        if start is not None and assignment.match(line):
            return number
    return start if start is not None else reader.line_of("judge", "property")


def kind_of(value: object) -> str:
    """A TOML value's kind, as an error names what it got."""
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "a table",
    }.get(type(value), type(value).__name__)
