"""The HTTP routes: parse with a schema, call one service method, dump with a schema."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request
from marshmallow import Schema, ValidationError
from werkzeug.exceptions import HTTPException, RequestEntityTooLarge

from domain.catalogue import BotCatalogue
from service import limits, schemas
from service.config import Config
from service.encoding import compact
from service.errors import (
    InvalidBody,
    InvalidIdempotencyKey,
    InvalidLastEventId,
    InvalidQuery,
    MalformedJson,
    NoRulebook,
    UnreadableBody,
    UnsupportedMediaType,
)
from service.limits import client_address
from service.projection import projection
from service.rulebook import rulebook
from service.stream import KEEPALIVE_HEADER, StreamHub, StreamLimit, event_stream
from service.tables import BotSeat, InvalidToken, TableCommands, TableQueries
from service.views import Shown

api = Blueprint("api", __name__, url_prefix="/v1")
TABLE = "/tables/<table_id>"

# Schemas are stateless once built; building them per request cost a third of a move.
GAMES = schemas.GameInfoSchema(many=True)
GAME = schemas.GameInfoSchema()
BOTS = schemas.BotInfoSchema(many=True)
CREATE_TABLE = schemas.CreateTableRequest()
TABLE_VIEW = schemas.TableSchema()
SEATS = schemas.SeatSchema(many=True)
TAKE_SEAT = schemas.TakeSeatRequest()
SEAT_TAKEN = schemas.SeatTakenSchema()
LEGAL_MOVES = schemas.LegalMovesSchema()
MOVE = schemas.MoveRequest()
MOVE_RESULT = schemas.MoveResultSchema()
EVENTS_QUERY = schemas.EventsQuery()
EVENTS_PAGE_QUERY = schemas.EventsPageQuery()
TABLES_QUERY = schemas.TablesQuery()
TABLE_LIST = schemas.TableSummarySchema(many=True)
SCORES = schemas.ScoreTimelineSchema()
EVENT_LOG = schemas.EventLogSchema()
AUDIT = schemas.AuditSchema()
KEYS = schemas.KeysSchema()

REFUSE_WEBHOOK = "spieltisch.refuse_webhook"
IDEMPOTENCY_KEY_MAX = 200
SEAT_KEY_SHORTEST = 16
"""A seat's Idempotency-Key stands for its token until the answer arrives (the same request
with it is answered with the token), so it must be one nobody else could guess."""
MAX_VERSION = 2**53
MAX_DEPTH = 32
"""No move or option needs deeper JSON; deeper bodies are refused before anything recurses."""


def commands() -> TableCommands:
    handler: TableCommands = current_app.extensions["spieltisch.commands"]
    return handler


def queries() -> TableQueries:
    handler: TableQueries = current_app.extensions["spieltisch.queries"]
    return handler


def catalogue() -> BotCatalogue | None:
    bots: BotCatalogue | None = current_app.extensions["spieltisch.bots"]
    return bots


def body(schema: Schema) -> dict[str, Any]:
    """The request's JSON body, validated by `schema`."""
    if not request.is_json:
        raise UnsupportedMediaType("send the body as JSON with 'Content-Type: application/json'")
    data = whole_body()
    try:
        payload = json.loads(data, parse_constant=refuse_constant, parse_float=finite_float)
        # Lone surrogates parse but cannot be stored as UTF-8.
        if may_hold_lone_surrogates(data):
            json.dumps(payload, ensure_ascii=False).encode()
    except (ValueError, RecursionError):
        raise MalformedJson(
            "the request body is not valid JSON (UTF-8, no NaN or Infinity)"
        ) from None
    # Each level opens a bracket: a body with few brackets needs no walk.
    if data.count(b"[") + data.count(b"{") > MAX_DEPTH and depth(payload) > MAX_DEPTH:
        raise MalformedJson(f"nest JSON at most {MAX_DEPTH} deep")
    return validated(schema, payload, "body")


def whole_body() -> bytes:
    """The request body; 413 when it is longer than the limit. Werkzeug refuses an over-long
    body with a Content-Length itself, but cuts a chunked one off at the limit silently."""
    limit = current_app.config["MAX_CONTENT_LENGTH"]
    try:
        data = request.get_data()
        beyond = (
            request.content_length is None
            and len(data) >= limit
            and request.environ["wsgi.input"].read(1)
        )
    except HTTPException:
        raise
    except Exception as error:
        # The server's input stream raises its own errors for a body it cannot frame (gunicorn:
        # a chunk size that is no number, a body cut short), which are the client's, not ours.
        raise UnreadableBody(f"the request body could not be read: {error}") from None
    if beyond:
        raise RequestEntityTooLarge()
    return data


def may_hold_lone_surrogates(data: bytes) -> bool:
    """Whether `json.loads(data)` may hold a lone surrogate: from a \\uD800-\\uDFFF escape, from
    raw bytes (it decodes with `surrogatepass`) or from a UTF-16 or UTF-32 body. A move's ASCII
    body without such an escape is not walked again to find out."""
    return not data.isascii() or b"\x00" in data or b"\\ud" in data or b"\\uD" in data


def refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


def finite_float(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise ValueError(f"{text} is out of range")
    return number


def depth(value: Any) -> int:
    """How deeply `value` nests lists and objects (a scalar is 0)."""
    if isinstance(value, dict):
        return 1 + max(map(depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(depth, value), default=0)
    return 0


def query(schema: Schema) -> dict[str, Any]:
    return validated(schema, request.args.to_dict(), "query")


def validated(schema: Schema, payload: Any, where: str) -> dict[str, Any]:
    invalid = InvalidBody if where == "body" else InvalidQuery
    if not isinstance(payload, dict):
        raise invalid(f"the {where} must be an object")
    try:
        loaded: dict[str, Any] = schema.load(payload)
    except ValidationError as error:
        raise invalid(
            f"the request {where} has invalid fields: {', '.join(sorted(error.messages))}",
            errors=schemas.field_errors(error),
        ) from None
    return loaded


def bearer_token() -> str | None:
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise InvalidToken(
            "the Authorization header must be 'Bearer <token>' with the seat's token"
        )
    return token.strip()


def dumped(schema: Schema, shown: Shown, status: int = 200) -> tuple[Response, int]:
    """Serialise an answer; only a `Shown` body, built for its caller, can be sent."""
    return jsonify(projection(schema)(shown.body)), status


def public(schema: Schema, value: Any) -> tuple[Response, int]:
    """Serialise what is the same for everyone and about no table: games, bots, audits."""
    return jsonify(projection(schema)(value)), 200


@api.get("/games")
def list_games() -> tuple[Response, int]:
    return public(GAMES, [game.info for game in queries().tables.registry])


@api.get("/games/<game_id>")
def get_game(game_id: str) -> tuple[Response, int]:
    return public(GAME, queries().tables.registry[game_id].info)


@api.get("/games/<game_id>/rules")
def get_rules(game_id: str) -> Response:
    """The game's rule book, as Markdown; 404 `unknown-game` if the service hosts no such game."""
    text = rulebook(queries().tables.registry[game_id].info.id)
    if text is None:
        raise NoRulebook(f"{game_id!r} ships no rule book")
    return Response(text, mimetype="text/markdown", headers={"Cache-Control": "no-cache"})


@api.get("/keys")
def signing_keys() -> tuple[Response, int]:
    return public(KEYS, {"keys": [queries().signer.public_json()]})


@api.get("/bots")
def list_bots() -> tuple[Response, int]:
    return public(BOTS, list(catalogue() or ()))


@api.post("/tables")
def create_table() -> tuple[Response, int]:
    args = body(CREATE_TABLE)
    bots = [BotSeat(**bot) for bot in args["bots"]]
    table = commands().create(
        *(args["game"], args["seats"], args["options"], args["entropy"], bots),
        clock=args["clock"],
        owner=client_address(),
    )
    response, status = dumped(TABLE_VIEW, table, 201)
    response.headers["Location"] = f"{api.url_prefix}/tables/{table.body['id']}"
    return response, status


@api.get("/tables")
def list_tables() -> tuple[Response, int]:
    args = query(TABLES_QUERY)
    return dumped(TABLE_LIST, queries().list_tables(args["status"], args["game"], args["limit"]))


@api.get(TABLE)
def get_table(table_id: str) -> tuple[Response, int]:
    caller = queries().caller(table_id, bearer_token())
    return dumped(TABLE_VIEW, queries().view(table_id, caller))


@api.get(TABLE + "/seats")
def list_seats(table_id: str) -> tuple[Response, int]:
    return dumped(SEATS, queries().seats(table_id))


@api.post(TABLE + "/seats")
def take_seat(table_id: str) -> tuple[Response, int]:
    caller = queries().caller(table_id, bearer_token())
    args = body(TAKE_SEAT)
    if (webhook := args.get("webhook")) and (
        why := current_app.extensions[REFUSE_WEBHOOK](webhook)
    ):
        raise InvalidBody(
            f"the webhook is not called: {why}", errors={"webhook": [f"{why}; see the README"]}
        )
    taken = commands().take_seat(
        table_id,
        caller,
        args["seat"],
        args["name"],
        args["entropy"],
        bot=args.get("bot"),
        level=args["level"],
        webhook=args.get("webhook"),
        idempotency_key=idempotency_key(SEAT_KEY_SHORTEST),
    )
    response, status = dumped(SEAT_TAKEN, taken.shown, 201)
    if taken.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    return response, status


@api.get(TABLE + "/moves")
def legal_moves(table_id: str) -> tuple[Response, int]:
    caller = queries().caller(table_id, bearer_token())
    return dumped(LEGAL_MOVES, queries().legal_moves(table_id, caller))


@api.post(TABLE + "/moves")
@limits.counted_by_append
def make_move(table_id: str) -> tuple[Response, int]:
    caller = queries().caller(table_id, bearer_token())
    args = body(MOVE)
    move, expected = args["move"], args["expected_version"]
    answer = commands().move(
        table_id, caller, move, expected, idempotency_key(), quotas=limits.quotas()
    )
    limits.counted_in_append(answer.counted)
    response, status = dumped(MOVE_RESULT, answer.shown)
    if answer.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    return response, status


def idempotency_key(shortest: int = 1) -> str | None:
    """The request's `Idempotency-Key`, if it sent one; `InvalidIdempotencyKey` if it is shorter
    than `shortest` or longer than `IDEMPOTENCY_KEY_MAX` characters."""
    key = request.headers.get("Idempotency-Key")
    if key is not None and not shortest <= len(key) <= IDEMPOTENCY_KEY_MAX:
        raise InvalidIdempotencyKey(
            f"an Idempotency-Key has {shortest} to {IDEMPOTENCY_KEY_MAX} characters"
        )
    return key


@api.post(TABLE + "/leave")
def leave(table_id: str) -> tuple[Response, int]:
    caller = queries().caller(table_id, bearer_token())
    return dumped(TABLE_VIEW, commands().leave(table_id, caller))


@api.get(TABLE + "/events")
def list_events(table_id: str) -> tuple[Response, int]:
    """A page of the log with `limit`; without it, the whole log after `after`, streamed as
    it is read."""
    caller = queries().caller(table_id, bearer_token())
    asked = query(EVENTS_PAGE_QUERY)
    if asked["limit"] is not None:
        return dumped(EVENT_LOG, queries().events(table_id, caller, asked["after"], asked["limit"]))
    pages = queries().event_pages(table_id, caller, asked["after"])
    return Response(streamed_log(pages), mimetype="application/json"), 200


def streamed_log(pages: Iterator[Shown]) -> Iterator[str]:
    """The pages of one log as a single `EventLog` document, written out page by page."""
    separator = ""
    for number, page in enumerate(pages):
        body = projection(EVENT_LOG)(page.body)
        if number == 0:
            yield f'{{"version":{body["version"]},"through":{body["version"]},"events":['
        for event in body["events"]:
            yield separator + compact(event)
            separator = ","
    yield "]}"


@api.get(TABLE + "/stream")
def stream_events(table_id: str) -> Response:
    """The log as Server-Sent Events, live; `Last-Event-ID` (a version) resumes a stream."""
    caller = queries().caller(table_id, bearer_token())
    after = query(EVENTS_QUERY)["after"]
    resume = request.headers.get("Last-Event-ID", "").strip()
    if resume:
        if not (resume.isascii() and resume.isdigit()):
            raise InvalidLastEventId(
                "Last-Event-ID must be the id of an event this stream sent: a version number"
            )
        # No table reaches 2^53 versions: a larger id resumes after every event there will be.
        after = min(int(resume), MAX_VERSION)
    queries().load(table_id, caller)  # an unknown table is a 404 now, not an empty stream
    config: Config = current_app.extensions["spieltisch.config"]
    limit: StreamLimit = current_app.extensions["spieltisch.streams"]
    release = limit.acquire()
    hub: StreamHub = current_app.extensions["spieltisch.hub"]
    events = event_stream(
        hub,
        table_id,
        caller,
        after,
        keepalive_seconds=config.stream_keepalive_seconds,
        max_seconds=config.stream_max_seconds,
    )
    response = Response(events, mimetype="text/event-stream")
    response.headers["Cache-Control"] = "no-cache"
    response.headers["X-Accel-Buffering"] = "no"  # proxies must pass each event on at once
    # A client that hears nothing for a few of these takes the connection for dead.
    response.headers[KEEPALIVE_HEADER] = f"{config.stream_keepalive_seconds:g}"
    response.call_on_close(release)
    return response


@api.get(TABLE + "/versions/<int:version>")
def replay(table_id: str, version: int) -> tuple[Response, int]:
    caller = queries().caller(table_id, bearer_token())
    return dumped(TABLE_VIEW, queries().replay(table_id, version, caller))


@api.get(TABLE + "/scores")
def score_timeline(table_id: str) -> tuple[Response, int]:
    return dumped(SCORES, queries().score_timeline(table_id))


@api.get(TABLE + "/audit")
def audit(table_id: str) -> tuple[Response, int]:
    return public(AUDIT, queries().audit(table_id))


@api.get(TABLE + "/export")
def export(table_id: str) -> Response:
    """The signed bundle of a finished game, as built: its events must stay exactly as hashed
    (private values as their commitments), so it is the one answer that does not pass through
    `Views`."""
    return jsonify(queries().export(table_id))
