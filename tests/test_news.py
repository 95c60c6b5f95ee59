"""The news an append publishes reads back into exactly the records it stored, and is refused
(so that the stream is read instead) when it does not follow what the reader had."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import cast

import pytest
import redis

from bootstrap import build
from events.envelope import START, Recorded
from events.news import contradicts, entries, records_after
from events.store import EventStore, stream_key
from service.config import Config
from service.views import SPECTATOR, Caller
from tests.faults import RedisServer


def published_table(client: redis.Redis) -> tuple[list[bytes], list[Recorded], EventStore]:
    """A Pig 10 table seated twice, the messages its appends published, and its records."""
    services = build(client, Config())
    pubsub = client.pubsub()  # type: ignore[no-untyped-call]
    table_id = services.commands.create("pig10", 2, {}, None).body["id"]
    pubsub.subscribe(stream_key(table_id))  # after the table's first append: that one is missed
    for name in ("Ada", "Bo"):
        services.commands.take_seat(table_id, SPECTATOR, None, name, None)
    messages = []
    while (message := pubsub.get_message(timeout=1)) is not None:
        if message["type"] == "message":
            messages.append(message["data"])
    pubsub.close()
    store = services.repository.store
    return messages, store.read(table_id), store


def test_the_news_of_appends_is_what_they_stored(any_redis: redis.Redis) -> None:
    messages, stored, store = published_table(any_redis)
    assert len(messages) == 2, "one message per append"
    first_append = [r for r in stored if r.seq <= int(messages[0].split(b":", 1)[0]) - 1]
    heard = records_after(first_append[-1].position, messages, store.upcast)
    assert heard == stored[len(first_append) :]
    assert sum(len(entries(message)) for message in messages) == len(heard)


def test_news_that_does_not_follow_is_refused(any_redis: redis.Redis) -> None:
    messages, stored, store = published_table(any_redis)
    assert records_after(START, messages, store.upcast) is None, "the first append was missed"
    known = stored[-1].position
    assert records_after(known, messages, store.upcast) == [], "all of it was read already"
    before = stored[int(messages[0].split(b":", 1)[0]) - 2].position
    forged = replace(before, head="0" * 64)
    assert records_after(forged, messages, store.upcast) is None, "the chain does not verify"
    altered = [messages[0][:-1] + (b"0" if messages[0][-1:] != b"0" else b"1"), *messages[1:]]
    assert records_after(before, altered, store.upcast) is None, "a hash altered"
    garbled = [messages[0][:-80] + b"x" * 16 + messages[0][-64:], *messages[1:]]
    assert records_after(before, garbled, store.upcast) is None, "an event that does not decode"


def test_news_of_other_events_at_versions_read_contradicts_what_was_read(
    any_redis: redis.Redis,
) -> None:
    """What `records_after` skips as read already is checked against the hashes read: the same
    events agree, others at those versions (the stream lost them and was written on) do not."""
    messages, stored, _ = published_table(any_redis)
    assert not contradicts(stored, stored[-1].position, messages), "the same events"
    assert not contradicts([], stored[-1].position, messages), "the head alone, the same"
    assert not contradicts(stored[:2], stored[1].position, messages), "news after what was read"
    last = messages[-1]
    other_hash = last[:-1] + (b"0" if last[-1:] != b"0" else b"1")
    assert contradicts(stored, stored[-1].position, [*messages[:-1], other_hash])
    assert contradicts([], stored[-1].position, [other_hash]), "the head read, another hash"
    assert contradicts(stored, stored[-1].position, [b"2:garbage"]), "unreadable: read the stream"


@pytest.mark.redis
def test_news_older_than_the_cache_is_answered_from_it_without_a_read(tmp_path: Path) -> None:
    """A move this process served overtook the news of the move before it (a client quicker
    than the live streams' reader): that news finds the cached table further on already, and
    no read is made to learn so."""
    server = RedisServer(tmp_path)
    server.start()
    client = server.client()
    try:
        services = build(client, Config())
        repository, tables = services.repository, services.repository.tables
        table_id = services.commands.create("pig10", 2, {}, None).body["id"]
        for name in ("Ada", "Bo"):
            services.commands.take_seat(table_id, SPECTATOR, None, name, None)
        before = repository.load(table_id)
        pubsub = client.pubsub()  # type: ignore[no-untyped-call]
        pubsub.subscribe(stream_key(table_id))
        for _ in range(2):
            table = repository.load(table_id).table
            (seat,) = tables.to_act(table)
            move = tables.legal_moves(table, seat)[0]
            services.commands.move(table_id, Caller(seat), move, table.version, None)
        heard = [m["data"] for m in iter(lambda: pubsub.get_message(timeout=1), None)]
        pubsub.close()
        news = [m for m in heard if isinstance(m, bytes) and m[:1].isdigit()]
        assert len(news) == 2, heard
        first_move = records_after(before.position, news[:1], repository.store.upcast)
        assert first_move, "the first move's news follows the table before it"
        reads = read_calls(client)
        followed = repository.followed(table_id, first_move)
        assert read_calls(client) == reads, "no read of the stream"
        assert followed == repository.cached(table_id) == repository.load(table_id)
        assert followed.version > first_move[-1].seq
    finally:
        client.close()
        server.stop()


def read_calls(client: redis.Redis) -> int:
    """How many stream reads the server has answered (its own count, every client's)."""
    stats = cast(dict[str, dict[str, int]], client.info("commandstats"))
    return sum(stats.get(f"cmdstat_{name}", {}).get("calls", 0) for name in ("xrange", "xrevrange"))
