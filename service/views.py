"""The one redaction point: every answer about a table is built here, for one caller.

A caller is a seat proved by its token, or a spectator. Whatever a request did (seat a bot that
deals the cards, move for a seat), its answer is what *the caller* may see, and nothing leaves
the service any other way: routes and live streams send only `Shown` bodies, and only `Views.show`
makes them. What a seat may see of the game itself is the rules' `view` and `redact`; this module
decides whose view each answer is (the table as one seat sees it is `Tables.view`, which the
workers also send a webhook for its own seat), and keeps the server's own knowledge (token hashes,
webhook URLs, who may react out of turn) out of every body.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from domain.table import PRIVATE_SEAT_FIELDS, Status, Table, Tables, seats_json
from events.envelope import Recorded


@dataclass(frozen=True)
class Caller:
    """Who is asking: a seat (proved by its token) or a spectator (seat None)."""

    seat: int | None
    token_sha256: str | None = None
    """The hash of the token that proved the seat, checked again against every table loaded
    for the caller; None for a spectator, or a seat the service acts for itself."""


SPECTATOR = Caller(None)


@dataclass(frozen=True)
class Shown:
    """A body built for its caller by `Views.show`: the only kind of body that is sent."""

    body: Any


@dataclass(frozen=True)
class TableOf:
    """The table, at its latest version or at one in the past."""

    table: Table


@dataclass(frozen=True)
class SeatsOf:
    table: Table


@dataclass(frozen=True)
class MovesOf:
    """The caller's own legal moves."""

    table: Table


@dataclass(frozen=True)
class LogOf:
    """Stored events of `table`'s log."""

    table: Table
    records: Sequence[Recorded]
    through: int | None = None
    """The last version the records cover (None: the table's)."""


@dataclass(frozen=True)
class FrameOf:
    """One stored event, as a live stream sends it: `Shown(None)` when the caller sees none."""

    table: Table
    record: Recorded


@dataclass(frozen=True)
class MoveMade:
    """The answer to a move: the events it appended, the table after them, who it waits for
    and the mover's legal moves there."""

    table: Table
    records: Sequence[Recorded]


@dataclass(frozen=True)
class SeatGiven:
    """The answer to taking a seat. A person who took it holds its token from now on, so the
    table is shown as that seat sees it; a seat given to a bot is nothing the caller may see."""

    table: Table
    seat: int
    token: str | None


@dataclass(frozen=True)
class Listing:
    """Tables with when each was opened."""

    entries: Sequence[tuple[Table, datetime]]


@dataclass(frozen=True)
class ScoresOf:
    """Each seat's score over the game: `[version, scores]` pairs."""

    table: Table
    timeline: Sequence[tuple[int, list[int]]]


Subject = TableOf | SeatsOf | MovesOf | LogOf | FrameOf | MoveMade | SeatGiven | Listing | ScoresOf


class Views:
    """Builds every answer about a table for the caller who asked for it."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables

    def show(self, subject: Subject, caller: Caller) -> Shown:
        """`subject` as `caller` may see it."""
        seat = caller.seat
        match subject:
            case TableOf(table):
                return Shown(self.tables.view(table, seat))
            case SeatsOf(table):
                return Shown(seats_json(table))
            case MovesOf(table):
                assert seat is not None, "only a seat has moves"
                return Shown(self._moves(table, seat))
            case LogOf(table, records, through):
                return Shown(
                    {
                        "version": table.version,
                        "through": table.version if through is None else through,
                        "events": self._log(table, records, seat),
                    }
                )
            case FrameOf(table, record):
                frame = self._event(table, record, seat)
                if frame is not None and record.seq == table.version:
                    # The table's latest event: a follower learns when each seat must act, and
                    # a seat its own moves, so that it plays by the stream and its POSTs alone.
                    frame["deadlines"] = self.tables.view_deadlines(table)
                    if seat is not None:
                        frame["moves"] = self._moves(table, seat)
                return Shown(frame)
            case MoveMade(table, records):
                # Everything the mover needs next, so that a move is one request.
                view = self.tables.view(table, seat)
                return Shown(
                    {
                        "version": table.version,
                        "events": self._log(table, records, seat),
                        "table": view,
                        "to_act": view["to_act"],
                        "moves": None if seat is None else self._moves(table, seat),
                    }
                )
            case SeatGiven(table, taken, token):
                viewer = taken if token is not None else seat
                return Shown(
                    {"seat": taken, "token": token, "table": self.tables.view(table, viewer)}
                )
            case Listing(entries):
                return Shown(
                    [
                        {**self.tables.summary(table), "created": created}
                        for table, created in entries
                    ]
                )
            case ScoresOf(table, timeline):
                return Shown({"version": table.version, "scores": [[v, s] for v, s in timeline]})

    def _moves(self, table: Table, seat: int) -> dict[str, Any]:
        """`seat`'s own legal moves, and whether the table waits for it (its reactions too).
        A seat handed to a bot has none for its token: the bot plays them."""
        taken = table.seats[seat]
        if taken is not None and taken.bot is not None:
            return {"version": table.version, "seat": seat, "to_act": False, "moves": []}
        return {
            "version": table.version,
            "seat": seat,
            "to_act": seat in self.tables.to_act(table),
            "moves": self.tables.legal_moves(table, seat),
        }

    def _log(
        self, table: Table, records: Sequence[Recorded], seat: int | None
    ) -> list[dict[str, Any]]:
        shown = (self._event(table, record, seat) for record in records)
        return [record for record in shown if record is not None]

    def _event(self, table: Table, record: Recorded, seat: int | None) -> dict[str, Any] | None:
        """A stored event as `seat` may see it now, or None when it must stay hidden whole.

        The command in the metadata is shown only to the seat that issued it until the game is
        over; the token hash and webhook of a seat never leave the server.
        """
        event = self.tables.redact(table, record.event, seat)
        if event is None:
            return None
        meta = dict(record.meta)
        command = meta.pop("command", {})
        args = {k: v for k, v in command.get("args", {}).items() if k not in PRIVATE_SEAT_FIELDS}
        if table.status is Status.FINISHED or (seat is not None and meta.get("seat") == seat):
            meta["command"] = {**command, "args": args}
        return {
            "seq": record.seq,
            "type": event.type,
            "v": event.v,
            "data": event.data,
            "meta": meta,
        }
