"""Every link between the README and the Markdown files under docs/ leads somewhere: the file
exists, and a `#fragment` names a heading of it (as GitHub anchors headings) or an explicit
`<a id="...">` in it."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
EXPLICIT = re.compile(r'<a id="([^"]+)"></a>')


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped but hyphens and
    underscores, each space a hyphen."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


@cache
def prose(document: Path) -> str:
    """The document without its fenced code, where `#` starts a comment, not a heading."""
    return FENCE.sub("", document.read_text(encoding="utf-8"))


@cache
def anchors(document: Path) -> set[str]:
    text = prose(document)
    headings = {anchor(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}
    return headings | set(EXPLICIT.findall(text))


def links(document: Path) -> list[str]:
    return LINK.findall(prose(document))


def test_anchors_follow_githubs_rules() -> None:
    assert anchor("2026-11-28 (noon): a fast machine; granian tried") == (
        "2026-11-28-noon-a-fast-machine-granian-tried"
    )
    assert anchor("Roll'n Bump's planner and hard") == "rolln-bumps-planner-and-hard"
    assert anchor("The real client loop (`bench/load.py`), 2026-11-24") == (
        "the-real-client-loop-benchloadpy-2026-11-24"
    )


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_link_leads_to_a_file_and_heading_that_exist(document: Path) -> None:
    broken = []
    for target in links(document):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto: lead outside the repository
            continue
        path, _, fragment = target.partition("#")
        linked = (document.parent / path).resolve() if path else document
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif fragment and (linked.suffix != ".md" or fragment not in anchors(linked)):
            broken.append(f"{target}: no such heading")
    assert not broken, f"{document.relative_to(ROOT)}: {broken}"


def test_the_checks_see_the_links_that_matter() -> None:
    # The README links its rule books and its sections: a pattern that found none would pass
    # every document above without looking at anything.
    found = links(ROOT / "README.md")
    assert "docs/rules/wobble.md" in found
    assert "#performance" in found
