"""Live event streams (Server-Sent Events): a table's log as it grows, redacted per caller.

Each stream waits on the table's Redis stream with a blocking read, so an idle stream costs a
parked connection and no polling. Each frame is built for the caller by `Views`, as the log
endpoint's events are. A stream ends after `table.GameFinished`, or after `stream_max_seconds`,
when the client reconnects with `Last-Event-ID` and carries on from there.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Generator

import redis

from domain.table import GAME_FINISHED
from service.errors import TooManyStreams
from service.tables import TableQueries
from service.views import Caller, FrameOf
from telemetry.metrics import Metrics

log = logging.getLogger(__name__)

RECONNECT_MS = 1000
"""The `retry:` the stream asks clients to wait before reconnecting."""


class StreamLimit:
    """Counts the live streams of one process and refuses one more than `limit`; `metrics`
    (if given) counts them too, across processes."""

    def __init__(self, limit: int, metrics: Metrics | None = None) -> None:
        self.limit = limit
        self.metrics = metrics
        self._slots = threading.BoundedSemaphore(limit)

    def acquire(self) -> Callable[[], None]:
        """Take a slot; returns the function that gives it back (once, however often called)."""
        if not self._slots.acquire(blocking=False):
            raise TooManyStreams(
                f"this server already serves {self.limit} live streams; retry in a few seconds"
            )
        released = threading.Event()
        if self.metrics is not None:
            self.metrics.stream_opened()

        def release() -> None:
            if not released.is_set():
                released.set()
                self._slots.release()
                if self.metrics is not None:
                    self.metrics.stream_closed()

        return release


def sse(record: dict[str, object]) -> str:
    """One event in the text/event-stream format: its version is its id."""
    data = json.dumps(record, separators=(",", ":"), ensure_ascii=False)
    return f"id: {record['seq']}\nevent: {record['type']}\ndata: {data}\n\n"


def event_stream(
    queries: TableQueries,
    table_id: str,
    caller: Caller,
    after: int,
    *,
    keepalive_seconds: float,
    max_seconds: float,
    clock: Callable[[], float] = time.monotonic,
) -> Generator[str, None, None]:
    """The text of the stream: every event after version `after` as the caller may see it,
    then each new one as it is appended, with a comment line when there is nothing to send."""
    yield f"retry: {RECONNECT_MS}\n\n"
    ends = clock() + max_seconds
    position = after
    table = queries.load(table_id, caller).table
    if table.result is not None and position >= table.version:
        return  # the whole game is behind the caller already
    while True:
        wait = min(keepalive_seconds, ends - clock())
        try:
            records = queries.store.wait(table_id, position, max(1, round(wait * 1000)))
        except redis.RedisError as error:
            # The client comes back with Last-Event-ID after `retry:`: worth a line, not a trace.
            log.warning("the live stream of table %s ends early: %s", table_id, error)
            return
        if not records:
            if clock() >= ends:
                return
            yield ": keep-alive\n\n"
            continue
        # The table now includes these records (and verifies their chain): redact against it.
        table = queries.load(table_id, caller).table
        for record in records:
            if record.seq > table.version:
                break  # appended after the load: the next round sends it
            frame = queries.views.show(FrameOf(table, record), caller).body
            if frame is not None:
                yield sse(frame)
            position = record.seq
            if record.type == GAME_FINISHED:
                return
        if clock() >= ends:
            return
