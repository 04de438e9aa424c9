"""The hooks git evidence installs, as installers and inspectors see them: the
marker that says a hook file is ours, its script, the lines that chain it into a
hook of one's own, and the server settings the gate relies on."""

from __future__ import annotations

import shlex
import sys

MARKER = "# installed by git-evidence"
CLIENT_HOOKS = ("pre-commit", "pre-push")
SERVER_HOOKS = ("pre-receive", "post-receive")
NOTES_REFSPEC = "+refs/notes/evidence:refs/notes/evidence"


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
