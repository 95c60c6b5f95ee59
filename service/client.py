"""The web client: static files in `service/static`, served as they are (no build step).

The client speaks only the public API, so it is also the reference client for it. A game's table
is `static/games/<game id>.js` (exporting an object named after the game), with an optional
`static/games/<game id>.css`; a game with no module of its own gets the generic table
(`static/generic.js`). `/client/games.json` tells the page which games have which, so that adding
a game's files is all it takes. `/client/openapi.json` is the contract as JSON, for the page that
shows it readably (`static/apidocs.js`): a browser has no YAML parser.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from flask import Blueprint, Response, jsonify

client = Blueprint("client", __name__, static_folder="static", static_url_path="/static")

GAME_TABLES = Path(__file__).resolve().parent / "static" / "games"
OPENAPI = Path(__file__).resolve().parent / "openapi.yaml"
"""The HTTP contract, served as it is: in the repository a link to the top-level openapi.yaml,
in an installed package a copy of it."""
NOT_A_GAME = {"index"}
"""`games/index.js` loads the games' modules; it is not one."""

# Everything the page loads comes from this server; nothing from the internet.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


@client.get("/")
def index() -> Response:
    """The single page; its routes live after the `#`, so every link to it is this URL."""
    response = client.send_static_file("index.html")
    response.headers["Content-Security-Policy"] = CONTENT_SECURITY_POLICY
    response.headers["Cache-Control"] = "no-cache"
    return response


@client.get("/client/games.json")
def game_tables() -> Response:
    """The games with a table module (`tables`) and a stylesheet (`stylesheets`) of their own,
    by id: the page loads exactly these, so it never asks for a file that does not exist."""
    response = jsonify(
        tables=sorted(
            path.stem for path in GAME_TABLES.glob("*.js") if path.stem not in NOT_A_GAME
        ),
        stylesheets=sorted(path.stem for path in GAME_TABLES.glob("*.css")),
    )
    response.headers["Cache-Control"] = "no-cache"
    return response


@client.get("/client/openapi.json")
def contract() -> Response:
    """The contract (`openapi.yaml`) as JSON, for the client's API page."""
    response = jsonify(yaml.safe_load(OPENAPI.read_text()))
    response.headers["Cache-Control"] = "no-cache"
    return response
