"""Playing one bot turn: read the seat's view and legal moves, choose, append."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import timedelta
from enum import StrEnum
from random import Random

from domain.catalogue import BotCatalogue
from domain.rules import JSON, RuleError
from domain.table import TableError
from service.tables import TableService
from workers.webhook import WebhookClient, WebhookFailed

STAND_IN = "heuristic"
"""The built-in bot that plays a turn a webhook failed to answer: quick, and not a pushover."""


class Outcome(StrEnum):
    PLAYED = "played"
    SUBSTITUTED = "substituted"
    STALE = "stale"
    """The table is past that version, the seat may not act, or no bot plays it."""


class TurnPlayer:
    """Plays the turn of a bot seat at one version of a table, at most once."""

    def __init__(self, service: TableService, bots: BotCatalogue, webhooks: WebhookClient) -> None:
        self.service = service
        self.bots = bots
        self.webhooks = webhooks

    def play(self, table_id: str, version: int, seat: int) -> Outcome:
        loaded = self.service.load(table_id)
        table = loaded.table
        tables = self.service.tables
        player = table.seats[seat] if 0 <= seat < len(table.seats) else None
        if player is None or player.player is None:
            return Outcome.STALE  # no bot plays this seat: nothing for a worker to do
        if table.version != version or seat not in tables.may_act(table):
            return Outcome.STALE
        turn = tables.turn(table, seat)
        # The bot's own randomness, seeded by the turn, so a re-run turn chooses the same.
        rng = Random(f"{table_id}:{version}:{seat}")
        substituted = None
        if player.webhook is not None:
            try:
                view = tables.view(table, seat)
                move = self._ask_webhook(player.webhook, player.token_sha256, view, turn.moves)
            except WebhookFailed as failure:
                substituted = failure.reason
                move = self.bots.bot(STAND_IN, None).choose(turn, rng)
        else:
            assert player.bot is not None
            move = self.bots.bot(player.bot, player.level).choose(turn, rng)
        try:
            appended = self.service.play_for(loaded, seat, move, substituted)
        except (RuleError, TableError):
            # Only a webhook can answer with a move the rules refuse; a stand-in plays instead.
            if player.webhook is None or substituted is not None:
                raise
            substituted = "illegal"
            move = self.bots.bot(STAND_IN, None).choose(turn, rng)
            appended = self.service.play_for(loaded, seat, move, substituted)
        if not appended:
            return Outcome.STALE
        return Outcome.PLAYED if substituted is None else Outcome.SUBSTITUTED

    def _ask_webhook(
        self, url: str, key: str | None, view: Mapping[str, JSON], moves: Sequence[JSON]
    ) -> JSON:
        deadline = self.service.clock() + timedelta(seconds=self.webhooks.timeout_seconds)
        turn: dict[str, JSON] = {
            "table": view["id"],
            "game": view["game"],
            "seat": view["you"],
            "version": view["version"],
            "deadline": deadline.isoformat(),
            "view": dict(view),
            "legal_moves": list(moves),
        }
        move = self.webhooks.ask(url, turn, key)
        if move not in moves:
            raise WebhookFailed("illegal", "the move is not one of the legal moves")
        return move
