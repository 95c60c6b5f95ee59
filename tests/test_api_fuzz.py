"""Property-based fuzzing of the HTTP API, driven by `openapi.yaml` with schemathesis.

Every response must be no server error and conform to the spec: a documented status code, a
documented media type, a body that validates against the documented schema, the documented
headers, and a problem's `type` one that the route's documented response names. Two runs over
every operation:

- `test_api_conforms`: schemathesis's own phases: the spec's examples, the coverage phase's
  boundary and negative values, and random fuzzing. The spec's example table id is aimed at a
  running table and the empty bearer token the coverage phase sends at the seat to move, so the
  body variations of those phases reach the game's rules, not only the 404 of a missing table.
- `test_api_conforms_in_stateful_sequences`: schemathesis's stateful phase, chaining calls by
  the links it infers (a table's id from its creation, a seat's token from taking it), each call
  made with the token of a seat taken earlier at that table, so sequences reach the moves as a
  seat.
- `test_api_conforms_in_deep_states`: an explicit Hypothesis strategy that picks a real table
  in a known state (open, half full, running early, mid and late game, an eight-seat game near
  its end, finished, or a fresh one) or a random id; a caller (no token, the seat to move,
  another seat, a token of another table, garbage); and for moves, often a legal move at the
  current version, so the run plays games forward and reaches states random data never would.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest
import schemathesis
import yaml
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from bootstrap import EMBEDDED_WORKER, web_app
from service.app import OPENAPI
from service.config import Config

# Streams of running games would wait for events that never come: keep them short.
# The fuzzer explores the API behind its rate limits (tests/test_limits.py tests those).
# Nor may the quotas stop it opening tables: it opens far more than any client keeps going.
APP = web_app(
    Config(
        stream_keepalive_seconds=0.05,
        stream_max_seconds=0.2,
        rate_limits=False,
        max_open_tables=10**6,
        max_bot_tables=10**6,
    )
)
SCHEMA = schemathesis.openapi.from_wsgi("/openapi.yaml", APP)


def teardown_module() -> None:
    """The app is embedded: its bot worker's threads must not outlive these tests."""
    assert APP.extensions[EMBEDDED_WORKER].stop(), "the embedded worker's threads did not stop"


SPEC: dict[str, Any] = yaml.safe_load(OPENAPI.read_text())


def problem_conformance(
    ctx: schemathesis.CheckContext, response: schemathesis.Response, case: schemathesis.Case[Any]
) -> None:
    """A problem repeats its status, and its `type` is one the route documents for it."""
    if not response.headers.get("content-type", [""])[0].startswith("application/problem+json"):
        return
    operation = SPEC["paths"][case.operation.path].get(case.method.lower())
    if operation is None:
        return  # a probe with a method the path does not declare: a 405, checked elsewhere
    documented = operation["responses"].get(str(response.status_code))
    if documented is None:
        return  # status_code_conformance reports it
    while "$ref" in documented:
        documented = SPEC["components"]["responses"][documented["$ref"].rsplit("/", 1)[1]]
    problem = response.json()
    slug = problem["type"].removeprefix("/problems/")
    assert problem["status"] == response.status_code, problem
    assert f"`{slug}`" in documented["description"], (
        f"{case.method} {case.operation.path} answered {response.status_code} {slug}, "
        "which its documented response does not name"
    )


CHECKS: list[Callable[..., Any]] = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
    problem_conformance,
]
EXAMPLE_TABLE = "Qm9vG1x-dQ3"
"""The `table_id` example in openapi.yaml, which the examples and coverage phases send."""
FUZZ = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


# -- tables in known states -------------------------------------------------------------------


@dataclass
class Table:
    id: str
    tokens: dict[int, str] = field(default_factory=dict)
    """The token of every seat whose taking we saw (ours, or the fuzzer's)."""


class Tables:
    """Tables made through the API itself, and what the fuzzer needs to know about them."""

    def __init__(self, client: FlaskClient) -> None:
        self.client = client
        self.known: dict[str, Table] = {}
        self.counter = itertools.count()

    def create(self, seats: int, taken: int, moves: int) -> Table:
        """A Pig 10 table of `seats` seats, `taken` of them taken and `moves` moves played."""
        reply = self.client.post("/v1/tables", json={"game": "pig10", "seats": seats})
        assert reply.status_code == 201, reply.get_json()
        table = Table(reply.get_json()["id"])
        self.known[table.id] = table
        for number in range(taken):
            sat = self.client.post(f"/v1/tables/{table.id}/seats", json={"name": f"p{number}"})
            assert sat.status_code == 201, sat.get_json()
            table.tokens[sat.get_json()["seat"]] = sat.get_json()["token"]
        for turn in range(moves):
            if not self.play(table, turn):
                break
        return table

    def remember(self, case: schemathesis.Case[Any], response: schemathesis.Response) -> None:
        """Keep the token of a seat the fuzzer took at a known table."""
        table = self.known.get((case.path_parameters or {}).get("table_id", ""))
        if table is not None and case.method == "POST" and response.status_code == 201:
            taken = response.json()
            table.tokens[taken["seat"]] = taken["token"]

    def status(self, table: Table) -> str:
        status: str = self.client.get(f"/v1/tables/{table.id}").get_json()["status"]
        return status

    def version(self, table: Table) -> int:
        version: int = self.client.get(f"/v1/tables/{table.id}").get_json()["version"]
        return version

    def to_act(self, table: Table) -> int | None:
        """The seat that may move now, if the game is running and we hold its token."""
        to_act = self.client.get(f"/v1/tables/{table.id}").get_json()["to_act"]
        return to_act[0] if to_act and to_act[0] in table.tokens else None

    def mover_token(self, table: Table) -> str:
        """The token of the seat to move, else of any seat we know, else a token of no seat."""
        seat = self.to_act(table)
        if seat is not None:
            return table.tokens[seat]
        return next(iter(table.tokens.values()), "no-such-token")

    def legal(self, table: Table, seat: int) -> tuple[int, list[Any]]:
        answer = self.client.get(
            f"/v1/tables/{table.id}/moves",
            headers={"Authorization": f"Bearer {table.tokens[seat]}"},
        ).get_json()
        return answer["version"], answer["moves"]

    def play(self, table: Table, choice: int) -> bool:
        """Play the `choice`-th legal move (modulo their number) of the seat to move."""
        seat = self.to_act(table)
        if seat is None:
            return False
        version, moves = self.legal(table, seat)
        reply = self.client.post(
            f"/v1/tables/{table.id}/moves",
            json={"move": moves[choice % len(moves)], "expected_version": version},
            headers={"Authorization": f"Bearer {table.tokens[seat]}"},
        )
        assert reply.status_code == 200, reply.get_json()
        return True


RECIPES = {
    "open": (2, 0, 0, "open"),
    "half": (3, 1, 0, "open"),
    "early": (2, 2, 1, "running"),
    "mid": (4, 4, 25, "running"),
    "late": (2, 2, 74, "running"),
    "crowd": (8, 8, 72, "running"),
    "finished": (2, 2, 200, "finished"),
}
"""Each kind of table: seats, seats taken, moves played, and the status it is meant to have."""
KINDS = [*RECIPES, "fresh"]


class Pool:
    """A table of each kind the fuzzer aims at, renewed once the fuzz moved it on."""

    def __init__(self, tables: Tables) -> None:
        self.tables = tables
        self.kinds = {kind: self.make(kind) for kind in RECIPES}

    def make(self, kind: str) -> Table:
        seats, taken, moves, _ = RECIPES[kind]
        return self.tables.create(seats=seats, taken=taken, moves=moves)

    def pick(self, kind: str) -> Table:
        """A table of `kind`; `fresh` is a new open table of 2 to 4 seats."""
        if kind == "fresh":
            return self.tables.create(seats=2 + next(self.tables.counter) % 3, taken=0, moves=0)
        if self.tables.status(self.kinds[kind]) != RECIPES[kind][3]:
            self.kinds[kind] = self.make(kind)
        return self.kinds[kind]


@pytest.fixture(scope="module")
def pool() -> Pool:
    made = Pool(Tables(APP.test_client()))
    for kind, recipe in RECIPES.items():
        assert made.tables.status(made.kinds[kind]) == recipe[3], kind
    return made


# -- schemathesis's own phases ----------------------------------------------------------------


@pytest.fixture(scope="module")
def lively(pool: Pool) -> Table:
    """The running table the spec's example table id is aimed at."""
    return pool.tables.create(seats=3, taken=3, moves=5)


def aim(case: schemathesis.Case[Any], pool: Pool, table: Table) -> None:
    """Aim the spec's example table id at `table`, and an empty bearer token at its mover."""
    parameters = case.path_parameters or {}
    if parameters.get("table_id") != EXAMPLE_TABLE:
        return
    case.path_parameters = {**parameters, "table_id": table.id}
    if case.headers.get("Authorization", "").strip() == "Bearer":
        case.headers["Authorization"] = f"Bearer {pool.tables.mover_token(table)}"


@SCHEMA.parametrize()
@FUZZ
def test_api_conforms(case: schemathesis.Case[Any], pool: Pool, lively: Table) -> None:
    aim(case, pool, lively)
    pool.tables.remember(case, case.call_and_validate(checks=CHECKS))


# -- deep states --------------------------------------------------------------------------------


def operations() -> list[tuple[str, str]]:
    found = []
    for result in SCHEMA.get_all_operations():
        assert isinstance(result, Ok), result
        found.append((result.ok().path, result.ok().method.upper()))
    return sorted(found)


OPERATIONS = operations()
CALLERS = ["none", "mover", "mover", "mover", "other-seat", "foreign", "garbage", "generated"]
"""Who calls: the seat to move is drawn most often, so that moves get past the token check."""


def authorization(pool: Pool, table: Table, caller: str) -> dict[str, str] | None:
    """The headers that make `caller` at `table` (None: leave the header to schemathesis)."""
    seats = sorted(table.tokens)
    mover = pool.tables.to_act(table)
    if caller == "mover" and seats:
        token = table.tokens[mover if mover is not None else seats[0]]
    elif caller == "other-seat" and seats:
        token = table.tokens[next((s for s in seats if s != mover), seats[0])]
    elif caller == "foreign":
        other = pool.kinds["mid"] if table is not pool.kinds["mid"] else pool.kinds["late"]
        token = other.tokens[0]
    elif caller == "garbage":
        return {"Authorization": "Token abc"}
    elif caller == "none":
        return {}
    else:
        return None
    return {"Authorization": f"Bearer {token}"}


MOVES = "/v1/tables/{table_id}/moves"
SEATS = "/v1/tables/{table_id}/seats"
LEAVE = "/v1/tables/{table_id}/leave"
PLAYING = ["early", "mid", "late", "late", "crowd", "crowd", "finished", "half", "fresh", "random"]
"""The tables moves are aimed at: mostly running games."""
MOVE_BODIES = ["generated", "legal", "legal", "replayed", "stale", "pig10-shaped"]
"""How a move's body is made: as generated, a legal move (twice as often), a legal move sent
twice with one Idempotency-Key, a legal move at the version before, or a move of Pig 10's shape
with any card and mode (mostly illegal ones)."""
CHOICES = 2**16
"""The fixed range a choice among what a table holds now is drawn in (see `steer_move`)."""
PIG10_SHAPED = st.fixed_dictionaries(
    {"card": st.integers(-1, 11), "mode": st.sampled_from(["add", "subtract", "set", "pass"])}
)


def steer_move(case: schemathesis.Case[Any], pool: Pool, table: Table, data: st.DataObject) -> int:
    """Give a move request one of the MOVE_BODIES; answer how many times to send it."""
    how = data.draw(st.sampled_from(MOVE_BODIES), label="body")
    if how == "generated":
        return 1
    seat = pool.tables.to_act(table)
    version = pool.tables.version(table)
    moves = pool.tables.legal(table, seat)[1] if seat is not None else []
    # The same draws whatever the table holds now (earlier examples moved it on): Hypothesis
    # refuses a test whose choices change shape from one run of an example to the next.
    pick = data.draw(st.integers(0, CHOICES - 1), label="which legal move")
    shaped = data.draw(PIG10_SHAPED, label="pig10-shaped move")
    move: Any = shaped if how == "pig10-shaped" or not moves else moves[pick % len(moves)]
    case.body = {"move": move, "expected_version": version - (how == "stale")}
    if seat is not None and how != "pig10-shaped":
        case.headers["Authorization"] = f"Bearer {table.tokens[seat]}"
    if how == "replayed":
        case.headers["Idempotency-Key"] = f"fuzz-{next(pool.tables.counter)}"
        return 2
    return 1


@pytest.mark.parametrize(("path", "method"), OPERATIONS)
@FUZZ
@given(data=st.data())
def test_api_conforms_in_deep_states(
    pool: Pool, path: str, method: str, data: st.DataObject
) -> None:
    operation = SCHEMA[path][method]
    mode = data.draw(st.sampled_from(list(schemathesis.GenerationMode)), label="mode")
    fixed: dict[str, Any] = {}
    headers: dict[str, str] | None = None
    table: Table | None = None
    if "{table_id}" in path:
        kinds = PLAYING if path == MOVES else [*KINDS, "random"]
        kind = data.draw(st.sampled_from(kinds), label="table")
        if kind != "random":
            table = pool.pick(kind)
            fixed["table_id"] = table.id
            headers = authorization(pool, table, data.draw(st.sampled_from(CALLERS), label="as"))
            if "{version}" in path:
                # 0 to one past the latest version, drawn in a range that does not move.
                share = data.draw(st.integers(0, CHOICES - 1), label="version")
                fixed["version"] = share * (pool.tables.version(table) + 2) // CHOICES
    case = data.draw(
        operation.as_strategy(
            generation_mode=mode, path_parameters=fixed or None, headers=headers or None
        ),
        label="case",
    )
    if headers == {}:
        case.headers.pop("Authorization", None)
    sends = 1
    if table is not None and (path, method) == (MOVES, "POST"):
        sends = steer_move(case, pool, table, data)
    for _ in range(sends):
        pool.tables.remember(case, case.call_and_validate(checks=CHECKS))


# -- stateful sequences -----------------------------------------------------------------------


class Sequences(SCHEMA.as_state_machine()):  # type: ignore[misc]  # a class made at run time
    """Schemathesis's state machine over the inferred links, steered every other call: to a
    table a sequence opened, a plain seat-taking body there, and a legal move as its seat, so
    that sequences reach the moves as a seat and play games forward."""

    moves_as_seat: ClassVar[list[int]] = []
    """The status of each move sent with a seat's token, over every scenario."""

    def setup(self) -> None:
        self.client = APP.test_client()
        # Each scenario starts with a running table and an open one of its own, besides those
        # it opens itself: steered calls go to the running one, seat-taking to the open one.
        tables = Tables(self.client)
        self.tables = [tables.create(seats=2, taken=2, moves=0), tables.create(3, 0, 0)]
        self.calls = itertools.count()

    def before_call(self, case: schemathesis.Case[Any]) -> None:
        # Until a sequence has played a move as a seat, every move is steered: the deep-states
        # test above fuzzes move bodies; this one must reach the moves with a token.
        is_move = (case.operation.path, case.method) == (MOVES, "POST")
        steer = next(self.calls) % 2 == 0 or (is_move and 200 not in self.moves_as_seat)
        parameters = case.path_parameters or {}
        if steer and "table_id" in parameters:
            running, open_table = self.tables[:2]
            table = open_table if (case.operation.path, case.method) == (SEATS, "POST") else running
            case.path_parameters = {**parameters, "table_id": table.id}
            if table is open_table:
                case.body = {"name": f"p{len(table.tokens)}"}
            if (case.operation.path, case.method) == (MOVES, "POST"):
                self.legal_move(case, table)
        # Leaving the running table would hand its seats to bots, and no move as a seat could
        # follow in this scenario: the leaving is tried at the open table instead.
        leaving = (case.operation.path, case.method) == (LEAVE, "POST")
        if leaving and self.known(case) is self.tables[0]:
            case.path_parameters = {**parameters, "table_id": self.tables[1].id}
        known = self.known(case)
        if known is not None and known.tokens:
            case.headers["Authorization"] = f"Bearer {Tables(self.client).mover_token(known)}"

    def known(self, case: schemathesis.Case[Any]) -> Table | None:
        table_id = (case.path_parameters or {}).get("table_id")
        return next((table for table in self.tables if table.id == table_id), None)

    def legal_move(self, case: schemathesis.Case[Any], table: Table) -> None:
        tables = Tables(self.client)
        seat = tables.to_act(table)
        if seat is not None:
            version, moves = tables.legal(table, seat)
            if moves:  # none for a seat its token left to a bot
                case.body = {"move": moves[0], "expected_version": version}

    def after_call(self, response: schemathesis.Response, case: schemathesis.Case[Any]) -> None:
        call = (case.operation.path, case.method)
        if call == ("/v1/tables", "POST") and response.status_code == 201:
            self.tables.append(Table(response.json()["id"]))
        table = self.known(case)
        if table is None:
            return
        if call == (SEATS, "POST") and response.status_code == 201 and response.json()["token"]:
            table.tokens[response.json()["seat"]] = response.json()["token"]
        if call == (MOVES, "POST") and table.tokens:
            self.moves_as_seat.append(response.status_code)

    def validate_response(
        self, response: schemathesis.Response, case: schemathesis.Case[Any], **kwargs: Any
    ) -> None:
        case.validate_response(response, checks=CHECKS)


def test_api_conforms_in_stateful_sequences() -> None:
    Sequences.run(
        settings=settings(
            max_examples=60,
            stateful_step_count=12,
            deadline=None,
            derandomize=True,  # the same sequences in every run: CI must not pass by luck
            suppress_health_check=list(HealthCheck),
        )
    )
    assert 200 in Sequences.moves_as_seat, "no sequence played a move as a seat"
