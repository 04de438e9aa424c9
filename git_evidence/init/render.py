"""A ``Draft`` as a commented ``.git-evidence.toml``: every glob under a comment that
says why it was chosen, how many files it was chosen for and one of them. Every class
is written, an empty one as ``[]``: a class left out would take the built-in defaults.
Pure: a draft in, text out; the command parses the text back with the policy's own
parser before it writes it."""

from __future__ import annotations

import textwrap

from git_evidence.core import paths as classes
from git_evidence.init.draft import Draft
from git_evidence.init.roots import Entry
from git_evidence.policy.render import value

WIDTH = 80
POLICY_FILE = ".git-evidence.toml"

_CLASS_INTRO = {
    classes.PRODUCT: "the code the product is built from",
    classes.FIXTURE: "test data and goldens: only evidence writers change them",
    classes.ORACLE: "snapshots, properties and oracles: evidence too",
    classes.LEDGER: "the freeze ledger and lists of flaky tests (append-only)",
    classes.POLICY: "always added: this file, .gitattributes, .gitmodules, .lfsconfig",
    classes.TEST: "test code: a change to it is held for a reviewer ([rules])",
    classes.NEUTRAL: "documentation: never evidence, never held",
}


def comment(text: str, indent: str = "") -> list[str]:
    return textwrap.wrap(
        text,
        WIDTH,
        initial_indent=indent + "# ",
        subsequent_indent=indent + "#   ",
        break_on_hyphens=False,
        break_long_words=False,
    )


def _entry_lines(entry: Entry) -> list[str]:
    files = "1 file" if entry.files == 1 else f"{entry.files} files"
    lines = comment(f"{entry.why}: {files}, e.g. {entry.example}", "  ")
    return [*lines, f"  {value(entry.glob)},"]


def draft_toml(draft: Draft, files: int, tip: str) -> str:
    """The draft as a policy file for a tree of ``files`` files at ``tip``."""
    branch = draft.base.removeprefix("refs/heads/")
    lines = [
        *comment(
            f"A draft policy for git evidence, written by `git evidence init` from the "
            f"{files} files of {branch} at {tip[:12]}. Every glob says why it was "
            "chosen; read them, change what is wrong, and try the draft before it is in "
            f"force: `git evidence check --policy {POLICY_FILE} A..B`, `git evidence "
            f"classify --policy {POLICY_FILE} PATH`. Precedence: policy, freeze_ledger, "
            "oracle, fixture, product, test, neutral; a path no glob matches is `other`."
        ),
        "",
        "[paths]",
    ]
    if draft.runner_config:
        shown = ", ".join(draft.runner_config[:3])
        lines += comment(
            f"Runner configuration ({len(draft.runner_config)} files here, e.g. {shown}) "
            "is class `other` wherever it is: a change to it is held for a reviewer."
        )
    for klass in classes.PRECEDENCE:
        entries = draft.paths.get(klass, [])
        lines += comment(f"{klass}: {_CLASS_INTRO[klass]}")
        if not entries:
            lines.append(f"{klass} = []  # none found")
            continue
        lines.append(f"{klass} = [")
        for entry in entries:
            lines += _entry_lines(entry)
        lines.append("]")
    lines += [
        "",
        "[rules]",
        *comment("What a push of each kind of change gets: allow, hold or reject."),
        'other_path = "hold"  # a path no glob classifies',
        'added_test = "hold"  # a new test file',
        'test_edit = "hold"  # an edit of an existing test',
        f"protected = [{value(draft.base)}]  # the default branch",
        f"base = {value(draft.base)}  # where the policy in force is read",
        "",
        "[identities]",
        *comment(
            "Who may push what, by pusher name: until a name is listed, nobody may "
            "change evidence on a protected branch."
        ),
        "evidence_writers = []",
        "ledger_writers = []",
        "lock_writers = []",
        "",
        "[lock]",
        *comment("The test-data folders found: the lock pins their bytes."),
        "roots = [",
        *(f"  {value(root)}," for root in draft.lock_roots),
        "]",
        "",
        "[ledger]",
        *comment("The freeze ledger git evidence keeps (append-only)."),
        f"path = {value(draft.test_root + '/freeze.jsonl')}",
        "",
        "[labels]",
        f"path = {value(draft.test_root + '/evidence-labels.tsv')}",
        f"quota_path = {value(draft.test_root + '/retry-quota.jsonl')}",
    ]
    return "\n".join(lines) + "\n"
