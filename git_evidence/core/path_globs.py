"""Paths as every checkout spells them, and the policy's path globs over them:
``fold_path`` (backslashes, invisible code points, Unicode normalization, case, the
trailing dots and spaces Windows drops), a glob's validation (``glob_problem``) and
canonical form, its regex over folded paths, and the evidence roots a glob implies
(``root_patterns``). Pure.

Apart from paths.py, which classifies with them: the policy file's validation needs
the globs and the folding, not the classifier; globs.py is the syntax alone (ref globs
share it, unfolded)."""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

from git_evidence.core.globs import ANY, components_regex

# Unicode Default_Ignorable_Code_Point (DerivedCoreProperties.txt): characters that
# render as nothing, so `fix\u200ctures` reads as `fixtures` to a person and to some
# tools. Compiled (through re's cache) by the first non-ASCII path: most hooks see none.
_IGNORABLE = (
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e0fff]"
)
_TRAILING = re.compile(r"[. ]+(?=/|\Z)")


def fold_path(path: str) -> str:
    """The spelling every checkout agrees on: backslashes as separators, no
    default-ignorable code points, NFC, case-folded, and no trailing dots or spaces on
    any component (Windows drops them)."""
    if "\\" in path:  # a Windows checkout reads a backslash as a separator
        path = path.replace("\\", "/")
    if path.isascii():
        lower = path.lower()
        # (a dot or space can only trail a component that a slash or the end follows)
        if "./" in lower or " /" in lower or lower.endswith((".", " ")):
            return _TRAILING.sub("", lower)
        return lower
    text = re.sub(_IGNORABLE, "", path)
    text = unicodedata.normalize("NFC", text).casefold()
    text = unicodedata.normalize("NFC", text)
    return _TRAILING.sub("", text)


def split_negation(glob: str) -> tuple[bool, str]:
    """``!tests/x/**`` → (True, ``tests/x/**``)."""
    return (True, glob[1:]) if glob.startswith("!") else (False, glob)


def canonical_glob(glob: str) -> str:
    """``./a//b`` → ``a/b``; a leading ``/`` (anchor) and a leading ``!`` are kept."""
    negated, glob = split_negation(glob)
    anchored = glob.startswith("/")
    parts = [p for p in glob.split("/") if p not in ("", ".")]
    text = "/".join(parts)
    if glob.endswith("/") and text:
        text += "/"
    return ("!" if negated else "") + (("/" + text) if anchored else text)


def glob_problem(glob: str, *, negation: bool = False) -> str | None:
    """Why a policy glob is unacceptable, or None. It is judged as it will be used:
    folded, then compiled (``[Z-a]`` folds to the empty range ``[z-a]``)."""
    negated, body = split_negation(glob)
    if negated and not negation:
        return "negation (`!`) is not supported here"
    if not body.strip("/ "):
        return "an empty glob matches nothing"
    if ".." in body.split("/"):
        return "a glob may not contain `..`"
    if "\\" in body:
        return "backslashes are not supported in globs"
    parts = glob_components(canonical_glob(body))
    if any(part in ("", ".", "..") for part in parts):
        return f"a component folds to nothing, `.` or `..` ({'/'.join(parts)!r})"
    try:
        re.compile(glob_regex(canonical_glob(body)))
    except (re.error, ValueError) as exc:
        return f"not a valid glob once folded ({'/'.join(parts)!r}): {exc}"
    return None


def glob_components(glob: str) -> tuple[str, ...]:
    """A glob as components over folded paths, anchored at the root: a glob with no
    slash (besides a trailing one) matches at any depth, so it gets a ``**`` in
    front, as in gitignore."""
    text = glob.rstrip("/")
    text = fold_path(text) if text else text
    if "/" not in text:
        return ("**", text)
    return tuple(text.lstrip("/").split("/"))


def glob_regex(glob: str) -> str:
    """Translate a gitignore-style glob into a regex over folded paths.

    No slash (besides a trailing one): matches the base name at any depth. Otherwise
    anchored at the root. ``**`` spans whole components. A match on a directory covers
    everything under it, as in gitignore. Any character but ``/`` matches, a newline
    included.
    """
    parts = glob_components(glob)
    body = components_regex(parts)
    return body if parts[-1] == "**" else f"{body}(?:/{ANY})?"


class RootPattern(NamedTuple):
    regex: str
    reason: str  # "above evidence root tests/fixtures/"


def root_patterns(glob: str) -> list[RootPattern]:
    """The paths at or above an evidence root of ``glob``, component by component with
    its wildcards honoured: every proper prefix of the glob that does not end inside a
    ``**`` (a prefix ending in ``**`` would make every directory under it an ancestor
    of some possible root). ``crates/*/resources/**`` → ``crates``, ``crates/*``
    (above) and ``crates/*/resources`` (at); ``**/__snapshots__/**`` → every
    ``__snapshots__`` (at); ``src/**/testdata/**`` → ``src`` (above) and every
    ``src/…/testdata`` (at). The repository root, above every root, is the caller's."""
    parts = glob_components(glob)
    directory = parts[-1] == "**"
    root = "/".join(parts[:-1]) + "/" if directory else "/".join(parts)
    out = []
    for k in range(1, len(parts)):
        if parts[k - 1] == "**":
            continue
        where = "at" if directory and k == len(parts) - 1 else "above"
        out.append(RootPattern(components_regex(parts[:k]), f"{where} evidence root {root}"))
    return out
