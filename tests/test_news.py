"""The news an append publishes reads back into exactly the records it stored, and is refused
(so that the stream is read instead) when it does not follow what the reader had."""

from __future__ import annotations

from dataclasses import replace

import redis

from bootstrap import build
from events.envelope import START, Recorded
from events.news import entries, records_after
from events.store import EventStore, stream_key
from service.config import Config
from service.views import SPECTATOR


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
