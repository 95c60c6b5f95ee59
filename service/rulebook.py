"""The games' rule books for players: Markdown files shipped in the package.

They are written once, in `docs/rules/` of the repository, linked as `service/rulebooks` and
shipped as the resource package `service.rulebooks` (pyproject.toml), so a clone, an installed
wheel and the web client all read the same text.
"""

from __future__ import annotations

from importlib.resources import files

RULEBOOKS = "service.rulebooks"


def rulebook(game_id: str) -> str | None:
    """The rule book of `game_id` as Markdown, or None if the game has none."""
    if not game_id.isidentifier():  # an id is a plain name; never a path
        return None
    book = files(RULEBOOKS) / f"{game_id}.md"
    return book.read_text(encoding="utf-8") if book.is_file() else None
