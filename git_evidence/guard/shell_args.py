"""The words of one shell command as options and operands: what a wrapper such as
``sudo``, ``env`` or ``timeout`` leaves of it (and the directory ``env -C`` or
``sudo -D`` moves it to), its operands, its options' values. Pure: words in, words
out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

# Commands that run the command after them: their own options are skipped (those that
# take a value, with it).
WRAPPERS: Final[dict[str, frozenset[str]]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "--chdir"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir", "--split-string"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nohup": frozenset(),
    "time": frozenset({"-f", "-o"}),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p", "-t"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "xargs": frozenset({"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file"}),
    "busybox": frozenset(),
    "chronic": frozenset(),
    "unbuffer": frozenset(),
}
VALUE_FIRST: Final = frozenset({"timeout"})  # `timeout 10 rm …`: a value before the command


def after_wrapper(name: str, args: list[str]) -> list[str]:
    """The command a wrapper (``WRAPPERS``) runs: its words after the wrapper's own."""
    takes_value = WRAPPERS[name]
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            i += 1
            break
        if name == "env" and "=" in word and not word.startswith("-"):
            i += 1
        elif word.startswith("-") and len(word) > 1:
            i += 2 if word in takes_value else 1
        else:
            break
    if name in VALUE_FIRST and i < len(args):
        i += 1
    return args[i:]


# Wrappers whose option runs the command in another directory: ``env -C DIR``,
# ``env --chdir=DIR``, ``sudo -D DIR``, ``sudo --chdir=DIR``.
_CHDIR: Final[dict[str, tuple[str, str]]] = {"env": ("-C", "--chdir"), "sudo": ("-D", "--chdir")}


def wrapper_cwd(name: str, args: Sequence[str]) -> str | None:
    """The directory a wrapper runs its command in, when an option of its names one."""
    if name not in _CHDIR:
        return None
    short, long = _CHDIR[name]
    found = None
    for i, word in enumerate(args):
        if word == "--" or not word.startswith("-"):
            break
        if word in (short, long) and i + 1 < len(args):
            found = args[i + 1]
        elif word.startswith(long + "="):
            found = word[len(long) + 1 :]
        elif word.startswith(short) and len(word) > 2 and not word.startswith("--"):
            found = word[2:]
    return found


def non_options(args: Sequence[str], takes_value: frozenset[str]) -> list[str]:
    """The arguments that are not options (everything after ``--``), skipping the
    value of each option in ``takes_value``."""
    out: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word == "--":
            return out + list(args[i + 1 :])
        if word.startswith("-") and len(word) > 1:
            i += 2 if word in takes_value else 1
            continue
        out.append(word)
        i += 1
    return out


def option_values(args: Sequence[str], names: Sequence[str]) -> list[str]:
    """Values of ``-t DIR``, ``--target-directory=DIR`` style options."""
    out = []
    for i, word in enumerate(args):
        for name in names:
            if word == name and i + 1 < len(args):
                out.append(args[i + 1])
            elif name.startswith("--") and word.startswith(name + "="):
                out.append(word[len(name) + 1 :])
    return out


def clustered_values(args: Sequence[str], letters: frozenset[str]) -> list[str]:
    """Values of short options ``letters`` given in a word of their own or at the end
    of a cluster of short flags: ``-oF``, ``-sSLo F``, ``-qOF``. The first such letter
    of a word takes the rest of the word as its value, or the next word when it ends
    the word."""
    out = []
    for i, word in enumerate(args):
        if word == "--":
            break
        if len(word) < 2 or word[0] != "-" or word[1] == "-":
            continue
        at = next((j for j, c in enumerate(word) if j and c in letters), None)
        if at is None or (at == 1 and len(word) == 2):
            continue  # none, or the plain option: ``option_values`` reads it
        if at + 1 < len(word):
            out.append(word[at + 1 :])
        elif i + 1 < len(args):
            out.append(args[i + 1])
    return out


def target_directory(args: Sequence[str]) -> list[str]:
    """``-t DIR``, ``--target-directory=DIR``, ``-tDIR`` and ``-ft DIR`` (``-t`` last
    in a cluster of flags): where ``cp``, ``mv``, ``ln`` and ``install`` write."""
    return option_values(args, ("-t", "--target-directory")) + clustered_values(
        args, frozenset("t")
    )


def split_string(args: Sequence[str]) -> list[str]:
    """The words of ``env -S STRING`` (``--split-string=STRING``, ``-SSTRING``): env
    splits the string into the command it runs, before the words after it."""
    import shlex

    found: list[str] = []
    for i, word in enumerate(args):
        if word == "--" or not word.startswith("-"):
            break
        if word in ("-S", "--split-string") and i + 1 < len(args):
            found.append(args[i + 1])
        elif word.startswith("--split-string="):
            found.append(word[len("--split-string=") :])
        elif word.startswith("-S") and len(word) > 2:
            found.append(word[2:])
    words: list[str] = []
    for text in found:
        try:
            words += shlex.split(text)
        except ValueError:
            words += text.split()
    return words
