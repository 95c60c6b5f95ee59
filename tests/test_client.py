"""The web client's files: served from the app at `/`, complete, and self-contained."""

from __future__ import annotations

import re
from pathlib import Path

from flask.testing import FlaskClient

STATIC = Path(__file__).resolve().parents[1] / "service" / "static"
IMPORT = re.compile(r"""^\s*(?:import|export)\b[^;]*?\bfrom\s+["']([^"']+)["']""", re.MULTILINE)
URL = re.compile(r"""https?://""")


def test_the_page_is_served_at_the_root_with_a_strict_content_policy(client: FlaskClient) -> None:
    response = client.get("/")
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    assert "<main" in page
    assert "<title>Spieltisch</title>" in page
    policy = response.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy
    assert "script-src 'self'" in policy


def test_every_file_the_page_links_is_served(client: FlaskClient) -> None:
    page = client.get("/").get_data(as_text=True)
    linked = re.findall(r'(?:href|src)="(/static/[^"]+)"', page)
    assert "/static/app.js" in linked
    for path in linked:
        response = client.get(path)
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


def test_each_game_has_a_table_module(client: FlaskClient) -> None:
    registry = (STATIC / "games" / "index.js").read_text()
    for game in client.get("/v1/games").get_json():
        assert (STATIC / "games" / f"{game['id']}.js").is_file()
        assert f'from "./{game["id"]}.js"' in registry


def test_an_unknown_static_file_is_a_problem_not_a_crash(client: FlaskClient) -> None:
    response = client.get("/static/nope.js")
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"
