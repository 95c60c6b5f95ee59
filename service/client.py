"""The web client: static files in `service/static`, served as they are (no build step).

The client speaks only the public API, so it is also the reference client for it.
"""

from __future__ import annotations

from flask import Blueprint, Response

client = Blueprint("client", __name__, static_folder="static", static_url_path="/static")

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
