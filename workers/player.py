"""Playing one bot turn: read the seat's view and legal moves, choose, append."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Executor
from datetime import datetime, timedelta
from enum import StrEnum
from random import Random
from typing import Protocol

from domain.catalogue import BotCatalogue
from domain.rules import JSON, RuleError
from domain.table import STAND_IN, TIMEOUT, Seat, Status, TableError
from events.repository import Loaded, TableRepository
from telemetry.metrics import Metrics
from workers.webhook import WebhookClient, WebhookFailed

log = logging.getLogger(__name__)

DEADLINE_SLACK = timedelta(seconds=1)
"""How far the clocks of two machines may disagree: a timeout this early is still due."""
TURNS_PER_JOB = 16
"""The most bot turns one job plays in a row (each next one due at once, `TurnQueue.schedule`'s
`keep`): a job's RQ bookkeeping costs more than a turn, but an all-bot game must not hold a
worker from every other table for its whole length."""
IN_A_ROW = timedelta(seconds=2)
"""How long a job goes on taking the next bot turn due at once. It then ends within one bot's
thinking time, well inside its timeout (the webhook timeout and 5 s: 8 s by default), however
slowly its bots think: hard takes up to 1 s a turn, Roll'n Bump's planner more besides, and 16
such turns in one job would outlast it."""


class Outcome(StrEnum):
    PLAYED = "played"
    SUBSTITUTED = "substituted"
    ASKED = "asked"
    """A webhook was asked, beside the worker; its move (or a stand-in's) lands when it answers."""
    STALE = "stale"
    """The table is past that version, the seat may not act, or no bot plays it."""


class BotMoved(Protocol):
    """A bot's move appended (the service's `tables.BotMoved`)."""

    @property
    def after(self) -> Loaded:
        """The table after the move."""
        ...

    @property
    def kept(self) -> int | None:
        """The bot seat whose turn came due at once, left to the worker that moved."""
        ...


class BotMoves(Protocol):
    """Where a bot's move goes: the service's `TableCommands`."""

    def play_for(
        self,
        loaded: Loaded,
        seat: int,
        move: JSON,
        substituted: str | None = None,
        *,
        queued: bool = False,
        keep: bool = False,
    ) -> BotMoved | None:
        """Append `move` for `seat` on `loaded`; None if the table moved on meanwhile;
        `queued`: the bot seat's own queued turn; `keep`: the caller plays the next bot turn
        due at once itself."""
        ...

    def expire(self, loaded: Loaded) -> bool:
        """Close the open table `loaded`; False if the table moved on meanwhile."""
        ...

    def recheck(self, loaded: Loaded) -> None:
        """Have the workers' sweep schedule what `loaded`'s table waits for again, at once."""
        ...


class TurnPlayer:
    """Plays the turn of a bot seat at one version of a table, at most once."""

    def __init__(
        self,
        repository: TableRepository,
        moves: BotMoves,
        bots: BotCatalogue,
        webhooks: WebhookClient,
        clock: Callable[[], datetime],
        *,
        calls: Executor | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        """`calls` runs webhook turns beside the caller, so that a slow webhook holds up no
        other table's turns (None: each in the caller's thread); `metrics` counts the turns."""
        self.repository = repository
        self.moves = moves
        self.bots = bots
        self.webhooks = webhooks
        self.clock = clock
        self.calls = calls
        self.metrics = metrics

    def play(self, table_id: str, version: int, seat: int) -> Outcome:
        # Optimistic: a table this worker cached at `version` is not read again; if the stream
        # has moved on (or lost it), the append is refused and the turn is stale.
        loaded, _ = self.repository.head(table_id, version)
        table = loaded.table
        tables = self.repository.tables
        player = table.seats[seat] if 0 <= seat < len(table.seats) else None
        if player is None or player.player is None:
            return Outcome.STALE  # no bot plays this seat: nothing for a worker to do
        if table.version != version or seat not in tables.may_act(table):
            return Outcome.STALE
        if player.webhook is not None and self.calls is not None:
            self.calls.submit(self._play_logged, loaded, seat, player)
            return Outcome.ASKED
        return self._play_in_a_row(loaded, seat, player)

    def _play_in_a_row(self, loaded: Loaded, seat: int, player: Seat) -> Outcome:
        """Play `seat`'s turn, then each bot turn that came due at once after it and was left
        to this worker, up to `TURNS_PER_JOB`; the outcome of the first."""
        first = None
        until = self.clock() + IN_A_ROW
        for turn in range(1, TURNS_PER_JOB + 1):
            keep_until = until if turn < TURNS_PER_JOB else None
            outcome, moved = self._play(loaded, seat, player, keep_until=keep_until)
            first = first or outcome
            if moved is None or moved.kept is None:
                break
            loaded, seat = moved.after, moved.kept
            kept = loaded.table.seats[seat]
            assert kept is not None, "only a taken bot seat's turn is left to a worker"
            player = kept
        assert first is not None
        return first

    def time_out(self, table_id: str, version: int, seat: int) -> Outcome:
        """A stand-in's move for a person whose time ran out at `version`, if it did."""
        loaded = self.repository.load(table_id)
        table = loaded.table
        tables = self.repository.tables
        player = table.seats[seat] if 0 <= seat < len(table.seats) else None
        deadline = tables.deadlines(table).get(seat)
        if player is None or player.player is not None or deadline is None:
            return Outcome.STALE  # nobody waited for, or a bot plays the seat: its own job moves
        if table.version != version:
            # The seat is waited for at a newer version, whose `schedule` gave this job its
            # time, but this run is of an older one: a `schedule` of an older version ran late,
            # or RQ saved a stale run of this job over the newer one as it finished. Scheduling
            # it here would be saved over too: the sweep does it.
            self.moves.recheck(loaded)
            return Outcome.STALE
        if self.clock() + DEADLINE_SLACK < deadline:
            return Outcome.STALE
        turn = tables.turn(table, seat)
        move = self.bots.bot(STAND_IN, None).choose(turn, Random(f"{table_id}:{version}:{seat}"))
        if not self.moves.play_for(loaded, seat, move, TIMEOUT):
            return Outcome.STALE
        if self.metrics is not None:
            self.metrics.clock_timeout(table.game)
        return Outcome.SUBSTITUTED

    def expire(self, table_id: str, version: int) -> Outcome:
        """Close table `table_id` if it is still open at `version`: nobody sat down since."""
        loaded = self.repository.load(table_id)
        if loaded.table.status is not Status.OPEN:
            return Outcome.STALE
        if loaded.table.version != version:
            self.moves.recheck(loaded)  # still open, so this job was overwritten: as `time_out`
            return Outcome.STALE
        return Outcome.PLAYED if self.moves.expire(loaded) else Outcome.STALE

    def _play_logged(self, loaded: Loaded, seat: int, player: Seat) -> None:
        try:
            self._play(loaded, seat, player, keep_until=None)
        except Exception:
            # Nobody waits on this thread: the failure is logged, and the turn's claim running
            # out lets the sweep queue it again.
            log.exception("the webhook turn of seat %s at table %s failed", seat, loaded.table.id)

    def _play(
        self, loaded: Loaded, seat: int, player: Seat, *, keep_until: datetime | None
    ) -> tuple[Outcome, BotMoved | None]:
        """Choose and append `seat`'s move; keep the next bot turn due at once (see
        `BotMoves.play_for`) if the move is chosen before `keep_until`."""
        table = loaded.table
        table_id, version = table.id, table.version
        tables = self.repository.tables
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
        keep = keep_until is not None and self.clock() < keep_until
        try:
            moved = self.moves.play_for(loaded, seat, move, substituted, queued=True, keep=keep)
        except (RuleError, TableError):
            # Only a webhook can answer with a move the rules refuse; a stand-in plays instead.
            if player.webhook is None or substituted is not None:
                raise
            substituted = "illegal"
            move = self.bots.bot(STAND_IN, None).choose(turn, rng)
            moved = self.moves.play_for(loaded, seat, move, substituted, queued=True, keep=keep)
        if moved is None:
            return Outcome.STALE, None
        outcome = Outcome.PLAYED if substituted is None else Outcome.SUBSTITUTED
        self._count(loaded, outcome, substituted)
        return outcome, moved

    def _count(self, loaded: Loaded, outcome: Outcome, substituted: str | None) -> None:
        """Count a bot's move, and how long after the event that gave it the move it landed."""
        if self.metrics is None:
            return
        table = loaded.table
        changed = table.changed_at
        latency = None if changed is None else (self.clock() - changed).total_seconds()
        # Where a person plays, the table's clock may hold bots back on purpose (`TurnQueue`).
        clock = table.clock
        paced = table.has_people and (clock.bot_delay_seconds > 0 or clock.reaction_seconds > 0)
        self.metrics.bot_turn(table.game, outcome.value, latency, paced=paced)
        if substituted is not None:
            self.metrics.substitution(table.game, f"webhook_{substituted}")

    def _ask_webhook(
        self, url: str, key: str | None, view: Mapping[str, JSON], moves: Sequence[JSON]
    ) -> JSON:
        deadline = self.clock() + timedelta(seconds=self.webhooks.timeout_seconds)
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
