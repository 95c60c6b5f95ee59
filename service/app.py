"""The Flask application: routes, the client, error handling, over services built elsewhere.

Everything the app needs is built by the composition root (`bootstrap`) and handed in here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import redis
from flask import Flask, Response
from werkzeug.middleware.proxy_fix import ProxyFix

from domain.catalogue import BotCatalogue
from service.client import CONTENT_SECURITY_POLICY, OPENAPI, client
from service.config import Config
from service.encoding import FastJSONProvider
from service.errors import register_error_handlers
from service.limits import Limiter, limit_routes
from service.observe import observe
from service.routes import REFUSE_WEBHOOK, api
from service.stream import StreamHub, StreamLimit
from service.tables import TableCommands, TableQueries
from telemetry.metrics import Metrics

__all__ = ["OPENAPI", "create_app"]
"""`OPENAPI`, the contract's path, is the client's (its API page reads it too) and this app's."""

NOTHING_TO_RUN = "default-src 'none'; frame-ancestors 'none'"
"""The policy of every answer that is not a page: JSON, scripts, the spec."""


class App(Flask):
    """Flask for an app whose views and hooks are all plain functions."""

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        # Flask asks `inspect.iscoroutinefunction` of every hook and view on every request
        # (some 7% of a `GET /health`); none here is a coroutine, so each is called as it is.
        return func


def create_app(
    config: Config,
    *,
    redis_client: redis.Redis,
    commands: TableCommands,
    queries: TableQueries,
    bots: BotCatalogue | None,
    limiter: Limiter | None,
    metrics: Metrics | None = None,
    hub: StreamHub | None = None,
    refuse_webhook: Callable[[str], str | None] = lambda url: None,
) -> Flask:
    """The web app over the given services; `bootstrap.web_app` builds them (and `metrics`:
    None gives the app a registry of its own; `hub`: None, a live-stream reader of its own).
    `refuse_webhook` says why a seat's webhook URL is refused before it is ever called (None:
    it is not)."""
    metrics = metrics or Metrics()
    app = App(__name__, static_folder=None)  # the client blueprint serves the static files
    app.config["MAX_CONTENT_LENGTH"] = config.max_body_bytes
    app.json = FastJSONProvider(app)
    app.extensions["spieltisch.commands"] = commands
    app.extensions["spieltisch.queries"] = queries
    app.extensions["spieltisch.bots"] = bots
    app.extensions["redis"] = redis_client
    app.extensions["spieltisch.config"] = config
    app.extensions[REFUSE_WEBHOOK] = refuse_webhook
    app.extensions["spieltisch.streams"] = StreamLimit(config.max_streams, metrics)
    app.extensions["spieltisch.hub"] = hub or StreamHub(redis_client, queries)
    app.extensions["spieltisch.metrics"] = metrics
    observe(app, metrics, config)  # first: its hooks see every request, refused ones too
    app.register_blueprint(api)
    app.register_blueprint(client)
    limit_routes(app, limiter, config)
    if config.trusted_proxies:
        # The client's address, as the trusted proxies saw it, is what rate limits count.
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=config.trusted_proxies)  # type: ignore[method-assign]
    register_error_handlers(app)

    @app.after_request
    def harden(response: Response) -> Response:
        """No browser guesses a type, and every page keeps to its own origin."""
        response.headers["X-Content-Type-Options"] = "nosniff"
        if "Content-Security-Policy" not in response.headers:
            page = response.mimetype == "text/html"
            policy = CONTENT_SECURITY_POLICY if page else NOTHING_TO_RUN
            response.headers["Content-Security-Policy"] = policy
        return response

    @app.get("/openapi.yaml")
    def openapi() -> Response:
        return Response(OPENAPI.read_text(), mimetype="application/yaml")

    @app.get("/health")
    def health() -> dict[str, Any]:
        """Liveness: the process serves requests. It asks nothing of Redis, so that an outage
        of Redis never gets a web process restarted (it recovers by itself)."""
        return {"status": "ok", "embedded": config.redis_url is None}

    @app.get("/ready")
    def ready() -> dict[str, Any]:
        """Readiness: Redis answers, so requests can be served; a 503 problem while it does not."""
        redis_client.ping()
        return {"status": "ready", "embedded": config.redis_url is None}

    return app
