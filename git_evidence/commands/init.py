"""``git evidence init [--commits N] [--dry-run] [--force]``: a draft policy from the
repository's own layout (``init/survey.py``), written to ``.git-evidence.toml`` at the
top of the work tree, and what it classifies and would have done to the last N
commits of the default branch, as ``check`` judges them."""

from __future__ import annotations

import argparse
import json
import os
import textwrap

from git_evidence.core.errors import UsageError
from git_evidence.init.render import POLICY_FILE
from git_evidence.init.survey import Impact, Survey, range_text, survey
from git_evidence.plumbing.git import Git

WIDTH = 80


def run(args: argparse.Namespace) -> int:
    git = Git()
    target = None
    if not args.dry_run:
        top = git.work_tree(
            "writing the draft", fix="run `git evidence init --dry-run` to print it"
        )
        target = os.path.join(top, POLICY_FILE)
        if os.path.lexists(target) and not args.force:
            raise UsageError(
                f"{POLICY_FILE} exists already: init does not overwrite a policy",
                fix="compare with `git evidence init --dry-run`, or overwrite with --force",
            )
    found = survey(git, args.commits)
    if target is not None:
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(found.text)
    if args.format == "json":
        print(json.dumps(_doc(found, args.commits, target is not None), indent=1))
        return 0
    if target is None:
        print(found.text)
    print("\n".join(_summary(found, args.commits, written=target is not None)))
    return 0


def check_command(impact: Impact) -> str | None:
    """The ``check`` that gives the same figures (None: the whole history, which a
    range cannot name)."""
    if impact.start is None:
        return None
    return f"git evidence check --policy {POLICY_FILE} {range_text(impact.start, impact.tip)}"


def _summary(found: Survey, commits: int, *, written: bool) -> list[str]:
    branch = found.base.removeprefix("refs/heads/")
    where = f"{found.files} files of {branch} at {found.tip[:12]}"
    lines = [
        f"wrote {POLICY_FILE}: a draft from the {where}"
        if written
        else f"a draft from the {where} (--dry-run: not written)",
        "",
        "what the draft classifies:",
    ]
    for klass, (count, examples) in found.classes.items():
        lines.append(f"  {klass:<14}{count:>7}")
        lines += [f"      e.g. {path}" for path in examples]
    impact = found.impact
    span = range_text(impact.start, impact.tip)
    last = f"the last {commits} commits" if impact.start else "the whole history"
    lines += [
        "",
        f"{last} of {branch} ({span}: {impact.commits} commits with what",
        "their merges brought), judged as `check` judges them under the draft:",
        f"  commit by commit: allowed {impact.allowed}, held {impact.held}, "
        f"refused {impact.refused}",
    ]
    for word, rules in (("held by", impact.held_by), ("refused by", impact.refused_by)):
        if rules:
            listed = ", ".join(f"{rule} {n}" for rule, n in rules.items())
            lines += _wrapped(f"{word}: {listed}")
    if impact.range_rules:
        lines.append(f"  the range as a whole: {impact.decision}")
        for rule, (decision, paths) in impact.range_rules.items():
            named = f", {paths} path{'s' if paths != 1 else ''}" if paths else ""
            lines.append(f"    {rule} ({decision}{named})")
    command = check_command(impact)
    if command:
        then = "the same figures" if written else f"once {POLICY_FILE} is written"
        lines += ["", f"{then}, commit by commit:", f"  {command}"]
    lines += [
        "",
        "next: read the draft, name the evidence writers in [identities], commit it",
        "and have an evidence writer push it to the default branch.",
    ]
    return lines


def _doc(found: Survey, commits: int, written: bool) -> dict[str, object]:
    impact = found.impact
    return {
        "written": POLICY_FILE if written else None,
        "base": found.base,
        "tip": found.tip,
        "files": found.files,
        "classes": {k: {"count": c, "examples": e} for k, (c, e) in found.classes.items()},
        "history": {
            "asked": commits,
            "start": impact.start,
            "tip": impact.tip,
            "commits": impact.commits,
            "allowed": impact.allowed,
            "held": impact.held,
            "refused": impact.refused,
            "held_by": impact.held_by,
            "refused_by": impact.refused_by,
            "range": {r: {"decision": d, "paths": n} for r, (d, n) in impact.range_rules.items()},
            "decision": impact.decision,
            "check": check_command(impact),
        },
        "draft": found.text,
    }


def _wrapped(text: str) -> list[str]:
    return textwrap.wrap(
        text, WIDTH, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False
    )
