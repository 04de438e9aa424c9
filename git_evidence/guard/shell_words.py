"""A shell command as its simple commands: words with the shell's quoting removed, the
output redirections, the here-documents, and the directory each runs in after the
`cd`s before it; and the words of one command as options and operands (what a wrapper
such as ``sudo`` or ``timeout`` leaves of it). Pure: text in, words out.

A small lexer that follows the shell's quoting rules, because ``shlex`` cannot tell the
redirection in ``cat a > b`` from the quoted argument in ``grep '>' a``, nor an
operator from a quoted one, and knows no here-documents."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Mapping
from typing import Final, NamedTuple


class _Token(NamedTuple):
    op: bool
    text: str
    body: str | None = None  # a here-document's text, on its `<<` operator


_OPERATORS: Final = (
    *("&>>", "<<<", "<<-"),
    *("&&", "||", ";;", "|&", ">>", ">&", ">|", "<>", "<&", "<<", "&>"),
    *("|", "&", ";", "(", ")", "<", ">"),
)
_WRITE_REDIRECTS: Final = frozenset({">", ">>", ">|", "&>", "&>>", "<>", ">&"})
_HEREDOCS: Final = frozenset({"<<", "<<-"})


# Variables the guard knows the value of, as the shell would expand them: the project
# the agent names, the home directory; ``PWD`` (and ``$(pwd)``) is the directory the
# command runs in, spelled ``.`` so that it follows the ``cd``s before it.
Variables = Mapping[str, str]
_NAME: Final = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*)")
_PWD_COMMANDS: Final = frozenset({"pwd", "pwd -L", "pwd -P", "/bin/pwd"})
# ANSI-C quoting ($'…'): the escapes bash resolves when it reads the word.
_ANSI_C: Final[Mapping[str, str]] = {
    "a": "\a",
    "b": "\b",
    "e": "\x1b",
    "E": "\x1b",
    "f": "\f",
    "n": "\n",
    "r": "\r",
    "t": "\t",
    "v": "\v",
    "\\": "\\",
    "'": "'",
    '"': '"',
    "?": "?",
}


def parse(
    command: str, cwd: str = "", variables: Variables | None = None
) -> tuple[list[Simple], list[str]]:
    """The simple commands of ``command`` in order, and the commands of every
    substitution (``$(…)``, backquotes) it holds, to be read in turn. ``variables``:
    the values of ``$NAME`` the caller knows (others are left as written)."""
    tokens, inner = _lex(command, {"PWD": ".", **(variables or {})})
    return list(_simple_commands(tokens, cwd)), inner


def _lex(text: str, variables: Variables) -> tuple[list[_Token], list[str]]:
    """Tokens (words with their quotes removed, unquoted operators) and the commands
    of every substitution met on the way."""
    tokens: list[_Token] = []
    inner: list[str] = []
    word: list[str] = []
    started = quoted = False
    pending: list[tuple[int, bool]] = []  # here-documents: (index of `<<`, strip tabs)
    i, n = 0, len(text)

    def flush() -> None:
        nonlocal started, quoted
        if started:
            tokens.append(_Token(False, "".join(word)))
        word.clear()
        started = quoted = False

    while i < n:
        c = text[i]
        if c in " \t":
            flush()
            i += 1
        elif c == "\n":
            flush()
            tokens.append(_Token(True, ";"))
            i = _read_heredocs(text, i + 1, tokens, pending)
        elif c == "#" and not started:
            end = text.find("\n", i)
            i = n if end < 0 else end
        elif c == "\\":
            if text[i + 1 : i + 2] != "\n":
                word.append(text[i + 1 : i + 2])
                started = quoted = True
            i += 2
        elif c == "'":
            end = text.find("'", i + 1)
            end = n if end < 0 else end
            word.append(text[i + 1 : end])
            started = quoted = True
            i = end + 1
        elif c == "$" and text[i + 1 : i + 2] == "'":
            i = _ansi_c_quoted(text, i + 2, word)
            started = quoted = True
        elif c == '"' or (c == "$" and text[i + 1 : i + 2] == '"'):
            i = _double_quoted(text, i + (1 if c == '"' else 2), word, inner, variables)
            started = quoted = True
        elif (c == "$" and text[i + 1 : i + 2] == "(") or c == "`":
            i = _substituted(text, i, word, inner)
            started = True
        elif c in "<>" and text[i + 1 : i + 2] == "(":
            # a process substitution, `>(cmd)`: a word (a path to a pipe) whose
            # command is read in turn, never a redirection eating the next word
            body, i = _substitution(text, i)
            inner.append(body)
            word.append("$(…)")
            started = True
        elif c == "$" and (known := _variable(text, i + 1, variables)) is not None:
            word.append(known[0])
            started = True
            i = known[1]
        else:
            op = next((o for o in _OPERATORS if text.startswith(o, i)), None)
            if op is None:
                word.append(c)
                started = True
                i += 1
                continue
            fd = op[0] in "<>" and started and not quoted and "".join(word).isdigit()
            if fd:  # `2>&1`, `3<file`: the number names a descriptor, not a word
                word.clear()
                started = False
            flush()
            if op in _HEREDOCS:
                pending.append((len(tokens), op == "<<-"))
            tokens.append(_Token(True, op))
            i += len(op)
    flush()
    return tokens, inner


def _double_quoted(
    text: str, i: int, word: list[str], inner: list[str], variables: Variables
) -> int:
    n = len(text)
    while i < n and text[i] != '"':
        c = text[i]
        if c == "\\" and text[i + 1 : i + 2] in ('"', "\\", "$", "`", "\n"):
            word.append(text[i + 1])
            i += 2
        elif (c == "$" and text[i + 1 : i + 2] == "(") or c == "`":
            i = _substituted(text, i, word, inner)
        elif c == "$" and (known := _variable(text, i + 1, variables)) is not None:
            word.append(known[0])
            i = known[1]
        else:
            word.append(c)
            i += 1
    return i + 1


def _variable(text: str, i: int, variables: Variables) -> tuple[str, int] | None:
    """The value of ``$NAME`` or ``${NAME}`` at ``i`` (after the ``$``) when it is
    known, and where the word goes on."""
    found = _NAME.match(text, i)
    if found is None:
        return None
    value = variables.get(found.group(1) or found.group(2))
    return None if value is None else (value, found.end())


def _substituted(text: str, i: int, word: list[str], inner: list[str]) -> int:
    """A command substitution: ``$(pwd)`` is the directory the command runs in (``.``);
    any other stands as ``$(…)`` in the word, its command read in turn."""
    body, i = _substitution(text, i)
    if " ".join(body.split()) in _PWD_COMMANDS:
        word.append(".")
    else:
        inner.append(body)
        word.append("$(…)")
    return i


def _ansi_c_quoted(text: str, i: int, word: list[str]) -> int:
    """``$'…'`` from ``i`` (after the quote): bash resolves its escapes (``\\n``,
    ``\\x41``, ``\\101``, ``\\u00e9``) when it reads the word, so the path is known."""
    n = len(text)
    while i < n and text[i] != "'":
        c = text[i]
        if c != "\\" or i + 1 >= n:
            word.append(c)
            i += 1
            continue
        e = text[i + 1]
        if e in _ANSI_C:
            word.append(_ANSI_C[e])
            i += 2
        elif e in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[e]
            digits = re.match(f"[0-9A-Fa-f]{{1,{width}}}", text[i + 2 : i + 2 + width])
            if digits is None:
                word.append("\\" + e)
                i += 2
            else:
                word.append(chr(min(int(digits.group(), 16), 0x10FFFF)))
                i += 2 + len(digits.group())
        elif e in "01234567":
            digits = re.match("[0-7]{1,3}", text[i + 1 : i + 4])
            assert digits is not None
            word.append(chr(int(digits.group(), 8) & 0xFF))
            i += 1 + len(digits.group())
        elif e == "c" and i + 2 < n:  # \cX: a control character
            word.append(chr(ord(text[i + 2]) & 0x1F))
            i += 3
        else:
            word.append("\\" + e)
            i += 2
    return i + 1


def _substitution(text: str, i: int) -> tuple[str, int]:
    """The command of ``$(…)`` or a backquoted one starting at ``i``, and where it ends."""
    if text[i] == "`":
        end = text.find("`", i + 1)
        end = len(text) if end < 0 else end
        return text[i + 1 : end], end + 1
    depth, j, quote = 0, i + 1, ""
    while j < len(text):
        c = text[j]
        if quote:
            quote = "" if c == quote else quote
        elif c in "'\"":
            quote = c
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return text[i + 2 : j], j + 1
        j += 1
    return text[i + 2 :], len(text)


def _read_heredocs(text: str, i: int, tokens: list[_Token], pending: list[tuple[int, bool]]) -> int:
    """Read the bodies of the here-documents started on the line that just ended; each
    is kept on its `<<` token. Returns where the next line starts."""
    for at, strip in pending:
        after = tokens[at + 1] if at + 1 < len(tokens) else None
        delimiter = after.text if after is not None and not after.op else ""
        lines = []
        while i < len(text):
            end = text.find("\n", i)
            end = len(text) if end < 0 else end
            line = text[i:end]
            i = end + 1
            if (line.lstrip("\t") if strip else line) == delimiter:
                break
            lines.append(line)
        tokens[at] = _Token(True, tokens[at].text, "\n".join(lines))
    pending.clear()
    return i


class Simple(NamedTuple):
    words: list[str]
    redirects: list[tuple[str, str]]  # (operator, target) of each output redirection
    # a here-document's or here-string's text, or what an `echo`/`printf` of words
    # alone writes into the pipe to it
    stdin: str | None
    cwd: str


_SEPARATORS: Final = frozenset({";", "&&", "||", "|", "|&", "&", ";;", "(", ")"})
_RESERVED: Final = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{"})


def _simple_commands(tokens: list[_Token], cwd: str) -> Iterator[Simple]:
    """Each simple command: its words, the paths it redirects output to, the text it
    reads as standard input (a here-document or here-string), and where it runs (a
    `cd` moves the commands after it; a subshell's `cd` ends with the subshell)."""
    stack: list[str] = []
    words: list[str] = []
    redirects: list[tuple[str, str]] = []
    stdin: str | None = None
    piped: str | None = None  # what the command before a `|` writes, when known
    dirs = _Dirs(cwd)  # `cd -`, `pushd`/`popd`: the directories the shell remembers
    i = 0
    while True:
        token = tokens[i] if i < len(tokens) else _Token(True, ";")
        if (token.op and token.text in _SEPARATORS) or i >= len(tokens):
            while words and words[0] in _RESERVED:
                words = words[1:]
            if words or redirects:
                yield Simple(words, redirects, stdin if stdin is not None else piped, cwd)
                # A `cd` in a pipeline or in the background runs in a subshell, and
                # the command after `||` runs where a failed `cd` left it: not moved.
                if token.text not in ("|", "|&", "&", "||"):
                    cwd = dirs.after(words, cwd)
            piped = _printed(words) if token.text in ("|", "|&") and not redirects else None
            words, redirects, stdin = [], [], None
            if token.text == "(":
                stack.append(cwd)
            elif token.text == ")" and stack:
                cwd = stack.pop()
            if i >= len(tokens):
                return
            i += 1
            continue
        if not token.op:
            words.append(token.text)
            i += 1
            continue
        after = tokens[i + 1] if i + 1 < len(tokens) and not tokens[i + 1].op else None
        i += 1 if after is None else 2
        if after is None:  # `>(…)`: a process substitution, read as a subshell
            continue
        if token.text in _HEREDOCS:
            stdin = token.body
        elif token.text == "<<<":
            stdin = after.text
        elif token.text in _WRITE_REDIRECTS and not (
            token.text == ">&" and (after.text.isdigit() or after.text == "-")
        ):
            redirects.append((token.text, after.text))


def _printed(words: list[str]) -> str | None:
    """What ``echo WORD…`` or ``printf FORMAT WORD…`` writes, roughly (its words on
    lines), when no word is computed; None for any other command."""
    if not words or words[0] not in ("echo", "printf") or any("$(…)" in w for w in words):
        return None
    args = words[1:]
    if words[0] == "echo":
        while args and args[0] in ("-n", "-e", "-E", "-ne", "-en"):
            args = args[1:]
        return " ".join(args)
    return "\n".join(args[1:]) if len(args) > 1 else (args[0] if args else "")


class _Dirs:
    """The directory before the last ``cd`` (``cd -``, ``$OLDPWD``) and ``pushd``'s."""

    def __init__(self, start: str) -> None:
        self.start = start
        self.previous: str | None = None
        self.pushed: list[str] = []

    def after(self, words: list[str], cwd: str) -> str:
        if not words or words[0] not in ("cd", "pushd", "popd"):
            return cwd
        args = [w for w in words[1:] if w not in ("-P", "-L", "-e", "-@", "--")]
        if words[0] == "popd":
            if args or not self.pushed:
                return cwd
            self.previous, back = cwd, self.pushed.pop()
            return back
        if not args:
            to = "~"
        elif len(args) > 1:
            return cwd
        elif args[0] in ("-", "~-", "$OLDPWD", "${OLDPWD}"):
            if self.previous is None:
                return cwd  # the shell's own previous directory: not known
            to = self.previous
        elif "$" in args[0] or "`" in args[0]:  # computed (`cd "$(git rev-parse …)"`):
            to = self.start  # judged where the command started, the project as a rule
        else:
            to = posixpath.join(cwd, args[0]) if cwd else args[0]
        if words[0] == "pushd":
            self.pushed.append(cwd)
        self.previous = cwd
        return to


def expand(word: str) -> list[str]:
    """A word as the paths it names: ``$PWD/`` dropped (the directory it runs in),
    braces expanded (``tests/{a,b}.json``); other expansions are left as written."""
    for prefix in ("$PWD/", "${PWD}/"):
        if word.startswith(prefix):
            word = word[len(prefix) :] or "."
    return _braces(word)


_BRACES: Final = r"\{([^{}]*,[^{}]*)\}"


def _braces(word: str, budget: int = 64) -> list[str]:
    found = re.search(_BRACES, word) if "{" in word and "," in word else None
    if found is None or budget <= 0:
        return [word]
    head, tail = word[: found.start()], word[found.end() :]
    out: list[str] = []
    for part in found.group(1).split(","):
        out.extend(_braces(head + part + tail, budget // 2))
    return out
