"""Marshmallow schemas for every request the API reads and every response it writes."""

from __future__ import annotations

import unicodedata
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from domain.table import Status


class StrictInteger(fields.Integer):
    """A JSON integer; unlike `Integer(strict=True)` it also refuses `true` and `false`."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(strict=True, **kwargs)

    def _validated(self, value: Any) -> int:
        if isinstance(value, bool):
            raise self.make_error("invalid")
        validated: int = super()._validated(value)
        return validated


ENTROPY = fields.String(
    validate=validate.Length(min=1, max=256),
    load_default=None,
    metadata={"description": "Your own randomness, mixed into the game's seed."},
)


# -- requests -------------------------------------------------------------------------------------


class DisplayName(fields.String):
    """A name shown to other people: NFC-normalised and trimmed, 1 to 40 characters, and
    refused if it holds a character that could disguise it (controls, bidi overrides and
    isolates, zero-width and other format characters, line breaks, private or unassigned ones)."""

    HIDING = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
    LIMIT = 40

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> str:
        text = unicodedata.normalize("NFC", super()._deserialize(value, attr, data, **kwargs))
        hiding = sorted({f"U+{ord(c):04X}" for c in text if unicodedata.category(c) in self.HIDING})
        if hiding:
            raise ValidationError(f"a name may not hold control or format characters: {hiding}")
        text = text.strip()
        if not 1 <= len(text) <= self.LIMIT:
            raise ValidationError(f"a name has 1 to {self.LIMIT} characters, spaces trimmed")
        return text


NAME = DisplayName(load_default=None)
BOT_NAME = validate.Length(min=1, max=40)
BOT_LEVEL = fields.String(
    validate=validate.Length(min=1, max=40),
    load_default=None,
    metadata={"description": "The bot's level, from the catalogue; its default if left out."},
)


class BotSeatRequest(Schema):
    seat = StrictInteger(required=True, validate=validate.Range(min=0, max=63))
    bot = fields.String(required=True, validate=BOT_NAME)
    level = BOT_LEVEL
    name = NAME


class ClockRequest(Schema):
    """A table's clock; the domain (`TimeControl`) checks the ranges, once, for every caller."""

    turn_seconds = fields.Float(allow_nan=False)
    timeouts = StrictInteger()
    bot_delay_seconds = fields.Float(allow_nan=False)
    reaction_seconds = fields.Float(allow_nan=False)
    bank_seconds = fields.Float(allow_nan=False, allow_none=True)
    increment_seconds = fields.Float(allow_nan=False)


class CreateTableRequest(Schema):
    game = fields.String(required=True, validate=validate.Length(min=1, max=64))
    seats = StrictInteger(required=True, validate=validate.Range(min=1, max=64))
    options = fields.Dict(
        keys=fields.String(), values=fields.Raw(allow_none=True), load_default=dict
    )
    entropy = ENTROPY
    bots = fields.List(fields.Nested(BotSeatRequest), load_default=list)
    clock = fields.Nested(ClockRequest, load_default=dict)

    @validates_schema
    def seats_once(self, data: dict[str, Any], **kwargs: Any) -> None:
        seats = [bot["seat"] for bot in data.get("bots", [])]
        if len(seats) != len(set(seats)):
            raise ValidationError("each seat can be given to one bot only", "bots")
        if any(seat >= data.get("seats", 0) for seat in seats):
            raise ValidationError("a bot's seat must be one of the table's seats", "bots")


class TakeSeatRequest(Schema):
    name = NAME
    seat = StrictInteger(validate=validate.Range(min=0, max=63), load_default=None, allow_none=True)
    entropy = ENTROPY
    bot = fields.String(validate=BOT_NAME)
    level = BOT_LEVEL
    webhook = fields.Url(
        schemes={"http", "https"},
        require_tld=False,
        validate=validate.Length(max=2048),
        metadata={"description": "An external bot's URL, POSTed each turn of the seat."},
    )

    @validates_schema
    def one_player(self, data: dict[str, Any], **kwargs: Any) -> None:
        if "bot" in data and "webhook" in data:
            raise ValidationError("a seat is played by a bot or by a webhook, not both", "bot")
        if data.get("level") is not None and "bot" not in data:
            raise ValidationError("a level needs a bot to play at it", "level")
        if data.get("name") is None and "bot" not in data and "webhook" not in data:
            raise ValidationError("a player taking a seat needs a name", "name")


class MoveRequest(Schema):
    move = fields.Raw(required=True, allow_none=False)
    expected_version = StrictInteger(required=True, validate=validate.Range(min=0))


class QueryInteger(fields.Integer):
    """A whole number written in ASCII digits, as a query string carries it (no sign, no `_`)."""

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> int:
        if not (isinstance(value, str) and value.isascii() and value.isdigit()):
            raise self.make_error("invalid")
        number: int = super()._deserialize(value, attr, data, **kwargs)
        return number


class EventsQuery(Schema):
    after = QueryInteger(validate=validate.Range(min=0, max=2**53), load_default=0)


MAX_PAGE = 10_000
"""The most versions of a log one page of `GET .../events?limit=` covers."""


class EventsPageQuery(EventsQuery):
    limit = QueryInteger(validate=validate.Range(min=1, max=MAX_PAGE), load_default=None)


class TablesQuery(Schema):
    status = fields.String(
        validate=validate.OneOf([status.value for status in Status]), load_default=None
    )
    game = fields.String(validate=validate.Length(min=1, max=64), load_default=None)
    limit = QueryInteger(validate=validate.Range(min=1, max=100), load_default=20)


# -- responses ------------------------------------------------------------------------------------


class OptionSchema(Schema):
    name = fields.String()
    type = fields.Function(
        lambda option: {int: "integer", bool: "boolean", str: "string"}[option.kind]
    )
    default = fields.Raw(allow_none=True)
    nullable = fields.Boolean()
    choices = fields.List(fields.Raw(), allow_none=True)
    minimum = fields.Integer(allow_none=True)
    maximum = fields.Integer(allow_none=True)
    description = fields.String()


class GameInfoSchema(Schema):
    id = fields.String()
    title = fields.String()
    summary = fields.String()
    min_players = fields.Integer()
    max_players = fields.Integer()
    options = fields.List(fields.Nested(OptionSchema))
    score_range = fields.Function(lambda info: list(info.score_range))


class BotInfoSchema(Schema):
    name = fields.String()
    description = fields.String()
    games = fields.List(fields.String())
    levels = fields.List(fields.String())
    default_level = fields.String(allow_none=True)


class SeatSchema(Schema):
    seat = fields.Integer()
    name = fields.String(allow_none=True)
    taken = fields.Boolean()
    bot = fields.String(allow_none=True)
    level = fields.String(allow_none=True)


class TableSchema(Schema):
    id = fields.String()
    game = fields.String()
    status = fields.String()
    version = fields.Integer()
    options = fields.Dict(keys=fields.String(), values=fields.Raw(allow_none=True))
    commitment = fields.String()
    seats = fields.List(fields.Nested(SeatSchema))
    you = fields.Integer(allow_none=True)
    to_act = fields.List(fields.Integer())
    state = fields.Dict(allow_none=True)
    result = fields.Dict(allow_none=True)
    seed = fields.String(allow_none=True)
    clock = fields.Dict(keys=fields.String(), values=fields.Raw())
    deadlines = fields.Dict(keys=fields.String(), values=fields.String())


class TableSummarySchema(Schema):
    id = fields.String()
    game = fields.String()
    status = fields.String()
    version = fields.Integer()
    seats = fields.List(fields.Nested(SeatSchema))
    to_act = fields.List(fields.Integer())
    created = fields.DateTime()


class ScoreTimelineSchema(Schema):
    version = fields.Integer()
    scores = fields.List(fields.Tuple((fields.Integer(), fields.List(fields.Integer()))))


class SeatTakenSchema(Schema):
    seat = fields.Integer()
    token = fields.String(allow_none=True)
    table = fields.Nested(TableSchema)


class EventSchema(Schema):
    seq = fields.Integer()
    type = fields.String()
    v = fields.Integer()
    data = fields.Dict()
    meta = fields.Dict()


class EventLogSchema(Schema):
    version = fields.Integer()
    through = fields.Integer()
    events = fields.List(fields.Nested(EventSchema))


class LegalMovesSchema(Schema):
    version = fields.Integer()
    seat = fields.Integer()
    to_act = fields.Boolean()
    moves = fields.List(fields.Raw())


class MoveResultSchema(Schema):
    version = fields.Integer()
    events = fields.List(fields.Nested(EventSchema))
    table = fields.Nested(TableSchema)
    to_act = fields.List(fields.Integer())
    moves = fields.Nested(LegalMovesSchema, allow_none=True)


class AuditSchema(Schema):
    ok = fields.Boolean()
    chain_ok = fields.Boolean()
    seed_ok = fields.Boolean()
    versions_ok = fields.Boolean()
    replay_ok = fields.Boolean()
    events = fields.Integer()
    commands = fields.Integer()
    seed = fields.String(allow_none=True)
    chance = fields.String(allow_none=True)
    rules_version = fields.Integer(allow_none=True)
    problems = fields.List(fields.String())


class SigningKeySchema(Schema):
    algorithm = fields.String()
    key_id = fields.String()
    public_key = fields.String()


class KeysSchema(Schema):
    keys = fields.List(fields.Nested(SigningKeySchema))


def field_errors(error: ValidationError) -> dict[str, Any]:
    """Marshmallow's messages keyed by field, for the `errors` member of a problem."""
    messages = error.messages
    return messages if isinstance(messages, dict) else {"_body": messages}
