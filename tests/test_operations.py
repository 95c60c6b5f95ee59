"""Operations: `/metrics` (counts and histograms after real requests, who may read it), request
ids (accepted, replaced, echoed in headers and problem details, carried into bot jobs) and the
JSON log lines of web processes and bot workers.

The in-process tests run the app on fakeredis; `tests/test_e2e_operations.py` runs the Procfile.
"""

from __future__ import annotations

import io
import json
import logging
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import fakeredis
import pytest
from flask import Flask
from flask.testing import FlaskClient
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from redis.exceptions import (
    BusyLoadingError,
    ClusterDownError,
    RedisClusterException,
    ResponseError,
    SlotNotCoveredError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import OutOfMemoryError as RedisOutOfMemoryError
from redis.exceptions import TimeoutError as RedisTimeoutError
from rq.registry import StartedJobRegistry
from werkzeug.test import TestResponse

from bootstrap import web_app
from events.connect import is_outage
from service.config import Config
from service.errors import SERVICE_UNAVAILABLE, detail_of, problem_of
from telemetry.logs import JsonLines, accepted_request_id
from telemetry.metrics import Metrics, SnapshotRecorder
from tests.bounds import bounded
from tests.conftest import IN_PROCESS
from tests.faults import cluster_lost_every_node
from workers.player import TURNS_PER_JOB
from workers.stats import QueueFigures
from workers.turns import EXPIRE, bot_queue

HEX_ID = re.compile(r"[0-9a-f]{32}")


def samples(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a scrape, by name and labels."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(text: str, name: str, **labels: str) -> float:
    """One sample's value; 0 when the scrape has none (a counter never incremented)."""
    return samples(text).get((name, frozenset(labels.items())), 0.0)


def scrape(client: FlaskClient) -> str:
    answer = client.get("/metrics")
    assert answer.status_code == 200, answer.get_data(as_text=True)
    assert answer.headers["Content-Type"].startswith("text/plain; version=")
    return answer.get_data(as_text=True)


def body(answer: TestResponse) -> Any:
    """The JSON body of an answer that must have one."""
    assert answer.json is not None, answer.get_data(as_text=True)
    return answer.json


def new_table(client: FlaskClient, **extra: Any) -> str:
    answer = client.post("/v1/tables", json={"game": "pig10", "seats": 2, **extra})
    assert answer.status_code == 201, answer.json
    table_id: str = body(answer)["id"]
    return table_id


# -- metrics ---------------------------------------------------------------------------------------


def test_requests_are_counted_by_route_template_and_status(client: FlaskClient) -> None:
    table_id = new_table(client)
    for _ in range(3):
        assert client.get(f"/v1/tables/{table_id}").status_code == 200
    assert client.get("/v1/tables/nosuchtable").status_code == 404
    assert client.get(f"/no/such/{table_id}/path").status_code == 404
    text = scrape(client)

    route = "/v1/tables/<table_id>"
    labels = {"method": "GET", "route": route}
    assert value(text, "spieltisch_http_requests_total", **labels, status="200") == 3
    assert value(text, "spieltisch_http_requests_total", **labels, status="404") == 1
    assert value(text, "spieltisch_http_requests_total", method="POST", route="/v1/tables",
                 status="201") == 1  # fmt: skip
    assert value(text, "spieltisch_http_requests_total", method="GET", route="unmatched",
                 status="404") == 1  # fmt: skip
    histogram = "spieltisch_http_request_duration_seconds"
    assert value(text, f"{histogram}_count", **labels, status="200") == 3
    assert value(text, f"{histogram}_bucket", **labels, status="200", le="+Inf") == 3
    buckets = [
        sample_value
        for (name, sample_labels), sample_value in samples(text).items()
        if name == f"{histogram}_bucket"
        and dict(sample_labels).get("route") == route
        and dict(sample_labels).get("status") == "200"
    ]
    assert len(buckets) == 16, "15 bounds and +Inf"
    assert table_id not in text, "no table id in a label"
    assert "/no/such" not in text, "no raw path in a label"


def test_moves_are_counted_by_game_and_who_made_them(client: FlaskClient) -> None:
    table_id = new_table(client)
    tokens = [
        body(client.post(f"/v1/tables/{table_id}/seats", json={"name": name}))["token"]
        for name in ("Ada", "Bo")
    ]
    seat = body(client.get(f"/v1/tables/{table_id}"))["to_act"][0]
    auth = {"Authorization": f"Bearer {tokens[seat]}"}
    moves = body(client.get(f"/v1/tables/{table_id}/moves", headers=auth))
    move = {"move": moves["moves"][0], "expected_version": moves["version"]}
    assert client.post(f"/v1/tables/{table_id}/moves", json=move, headers=auth).status_code == 200
    # The same move again is refused (stale): nothing more is appended, nothing more counted.
    assert client.post(f"/v1/tables/{table_id}/moves", json=move, headers=auth).status_code == 409

    text = scrape(client)
    assert value(text, "spieltisch_moves_total", game="pig10", by="person") == 1
    assert value(text, "spieltisch_moves_total", game="pig10", by="bot") == 0


def test_bot_turns_and_their_latency_are_counted_in_embedded_mode() -> None:
    """Embedded (one process, its bot worker a thread): an all-bot game plays to the end, and
    every bot move is a bot turn with its latency observed."""
    app = web_app(Config(rate_limits=False))
    client = app.test_client()
    bots = [{"seat": seat, "bot": "random"} for seat in range(2)]
    table_id = new_table(client, bots=bots)
    for _ in bounded("the all-bot game to finish", 600):
        if body(client.get(f"/v1/tables/{table_id}"))["status"] == "finished":
            break
        time.sleep(0.05)
    # The job that made the last move counts its turn once the move is stored, and the worker
    # counts the job after RQ has taken it off the started registry: on a busy machine the
    # table reads finished, and the registry empty, before either.
    started = StartedJobRegistry(queue=bot_queue(app.extensions["redis"]))
    for _ in bounded("the worker to finish its last job and count it", 600):
        text = scrape(client)
        moves = value(text, "spieltisch_moves_total", game="pig10", by="bot")
        finished = value(text, "spieltisch_jobs_total", job="play_turn", status="finished")
        # A job plays the turns due at once after its own too, up to TURNS_PER_JOB in a row.
        if started.count == 0 and finished >= moves / TURNS_PER_JOB:
            break
        time.sleep(0.05)
    assert moves > 0
    assert finished < moves, "the moves were played in fewer jobs"
    assert value(text, "spieltisch_bot_turns_total", game="pig10", outcome="played") == moves
    latency = "spieltisch_bot_turn_latency_seconds"
    assert value(text, f"{latency}_count", game="pig10", paced="false") == moves
    assert value(text, f"{latency}_bucket", game="pig10", paced="false", le="+Inf") == moves
    assert value(text, "spieltisch_bot_queue_depth") >= 0
    assert "spieltisch_bot_queue_oldest_age_seconds" in text


def test_live_streams_open_are_a_gauge(client: FlaskClient) -> None:
    table_id = new_table(client)
    stream = client.get(f"/v1/tables/{table_id}/stream", buffered=False)
    assert stream.status_code == 200
    assert value(scrape(client), "spieltisch_live_streams_open") == 1
    stream.close()
    assert value(scrape(client), "spieltisch_live_streams_open") == 0


def test_rate_limit_refusals_are_counted_and_answered_with_the_request_id(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    client = web_app(Config(limit_tables="1/minute"), redis_client=fake_redis).test_client()
    new_table(client)
    refused = client.post(
        "/v1/tables", json={"game": "pig10", "seats": 2}, headers={"X-Request-ID": "flood-1"}
    )
    assert refused.status_code == 429
    assert refused.headers["X-Request-ID"] == "flood-1"
    assert refused.json is not None
    assert refused.json["request_id"] == "flood-1"
    text = scrape(client)
    assert value(text, "spieltisch_rate_limited_total", route="/v1/tables") == 1
    assert value(text, "spieltisch_http_requests_total", method="POST", route="/v1/tables",
                 status="429") == 1  # fmt: skip


def test_redis_errors_are_counted_and_the_503_names_the_request() -> None:
    server = fakeredis.FakeServer()
    client = web_app(IN_PROCESS, redis_client=fakeredis.FakeRedis(server=server)).test_client()
    table_id = new_table(client)
    server.connected = False
    down = client.get(f"/v1/tables/{table_id}", headers={"X-Request-ID": "outage-7"})
    assert down.status_code == 503
    assert down.json is not None
    assert down.json["request_id"] == "outage-7"
    assert down.headers["X-Request-ID"] == "outage-7"
    # A scrape reads the bot queue from Redis, and goes on without it; the next one counts it.
    assert "spieltisch_bot_queue_depth" not in scrape(client)
    text = scrape(client)
    assert value(text, "spieltisch_redis_errors_total", where="request") == 1
    assert value(text, "spieltisch_redis_errors_total", where="scrape") == 1
    server.connected = True
    assert "spieltisch_bot_queue_depth" in scrape(client)


OUTAGES = [
    RedisConnectionError("Connection refused"),
    RedisTimeoutError("Timeout reading from socket"),
    BusyLoadingError("Redis is loading the dataset in memory"),
    ClusterDownError("The cluster is down"),  # type: ignore[no-untyped-call]
    TryAgainError("Multiple keys request during rehashing of slot"),  # type: ignore[no-untyped-call]
    SlotNotCoveredError("Slot 5 is not covered by the cluster"),
    cluster_lost_every_node(),
]


@pytest.mark.parametrize("outage", OUTAGES, ids=lambda error: type(error).__name__)
def test_an_outage_answers_503_with_a_retry_hint(outage: Exception) -> None:
    assert is_outage(outage)
    assert problem_of(outage) == (SERVICE_UNAVAILABLE, {})
    assert "retry in a moment" in detail_of(outage)


@pytest.mark.parametrize(
    "mistake",
    [
        RedisClusterException("keys in request don't hash to the same slot"),
        ResponseError("WRONGTYPE Operation against a key holding the wrong kind of value"),
    ],
    ids=lambda error: type(error).__name__,
)
def test_a_storage_mistake_is_no_outage_and_answers_500(mistake: Exception) -> None:
    assert not is_outage(mistake)
    assert problem_of(mistake) is None  # a 500: the service's own mistake, logged with its trace


def test_a_full_redis_is_unavailable_but_no_passing_outage() -> None:
    full = RedisOutOfMemoryError("command not allowed when used memory > 'maxmemory'")
    assert not is_outage(full)  # the worker does not wait for it; the client retries later
    assert problem_of(full) == (SERVICE_UNAVAILABLE, {})
    assert "storage is full" in detail_of(full)


def test_a_body_too_large_is_answered_with_the_request_id(client: FlaskClient) -> None:
    answer = client.post(
        "/v1/tables",
        data=json.dumps({"game": "pig10", "seats": 2, "pad": "x" * 20_000}),
        content_type="application/json",
        headers={"X-Request-ID": "big-body"},
    )
    assert answer.status_code == 413
    assert answer.json is not None
    assert answer.json["request_id"] == "big-body"
    assert answer.headers["X-Request-ID"] == "big-body"


def test_the_snapshot_counters_take_known_results_only() -> None:
    """The recording interface the snapshot code calls: reads by result, writes."""
    metrics = Metrics()
    recorder: SnapshotRecorder = metrics
    recorder.snapshot_read("hit")
    recorder.snapshot_read("hit")
    recorder.snapshot_read("miss")
    recorder.snapshot_read("a table id, by mistake")
    recorder.snapshot_written()
    text = metrics.render().decode()
    assert value(text, "spieltisch_snapshots_read_total", result="hit") == 2
    assert value(text, "spieltisch_snapshots_read_total", result="miss") == 1
    assert value(text, "spieltisch_snapshots_read_total", result="other") == 1
    assert value(text, "spieltisch_snapshots_written_total") == 1


def test_timeouts_and_substitutions_take_known_reasons_only() -> None:
    metrics = Metrics()
    metrics.clock_timeout("pig10")
    metrics.substitution("pig10", "webhook_timeout")
    metrics.substitution("pig10", "anything else")
    text = metrics.render().decode()
    assert value(text, "spieltisch_clock_timeouts_total", game="pig10") == 1
    reasons = {"clock": 1, "webhook_timeout": 1, "other": 1}
    for reason, count in reasons.items():
        assert value(text, "spieltisch_substitutions_total", game="pig10", reason=reason) == count


def test_an_unknown_method_is_counted_as_other() -> None:
    metrics = Metrics()
    metrics.request("BREW", "unmatched", 405, 0.001)
    assert value(metrics.render().decode(), "spieltisch_http_requests_total", method="other",
                 route="unmatched", status="405") == 1  # fmt: skip


# -- who may read /metrics -------------------------------------------------------------------------


def app_with(fake_redis: fakeredis.FakeRedis, **settings: Any) -> FlaskClient:
    return web_app(Config(rate_limits=False, **settings), redis_client=fake_redis).test_client()


ELSEWHERE = {"REMOTE_ADDR": "203.0.113.9"}


def test_metrics_answer_only_this_host_by_default(fake_redis: fakeredis.FakeRedis) -> None:
    client = app_with(fake_redis)
    assert client.get("/metrics").status_code == 200  # the test client is 127.0.0.1
    assert client.get("/metrics", environ_base={"REMOTE_ADDR": "::1"}).status_code == 200
    refused = client.get("/metrics", environ_base=ELSEWHERE)
    assert refused.status_code == 404
    assert refused.json is not None
    assert refused.json["type"] == "/problems/not-found"
    # A proxy on this host passes on requests from anywhere: not this host's, unless trusted.
    proxied = client.get("/metrics", headers={"X-Forwarded-For": "127.0.0.1"})
    assert proxied.status_code == 404


def test_behind_trusted_proxies_the_client_address_decides(fake_redis: fakeredis.FakeRedis) -> None:
    client = app_with(fake_redis, trusted_proxies=1)
    assert client.get("/metrics", headers={"X-Forwarded-For": "127.0.0.1"}).status_code == 200
    assert client.get("/metrics", headers={"X-Forwarded-For": "198.51.100.1"}).status_code == 404


def test_metrics_with_a_token_want_the_token_from_everyone(fake_redis: fakeredis.FakeRedis) -> None:
    client = app_with(fake_redis, metrics="token", metrics_token="s3cret-token")
    assert client.get("/metrics").status_code == 401
    wrong = client.get("/metrics", headers={"Authorization": "Bearer guess"})
    assert wrong.status_code == 401
    assert wrong.json is not None
    assert wrong.json["type"] == "/problems/unauthorized"
    right = {"Authorization": "Bearer s3cret-token"}
    assert client.get("/metrics", headers=right, environ_base=ELSEWHERE).status_code == 200


def test_public_metrics_answer_everyone_and_off_answers_nobody(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    assert app_with(fake_redis, metrics="public").get(
        "/metrics", environ_base=ELSEWHERE
    ).status_code == 200  # fmt: skip
    assert app_with(fake_redis, metrics="off").get("/metrics").status_code == 404


def test_the_exposure_setting_is_read_and_checked() -> None:
    assert Config.from_env({}).metrics == "loopback"
    assert Config.from_env({"SPIELTISCH_METRICS": "Public"}).metrics == "public"
    with_token = Config.from_env({"SPIELTISCH_METRICS_TOKEN": "t0ken"})
    assert (with_token.metrics, with_token.metrics_token) == ("token", "t0ken")
    with pytest.raises(ValueError, match="SPIELTISCH_METRICS is 'everyone'"):
        Config.from_env({"SPIELTISCH_METRICS": "everyone"})
    with pytest.raises(ValueError, match="needs SPIELTISCH_METRICS_TOKEN"):
        Config(metrics="token")


# -- request ids and log lines ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "sent", ["abc-123", "0f8fad5b-d9cb-469f-a165-70867728950e", "trace:svc/a+b=c@d.e_f", "x" * 128]
)
def test_a_safe_request_id_is_kept_and_echoed(client: FlaskClient, sent: str) -> None:
    assert accepted_request_id(sent) == sent
    assert client.get("/health", headers={"X-Request-ID": sent}).headers["X-Request-ID"] == sent


@pytest.mark.parametrize(
    "sent", ["", "x" * 129, "has space", 'quote"', "line\\nbreak", "ümlaut", "semi;colon", "<b>"]
)
def test_an_unsafe_request_id_is_replaced(client: FlaskClient, sent: str) -> None:
    answer = client.get("/v1/games/chess", headers={"X-Request-ID": sent})
    given = answer.headers["X-Request-ID"]
    assert HEX_ID.fullmatch(given), given
    assert answer.json is not None
    assert answer.json["request_id"] == given


def test_every_answer_has_a_request_id_of_its_own(client: FlaskClient) -> None:
    ids = {client.get("/health").headers["X-Request-ID"] for _ in range(5)}
    assert len(ids) == 5
    assert all(HEX_ID.fullmatch(request_id) for request_id in ids)


@pytest.fixture
def log_lines() -> Iterator[io.StringIO]:
    """What the JSON handler writes, as the Procfile's processes install it."""
    lines = io.StringIO()
    handler = JsonLines(lines)
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield lines
    root.removeHandler(handler)
    root.setLevel(level)


def parsed(lines: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines.getvalue().splitlines()]


def test_each_request_is_one_json_log_line(client: FlaskClient, log_lines: io.StringIO) -> None:
    table_id = new_table(client)
    client.get(f"/v1/tables/{table_id}", headers={"X-Request-ID": "read-1"})
    requests = [line for line in parsed(log_lines) if line["logger"] == "spieltisch.access"]
    assert len(requests) == 2
    read = requests[1]
    assert read["request_id"] == "read-1"
    assert read["method"] == "GET"
    assert read["route"] == "/v1/tables/<table_id>"
    assert read["path"] == f"/v1/tables/{table_id}"
    assert read["table_id"] == table_id
    assert read["status"] == 200
    assert read["duration_ms"] >= 0
    assert read["level"] == "INFO"
    assert read["time"].endswith("+00:00")


def test_a_line_with_an_exception_and_non_ascii_text_is_still_one_json_object(
    log_lines: io.StringIO,
) -> None:
    """The formatter encodes with orjson: what the standard library's encoder took (a
    traceback, text beyond ASCII, an object it cannot encode) still makes one line."""
    try:
        raise RuntimeError("Würfel fiel vom Tisch")
    except RuntimeError:
        logging.getLogger("spieltisch.test").exception(
            "Zug für %s", "Zoë", extra={"seats": {1: "Ada"}, "odd": object()}
        )
    (line,) = parsed(log_lines)
    assert line["message"] == "Zug für Zoë"
    assert "RuntimeError: Würfel fiel vom Tisch" in line["exc_info"]
    assert line["seats"] == {"1": "Ada"}
    assert line["odd"].startswith("<object object at ")
    assert line["level"] == "ERROR"


def test_a_move_s_request_id_follows_into_the_bot_jobs_it_caused(log_lines: io.StringIO) -> None:
    """Embedded, the bot worker is a thread: the job a move queued runs under the move's id,
    and logs its one line with it."""
    app: Flask = web_app(Config(rate_limits=False, bot_delay_seconds=0, reaction_seconds=0))
    client = app.test_client()
    table_id = new_table(client, bots=[{"seat": 1, "bot": "random"}])
    token = body(client.post(f"/v1/tables/{table_id}/seats", json={"name": "Ada"}))["token"]
    auth = {"Authorization": f"Bearer {token}"}
    for _ in bounded("seat 0 to be asked to move", 600):
        moves = body(client.get(f"/v1/tables/{table_id}/moves", headers=auth))
        if moves["to_act"]:
            break
        time.sleep(0.02)
    move = {"move": moves["moves"][0], "expected_version": moves["version"]}
    headers = {**auth, "X-Request-ID": "move-abc"}
    answer = client.post(f"/v1/tables/{table_id}/moves", json=move, headers=headers)
    assert answer.status_code == 200
    assert answer.headers["X-Request-ID"] == "move-abc"
    for _ in bounded("the bot turn's job to be logged", 600):
        jobs = [
            line
            for line in parsed(log_lines)
            if line["logger"] == "spieltisch.jobs" and line["request_id"] == "move-abc"
        ]
        if jobs:
            break
        time.sleep(0.02)
    assert jobs[0]["job"] == "play_turn"
    assert jobs[0]["table_id"] == table_id
    assert jobs[0]["seat"] == 1
    assert jobs[0]["version"] == body(answer)["version"], "the turn the move gave the bot"
    assert jobs[0]["outcome"] == "played"


def test_the_queue_figures_are_its_depth_its_oldest_wait_and_what_is_scheduled(
    fake_redis: fakeredis.FakeRedis,
) -> None:
    queue = bot_queue(fake_redis)
    job = queue.enqueue(EXPIRE, "some-table", 1)
    queue.enqueue(EXPIRE, "other-table", 1)
    queue.enqueue_at(datetime.now(UTC) + timedelta(hours=1), EXPIRE, "later-table", 1)
    assert job.enqueued_at is not None
    queued = job.enqueued_at.replace(tzinfo=UTC)
    registry = CollectorRegistry()
    registry.register(QueueFigures(queue, clock=lambda: queued + timedelta(seconds=7)))
    text = generate_latest(registry).decode()
    assert value(text, "spieltisch_bot_queue_depth") == 2
    assert value(text, "spieltisch_bot_queue_oldest_age_seconds") == 7
    assert value(text, "spieltisch_bot_jobs_scheduled") == 1


def test_a_person_s_clock_running_out_is_a_timeout_and_a_substitution() -> None:
    """Embedded, RQ's scheduler is a thread: the deadline's job lets a stand-in move, and the
    bot beside the person waits the default bot delay (1 s), so its turns are `paced`."""
    client = web_app(Config(rate_limits=False)).test_client()
    table_id = new_table(client, bots=[{"seat": 1, "bot": "random"}], clock={"turn_seconds": 1})
    client.post(f"/v1/tables/{table_id}/seats", json={"name": "Ada"})
    latency = "spieltisch_bot_turn_latency_seconds_count"
    finished = {"job": "time_out", "status": "finished"}
    for _ in bounded("the person's clock to run out, its job to end, and the bot to move", 600):
        text = scrape(client)
        # The stand-in's move is counted inside the time-out job, the job itself once it has
        # ended: when the bot moved first, the scrape may fall between the two.
        if (
            value(text, "spieltisch_clock_timeouts_total", game="pig10")
            and value(text, "spieltisch_jobs_total", **finished)
            and value(text, latency, game="pig10", paced="true")
        ):
            break
        time.sleep(0.05)
    assert value(text, latency, game="pig10", paced="false") == 0
    assert value(text, "spieltisch_substitutions_total", game="pig10", reason="clock") >= 1
    assert value(text, "spieltisch_moves_total", game="pig10", by="stand_in") >= 1
    assert value(text, "spieltisch_jobs_total", **finished) >= 1
