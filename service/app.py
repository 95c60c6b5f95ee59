"""The application factory: every dependency is built here and handed down."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fakeredis
import redis
from flask import Flask, Response

from domain.registry import GameRegistry
from domain.rules import OptionError, RuleError
from domain.table import PlayerCountError, TableError
from events.store import ConcurrencyConflict
from events.upcasting import Upcasters
from service.client import client
from service.config import Config
from service.errors import Problem, problem_response, register_error_handlers
from service.routes import api
from service.signing import Signer
from service.stream import StreamLimit
from service.tables import stale_version
from workers.runtime import build_runtime
from workers.worker import EmbeddedWorker

OPENAPI = Path(__file__).resolve().parent.parent / "openapi.yaml"
"""The HTTP contract, kept at the top of the repository and served as it is."""


def create_app(
    config: Config | None = None,
    *,
    redis_client: redis.Redis | None = None,
    registry: GameRegistry | None = None,
    upcasters: Upcasters | None = None,
) -> Flask:
    """Build the service: with no Redis URL (and no client given) it runs embedded, on
    fakeredis and with a bot worker thread of its own.

    `upcasters` bring events stored under an older schema version to the current one on read
    (default: every step Spieltisch itself has registered).
    """
    config = config or Config.from_env()
    embedded = redis_client is None and config.redis_url is None
    if redis_client is None:
        redis_client = (
            redis.Redis.from_url(config.redis_url) if config.redis_url else fakeredis.FakeRedis()
        )
    worker = EmbeddedWorker() if embedded else None
    runtime = build_runtime(
        redis_client,
        config,
        registry=registry,
        upcasters=upcasters,
        wake=worker.start if worker else lambda: None,
        signer=signer_for(config),
    )
    if worker is not None:
        worker.runtime = runtime
    service = runtime.service

    app = Flask(__name__, static_folder=None)  # the client blueprint serves the static files
    app.config["MAX_CONTENT_LENGTH"] = config.max_body_bytes
    app.json.sort_keys = False  # type: ignore[attr-defined]
    app.extensions["spieltisch"] = service
    app.extensions["redis"] = redis_client
    app.extensions["spieltisch.config"] = config
    app.extensions["spieltisch.streams"] = StreamLimit(config.max_streams)
    app.register_blueprint(api)
    app.register_blueprint(client)
    register_error_handlers(app)
    register_domain_errors(app)

    @app.get("/openapi.yaml")
    def openapi() -> Response:
        return Response(OPENAPI.read_text(), mimetype="application/yaml")

    @app.get("/health")
    def health() -> dict[str, Any]:
        redis_client.ping()
        return {"status": "ok", "embedded": config.redis_url is None}

    return app


def signer_for(config: Config) -> Signer:
    """The key export bundles are signed with: the configured one; embedded, a fresh one."""
    if config.signing_key is not None:
        return Signer.from_text(config.signing_key)
    if config.redis_url is not None:
        raise RuntimeError(
            "set SPIELTISCH_SIGNING_KEY to the service's Ed25519 private key (32 bytes, base64): "
            "every web process must sign export bundles with the same key"
        )
    return Signer.generate()


def register_domain_errors(app: Flask) -> None:
    """How the domain's refusals read over HTTP."""

    @app.errorhandler(RuleError)
    def on_rule_error(error: RuleError) -> Response:
        return problem_response(
            Problem(422, "illegal-move", "Illegal move", error.detail, rule=error.rule)
        )

    @app.errorhandler(OptionError)
    def on_option_error(error: OptionError) -> Response:
        return problem_response(
            Problem(422, "invalid-options", "Invalid options", str(error), option=error.option)
        )

    @app.errorhandler(TableError)
    def on_table_error(error: TableError) -> Response:
        status = 422 if isinstance(error, PlayerCountError) else 409
        title = error.problem.replace("-", " ").capitalize()
        return problem_response(Problem(status, error.problem, title, error.detail))

    @app.errorhandler(ConcurrencyConflict)
    def on_conflict(error: ConcurrencyConflict) -> Response:
        return problem_response(stale_version(error.expected, error.actual))
