"""What a shell command writes: the paths it names together with a writing operation
(an output redirection, ``tee``, ``sed -i``, ``perl -i``, ``mv``, ``cp``'s destination,
``rm``, ``truncate``, ``chmod``, ``ln``, ``git checkout|restore|rm|mv``, an
interpreter's inline code that writes, …). Pure: text in, paths as written out.

Best effort, by design: a shell is a programming language, and a command that computes
its paths (a variable, a script file, ``xargs`` fed by a pipe, a patch, an archive) is
not read here. The guard that asks is the first wall; the commit and push gate stays
the one that holds."""

from __future__ import annotations

import itertools
import posixpath
import re
from collections.abc import Callable, Sequence
from typing import Final

from git_evidence.guard.shell_args import (
    WRAPPERS,
    after_wrapper,
    clustered_values,
    non_options,
    option_values,
    split_string,
    target_directory,
    wrapper_cwd,
)
from git_evidence.guard.shell_code import INTERPRETER, code_patterns, inline_code
from git_evidence.guard.shell_git import Written, git_writes
from git_evidence.guard.shell_words import Variables, expand, parse

_MAX_DEPTH = 6  # `bash -c "bash -c '…'"` is read this many levels down


def written_paths(
    command: str, cwd: str = "", depth: int = 0, variables: Variables | None = None
) -> list[Written]:
    """Every path ``command`` names with a writing operation, in order. ``variables``:
    the values of ``$NAME`` the caller knows (``CLAUDE_PROJECT_DIR``, ``HOME``)."""
    if depth > _MAX_DEPTH:
        return []
    global _VARIABLES
    outer, _VARIABLES = _VARIABLES, variables if variables is not None else _VARIABLES
    try:
        simple, inner = parse(command, cwd, _VARIABLES)
        found: list[Written] = []
        for one in simple:
            for op, target in one.redirects:
                found += [Written(p, f"{op} redirection", one.cwd) for p in expand(target)]
            found += _command(one.words, one.stdin, one.cwd, depth)
        for text in inner:  # `$(…)` and backquotes run too
            found += written_paths(text, cwd, depth + 1)
        return found
    finally:
        _VARIABLES = outer


_VARIABLES: Variables = {}  # the outermost call's, for the commands read inside it


_SHELLS: Final = frozenset({"sh", "bash", "dash", "zsh", "ksh", "ash"})


def _command(words: Sequence[str], stdin: str | None, cwd: str, depth: int) -> list[Written]:
    words = list(words)
    while words:
        name = posixpath.basename(words[0])
        if re.match(r"[A-Za-z_][A-Za-z0-9_]*=", words[0]):
            words = words[1:]
        elif name in WRAPPERS:
            moved = wrapper_cwd(name, words[1:])  # `env -C DIR`, `sudo -D DIR`
            if moved is not None:
                cwd = posixpath.join(cwd, moved) if cwd else moved
            rest = after_wrapper(name, words[1:])
            if name == "env":  # `env -S 'CMD ARGS'`: the string is split into words
                rest = split_string(words[1:]) + rest
            if name == "xargs" and stdin is not None:  # the words it reads become operands
                rest = _xargs(words[1:], rest, stdin)
                stdin = None
            words = rest
        else:
            break
    if not words:
        return []
    name, args = posixpath.basename(words[0]), words[1:]
    if name == "git-evidence":
        return git_writes(["evidence", *args], cwd)
    if name in _SHELLS:
        return _shell(args, stdin, cwd, depth)
    if name == "eval":
        return written_paths(" ".join(args), cwd, depth + 1)
    if name == "find":
        return _find(args, cwd, depth)
    if name == "git":
        return git_writes(args, cwd)
    if re.fullmatch(INTERPRETER, name) and args[:2] == ["-m", "git_evidence"]:
        return git_writes(["evidence", *args[2:]], cwd)
    if re.fullmatch(INTERPRETER, name) or name in ("node", "nodejs", "deno", "bun"):
        code, how = inline_code(args, name), f"{name} {'-c' if name.startswith('p') else '-e'}"
        if code is None and stdin is not None and non_options(args, frozenset()) in ([], ["-"]):
            code, how = stdin, f"{name} <<"  # `python - <<EOF`
        return _code_writes(code, how, cwd, depth) if code is not None else []
    if name in ("perl", "ruby"):
        how, files, programs = _perl(args, ruby=name == "ruby")
        found = [Written(p, how, cwd) for path in files for p in expand(path)]
        for program in programs:
            found += _code_writes(program, f"{name} -e", cwd, depth)
        return found
    handler = _HANDLERS.get(name)
    if handler is None:
        return []
    how, paths = handler(args)
    return [Written(p, how or name, cwd) for path in paths for p in expand(path)]


def _xargs(own: list[str], command: list[str], stdin: str) -> list[str]:
    """``xargs CMD`` fed a known text (a here-string, a here-document, ``echo … |``):
    CMD with the words read from it, or with each line in place of ``-I``'s name."""
    import shlex

    replace = option_values(own, ("-I", "--replace"))
    try:
        read = shlex.split(stdin)
    except ValueError:
        read = stdin.split()
    if replace:
        lines = [line.strip() for line in stdin.splitlines() if line.strip()]
        return [w.replace(replace[0], line) for line in lines for w in command] or command
    return command + read


_Handler = Callable[[list[str]], tuple[str, list[str]]]


def _all(takes_value: frozenset[str] = frozenset()) -> _Handler:
    """Every operand is written (``rm``, ``touch``, ``tee``, ``truncate``, …)."""
    return lambda args: ("", non_options(args, takes_value))


def _destination(takes_value: frozenset[str], target_option: bool = True) -> _Handler:
    """The last operand, or ``-t DIR`` (``cp``, ``install``; rsync's ``-t`` keeps
    times: its destination is its last operand)."""

    def handler(args: list[str]) -> tuple[str, list[str]]:
        target = target_directory(args) if target_option else []
        operands = non_options(args, takes_value | ({"-t"} if target_option else set()))
        return "", target or (operands[-1:] if len(operands) > 1 else [])

    return handler


def _mv(args: list[str]) -> tuple[str, list[str]]:
    target = target_directory(args)
    return "", non_options(args, frozenset({"-t", "-S"})) + target


def _ln(args: list[str]) -> tuple[str, list[str]]:
    target = target_directory(args)
    operands = non_options(args, frozenset({"-t", "-S"}))
    flags = "".join(w[1:] for w in args if w.startswith("-") and not w.startswith("--"))
    if "s" not in flags and "--symbolic" not in args and operands:
        # a hard link is a second name for its source: a protected file made writable
        many = target or len(operands) > 1
        sources = operands if target or not many else operands[:-1]
        made = target or (operands[-1:] if many else [posixpath.basename(operands[0])])
        return "", [*sources, *made]
    if target:
        return "", target
    if len(operands) == 1:  # `ln -s ../x`: the link is made here, named as its target
        return "", [posixpath.basename(operands[0].rstrip("/")) or operands[0]]
    return "", operands[-1:]


_CHMOD_FLAGS: Final = frozenset(
    {"-R", "-c", "-f", "-v", "--recursive", "--changes", "--silent", "--quiet", "--verbose"}
)


def _chmod(args: list[str]) -> tuple[str, list[str]]:
    """``chmod MODE FILE…``: a mode may read like an option (``-w``)."""
    rest = [a for a in args if a not in _CHMOD_FLAGS and a != "--"]
    if any(a.startswith("--reference") for a in rest):
        return "", [a for a in rest if not a.startswith("--reference")]
    return "", rest[1:]


def _sed(args: list[str]) -> tuple[str, list[str]]:
    in_place = script_given = False
    operands: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word.startswith("--in-place"):
            in_place = True
        elif word in ("--expression", "--file"):
            script_given, i = True, i + 1
        elif word.startswith(("--expression=", "--file=")):
            script_given = True
        elif word.startswith("-") and not word.startswith("--") and len(word) > 1:
            for k, flag in enumerate(word[1:], start=1):
                if flag == "i":  # the rest is the backup suffix
                    in_place = True
                    break
                if flag in "efl":  # the rest, or the next word, is the value
                    script_given |= flag in "ef"
                    i += 0 if word[k + 1 :] else 1
                    break
        elif word != "--":
            operands.append(word)
        i += 1
    if not in_place:
        return "sed -i", []
    return "sed -i", operands if script_given else operands[1:]


def _perl(args: list[str], *, ruby: bool = False) -> tuple[str, list[str], list[str]]:
    """(how, files written in place, inline programs) of ``perl``/``ruby``."""
    in_place = False
    code: list[str] = []
    operands: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            operands += args[i + 1 :]
            break
        if word.startswith("-") and len(word) > 1:
            for k, flag in enumerate(word[1:], start=1):
                rest = word[k + 1 :]
                if flag == "i":
                    in_place = True
                    break
                if flag in "eE":
                    if rest:
                        code.append(rest)
                    elif i + 1 < len(args):
                        code.append(args[i + 1])
                        i += 1
                    break
                if flag in "IMmrx" or (ruby and flag in "CIr"):
                    i += 0 if rest else 1
                    break
        else:
            operands.append(word)
        i += 1
    files = operands if code else operands[1:]
    return ("ruby -i" if ruby else "perl -i"), (files if in_place else []), code


def _awk(args: list[str]) -> tuple[str, list[str]]:
    """gawk's in-place edit (``-i inplace``)."""
    words = list(args)
    in_place = "-iinplace" in words or "--include=inplace" in words
    in_place |= any(pair == ("-i", "inplace") for pair in itertools.pairwise(words))
    if not in_place:
        return "awk -i inplace", []
    operands = non_options(words, frozenset({"-i", "-f", "-v", "-F", "--include"}))
    program = any(a == "-f" or a.startswith("--file") for a in words)
    operands = [o for o in operands if o != "inplace"]
    return "awk -i inplace", operands if program else operands[1:]


def _dd(args: list[str]) -> tuple[str, list[str]]:
    return "dd of=", [a[3:] for a in args if a.startswith("of=")]


def _output_option(how: str, *names: str) -> _Handler:
    """A tool whose option names the file it writes (``curl -o F``, ``sort -o F``,
    ``cc -o F``): that file, in each spelling (``-oF``, ``--output=F``), also at the
    end of a cluster of short flags (``curl -sSLo F``, ``wget -qO F``)."""
    letters = frozenset(n[1] for n in names if not n.startswith("--"))

    def handler(args: list[str]) -> tuple[str, list[str]]:
        return how, option_values(args, names) + clustered_values(args, letters)

    return handler


def _uniq(args: list[str]) -> tuple[str, list[str]]:
    """``uniq IN OUT``: the second operand is written."""
    operands = non_options(args, frozenset({"-f", "-s", "-w"}))
    return "uniq", operands[1:2]


_HANDLERS: Final[dict[str, _Handler]] = {
    "rm": _all(),
    "unlink": _all(),
    "shred": _all(frozenset({"-n", "-s", "--iterations", "--size"})),
    "rmdir": _all(),
    "touch": _all(frozenset({"-d", "-t", "-r", "--date", "--reference"})),
    "truncate": _all(frozenset({"-s", "-r", "--size", "--reference"})),
    "tee": _all(),
    "mv": _mv,
    "cp": _destination(frozenset({"-S", "--suffix"})),
    "install": _destination(frozenset({"-m", "-o", "-g", "-S", "--mode", "--owner", "--group"})),
    "rsync": _destination(frozenset({"-e", "--rsh", "--exclude", "--include", "-f"}), False),
    "ln": _ln,
    "chmod": _chmod,
    "sed": _sed,
    "gsed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "dd": _dd,
    "curl": _output_option("curl -o", "-o", "--output", "--output-dir"),
    "wget": _output_option(
        "wget -O", "-O", "--output-document", "-P", "--directory-prefix", "-o", "--output-file"
    ),
    "sort": _output_option("sort -o", "-o", "--output"),
    "shuf": _output_option("shuf -o", "-o", "--output"),
    "uniq": _uniq,
    "cc": _output_option("cc -o", "-o"),
    "gcc": _output_option("gcc -o", "-o"),
    "g++": _output_option("g++ -o", "-o"),
    "clang": _output_option("clang -o", "-o"),
    "pandoc": _output_option("pandoc -o", "-o", "--output"),
}


def _shell(args: list[str], stdin: str | None, cwd: str, depth: int) -> list[Written]:
    """``bash -c STRING`` (or a here-document fed to ``bash``) is read as a command."""
    for i, word in enumerate(args):
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            rest = non_options(args[i + 1 :], frozenset())
            return written_paths(rest[0], cwd, depth + 1) if rest else []
    if stdin is not None and not non_options(args, frozenset({"-o", "+o"})):
        return written_paths(stdin, cwd, depth + 1)
    return []


def _find(args: list[str], cwd: str, depth: int) -> list[Written]:
    """``find START… -delete``, or ``-exec CMD {} ;`` where CMD writes: the start
    points are written."""
    starts: list[str] = []
    for word in args:
        if word.startswith("-") or word in ("(", "!", ")"):
            break
        starts.append(word)
    starts = starts or ["."]
    found = [Written(s, "find -delete", cwd) for s in starts] if "-delete" in args else []
    for i, word in enumerate(args):
        if word not in ("-exec", "-execdir", "-ok", "-okdir"):
            continue
        end = next((k for k in range(i + 1, len(args)) if args[k] in (";", "+")), len(args))
        run = args[i + 1 : end]
        for start in starts:
            found += _command([start if w == "{}" else w for w in run], None, cwd, depth + 1)
    return found


def _code_writes(code: str, how: str, cwd: str, depth: int) -> list[Written]:
    writes, literals, runs = code_patterns()
    if depth > _MAX_DEPTH or not writes.search(code):
        return []
    found: list[Written] = []
    commands = runs.search(code) is not None
    for literal in literals.finditer(code):
        text = literal.group(2).strip()
        path = text.lstrip("+<>|").strip()  # perl's ">path"
        if path and "\n" not in path and any(c.isalnum() for c in path):
            found += [Written(p, how, cwd) for p in expand(path)]
        if commands and " " in text:  # os.system("rm …"), subprocess.run("…", shell=True)
            found += written_paths(text, cwd, depth + 1)
    return found
