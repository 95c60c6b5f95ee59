"""Live event streams (Server-Sent Events): a table's log as it grows, redacted per caller.

An open stream holds no thread and no Redis connection of its own. Each web process has one
`StreamHub`: a single reader (a greenlet under gevent, a thread otherwise) on one pub/sub
connection, subscribed to the tables this process has streams open on. The append script
publishes each append's entries on the table's channel; the reader hands them to that table's
`Topic`, whose streams then share them (verified onto what the topic had, and folded once into
the cached table), and each kind of caller's frames are redacted by `Views` once, whatever the
number of streams that send them.

Pub/sub forgets what it could not deliver, so a topic reads the stream itself whenever it may
have missed news: after its subscription takes, after the reader reconnects to Redis, or when
what it heard does not follow what it had, or names other events at versions it read (Redis
lost its last writes and was written on since). A client whose stream sent events the log no
longer holds, or that resumes from a version the log does not reach, is told so with a
`stream.Rewound` frame, and the stream goes on from where the log stands. A stream ends after
`table.GameFinished`, or after `stream_max_seconds`, when the client reconnects with
`Last-Event-ID` and carries on from there.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import redis
from redis.client import PubSub
from redis.cluster import ClusterNode, ClusterPubSub, RedisCluster

from domain.table import GAME_FINISHED, Table
from events.connect import is_outage
from events.envelope import Position, Recorded
from events.news import contradicts, records_after
from events.repository import Loaded
from events.store import sharded_news, stream_key
from service.encoding import compact
from service.errors import TooManyStreams
from service.tables import InvalidToken, TableQueries, held
from service.views import Caller, FrameOf
from telemetry.metrics import Metrics

log = logging.getLogger(__name__)

RECONNECT_MS = 1000
"""The `retry:` the stream asks clients to wait before reconnecting."""
KEEPALIVE = ": keep-alive\n\n"
KEEPALIVE_HEADER = "Stream-Keepalive"
"""The stream's answer header saying the seconds between keep-alives."""
REWOUND = "stream.Rewound"
"""The frame a stream sends when the log no longer holds what its client was sent, or does not
reach the version it resumed from (Redis lost its last writes, or the id was made up): the
client must read the table again."""
WINDOW = 64
"""Recent events each topic keeps for its streams: a stream further behind reads its own."""
SUBSCRIBE_POLL_SECONDS = 0.05
"""How often the reader, waiting for news, takes up subscriptions asked for meanwhile (only it
touches its connection). A stream catches up on what it missed once its subscription takes."""
RETRY_SECONDS = (0.1, 2.0)
"""The reader's first and longest pause before it reconnects to Redis after losing it."""


@dataclass(frozen=True)
class Channels:
    """How the reader hears the news of appends: on classic channels, or on sharded ones on a
    cluster (`events.store.sharded_news`). The pub/sub connection's calls to subscribe,
    unsubscribe and receive, and the types of its messages that carry news and that confirm a
    subscription."""

    subscribe: Callable[..., object]
    unsubscribe: Callable[..., object]
    receive: Callable[..., dict[str, Any] | None]
    news: str
    confirmation: str

    @classmethod
    def of(cls, pubsub: PubSub, sharded: bool) -> Channels:
        if sharded and isinstance(pubsub, ClusterPubSub):
            return cls(
                pubsub.ssubscribe,
                pubsub.sunsubscribe,
                ShardedReceiver(pubsub),
                "smessage",
                "ssubscribe",
            )
        return cls(pubsub.subscribe, pubsub.unsubscribe, pubsub.get_message, "message", "subscribe")


class ShardedReceiver:
    """Receives the next message of any shard a cluster pub/sub subscribes on.

    redis-py's own call waits its whole timeout on each shard in turn, so with tables on k
    masters news could wait k - 1 timeouts and the reader take up new subscriptions k times
    slower; here one call waits `timeout` in all, split between the shards, starting each call
    from the next shard so that a busy one cannot starve the others."""

    def __init__(self, pubsub: ClusterPubSub) -> None:
        self.pubsub = pubsub
        self._turn = 0

    def __call__(self, timeout: float) -> dict[str, Any] | None:
        names = list(self.pubsub.node_pubsub_mapping)
        if not names:
            # redis-py answers at once while it holds no shard's connection, where the
            # classic call waits: the reader would spin.
            time.sleep(timeout)
            return None
        self._turn = (self._turn + 1) % len(names)
        for name in names[self._turn :] + names[: self._turn]:
            # By name, not from the cluster's map of nodes: a master that died is gone from the
            # map, and reading its connection is how the reader learns it must subscribe anew.
            host, port = name.rsplit(":", 1)
            node = ClusterNode(host, int(port))  # type: ignore[no-untyped-call]
            message: dict[str, Any] | None = self.pubsub.get_sharded_message(  # type: ignore[no-untyped-call]
                timeout=timeout / len(names), target_node=node
            )
            if message is not None:
                return message
        return None


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
    data = compact(record)
    return f"id: {record['seq']}\nevent: {record['type']}\ndata: {data}\n\n"


@dataclass
class News:
    """What a topic last read: the table, and its latest events, up to `WINDOW` of them."""

    loaded: Loaded
    records: list[Recorded]
    lineage: int = 0
    """How often the topic's news started over because the stream no longer held what it had
    read (Redis lost its last writes): a stream that sent events of another lineage asks Redis
    whether it still holds them."""
    frames: dict[tuple[int, int | None], str | None] = field(default_factory=dict)
    """Each event's frame for each seat (None: a spectator) that was sent one, redacted against
    `loaded.table`; None where that seat sees nothing of it."""

    @property
    def table(self) -> Table:
        return self.loaded.table

    @property
    def last(self) -> Position:
        """The position of the newest event read (the table's, when it read none)."""
        return self.records[-1].position if self.records else self.loaded.position

    @property
    def first(self) -> int:
        """The version the window starts after: a stream there or later needs no read."""
        return self.records[0].seq - 1 if self.records else self.loaded.version


class Topic:
    """One table's news in one process, shared by every stream that follows the table here."""

    def __init__(self, table_id: str) -> None:
        self.table_id = table_id
        self.followers = 0
        self.heard = 0
        """Bumped each time the reader hears of an append (or must have the table read again)."""
        self._lock = threading.Lock()
        """Guards `heard`, `_messages` and `_bell`."""
        self._bell = threading.Event()
        """Set when the reader hears of an append, and then replaced by a fresh one: a stream
        waits on the bell of the `heard` it read. (Under gevent an `Event` is a greenlet's wait
        without the lock a `Condition` allocates for every wait.)"""
        self._reading = threading.Lock()
        self._news: News | None = None
        self._news_heard = -1
        self._messages: list[bytes] | None = []
        """What the reader heard since the last read; None: it may have missed some, so the
        stream must be read (a subscription just took, or too much news piled up)."""

    def announce(self, message: bytes | None) -> None:
        """The reader heard `message` (None: it may have missed some): wake the table's streams."""
        with self._lock:
            self.heard += 1
            if message is None or self._messages is None or len(self._messages) >= WINDOW:
                self._messages = None
            else:
                self._messages.append(message)
            bell, self._bell = self._bell, threading.Event()
        bell.set()

    def wait(self, heard: int, timeout: float) -> bool:
        """Whether the topic heard of an append after `heard`, waiting up to `timeout`."""
        with self._lock:
            if self.heard != heard:
                return True
            bell = self._bell
        return bell.wait(timeout)

    def news(self, read: Callable[[News | None, list[bytes] | None], News]) -> News:
        """The news as of what the topic heard by now, read (by `read`, from the news before and
        the messages heard since) once for all streams."""
        with self._reading:
            with self._lock:
                heard, messages, self._messages = self.heard, self._messages, []
            if self._news is None or self._news_heard != heard:
                try:
                    self._news = read(self._news, messages)
                except BaseException:
                    with self._lock:
                        self._messages = None  # what was heard is gone: read the stream next
                    raise
                self._news_heard = heard
            return self._news


class StreamHub:
    """The one reader of a web process's live news, and the topics it wakes."""

    def __init__(self, redis_client: redis.Redis, queries: TableQueries) -> None:
        self.redis = redis_client
        self.queries = queries
        self._topics: dict[str, Topic] = {}
        self._asked: set[str] = set()
        """Tables whose subscription the reader must take up or drop."""
        self._lock = threading.Lock()
        self._reader: threading.Thread | None = None
        self._closed = False

    @contextmanager
    def follow(self, table_id: str) -> Iterator[Topic]:
        """The table's topic, subscribed to (or about to be: see `SUBSCRIBE_POLL_SECONDS`)."""
        with self._lock:
            topic = self._topics.get(table_id)
            if topic is None:
                topic = self._topics[table_id] = Topic(table_id)
                self._asked.add(table_id)
            topic.followers += 1
            if self._reader is None and not self._closed:
                self._reader = threading.Thread(
                    target=self._run, name="spieltisch-stream-reader", daemon=True
                )
                self._reader.start()
        try:
            yield topic
        finally:
            with self._lock:
                topic.followers -= 1
                if not topic.followers:
                    del self._topics[table_id]
                    self._asked.add(table_id)

    def read(self, table_id: str, news: News | None, messages: list[bytes] | None) -> News:
        """The table's news after `news` (None: from its latest event on): the events appended
        since, verified onto what was read before, and the table folded through them. They are
        taken from the `messages` heard when those follow `news`, else read from the stream."""
        repository = self.queries.repository
        if news is not None:
            store = repository.store
            if messages is not None and contradicts(news.records, news.last, messages):
                messages = None  # the lost events were written over: read the stream to know
            records = None if messages is None else records_after(news.last, messages, store.upcast)
            if records is None:
                records = store.read_on(table_id, news.last)
            if records == []:
                return news
            if records is not None:
                loaded = repository.followed(table_id, records)
                return News(loaded, [*news.records, *records][-WINDOW:], news.lineage)
            # The stream no longer holds what was read (Redis lost writes): start over.
            return News(repository.load(table_id), [], news.lineage + 1)
        return News(repository.load(table_id), [])

    def lost(self, table_id: str, version: int, last: Position | None) -> Position | None:
        """Where the table's log stands, if it no longer holds what a stream at `version` sent
        (`last`: the stream's last event, when it knows it); None while it does."""
        store = self.queries.repository.store
        head = store.head(table_id)
        if head.version < version:
            return head
        if last is not None and store.read_on(table_id, last, until=last.version) is None:
            return head
        return None

    def frames(self, news: News, records: Sequence[Recorded], caller: Caller) -> Iterator[str]:
        """The frames of `records` the caller may see, each redacted once per seat."""
        for record in records:
            key = (record.seq, caller.seat)
            if key in news.frames:
                text = news.frames[key]
            else:
                text = self._frame(news.table, record, caller)
                if record.seq > news.first:  # kept for the topic's other streams
                    news.frames[key] = text
            if text is not None:
                yield text

    def _frame(self, table: Table, record: Recorded, caller: Caller) -> str | None:
        frame = self.queries.views.show(FrameOf(table, record), caller).body
        return None if frame is None else sse(frame)

    def close(self) -> None:
        """Stop the reader, its streams or not (they keep their keep-alives, and hear nothing)."""
        with self._lock:
            self._closed = True
            reader = self._reader
        if reader is not None:
            reader.join()

    def _run(self) -> None:
        """Listen until no topic is left, reconnecting after each loss of Redis."""
        first, longest = RETRY_SECONDS
        pause = first
        while True:
            began = time.monotonic()
            try:
                if self._listen():
                    return
            except Exception as error:
                # Never end for good: every stream of the process would hear nothing from then on.
                # They keep sending keep-alives meanwhile, and their topics are read again once
                # the reader is subscribed anew.
                log.warning("live streams: lost the news connection (%r); reconnecting", error)
                pause = first if time.monotonic() - began > longest else pause
                time.sleep(pause)
                pause = min(pause * 2, longest)
                with self._lock:
                    self._asked.update(self._topics)
                self._refresh_slots()

    def _refresh_slots(self) -> None:
        """On a cluster, learn which node holds each slot now before subscribing again: after
        a failover, a table's sharded channel is on the master that took over, which a stale
        map does not name (subscribing there would fail until something else refreshed it)."""
        if not isinstance(self.redis, RedisCluster):
            return
        try:
            self.redis.nodes_manager.initialize()
        except Exception as error:
            # The cluster is still electing: the next subscription fails, and this runs again.
            log.warning("live streams: the cluster's slots could not be read (%r)", error)

    def _listen(self) -> bool:
        """Subscribe and wake topics until no topic is left (True); raises if Redis is lost."""
        pubsub = self.redis.pubsub()  # type: ignore[no-untyped-call]
        channels = Channels.of(pubsub, sharded_news(self.redis))
        subscribed: set[str] = set()
        try:
            while True:
                with self._lock:
                    if self._closed or not self._topics:
                        self._reader = None
                        return True
                    asked, self._asked = self._asked, set()
                    wanted = {table_id for table_id in asked if table_id in self._topics}
                start, stop = wanted - subscribed, (asked - wanted) & subscribed
                if start:
                    channels.subscribe(*map(stream_key, start))
                if stop:
                    channels.unsubscribe(*map(stream_key, stop))
                subscribed = (subscribed | start) - stop
                message = channels.receive(timeout=SUBSCRIBE_POLL_SECONDS)
                if message is not None and message["type"] == channels.news:
                    self._wake(message["channel"], message["data"])
                elif message is not None and message["type"] == channels.confirmation:
                    self._wake(message["channel"], None)  # what came before it was not heard
        finally:
            pubsub.close()

    def _wake(self, channel: bytes, message: bytes | None) -> None:
        table_id = channel.decode().split("{", 1)[1].rsplit("}", 1)[0]
        with self._lock:
            topic = self._topics.get(table_id)
        if topic is not None:
            topic.announce(message)


def event_stream(
    hub: StreamHub,
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
    last: Position | None = None  # the last event sent, with its hash, to know it again
    lineage: int | None = None
    with hub.follow(table_id) as topic:
        while True:
            heard = topic.heard  # before the read: an append heard during it is read again
            try:
                news = topic.news(partial(hub.read, table_id))
                held(news.loaded, caller)
                # Whether Redis lost what the client was sent is asked of Redis itself when the
                # stream resumes (the topic may hold the lost tail still) and after the topic
                # found the log changed under it.
                rewound = None
                if position and news.lineage != lineage:
                    rewound = hub.lost(table_id, position, last)
                lineage = news.lineage
                behind = [] if rewound is not None else catch_up(hub, table_id, news, position)
            except Exception as error:
                # A cluster client's own exception is no RedisError: only its outage ends early.
                if not (is_outage(error) or isinstance(error, (redis.RedisError, InvalidToken))):
                    raise  # a mistake of ours: its trace is logged
                # The client comes back with Last-Event-ID after `retry:` (and its token is
                # refused then, if it holds no seat now): worth a line, not a trace.
                log.warning("the live stream of table %s ends early: %s", table_id, error)
                return
            if rewound is not None:
                yield sse(
                    {
                        "seq": rewound.version,
                        "type": REWOUND,
                        "data": {"version": rewound.version, "after": position},
                    }
                )
                position, last = rewound.version, rewound
                topic.announce(None)  # the topic may hold the lost events: read the log anew
                continue
            table = news.table
            fresh = [record for record in news.records if record.seq > position]
            sent = [*behind, *fresh]
            ended = next((n for n, r in enumerate(sent) if r.type == GAME_FINISHED), None)
            sent = sent if ended is None else sent[: ended + 1]
            if sent:
                # One write for all the new frames, not one each: a move appends a few events.
                text = "".join(hub.frames(news, sent, caller))
                if text:
                    yield text
                position, last = sent[-1].seq, sent[-1].position
            if ended is not None:
                return
            if table.result is not None and position >= table.version:
                return  # the whole game is behind the caller already
            while not topic.wait(heard, min(keepalive_seconds, ends - clock())):
                if clock() >= ends:
                    return
                yield KEEPALIVE
            if clock() >= ends:
                return


def catch_up(hub: StreamHub, table_id: str, news: News, position: int) -> list[Recorded]:
    """The events between `position` and the topic's window, read for this stream alone."""
    if position >= news.first:
        return []
    store = hub.queries.repository.store
    return store.read(table_id, Position(position, ""), until=news.first, verify=False)
