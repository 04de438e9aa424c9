"""The hooks git evidence installs, as installers and inspectors see them: the
marker that says a hook file is ours, its script, the lines that chain it into a
hook of one's own, and the server settings the gate relies on."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Iterable

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


def hook_script(hook: str) -> str:
    python = shlex.quote(sys.executable)
    return f"""#!/bin/sh
{MARKER}: `git evidence install` rewrites this file; do not edit it.
# The gate fails closed: if the interpreter is gone, the hook refuses.
if [ ! -x {python} ]; then
  echo "git-evidence: {sys.executable} is missing; refusing. Reinstall: git evidence install" >&2
  exit 2
fi
exec {python} -m git_evidence {hook} "$@"
"""


# Server settings the gate relies on but does not change: printed when not set.
RECOMMENDED = {
    "receive.fsckObjects": "reject malformed objects before any hook sees them",
    "receive.denyNonFastForwards": "git's own refusal of rewinds, beside non-fast-forward",
    "receive.denyDeletes": "git's own refusal of ref deletions, beside protected-delete",
}


def chain_lines(hook: str) -> str:
    """What to add to an existing hook so that it runs the gate too."""
    python = shlex.quote(sys.executable)
    if hook in ("pre-receive", "post-receive", "pre-push"):
        return (
            f"input=$(cat)  # at the top: the ref lines can be read only once\n"
            f'printf \'%s\\n\' "$input" | {python} -m git_evidence {hook} "$@" || '
            f'exit $?\n# ...then feed "$input" to the rest of the hook'
        )
    return f'{python} -m git_evidence {hook} "$@" || exit $?'
