"""The RQ job functions. Jobs carry ids and versions only; the worker supplies the rest."""

from __future__ import annotations

from contextvars import ContextVar

from workers.player import TurnPlayer

PLAYER: ContextVar[TurnPlayer] = ContextVar("spieltisch_turn_player")
"""Set by the worker (`workers.worker`) around every job it runs."""


def play_turn(table_id: str, version: int, seat: int) -> str:
    """Play the bot seat `seat` of table `table_id` at `version`, if it is still its turn."""
    return player().play(table_id, version, seat).value


def time_out(table_id: str, version: int, seat: int) -> str:
    """Let a stand-in move for seat `seat` of table `table_id`, if it is still at `version`
    and the seat's deadline has passed."""
    return player().time_out(table_id, version, seat).value


def expire(table_id: str, version: int) -> str:
    """Close table `table_id` if it is still open at `version`."""
    return player().expire(table_id, version).value


def player() -> TurnPlayer:
    try:
        return PLAYER.get()
    except LookupError:
        raise RuntimeError(
            "bot jobs need the Spieltisch worker: rq worker -w workers.worker.BotWorker"
        ) from None
