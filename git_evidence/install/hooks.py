"""The hooks git evidence installs, as installers and inspectors see them: the
marker that says a hook file is ours, its script, the lines that chain it into a
hook of one's own, and the server settings the gate relies on."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Iterable

from git_evidence.install.handoff import QUIET_DIR

MARKER = "# installed by git-evidence"
CLIENT_HOOKS = ("pre-commit", "pre-push")
SERVER_HOOKS = ("pre-receive", "post-receive")
# Earlier installs added this exact refspec; a fetch fails with it while the server has
# no lock yet, so `install` replaces it with the globbed form.
OLD_NOTES_REFSPEC = "+refs/notes/evidence:refs/notes/evidence"


def notes_refspecs(refs: Iterable[str]) -> list[str]:
    """The fetch refspecs that bring ``refs`` (the locks' and the verdicts' notes).

    Globbed (``+refs/notes/evidence*:refs/notes/evidence*``): a glob that matches no
    remote ref fetches nothing, where a plain refspec fails the whole fetch until the
    server has its first note. A ref already matched by an earlier glob adds nothing
    (the defaults, ``refs/notes/evidence`` and ``refs/notes/evidence-verdicts``, take one).
    """
    prefixes: list[str] = []
    for ref in refs:
        if not any(ref.startswith(prefix) for prefix in prefixes):
            prefixes.append(ref)
    return [f"+{prefix}*:{prefix}*" for prefix in prefixes]


def package_root() -> str:
    """The directory this package was imported from: what the hooks put first on the
    path, so that they run the code that installed them."""
    here = os.path.dirname(os.path.abspath(__file__))  # .../git_evidence/install
    return os.path.dirname(os.path.dirname(here))


def import_roots() -> list[str]:
    """The directories a hook imports from: the package's, and on Python 3.10 the one
    holding its TOML reader (``tomli``), which an isolated interpreter would not find
    in a user's site directory."""
    roots = [package_root()]
    if sys.version_info < (3, 11):  # pragma: no cover
        import importlib.util

        spec = importlib.util.find_spec("tomli")
        if spec is not None and spec.origin:
            roots.append(os.path.dirname(os.path.dirname(spec.origin)))
    return list(dict.fromkeys(roots))


def hook_command(hook: str) -> str:
    """The shell words that run ``hook`` with the interpreter and package of this
    install. ``-I`` (isolated) keeps the repository out of the hook: the working tree,
    the hook's directory on the server and ``PYTHON*`` variables put nothing on the
    path, so a ``git_evidence/`` folder committed at the top of a repository (or a
    ``PYTHONPATH`` in the environment) cannot replace the gate. ``-c`` instead of
    ``-m`` spares the module runner."""
    # The path and the hook's name are arguments, not code: any path quotes safely.
    code = (
        "import os, sys; sys.path[:0] = sys.argv[1].split(os.pathsep); "
        "from git_evidence.cli.main import main; "
        "raise SystemExit(main(sys.argv[2:]))"
    )
    words = [sys.executable, "-I", "-c", code, os.pathsep.join(import_roots()), hook]
    return " ".join(shlex.quote(word) for word in words)


# post-receive: when pre-receive left word that this very push (same receive-pack,
# the same ref lines, byte for byte) needs no pin, stop before starting Python
# (handoff.py). Shell built-ins only; the word is used once.
QUIET_CHECK = """quiet="${GIT_DIR:-.}/@QUIET_DIR@/$PPID"
if [ -s "$quiet" ]; then
  said=
  while IFS= read -r line; do said="$said$line
"; done < "$quiet"
  : > "$quiet"
  input=
  while IFS= read -r line; do input="$input$line
"; done
  input="$input$line"
  if [ "$input" = "$said" ]; then
    exit 0
  fi
  printf '%s' "$input" | @COMMAND@ "$@"
  exit $?
fi
"""


def hook_script(hook: str) -> str:
    python = shlex.quote(sys.executable)
    folder = os.path.join(package_root(), "git_evidence")
    package = shlex.quote(folder)
    quiet = ""
    if hook == "post-receive":
        quiet = QUIET_CHECK.replace("@QUIET_DIR@", QUIET_DIR)
        quiet = quiet.replace("@COMMAND@", hook_command(hook))
    return f"""#!/bin/sh
{MARKER}: `git evidence install` rewrites this file; do not edit it.
# The gate fails closed: if the interpreter or the package is gone, the hook refuses.
if [ ! -x {python} ]; then
  echo "git-evidence: {sys.executable} is missing; refusing. Reinstall: git evidence install" >&2
  exit 2
fi
if [ ! -d {package} ]; then
  echo "git-evidence: {folder} is missing; refusing. Reinstall: git evidence install" >&2
  exit 2
fi
{quiet}exec {hook_command(hook)} "$@"
"""


# Server settings the gate relies on but does not change: printed when not set.
RECOMMENDED = {
    "receive.fsckObjects": "reject malformed objects before any hook sees them",
    "receive.denyNonFastForwards": "git's own refusal of rewinds, beside non-fast-forward",
    "receive.denyDeletes": "git's own refusal of ref deletions, beside protected-delete",
}


def chain_lines(hook: str) -> str:
    """What to add to an existing hook so that it runs the gate too."""
    command = hook_command(hook)
    if hook in ("pre-receive", "post-receive", "pre-push"):
        return (
            f"input=$(cat)  # at the top: the ref lines can be read only once\n"
            f'printf \'%s\\n\' "$input" | {command} "$@" || '
            f'exit $?\n# ...then feed "$input" to the rest of the hook'
        )
    return f'{command} "$@" || exit $?'
