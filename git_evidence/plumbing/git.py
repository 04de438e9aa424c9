"""The one place git is asked: ``Git``, git in one repository (its sealed process in
process.py) asked by name: its settings (``evidence.*``, read once a process), the work
tree's top, HEAD's branch, refs and revisions, trees and notes listed through plumbing
with ``-z`` output. Nothing here decides anything; code outside ``plumbing/`` calls
these methods, never ``run``/``out``/``text`` with a git command of its own.

The environment git gives a hook (``GIT_DIR``, ``GIT_OBJECT_DIRECTORY``,
``GIT_ALTERNATE_OBJECT_DIRECTORIES``, ``GIT_QUARANTINE_PATH``) is kept as it is, so
objects still in pre-receive quarantine stay visible. Objects are read by name through
batch.py, output read while git runs through stream.py, notes written by notes.py;
``Git`` answers the questions asked one call at a time."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from typing import cast

from git_evidence.core.errors import GitError, UsageError
from git_evidence.core.oids import Oid
from git_evidence.plumbing import batch
from git_evidence.plumbing.process import Process
from git_evidence.plumbing.stream import RAW_DIFF, give_up, zsplit

# What git says (in the C locale) where there is no work tree to name.
_NO_WORK_TREE = (b"not a git repository", b"must be run in a work tree")


def decode_path(raw: bytes) -> str:
    """Paths are bytes; non-UTF-8 ones round-trip through surrogateescape."""
    return raw.decode("utf-8", "surrogateescape")


class Git(Process):
    """Git in one repository, asked by name: each question one method here."""

    def __init__(self, cwd: str | None = None, env: Mapping[str, str] | None = None) -> None:
        super().__init__(cwd, env)
        self._ident: bytes | None = None
        self._ident_asked = False
        # Answers kept for this Git, by the directory git runs in: a Git keeps its cwd
        # and env (copied when it is made); without a cwd it runs where the process is.
        self._tops: dict[str, str | None] = {}
        self._dirs: dict[str, list[str]] = {}
        # The running readers of the ``lookups.live`` block this Git is in: its short
        # lookups and its ``CatFile`` reads go to them (batch.py).
        self.live: batch.Live | None = None

    # -- small questions -------------------------------------------------------

    def remotes(self) -> list[str]:
        """The names of the configured remotes (``git remote``); a failure is an error."""
        return self.text("remote").split()

    def git_path(self, name: str) -> str:
        """``git rev-parse --git-path``: honours core.hooksPath for ``hooks``."""
        path = self.text("rev-parse", "--git-path", name)
        if self.cwd and not os.path.isabs(path):
            path = os.path.join(self.cwd, path)
        return os.path.abspath(path)

    # -- the repository and its work tree --------------------------------------

    def is_repository(self) -> bool:
        """Whether git finds a repository here (``rev-parse --git-dir``)."""
        return self.run("rev-parse", "--git-dir", ok_codes=(0, 128))[0] == 0

    def toplevel(self) -> str | None:
        """The top of the work tree (``rev-parse --show-toplevel``) as git prints it (a
        name may begin or end with a space); None where there is none: a bare
        repository, inside a git directory, outside any repository. Any other failure
        of git is an error (the agent's guard allows nothing then). An answer is kept:
        this Git asks git once."""
        where = self.running_in()
        if where in self._tops:
            return self._tops[where]
        done = self.attempt("rev-parse", "--show-toplevel")
        out = done.stdout[:-1] if done.stdout.endswith(b"\n") else done.stdout
        if done.returncode != 0 and not any(why in done.stderr for why in _NO_WORK_TREE):
            raise GitError(list(done.args), done.returncode, done.stdout, done.stderr)
        top = decode_path(out) if done.returncode == 0 and out else None
        if where is not None:
            self._tops[where] = top
        return top

    def work_tree(self, what: str, fix: str = "") -> str:
        """``toplevel()``, or the error that ``what`` needs a work tree."""
        top = self.toplevel()
        if top is None:
            raise UsageError(f"{what} needs a work tree (this repository is bare)", fix=fix)
        return top

    def prefix(self) -> str:
        """Where the current directory is in the work tree (``rev-parse --show-prefix``:
        ``""`` at the top, else ending in ``/``), not stripped."""
        return decode_path(self.out("rev-parse", "--show-prefix").rstrip(b"\n"))

    def git_dirs(self) -> list[str]:
        """The git directory and the common directory, absolute (they differ in a
        linked work tree); a failure of git is an error. Asked once by this Git."""
        where = self.running_in()
        if where is None or where not in self._dirs:
            out = self.text("rev-parse", "--absolute-git-dir", "--git-common-dir").splitlines()
            if where is None:  # git found its directory where Python cannot: keep nothing
                return [os.path.abspath(p) for p in out if p]
            self._dirs[where] = [os.path.abspath(os.path.join(where, p)) for p in out if p]
        return list(self._dirs[where])

    def running_in(self) -> str | None:
        """Where git runs, the key of the answers kept here and in repo_dirs.py; None
        when the process's directory is gone (git then says so itself, nothing is kept)."""
        try:
            return self.cwd or os.getcwd()
        except OSError:
            return None

    def head_branch(self) -> str | None:
        """The ref HEAD names (``refs/heads/…``), also an unborn one; None when HEAD is
        detached."""
        return self.symref_target("HEAD")

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

    def is_ancestor(self, commit: str, tip: str) -> bool:
        """Whether ``commit`` is in ``tip``'s history (``merge-base --is-ancestor``)."""
        return self.run("merge-base", "--is-ancestor", commit, tip, ok_codes=(0, 1))[0] == 0

    def full_ref_name(self, rev: str) -> str | None:
        """The ref ``rev`` names in full (``main`` → ``refs/heads/main``); None when it
        names none (an id, a missing name). Not ``--end-of-options``: the git this
        runs with may print it back as a name (2.39 does)."""
        if rev.startswith("-"):
            return None
        code, out = self.run("rev-parse", "--symbolic-full-name", rev, "--", ok_codes=(0, 128))
        first = out.decode("utf-8", "surrogateescape").partition("\n")[0]
        return first if code == 0 and first.startswith("refs/") else None

    def valid_ref_name(self, ref: str) -> bool:
        return self.run("check-ref-format", ref, ok_codes=(0, 1))[0] == 0

    def delete_ref(self, ref: str) -> None:
        self.run("update-ref", "-d", ref)

    def object_type(self, rev: str) -> str | None:
        """``blob``, ``tree``, ``commit`` or ``tag``; None when ``rev`` names nothing."""
        code, out = self.run("cat-file", "-t", rev, ok_codes=(0, 1, 128))
        return out.decode().strip() if code == 0 else None

    def topo_parents(self, *revs: str) -> list[tuple[Oid, list[Oid]]]:
        """``(commit, parents)`` of ``rev-list revs``, parents before children."""
        out = self.text("rev-list", "--reverse", "--topo-order", "--parents", *revs, "--")
        return [
            (Oid(oid), [Oid(p) for p in rest]) for oid, *rest in map(str.split, out.splitlines())
        ]

    def commit_time(self, rev: str) -> int | None:
        """``rev``'s committer time, in seconds since the epoch."""
        stamp = self.text("log", "-1", "--format=%ct", rev)
        return int(stamp) if stamp else None

    def added_times(self, path: str) -> list[int] | None:
        """The committer times of the commits that added ``path``, newest first; None
        when git cannot tell (no commit yet)."""
        code, out = self.run(
            "log", "--diff-filter=A", "--format=%ct", "--", path, ok_codes=(0, 128)
        )
        return [int(stamp) for stamp in out.split()] if code == 0 else None

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

    def tree_of(self, rev: str) -> Oid:
        """The id of the tree ``rev`` names (a commit's root tree, or a tree itself)."""
        return Oid(self.text("rev-parse", "--verify", "--end-of-options", f"{rev}^{{tree}}"))

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

    def first_parent_range(self, tip: str, exclude: Sequence[str]) -> list[list[Oid]]:
        """``[commit, *parents]`` of each first-parent commit of ``tip`` that ``exclude``
        does not reach, oldest first: one ``rev-list``, its lines split (not parsed id
        by id: a push may list 20,000). A rev git does not know is an error."""
        out = self.out(
            "rev-list", "--first-parent", "--reverse", "--parents", tip, "--not", *exclude, "--"
        )
        return cast("list[list[Oid]]", [line.split() for line in out.decode().splitlines()])

    def first_parents_changing(
        self, tip: str, exclude: Sequence[str], paths: Sequence[str]
    ) -> set[Oid]:
        """Those of ``first_parent_range`` that change ``paths`` against their first
        parent (git prunes unchanged trees unread). A rev git does not know is an error."""
        out = self.out("rev-list", "--first-parent", tip, "--not", *exclude, "--", *paths)
        return cast("set[Oid]", set(out.decode().split()))

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

    def unshallow(self, remote: str) -> subprocess.CompletedProcess[bytes]:
        """``fetch --unshallow``: the rest of a shallow clone's history; as ``fetch``."""
        return self.attempt("fetch", "--quiet", "--no-tags", "--unshallow", remote)

    def read_tree(self, treeish: str) -> None:
        """Make the index (``GIT_INDEX_FILE`` of this Git's environment) ``treeish``."""
        self.run("read-tree", treeish)

    def apply_cached(self, patch: bytes, *, check: bool = False) -> None:
        """``git apply --cached`` of ``patch`` to the index; ``check``: only whether it
        applies. A patch that does not apply is a GitError with git's words."""
        self.run("apply", "--cached", *(["--check"] if check else []), "-", input=patch)

    def write_tree(self) -> Oid:
        """The tree of the index, written."""
        return Oid(self.text("write-tree"))

    def push(self, remote: str, spec: str) -> subprocess.CompletedProcess[bytes]:
        """``git push --porcelain`` of one refspec; whatever happened is the caller's
        to read (a remote's refusal is an answer)."""
        return self.attempt("push", "--porcelain", remote, spec)

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
