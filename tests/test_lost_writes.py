"""No phantom tables: when Redis loses its last writes (or is restored from a backup), no
process answers from a cached table ahead of or diverged from the stream, and each converges on
the first request that touches the table, without a restart.

The lost tail is made by rewriting a table's stream without its last entries, as an AOF cut
short or an older backup leaves it. Each test runs on fakeredis and on the real Redis server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest
import redis
from flask.testing import FlaskClient

from bootstrap import Services, build, web_app
from events.store import stream_key
from service.config import Config
from service.stream import event_stream
from service.views import SPECTATOR
from tests.bounds import bounded
from tests.conftest import IN_PROCESS
from tests.test_api import Game, new_game, payload


def lose_tail(redis_client: redis.Redis, table_id: str, count: int) -> int:
    """Rewrite the table's stream without its last `count` entries; the version left."""
    key = stream_key(table_id)
    entries: list[tuple[bytes, dict[bytes, bytes]]] = redis_client.xrange(key)  # type: ignore[assignment]
    kept = entries[:-count]
    with redis_client.pipeline() as pipe:
        pipe.delete(key)
        for entry_id, fields in kept:
            pipe.xadd(key, fields, id=entry_id)  # type: ignore[arg-type]
        pipe.execute()
    return len(kept)


def client_on(redis_client: redis.Redis) -> FlaskClient:
    """A web process of its own (its own table cache) on the shared Redis."""
    return web_app(IN_PROCESS, redis_client=redis_client).test_client()


def play(game: Game, moves: int) -> int:
    """Make `moves` moves; the version after them."""
    for _ in range(moves):
        table = game.get("")
        seat = table["to_act"][0]
        legal = game.get("/moves", seat)
        status, body, _ = game.post_move(seat, legal["moves"][0], legal["version"])
        assert status == 200, body
    version: int = game.get("")["version"]
    return version


def test_a_read_after_a_lost_tail_answers_the_surviving_version(any_redis: redis.Redis) -> None:
    game = new_game(client_on(any_redis), 2, first_seat=0)
    ahead = play(game, 4)
    surviving = lose_tail(any_redis, game.id, 3)
    assert game.get("")["version"] == surviving < ahead
    assert play(game, 2) > surviving, "moves on the surviving version land"
    assert game.get("/events")["version"] == game.get("")["version"]


def test_a_process_meets_a_tail_rewritten_by_another(any_redis: redis.Redis) -> None:
    """Another process appended over the lost tail: the cached head is no longer in the
    stream's chain, which is neither served nor answered with a 500."""
    one = new_game(client_on(any_redis), 2, first_seat=0)
    two = Game(client_on(any_redis), one.id, one.tokens)
    play(one, 4)
    assert two.get("") == one.get(""), "both processes have the table cached"
    surviving = lose_tail(any_redis, one.id, 3)
    rewritten = play(two, 1)
    assert rewritten > surviving
    assert one.get("") == two.get("")
    assert one.get("/moves", 0) == two.get("/moves", 0)
    assert play(one, 2) > rewritten


def test_a_move_on_the_lost_version_is_stale_and_names_the_surviving_one(
    any_redis: redis.Redis,
) -> None:
    game = new_game(client_on(any_redis), 2, first_seat=0)
    ahead = play(game, 3)
    table = game.get("")
    seat = table["to_act"][0]
    move = game.get("/moves", seat)["moves"][0]
    surviving = lose_tail(any_redis, game.id, 2)
    status, body, _ = game.post_move(seat, move, ahead)
    assert (status, body["type"], body["current_version"]) == (
        409,
        "/problems/stale-version",
        surviving,
    )


def test_a_refused_append_forgets_a_cached_table_ahead_of_the_stream(
    any_redis: redis.Redis,
) -> None:
    """The stream lost its tail between a bot's read and its append: the append script reports
    where the stream stands, and the process forgets the table it had cached."""
    services: Services = build(any_redis, Config())
    game = new_game(client_on(any_redis), 2, first_seat=0)
    play(game, 2)
    loaded = services.repository.load(game.id)
    seat = services.repository.tables.to_act(loaded.table)[0]
    move = services.repository.tables.legal_moves(loaded.table, seat)[0]
    surviving = lose_tail(any_redis, game.id, 2)
    assert not services.commands.play_for(loaded, seat, move), "refused as stale"
    assert services.repository.cached(game.id) is None
    assert services.repository.load(game.id).version == surviving


def test_a_token_whose_seat_was_lost_holds_nothing(any_redis: redis.Redis) -> None:
    client = client_on(any_redis)
    created = client.post("/v1/tables", json={"game": "pig10", "seats": 2})
    table_id = payload(created)["id"]
    taken = client.post(f"/v1/tables/{table_id}/seats", json={"name": "Ada"})
    token = payload(taken)["token"]
    mine = client.get(f"/v1/tables/{table_id}", headers={"Authorization": f"Bearer {token}"})
    assert mine.status_code == 200, "the process has the table cached with Ada's seat"
    lose_tail(any_redis, table_id, 1)  # Ada's seat is gone with the tail
    for path in ("", "/moves", "/events"):
        response = client.get(
            f"/v1/tables/{table_id}{path}", headers={"Authorization": f"Bearer {token}"}
        )
        assert response.status_code == 401, path
        assert payload(response)["type"] == "/problems/invalid-token"


@pytest.mark.parametrize("lost", [1, 5])
def test_every_process_converges_without_a_restart(any_redis: redis.Redis, lost: int) -> None:
    processes = [client_on(any_redis) for _ in range(3)]
    game = new_game(processes[0], 2, first_seat=0)
    play(game, 6)
    views = [Game(process, game.id, game.tokens) for process in processes]
    for view in views:
        view.get("")
    surviving = lose_tail(any_redis, game.id, lost)
    assert {view.get("")["version"] for view in views} == {surviving}


def frames_of(text: str) -> list[tuple[int, str, Any]]:
    """The (id, event, data) of each event frame in a piece of a live stream."""
    found = []
    for block in text.split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if "id" in fields:
            found.append((int(fields["id"]), fields["event"], json.loads(fields["data"])))
    return found


def test_a_stream_resumed_beyond_the_log_is_told_where_it_stands(any_redis: redis.Redis) -> None:
    """A client that saw the lost tail comes back with its last id: the stream says so first,
    with the version the log stands at, and goes on from there."""
    short = replace(IN_PROCESS, stream_max_seconds=0.3, stream_keepalive_seconds=0.1)
    game = new_game(web_app(short, redis_client=any_redis).test_client(), 2, first_seat=0)
    ahead = play(game, 4)
    surviving = lose_tail(any_redis, game.id, 3)
    resumed = game.client.get(f"/v1/tables/{game.id}/stream", headers={"Last-Event-ID": str(ahead)})
    assert frames_of(resumed.text) == [
        (
            surviving,
            "stream.Rewound",
            {
                "seq": surviving,
                "type": "stream.Rewound",
                "data": {"version": surviving, "after": ahead},
            },
        )
    ]
    again = game.client.get(
        f"/v1/tables/{game.id}/stream", headers={"Last-Event-ID": str(surviving)}
    )
    assert frames_of(again.text) == [], "a client where the log stands hears nothing more"


def test_an_open_stream_that_sent_a_lost_tail_is_rewound_before_the_new_one(
    any_redis: redis.Redis,
) -> None:
    """The tail a stream sent is lost and the table goes on past it with other events: the
    stream sends `stream.Rewound` with the version the log stands at before any of them, never
    a mix of the two histories (the client reads the table again)."""
    app = web_app(IN_PROCESS, redis_client=any_redis)
    game = new_game(app.test_client(), 2, first_seat=0)
    ahead = play(game, 3)
    hub = Services.of(app).hub
    stream = event_stream(hub, game.id, SPECTATOR, 0, keepalive_seconds=0.05, max_seconds=30)
    try:
        read_until(stream, ahead)
        surviving = lose_tail(any_redis, game.id, 2)
        passed = play(game, 4)
        assert passed > ahead, "the new history goes past what the stream sent"
        after = read_until(stream, passed)
    finally:
        stream.close()
    rewound, *events = after
    stands = rewound[0]
    assert rewound[1:] == (
        "stream.Rewound",
        {"seq": stands, "type": "stream.Rewound", "data": {"version": stands, "after": ahead}},
    )
    assert surviving <= stands <= passed, "where the log stood when the stream found out"
    assert [seq for seq, _, _ in events] == list(range(stands + 1, passed + 1))
    log = game.get("/events")["events"][stands:]
    assert [(event["type"], event["data"]) for _, _, event in events] == [
        (event["type"], event["data"]) for event in log
    ], "only the log as it stands"


def read_until(stream: Iterator[str], version: int) -> list[tuple[int, str, Any]]:
    """The event frames `stream` sends up to the one of `version`."""
    sent: list[tuple[int, str, Any]] = []
    for _ in bounded(f"the stream never sent version {version}", 400):
        sent += frames_of(next(stream))
        if sent and sent[-1][0] == version:
            break
    return sent


def test_an_open_stream_is_rewound_by_the_first_append_after_the_loss(
    any_redis: redis.Redis,
) -> None:
    """The table's next append after the loss, still short of what the stream sent, tells the
    stream: the topic knows the hashes of what it read, and the news has others."""
    app = web_app(IN_PROCESS, redis_client=any_redis)
    game = new_game(app.test_client(), 2, first_seat=0)
    hub = Services.of(app).hub
    stream = event_stream(hub, game.id, SPECTATOR, 0, keepalive_seconds=0.05, max_seconds=30)
    try:
        ahead = play(game, 1)
        read_until(stream, ahead)
        ahead = play(game, 3)  # heard by the topic, so it knows these events' hashes
        read_until(stream, ahead)
        surviving = lose_tail(any_redis, game.id, 5)
        now = play(game, 1)
        assert now < ahead, "the new events do not reach what the stream sent"
        after = read_until(stream, now)
    finally:
        stream.close()
    assert after[0][:2] == (now, "stream.Rewound")
    assert after[0][2]["data"] == {"version": now, "after": ahead}
    assert surviving < now
