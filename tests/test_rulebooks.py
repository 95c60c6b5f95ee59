"""The rule books: shipped in the package, served by the API, linked from the README."""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

import pytest
from flask.testing import FlaskClient

from domain.registry import default_registry
from service.rulebook import RULEBOOKS, rulebook

GAMES = default_registry().ids()
TITLES = {game.info.id: game.info.title for game in default_registry()}
SECTIONS = (
    "Components",
    "Setup",
    "A turn",
    "Special cards",
    "Options and variants",
    "End and scoring",
    "What the service decides",
    "Worked examples",
)
"""The sections every rule book has, in this order."""
README = Path(__file__).resolve().parent.parent / "README.md"


@pytest.mark.parametrize("game", GAMES)
def test_each_game_ships_its_rule_book_as_package_data(game: str) -> None:
    book = files(RULEBOOKS) / f"{game}.md"
    assert book.is_file(), f"{game}.md is not in the package"
    assert rulebook(game) == book.read_text(encoding="utf-8")


@pytest.mark.parametrize("game", GAMES)
def test_each_rule_book_has_every_section_for_players(game: str) -> None:
    text = rulebook(game)
    assert text is not None
    assert text.startswith(f"# {TITLES[game]}\n")
    headings = re.findall(r"^## (.+)$", text, flags=re.MULTILINE)
    assert headings == list(SECTIONS)
    assert options_named(game) <= set(re.findall(r"`(\w+)`", text)), "every option explained"
    assert '{"type"' in text or '{"card"' in text, "worked examples name the API's moves"


def options_named(game: str) -> set[str]:
    return {option.name for option in default_registry()[game].info.options}


@pytest.mark.parametrize("name", ["chess", "../pyproject", "__init__", "", "Pig10"])
def test_no_rule_book_for_anything_else(name: str) -> None:
    assert rulebook(name) is None


@pytest.mark.parametrize("game", GAMES)
def test_the_api_serves_each_rule_book_as_markdown(client: FlaskClient, game: str) -> None:
    response = client.get(f"/v1/games/{game}/rules")
    assert response.status_code == 200
    assert response.mimetype == "text/markdown"
    assert response.mimetype_params.get("charset") == "utf-8"
    assert response.get_data(as_text=True) == rulebook(game)


def test_an_unknown_game_has_no_rules(client: FlaskClient) -> None:
    response = client.get("/v1/games/chess/rules")
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"
    assert response.get_json()["type"].endswith("/unknown-game")


def test_the_readme_links_every_rule_book_in_the_repository() -> None:
    text = README.read_text(encoding="utf-8")
    for game in GAMES:
        assert f"(docs/rules/{game}.md)" in text
    assert "shared/rules" not in text, "no link may point outside the repository"


def test_the_client_renders_rule_books_without_parsing_html() -> None:
    # The How to play page builds nodes and sets text; a rule book can never carry markup.
    static = Path(__file__).resolve().parent.parent / "service" / "static"
    for name in ("markdown.js", "rules.js"):
        source = (static / name).read_text(encoding="utf-8")
        for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
            assert sink not in source, f"{name} uses {sink}"
