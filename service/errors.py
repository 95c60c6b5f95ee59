"""Problem details (RFC 9457): every error the API answers, mapped in one table.

The domain, the store and the application service (`service.tables`) raise typed errors that
know nothing of HTTP; the request layer raises the `RequestProblem`s below. `PROBLEM_TYPES`
gives each its status, stable `type` slug and title; `openapi.yaml` lists exactly these types
(the tests hold them together).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, json
from redis.exceptions import OutOfMemoryError as RedisOutOfMemoryError
from werkzeug.exceptions import HTTPException

from domain.catalogue import UnknownBot
from domain.registry import UnknownGame
from domain.rules import OptionError, RuleError
from domain.table import (
    ClockError,
    GameNotRunning,
    NotYourTurn,
    PlayerCountError,
    SeatUnavailable,
    TableError,
    UnsupportedVersion,
)
from events.connect import is_outage
from events.repository import UnknownTable
from events.store import ConcurrencyConflict
from service.quotas import TableQuotaExceeded
from service.tables import (
    BusyTable,
    GameNotFinished,
    GameNotHosted,
    IdempotencyKeyReused,
    InvalidToken,
    MissingToken,
    ServiceError,
    UnknownVersion,
)
from telemetry.logs import REQUEST_ID
from telemetry.metrics import Metrics

PROBLEM_JSON = "application/problem+json"
PROBLEM_BASE = "/problems/"
"""Problem types are relative references, e.g. `/problems/illegal-move` (listed in openapi.yaml)."""


@dataclass(frozen=True)
class ProblemType:
    status: int
    slug: str
    title: str
    retry_after: int | None = None
    """Seconds a client should wait before retrying (the `Retry-After` header), if it may."""


class RequestProblem(ServiceError):
    """A request the HTTP layer refuses before the service sees it."""


class MalformedJson(RequestProblem):
    pass


class UnreadableBody(RequestProblem):
    """The server could not read the body as HTTP frames it (a malformed chunk, say)."""


class InvalidBody(RequestProblem):
    pass


class InvalidQuery(RequestProblem):
    pass


class UnsupportedMediaType(RequestProblem):
    pass


class InvalidIdempotencyKey(RequestProblem):
    pass


class InvalidLastEventId(RequestProblem):
    pass


class TooManyStreams(RequestProblem):
    pass


class NoRulebook(RequestProblem):
    """A hosted game that ships no rule book."""


SERVICE_UNAVAILABLE = ProblemType(503, "service-unavailable", "Service unavailable", retry_after=1)
"""Redis does not answer: nothing was decided on what it could not read, so a retry is safe."""

PROBLEM_TYPES: dict[type[Exception], ProblemType] = {
    # the rules and the table (domain)
    RuleError: ProblemType(422, "illegal-move", "Illegal move"),
    OptionError: ProblemType(422, "invalid-options", "Invalid options"),
    PlayerCountError: ProblemType(422, "invalid-seats", "Invalid seats"),
    SeatUnavailable: ProblemType(409, "seat-unavailable", "Seat unavailable"),
    GameNotRunning: ProblemType(409, "game-not-running", "Game not running"),
    NotYourTurn: ProblemType(409, "not-your-turn", "Not your turn"),
    UnsupportedVersion: ProblemType(409, "unsupported-version", "Unsupported version"),
    ClockError: ProblemType(422, "invalid-clock", "Invalid clock"),
    TableError: ProblemType(409, "table-state", "Table state"),
    UnknownGame: ProblemType(404, "unknown-game", "Unknown game"),
    UnknownBot: ProblemType(422, "unknown-bot", "Unknown bot"),
    # the store
    UnknownTable: ProblemType(404, "unknown-table", "Unknown table"),
    ConcurrencyConflict: ProblemType(409, "stale-version", "Stale version"),
    # the application service
    GameNotHosted: ProblemType(422, "unknown-game", "Unknown game"),
    BusyTable: ProblemType(409, "busy-table", "Table busy"),
    MissingToken: ProblemType(401, "missing-token", "Seat token required"),
    InvalidToken: ProblemType(401, "invalid-token", "Invalid token"),
    IdempotencyKeyReused: ProblemType(422, "idempotency-key-reused", "Idempotency-Key reused"),
    UnknownVersion: ProblemType(404, "unknown-version", "No such version"),
    GameNotFinished: ProblemType(409, "game-not-finished", "Game not finished"),
    TableQuotaExceeded: ProblemType(403, "table-quota", "Too many tables going"),
    # Redis out of reach for a while (`events.connect.is_outage`) answers SERVICE_UNAVAILABLE
    # before this table is asked: a cluster client's failure is told apart by its cause.
    # Redis at `maxmemory` refuses writes (deploy/redis.conf: noeviction) before they start.
    RedisOutOfMemoryError: SERVICE_UNAVAILABLE,
    # the request
    MalformedJson: ProblemType(400, "malformed-json", "Malformed JSON"),
    UnreadableBody: ProblemType(400, "bad-request", "Bad Request"),
    InvalidBody: ProblemType(422, "invalid-body", "Invalid request"),
    InvalidQuery: ProblemType(422, "invalid-query", "Invalid request"),
    UnsupportedMediaType: ProblemType(415, "unsupported-media-type", "JSON required"),
    InvalidIdempotencyKey: ProblemType(400, "invalid-idempotency-key", "Invalid Idempotency-Key"),
    InvalidLastEventId: ProblemType(400, "invalid-last-event-id", "Invalid Last-Event-ID"),
    TooManyStreams: ProblemType(503, "too-many-streams", "Too many live streams", retry_after=2),
    NoRulebook: ProblemType(404, "no-rulebook", "No rule book"),
}
"""Every typed error the API answers with: the most specific class in an error's MRO wins."""

HTTP_PROBLEMS = {
    400: ProblemType(400, "bad-request", "Bad Request"),
    401: ProblemType(401, "unauthorized", "Unauthorized"),
    404: ProblemType(404, "not-found", "Not Found"),
    405: ProblemType(405, "method-not-allowed", "Method Not Allowed"),
    406: ProblemType(406, "not-acceptable", "Not Acceptable"),
    413: ProblemType(413, "body-too-large", "Request Entity Too Large"),
    415: ProblemType(415, "unsupported-media-type", "Unsupported Media Type"),
    429: ProblemType(429, "rate-limited", "Too Many Requests"),
}
"""Werkzeug's own HTTP errors (unknown routes, wrong methods, bodies too large...), by status."""

OTHER_HTTP_ERROR = "http-error"
"""The slug of a Werkzeug HTTP error with a status not in `HTTP_PROBLEMS`."""
INTERNAL_ERROR = ProblemType(500, "internal-error", "Internal Server Error")


def every_problem() -> list[ProblemType]:
    """Every problem with a slug of its own (not `http-error`'s statuses), one per status."""
    return [*PROBLEM_TYPES.values(), *HTTP_PROBLEMS.values(), INTERNAL_ERROR]


def every_problem_type() -> set[str]:
    """Every `type` the API can answer, as listed in openapi.yaml."""
    kinds = {PROBLEM_BASE + kind.slug for kind in every_problem()}
    return kinds | {PROBLEM_BASE + OTHER_HTTP_ERROR}


def problem_of(error: Exception) -> tuple[ProblemType, dict[str, Any]] | None:
    """The problem type of a typed error, and its extension members; None if it has none."""
    if is_outage(error):
        return SERVICE_UNAVAILABLE, {}
    for cls in type(error).__mro__:
        if cls in PROBLEM_TYPES:
            return PROBLEM_TYPES[cls], extra_members(error)
    return None


def extra_members(error: Exception) -> dict[str, Any]:
    if isinstance(error, RuleError):
        return {"rule": error.rule}
    if isinstance(error, OptionError):
        return {"option": error.option}
    if isinstance(error, ConcurrencyConflict):
        return {"current_version": error.actual}
    if isinstance(error, ServiceError):
        return dict(error.extra)
    return {}


def detail_of(error: Exception) -> str:
    if isinstance(error, ConcurrencyConflict):
        return (
            f"the move expected version {error.expected}, but the table is at version "
            f"{error.actual}; read the table again and decide on the current state"
        )
    if isinstance(error, RuleError | TableError | ServiceError):
        return error.detail
    if isinstance(error, UnknownGame):
        return f"there is no game {error.args[0]!r}"
    if is_outage(error):
        return "the service cannot reach its storage now; retry in a moment"
    if isinstance(error, RedisOutOfMemoryError):
        return "the service's storage is full; nothing was written, retry later"
    return str(error)


def problem_response(kind: ProblemType, detail: str, **extra: Any) -> Response:
    """The problem; its `request_id` member names the request it answers, as its
    `X-Request-ID` header does."""
    body = {
        "type": PROBLEM_BASE + kind.slug,
        "title": kind.title,
        "status": kind.status,
        "detail": detail,
        **extra,
    }
    if (request_id := REQUEST_ID.get()) is not None:
        body["request_id"] = request_id
    response = Response(json.dumps(body), status=kind.status, mimetype=PROBLEM_JSON)
    if kind.retry_after is not None:
        response.headers["Retry-After"] = str(kind.retry_after)
    return response


def register_error_handlers(app: Flask) -> None:
    @app.errorhandler(HTTPException)
    def on_http_exception(error: HTTPException) -> Response:
        status = error.code or 500
        detail = error.description or error.name
        if status == 413:
            limit = app.config.get("MAX_CONTENT_LENGTH")
            detail = f"the request body is larger than the limit of {limit} bytes"
        if status == 429:
            detail = f"more requests than the limit of {detail}; retry after Retry-After seconds"
        kind = HTTP_PROBLEMS.get(status, ProblemType(status, OTHER_HTTP_ERROR, error.name))
        response = problem_response(kind, detail)
        if status == 405 and error.valid_methods:  # type: ignore[attr-defined]
            response.headers["Allow"] = ", ".join(error.valid_methods)  # type: ignore[attr-defined]
        return response

    @app.errorhandler(Exception)
    def on_error(error: Exception) -> Response:
        found = problem_of(error)
        if found is not None:
            kind, extra = found
            if kind is SERVICE_UNAVAILABLE:
                # An outage is the operator's to see, once a request, without a traceback.
                app.logger.warning("Redis unavailable: %s", error)
                metrics: Metrics = app.extensions["spieltisch.metrics"]
                metrics.redis_error("request")
            return problem_response(kind, detail_of(error), **extra)
        app.logger.exception("unhandled error", exc_info=error)
        return problem_response(INTERNAL_ERROR, "the server failed; retry later")
