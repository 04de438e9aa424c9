"""Inline code on a shell command line, for the guard's shell reader
(``shell_writes.py``): the program ``python -c``, ``node -e`` and their kin were given,
and the coarse patterns that say it writes (then every path it names is judged).
Pure: words in, text out."""

from __future__ import annotations

import functools
import re
from typing import Final

INTERPRETER: Final = r"(?:python|pypy)[0-9.]*"  # matched through re's cache


def inline_code(args: list[str], name: str) -> str | None:
    """The program given on the command line (``python -c``, ``python -Bc``, ``node
    -e``/``--eval``), past the interpreter's options that take a value (``-W x``)."""
    python = re.fullmatch(INTERPRETER, name) is not None
    flags = ("-c",) if python else ("-e", "--eval", "-p", "--print")
    valued = _PYTHON_VALUES if python else _NODE_VALUES
    i = 0
    while i < len(args):
        word = args[i]
        if word in flags:
            return args[i + 1] if i + 1 < len(args) else None
        if not word.startswith("-") or word == "-":
            return None  # a script (or stdin): not read
        if python and not word.startswith("--"):
            for k, flag in enumerate(word[1:], start=1):
                if flag == "c":  # `-c CODE`, `-cCODE`, `-Bc CODE`
                    return word[k + 1 :] or (args[i + 1] if i + 1 < len(args) else None)
                if flag == "m":
                    return None  # a module: not read
                if flag in "WX":  # the rest, or the next word, is the value
                    i += 0 if word[k + 1 :] else 1
                    break
        elif word in valued:
            i += 1
        i += 1
    return None


_PYTHON_VALUES: Final = frozenset({"--check-hash-based-pycs"})
_NODE_VALUES: Final = frozenset(
    {"-r", "--require", "--import", "--loader", "--experimental-loader", "-C", "--conditions"}
)


# Inline code "writes" when it holds one of these; then every path it names is judged.
# Coarse on purpose: a program that writes anything and names evidence is denied.
_WRITES_IN_CODE: Final = (
    r"open\s*\([^()]*?,\s*(?:mode\s*=\s*)?[rbtU]*['\"][rbtU]*[wax+]"  # open(p, 'w')
    r"|\.open\s*\(\s*(?:mode\s*=\s*)?['\"][rbt]*[wax+]"  # Path(p).open('w')
    r"|\bopen\s*\(?\s*(?:my\s+)?[$\w*]+\s*,\s*['\"]\s*(?:\+?[<>]|>>|\|)"  # perl open(FH, '>', p)
    r"|['\"]\s*(?:>>?|\+<)\s*[\w./~]"  # perl's two-argument open(FH, ">p")
    r"|\b(?:os|shutil|fs|FileUtils|File|IO|Files)\s*\.\s*(?!path\b|environ\b|getcwd\b)\w+"
    r"|\.(?:write_text|write_bytes|unlink|rmdir|touch|chmod|rename|symlink_to|hardlink_to)\s*\("
    r"|\b(?:subprocess|Popen|system|exec\w*|spawn\w*|child_process|unlink|rename|truncate"
    r"|chmod|symlink|writeFile\w*|appendFile\w*|createWriteStream|rmSync|rmdirSync)\b"
    # node's fs calls that write, in their Sync and promise forms
    r"|\b(?:unlink|rename|copyFile|cp|symlink|link|truncate|chmod|chown|utimes|rm|rmdir"
    r"|mkdir|writeFile|appendFile|open|mkdtemp)Sync\b|\bfs\s*\.\s*promises\b"
    r"|\brequire\s*\(\s*['\"](?:node:)?fs(?:/promises)?['\"]\s*\)\s*\.\s*(?!read|exists|stat)\w+"
    r"|`|\bqx|\b__import__\b|\bimportlib\b|\b(?:rmtree|remove_tree|mkpath|make_path)\b"
)
_LITERAL: Final = "('''|\"\"\"|'|\"|`)((?:\\\\.|(?!\\1).)*?)\\1"  # a quoted string
_RUNS_COMMANDS: Final = r"\b(?:subprocess|Popen|system|exec\w*|spawn\w*|child_process)\b|`"


@functools.cache
def code_patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """Compiled when inline code is first read: most commands have none, and the
    guard's start is paid on every tool call."""
    return re.compile(_WRITES_IN_CODE), re.compile(_LITERAL, re.S), re.compile(_RUNS_COMMANDS)
