"""The one place that runs git: ``Git``, git in one repository with a sealed
environment (no replace refs or grafts, the C locale, no pager or external diff; the
``git -c`` settings given back only to the reads of our own settings), its settings
(``evidence.*``, read once a process), refs and revisions, trees and notes listed
through plumbing with ``-z`` output. Nothing here decides anything.

The environment git gives a hook (``GIT_DIR``, ``GIT_OBJECT_DIRECTORY``,
``GIT_ALTERNATE_OBJECT_DIRECTORIES``, ``GIT_QUARANTINE_PATH``) is kept as it is, so
objects still in pre-receive quarantine stay visible. Objects are read by name through
batch.py, output read while git runs through stream.py, notes written by notes.py;
``Git`` answers the questions asked one call at a time."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import cast

from git_evidence.core.errors import EvidenceError, GitError
from git_evidence.core.oids import Oid
from git_evidence.plumbing import batch
from git_evidence.plumbing.stream import RAW_DIFF, give_up, zsplit

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


# The settings this tool reads (`evidence.*`), read once a process (`Git._settings`).
SETTINGS_SECTION = "evidence"
_SETTINGS: dict[tuple[str, tuple[tuple[str, str], ...]], dict[str, list[str | None]]] = {}
# How git reads a boolean setting's common spellings (any case).
_BOOL_WORDS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}
_BOOL_WORDS[""] = False  # `trusted =`: false, as git reads it


def blob_id(data: bytes | memoryview, like: str) -> Oid:
    """The id git gives a blob of ``data``, in the hash of the id ``like``."""
    import hashlib  # here: the hooks that never hash a blob start without it

    digest = hashlib.sha256() if len(like) == 64 else hashlib.sha1()
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return Oid(digest.hexdigest())


def decode_path(raw: bytes) -> str:
    """Paths are bytes; non-UTF-8 ones round-trip through surrogateescape."""
    return raw.decode("utf-8", "surrogateescape")


class Git:
    """Runs git in one repository with a sealed environment."""

    def __init__(self, cwd: str | None = None, env: Mapping[str, str] | None = None):
        self.cwd = cwd
        base = dict(os.environ if env is None else env)
        given = base.get(COMMAND_LINE_CONFIG)
        for name in DROPPED_ENV:
            base.pop(name, None)
        base.update(SEALED_ENV)
        self.env = base
        self.config_env = base if given is None else {**base, COMMAND_LINE_CONFIG: given}
        self._ident: bytes | None = None
        self._ident_asked = False
        # The running readers of the ``lookups.live`` block this Git is in: its short
        # lookups and its ``CatFile`` reads go to them (batch.py).
        self.live: batch.Live | None = None

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
            _SETTINGS.clear()  # a write: what was read may have changed
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

    # -- small questions -------------------------------------------------------

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
        found = _SETTINGS.get(where)
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
            _SETTINGS[where] = found
        return found.get(f"{SETTINGS_SECTION}.{name.lower()}", [])

    def git_path(self, name: str) -> str:
        """``git rev-parse --git-path``: honours core.hooksPath for ``hooks``."""
        path = self.text("rev-parse", "--git-path", name)
        if self.cwd and not os.path.isabs(path):
            path = os.path.join(self.cwd, path)
        return os.path.abspath(path)

    def is_bare(self) -> bool:
        return self.text("rev-parse", "--is-bare-repository") == "true"

    def refs(self) -> dict[str, Oid]:
        """Every ref mapped to the object it names."""
        return self.refs_and_symrefs()[0]

    def refs_and_symrefs(self) -> tuple[dict[str, Oid], dict[str, str]]:
        """Every ref mapped to the object it names, and every symbolic ref that resolves
        mapped to the ref it finally names (``%(symref)`` follows the whole chain): one
        ``for-each-ref`` (the hooks ask both)."""
        out = self.out("for-each-ref", "--format=%(objectname) %(refname)%00%(symref)")
        refs: dict[str, str] = {}
        aliases: dict[str, str] = {}
        for line in out.decode("utf-8", "surrogateescape").splitlines():
            oid, _, rest = line.partition(" ")
            name, _, target = rest.partition("\0")
            refs[name] = oid
            if target:
                aliases[name] = target
        return cast("dict[str, Oid]", refs), aliases

    def symrefs(self) -> dict[str, str]:
        """The symbolic half of ``refs_and_symrefs``."""
        return self.refs_and_symrefs()[1]

    def symref_target(self, ref: str) -> str | None:
        """The ref a symbolic ref finally names, also when that ref does not exist yet
        (``for-each-ref`` leaves such dangling symbolic refs out)."""
        code, out = self.run("symbolic-ref", "-q", "--", ref, ok_codes=(0, 1, 128))
        return out.decode("utf-8", "surrogateescape").strip() or None if code == 0 else None

    def resolve_commit(self, rev: str) -> Oid | None:
        # Inside a lookups block, its one process; not for reflog, upstream or path
        # forms (`@{…}`, `:…`), which make cat-file exit where rev-parse only fails.
        if self.live is not None and not any(c in rev for c in "@:\n"):
            (hit,) = batch.check(self, [f"{rev}^{{commit}}"])
            return hit[0] if hit is not None and hit[1] == "commit" else None
        code, out = self.run(
            "rev-parse",
            "--verify",
            "--quiet",
            "--end-of-options",
            f"{rev}^{{commit}}",
            ok_codes=(0, 1, 128),
        )
        return Oid(out.decode().strip()) if code == 0 else None

    def merge_base(self, a: str, b: str) -> Oid | None:
        code, out = self.run("merge-base", a, b, ok_codes=(0, 1))
        return Oid(out.decode().strip()) if code == 0 else None

    def nearest_of(self, commit: str, tips: Sequence[str]) -> Oid | None:
        """The one commit of ``tips``' history that ``commit``'s own commits sit on
        directly, when there is exactly one: the boundary of ``commit --not tips``
        reduced to those no other boundary commit contains. None when the range is
        empty or sits on several independent lines."""
        listed = self.out("rev-list", "--boundary", commit, "--not", *tips, "--")
        edge = sorted({line[1:].decode() for line in listed.split() if line.startswith(b"-")})
        if len(edge) > 1:
            edge = self.text("merge-base", "--independent", *edge).split()
        return Oid(edge[0]) if len(edge) == 1 else None

    def empty_tree(self) -> Oid:
        return Oid(self.text("hash-object", "-t", "tree", "/dev/null"))

    def peel_all(self, revs: Sequence[str]) -> dict[str, Oid | None]:
        """Each rev peeled to a commit id; None when it does not peel to one (a tag on
        a blob or a tree, a missing object)."""
        hits = batch.check(self, [f"{rev}^{{commit}}" for rev in revs])
        return {rev: hit[0] if hit else None for rev, hit in zip(revs, hits, strict=True)}

    def ls_tree(self, rev: str, paths: Sequence[str]) -> Iterator[tuple[str, Oid, str]]:
        """``(mode, object id, path)`` of every file under ``paths`` at ``rev``
        (recursive; trees are not listed)."""
        out = self.out("ls-tree", "-r", "-z", "--full-tree", rev, "--", *paths)
        # Decoded once, not record by record (twice as fast on 10,000 files): NUL is
        # never inside a UTF-8 sequence, so each path decodes as it would alone.
        for record in decode_path(out).split("\0")[:-1]:
            meta, _, path = record.partition("\t")
            mode, _, oid = meta.split(" ")
            yield mode, Oid(oid), path

    def changed_files(self, old: str, new: str) -> list[tuple[str, str, Oid, str]]:
        """``(status, mode, object id, path)`` of every file that differs between two
        trees, paths relative to them (``diff-tree -r``: git descends only into
        subtrees whose ids differ). Status A, M or T gives the new mode and object; D
        gives zeros."""
        out = self.out("diff-tree", *RAW_DIFF, old, new)
        tokens = zsplit(out)
        rows = []
        for meta, raw in zip(tokens[0::2], tokens[1::2], strict=True):
            _, mode, _, oid, status = meta.decode().split()
            rows.append((status, mode, Oid(oid), decode_path(raw)))
        return rows

    def notes(self, notes_ref: str) -> dict[Oid, Oid]:
        """Annotated object → note blob, for every note on ``notes_ref``."""
        out = self.out("notes", f"--ref={notes_ref}", "list")
        notes: dict[Oid, Oid] = {}
        for line in out.decode().splitlines():
            blob, _, annotated = line.partition(" ")
            notes[Oid(annotated)] = Oid(blob)
        return notes

    def first_parent_ids(self, rev: str, count: int) -> list[Oid]:
        """``rev`` and its first-parent ancestors, nearest first, at most ``count``;
        none when ``rev`` names no commit here (as ``first_parents``)."""
        code, out = self.run(
            "rev-list", "--first-parent", f"--max-count={count}", rev, "--", ok_codes=(0, 128)
        )
        return [Oid(line) for line in out.decode().split()] if code == 0 else []

    def first_parents(self, rev: str) -> Iterator[Oid]:
        """``rev`` and its first-parent ancestors, nearest first, lazily."""
        proc = self.popen("rev-list", "--first-parent", rev, "--", buffered=True)
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                yield Oid(line.decode().strip())
        finally:
            give_up(proc)  # read to the end or not: git is done with

    def object_size(self, oid: str) -> int:
        return int(self.text("cat-file", "-s", oid))

    def blob_bytes(self, oid: str) -> bytes:
        if self.live is not None and "\n" not in oid:  # a lookups block's reader
            hit = self.live.reader.get(oid)
            if hit is not None and hit[1] == "blob":
                return hit[2]
        return self.out("cat-file", "blob", oid)  # or the error git gives

    def configured_ident(self) -> bytes | None:
        """``git var GIT_COMMITTER_IDENT`` (``Name <email> <seconds> <zone>``), asked
        once a process; None when no identity is configured."""
        if not self._ident_asked:
            code, out = self.run("var", "GIT_COMMITTER_IDENT", ok_codes=(0, 128))
            self._ident = (out.strip() or None) if code == 0 else None
            self._ident_asked = True
        return self._ident

    def ref_oid(self, ref: str) -> Oid | None:
        code, out = self.run("rev-parse", "--verify", "--quiet", ref, ok_codes=(0, 1))
        return Oid(out.decode().strip()) if code == 0 else None

    def attempt(self, *args: str) -> subprocess.CompletedProcess[bytes]:
        """Run git and hand back whatever happened (exit code, stdout, stderr) for the
        caller to read: for commands whose failures are answers (a rejected push)."""
        try:
            return subprocess.run(
                self._cmd(args), cwd=self.cwd, env=self.env, capture_output=True, check=False
            )
        except OSError as exc:
            raise EvidenceError(f"cannot run git: {exc}", fix="install git") from exc

    def fetch_ref(self, remote: str, src: str, dst: str) -> bool:
        """Fetch ``remote``'s ``src`` into ``dst`` (forced); False when it has none."""
        fetched = self.attempt("fetch", "--quiet", "--no-tags", remote, f"+{src}:{dst}")
        if fetched.returncode == 0:
            return True
        listed = self.attempt("ls-remote", "--exit-code", remote, src)
        if listed.returncode == 2:  # the remote has no such ref
            return False
        failed = fetched if listed.returncode == 0 else listed
        raise GitError(list(failed.args), failed.returncode, failed.stdout, failed.stderr)

    def is_shallow(self) -> bool:
        return self.text("rev-parse", "--is-shallow-repository") == "true"

    def fetch(
        self, remote: str, specs: Sequence[str], *, depth: int | None = None, deepen: int = 0
    ) -> subprocess.CompletedProcess[bytes]:
        """``git fetch`` of ``specs`` (commit ids or refspecs) from ``remote``, no tags;
        ``depth`` / ``deepen`` for a shallow clone. Whatever happened is the caller's
        to read (a commit the remote no longer has is an answer, not a crash)."""
        shape = [f"--depth={depth}"] if depth else [f"--deepen={deepen}"] if deepen else []
        return self.attempt("fetch", "--quiet", "--no-tags", *shape, remote, *specs)

    def blob_at(self, rev: str, path: str) -> bytes | None:
        """The bytes of ``rev:path`` when it is a blob, else None."""
        found = self.blob_and_id_at(rev, path)
        return found[1] if found is not None else None

    def blob_and_id_at(self, rev: str, path: str) -> tuple[Oid, bytes] | None:
        """The id and bytes of ``rev:path`` when it is a blob, else None."""
        with batch.CatFile(self) as cat:
            hit = cat.get(f"{rev}:{path}")
        return (hit[0], hit[2]) if hit is not None and hit[1] == "blob" else None

    def diff_trees(self, old: str, new: str) -> list[bytes]:
        """The raw changes between two tree-ish (no header), as NUL-separated tokens."""
        return zsplit(self.out("diff-tree", *RAW_DIFF, old, new))

    def diff_index_cached(self, head: str) -> list[bytes]:
        """The raw changes between ``head`` and the index, as NUL-separated tokens."""
        return zsplit(self.out("diff-index", "--cached", *RAW_DIFF, head))

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
