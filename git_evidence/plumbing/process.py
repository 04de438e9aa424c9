"""Git started in one repository with a sealed environment (no replace refs or
grafts, the C locale, no pager or external diff; the ``git -c`` settings given back
only to the reads of our own settings): ``Process`` runs a command and hands back its
output, its status, or the process itself; and reads this tool's settings
(``evidence.*``) once a process, forgetting them on a write through ``git config``
(the writes are here too: the settings are read and written in one place).
``Git`` (git.py) builds on it and asks git its questions by name; nothing outside
``plumbing/`` spells a git command (a test in ``tests/test_architecture.py`` holds it).

Apart from git.py so that the named questions stay in one readable class."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence

from git_evidence.core.errors import EvidenceError, GitError

# Replace refs and grafts let a repository show other objects than the ones a push
# carries; the gate must judge the real objects (git-replace(1), GIT_NO_REPLACE_OBJECTS).
SEALED_ENV = {
    "GIT_NO_REPLACE_OBJECTS": "1",
    "LC_ALL": "C",
    "LANG": "C",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    # Paths we pass are names, never patterns (a file may be called `*`).
    "GIT_LITERAL_PATHSPECS": "1",
}
# Variables that would make git read other objects or run user code while we judge.
DROPPED_ENV = ("GIT_GRAFT_FILE", "GIT_EXTERNAL_DIFF", "GIT_PAGER", "GIT_CONFIG_PARAMETERS")
# What `git -c KEY=VALUE evidence …` hands the command (git exports it so): dropped for
# the plumbing, whose behaviour it could change, and given back to the reads of our own
# settings (`config_get`, `config_bool`), which honour it as git's own commands do.
COMMAND_LINE_CONFIG = "GIT_CONFIG_PARAMETERS"

# The settings this tool reads (`evidence.*`), read once a process (`Process._settings`),
# forgotten on any write through `git config`.
SETTINGS_SECTION = "evidence"
SETTINGS: dict[tuple[str, tuple[tuple[str, str], ...]], dict[str, list[str | None]]] = {}
# How git reads a boolean setting's common spellings (any case).
_BOOL_WORDS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}
_BOOL_WORDS[""] = False  # `trusted =`: false, as git reads it


class Process:
    """Runs git in one repository with a sealed environment: the spellings, for
    ``Git``'s named questions to use (a test holds that nothing else does)."""

    def __init__(self, cwd: str | None = None, env: Mapping[str, str] | None = None) -> None:
        self.cwd = cwd
        base = dict(os.environ if env is None else env)
        given = base.get(COMMAND_LINE_CONFIG)
        for name in DROPPED_ENV:
            base.pop(name, None)
        base.update(SEALED_ENV)
        self.env = base
        self.config_env = base if given is None else {**base, COMMAND_LINE_CONFIG: given}

    def _cmd(self, args: Sequence[str]) -> list[str]:
        return ["git", *args]

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        ok_codes: Iterable[int] = (0,),
        env: Mapping[str, str] | None = None,
    ) -> tuple[int, bytes]:
        cmd = self._cmd(args)
        if args and args[0] == "config" and not any(a.startswith("--get") for a in args):
            SETTINGS.clear()  # a write: what was read may have changed
        try:
            proc = subprocess.run(
                cmd,
                input=input,
                cwd=self.cwd,
                env=self.env if env is None else env,
                capture_output=True,
                check=False,
            )
        except OSError as exc:
            raise EvidenceError(f"cannot run git: {exc}", fix="install git") from exc
        if proc.returncode not in tuple(ok_codes):
            raise GitError(cmd, proc.returncode, proc.stdout, proc.stderr)
        return proc.returncode, proc.stdout

    def out(self, *args: str, input: bytes | None = None) -> bytes:
        return self.run(*args, input=input)[1]

    def text(self, *args: str) -> str:
        return self.out(*args).decode("utf-8", "surrogateescape").strip()

    def attempt(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        """Run git and hand back whatever happened (exit code, stdout, stderr) for the
        caller to read: for commands whose failures are answers (a rejected push)."""
        try:
            return subprocess.run(
                self._cmd(args), cwd=self.cwd, env=self.env, capture_output=True, check=False
            )
        except OSError as exc:
            raise EvidenceError(f"cannot run git: {exc}", fix="install git") from exc

    def popen(self, *args: str, buffered: bool = False) -> subprocess.Popen[bytes]:
        """Start git with pipes. ``buffered``: fully buffered output (``GIT_FLUSH=0``);
        into a pipe git otherwise writes every record with its own syscall."""
        env = {**self.env, "GIT_FLUSH": "0"} if buffered else self.env
        try:
            return subprocess.Popen(
                self._cmd(args),
                cwd=self.cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
        except OSError as exc:
            raise EvidenceError(f"cannot run git: {exc}", fix="install git") from exc

    def config_all(self, key: str) -> list[str]:
        """Every value of ``key`` (``config --get-all``), in order; none when unset."""
        code, out = self.run("config", "--get-all", key, ok_codes=(0, 1))
        return out.decode("utf-8", "surrogateescape").splitlines() if code == 0 else []

    def set_config(self, key: str, value: str, *, add: bool = False) -> None:
        """Write ``key`` in the repository's config; ``add``: one more value (the
        settings read once a process are forgotten: ``run`` sees the write)."""
        self.run("config", *(["--add"] if add else []), key, value)

    def unset_config(self, key: str, value: str) -> None:
        """Remove every value of ``key`` that is exactly ``value``."""
        self.run("config", "--fixed-value", "--unset-all", key, value)

    def config_get(self, key: str) -> str | None:
        """``key``'s value, from the config files or ``git -c KEY=VALUE``."""
        values = self._settings(key)
        if values is not None:
            value = values[-1] if values else None
            return None if value is None else value.strip()
        code, out = self.run("config", "--get", key, ok_codes=(0, 1), env=self.config_env)
        return out.decode("utf-8", "surrogateescape").strip() if code == 0 else None

    def config_bool(self, key: str) -> bool:
        values = self._settings(key)
        if values is not None:
            if not values:
                return False
            if values[-1] is None:  # `[evidence] trusted`, no `=`: true, as git reads it
                return True
            word = values[-1].lower()
            if word in _BOOL_WORDS:
                return _BOOL_WORDS[word]
            # anything else (a number, a typo) is git's to read, or to refuse
        code, out = self.run(
            "config", "--type=bool", "--get", key, ok_codes=(0, 1), env=self.config_env
        )
        return code == 0 and out.strip() == b"true"

    def _settings(self, key: str) -> list[str | None] | None:
        """Every value of ``evidence.NAME`` in order (None: a key without ``=``), from
        one ``git config --get-regexp`` of the whole section, read once a process for
        this repository and environment: a hook asks for three or four settings, each
        a git process before. None for a key outside the section (git answers it)."""
        section, dot, name = key.partition(".")
        if section.lower() != SETTINGS_SECTION or not dot or "." in name:
            return None
        where = (self.cwd or os.getcwd(), tuple(sorted(self.config_env.items())))
        found = SETTINGS.get(where)
        if found is None:
            code, out = self.run(
                "config", "-z", "--get-regexp", r"^evidence\.", ok_codes=(0, 1), env=self.config_env
            )
            found = {}
            for item in out.split(b"\0") if code == 0 else []:
                if not item:
                    continue
                raw_key, newline, raw_value = item.partition(b"\n")
                value = raw_value.decode("utf-8", "surrogateescape") if newline else None
                found.setdefault(raw_key.decode("utf-8", "surrogateescape"), []).append(value)
            SETTINGS[where] = found
        return found.get(f"{SETTINGS_SECTION}.{name.lower()}", [])
