"""The web client's files: served from the app at `/`, complete, and self-contained."""

from __future__ import annotations

import re
from pathlib import Path

import fakeredis
import yaml
from flask.testing import FlaskClient

from bootstrap import web_app
from domain.registry import default_registry
from service.client import OPENAPI
from service.config import Config
from tests.sixth_game import with_sixth_game

STATIC = Path(__file__).resolve().parents[1] / "service" / "static"
IMPORT = re.compile(r"""^\s*(?:import|export)\b[^;]*?\bfrom\s+["']([^"']+)["']""", re.MULTILINE)
URL = re.compile(r"""https?://""")
REGISTRY = with_sixth_game()


def test_the_page_is_served_at_the_root_with_a_strict_content_policy(client: FlaskClient) -> None:
    response = client.get("/", buffered=True)
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    assert "<main" in page
    assert "<title>Spieltisch</title>" in page
    policy = response.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self'" in policy


def test_every_file_the_page_links_is_served(client: FlaskClient) -> None:
    page = client.get("/", buffered=True).get_data(as_text=True)
    linked = re.findall(r'(?:href|src)="(/static/[^"]+)"', page)
    assert "/static/app.js" in linked
    for path in linked:
        response = client.get(path, buffered=True)
        assert response.status_code == 200, path
        expected = "text/css" if path.endswith(".css") else "text/javascript"
        assert response.mimetype == expected, path


def test_every_module_import_resolves_to_a_file() -> None:
    modules = sorted(STATIC.rglob("*.js"))
    assert len(modules) >= 10
    for module in modules:
        for target in IMPORT.findall(module.read_text()):
            assert target.startswith("./") or target.startswith("../"), (module, target)
            assert (module.parent / target).resolve().is_file(), (module, target)


def test_nothing_is_loaded_from_the_internet() -> None:
    for path in STATIC.rglob("*"):
        if path.suffix in {".html", ".js", ".css"}:
            text = path.read_text()
            # The only absolute URL allowed is the SVG namespace, an identifier never fetched.
            assert URL.findall(text.replace("http://www.w3.org/2000/svg", "")) == [], path


def test_the_page_is_told_which_games_have_a_table_and_stylesheet(client: FlaskClient) -> None:
    """The games' own files in `static/games/` are the whole list: each is served, and each
    module exports its table under the game's id, which is how `games/index.js` finds it."""
    listing = client.get("/client/games.json").get_json()
    shipped = default_registry().ids()
    assert sorted(listing["tables"]) == sorted(listing["stylesheets"]) == sorted(shipped)
    for game in listing["tables"]:
        module = client.get(f"/static/games/{game}.js", buffered=True)
        assert module.mimetype == "text/javascript"
        assert f"export const {game} = " in module.get_data(as_text=True)
    for game in listing["stylesheets"]:
        assert client.get(f"/static/games/{game}.css", buffered=True).mimetype == "text/css"


def test_a_game_without_files_of_its_own_is_shown_by_the_generic_table() -> None:
    app = web_app(Config.from_env({}), redis_client=fakeredis.FakeRedis(), registry=REGISTRY)
    client = app.test_client()
    assert "sprint" in [game["id"] for game in client.get("/v1/games").get_json()]
    listing = client.get("/client/games.json").get_json()
    assert "sprint" not in listing["tables"] + listing["stylesheets"]
    assert client.get("/static/generic.js", buffered=True).status_code == 200


def test_an_unknown_static_file_is_a_problem_not_a_crash(client: FlaskClient) -> None:
    response = client.get("/static/nope.js", buffered=True)
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"


def test_the_contract_is_served_as_json_for_the_api_page(client: FlaskClient) -> None:
    """The API page (`static/apidocs.js`) reads the contract as JSON: the same document."""
    response = client.get("/client/openapi.json", buffered=True)
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    assert response.get_json() == yaml.safe_load(OPENAPI.read_text())
    page = client.get("/", buffered=True).get_data(as_text=True)
    assert 'href="#/api"' in page
