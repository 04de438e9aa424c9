"""The README is one screen a newcomer reads whole; the rest is in docs/, found by name
from its index (docs/README.md), the commands in docs/cli.md, and every link between
them leads somewhere."""

from __future__ import annotations

import re
from pathlib import Path

from helpers.repos import PROJECT

from git_evidence.cli.arguments import build_parser
from git_evidence.cli.options import subcommands

README = PROJECT / "README.md"
INDEX = PROJECT / "docs" / "README.md"
CLI = PROJECT / "docs" / "cli.md"
SCREEN = 60  # lines: one screen of a terminal, or of a forge's repository page
LINK = re.compile(r"\]\(([^)#\s]+)(#[^)\s]*)?\)")


def command_names() -> set[str]:
    names = set()
    for name, _help, child in subcommands(build_parser()):
        verbs = list(subcommands(child))
        names |= {f"{name} {verb}" for verb, _h, _c in verbs} if verbs else {name}
    return names


def test_the_readme_is_one_screenful() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= SCREEN


def test_the_readme_leads_to_the_index_and_the_commands() -> None:
    text = README.read_text(encoding="utf-8")
    for target in ("docs/README.md", "docs/getting-started.md", "docs/cli.md#commands"):
        assert f"]({target})" in text, target


def test_the_commands_table_names_every_command() -> None:
    text = CLI.read_text(encoding="utf-8")
    table = text.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `git evidence ([a-z-]+(?: [a-z]+)?)", table, re.M))
    listed = {name if name in command_names() else name.split()[0] for name in listed}
    assert listed == command_names()
    assert {"judge", "show-verdict"} <= listed


def test_the_readme_says_each_sentence_once() -> None:
    sentences = [
        " ".join(s.split())
        for s in re.split(r"(?<=[.!?])\s", README.read_text(encoding="utf-8"))
        if len(s.split()) > 5
    ]
    assert len(sentences) == len(set(sentences))


def pages() -> list[Path]:
    return [README, *sorted((PROJECT / "docs").rglob("*.md"))]


def test_every_link_of_the_readme_and_the_docs_leads_somewhere() -> None:
    for page in pages():
        for target, _anchor in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            resolved = (page.parent / target).resolve()
            assert resolved.is_relative_to(PROJECT), f"{page.relative_to(PROJECT)}: {target}"
            assert resolved.exists(), f"{page.relative_to(PROJECT)}: {target}"


def test_every_docs_page_is_listed_in_the_index() -> None:
    text = INDEX.read_text(encoding="utf-8")
    for page in sorted((PROJECT / "docs").glob("*.md")):
        if page != INDEX:
            assert f"]({page.name})" in text, page.name
