"""The HTTP contract (`openapi.yaml`) and the server, kept in step.

Fast checks that every route the Flask app serves is in the spec with the same methods (and
back), that the served document is the file, that every problem `type` the code can produce
is listed, and a scripted walk of a whole two-seat Pig 10 game through the test client in
which EVERY response is checked against the spec: its status is documented for the route,
its media type too, its body validates against the documented schema (with `$ref`s resolved
against the spec document), and so do its documented headers. The walk also drives every
documented problem response, and checks at the end that it saw every documented status.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache, partial
from pathlib import Path
from random import Random
from typing import Any
from urllib.parse import quote

import fakeredis
import jsonschema_rs
import pytest
import schemathesis
import yaml
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.datastructures import Headers

from bootstrap import web_app
from domain.registry import default_registry
from service import errors
from service.app import OPENAPI
from service.client import client
from service.config import Config
from service.signing import decode_key
from service.verifier import verify

ROOT = Path(__file__).resolve().parent.parent
SPEC_URI = "urn:spieltisch:openapi"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
MAX_BODY = Config().max_body_bytes

STREAMS = 2
"""Live streams the walk's server allows at once, so that the walk can reach the 503."""


def load_spec() -> dict[str, Any]:
    spec: dict[str, Any] = yaml.safe_load(OPENAPI.read_text())
    return spec


SPEC = load_spec()
REGISTRY = jsonschema_rs.Registry([(SPEC_URI, SPEC)])


def pointer(*parts: str) -> str:
    """A JSON pointer (RFC 6901) to `parts` inside the spec."""
    return "".join("/" + part.replace("~", "~0").replace("/", "~1") for part in parts)


def at(location: str) -> Any:
    """The spec node at a JSON pointer."""
    node: Any = SPEC
    for part in location.split("/")[1:]:
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def follow(location: str) -> str:
    """`location`, or where its `$ref` (a local one) leads."""
    node = at(location)
    while isinstance(node, dict) and "$ref" in node:
        reference: str = node["$ref"]
        assert reference.startswith("#/"), reference
        location = reference[1:]
        node = at(location)
    return location


@cache
def validator(location: str) -> jsonschema_rs.Validator:
    """A validator for the schema at `location`, its `$ref`s resolved against the spec."""
    return jsonschema_rs.validator_for(
        {"$ref": f"{SPEC_URI}#{quote(location, safe='/~+')}"},
        registry=REGISTRY,
        validate_formats=True,
    )


def assert_valid(location: str, instance: Any, what: str) -> None:
    found = [
        f"{'/'.join(map(str, error.instance_path)) or '<root>'}: {error.message}"
        for error in validator(location).iter_errors(instance)
    ]
    assert not found, f"{what} breaks {location}:\n" + "\n".join(found) + f"\n{instance!r}"


def component(name: str) -> str:
    return pointer("components", "schemas", name)


def spec_operations() -> set[tuple[str, str]]:
    return {
        (path, method)
        for path, item in SPEC["paths"].items()
        for method in item
        if method in HTTP_METHODS
    }


def flask_path(rule: str) -> str:
    """A Flask rule as an OpenAPI path: `/versions/<int:version>` as `/versions/{version}`."""
    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule)


def served_operations(app: Flask) -> Iterator[tuple[str, str, set[str]]]:
    """Each rule's OpenAPI path, endpoint, and methods (without Flask's automatic ones)."""
    for rule in app.url_map.iter_rules():
        if rule.endpoint.startswith(f"{client.name}."):
            continue  # the web client's page and files, not the API
        methods = set(rule.methods or ())
        if getattr(rule, "provide_automatic_options", False):  # set on the rule by Flask
            methods.discard("OPTIONS")
        if "GET" in methods:
            methods.discard("HEAD")
        yield flask_path(rule.rule), rule.endpoint, {method.lower() for method in methods}


@pytest.fixture
def redis_server() -> fakeredis.FakeServer:
    """The walk's in-process Redis, which it takes down to see every route answer the outage."""
    return fakeredis.FakeServer()


@pytest.fixture
def app(redis_server: fakeredis.FakeServer) -> Flask:
    # The walk sends its refusals faster than any client plays; the limits have a phase of their
    # own (`Walk.flooded`) on a web process of their own.
    config = Config(max_streams=STREAMS, rate_limits=False)
    return web_app(config, redis_client=fakeredis.FakeRedis(server=redis_server))


# -- the spec and the routes ------------------------------------------------------------------


def test_the_spec_is_a_valid_openapi_document() -> None:
    assert SPEC["openapi"].startswith("3.1.")
    schemathesis.openapi.from_dict(load_spec()).validate()
    for path, method in spec_operations():
        operation = SPEC["paths"][path][method]
        for member in ("operationId", "summary", "description", "responses"):
            assert operation.get(member), f"{method.upper()} {path} has no {member}"
    ids = [SPEC["paths"][path][method]["operationId"] for path, method in spec_operations()]
    assert len(ids) == len(set(ids)), "operationIds must be unique"


def examples(node: Any, location: str = "") -> Iterator[tuple[str, Any]]:
    """Every example in the spec with the pointer of the schema it must match.

    A media type's or parameter's `example` matches its `schema`; each item of a schema's
    `examples` matches that schema.
    """
    if isinstance(node, dict):
        if "example" in node and "schema" in node:
            yield location + "/schema", node["example"]
        if isinstance(node.get("examples"), list) and not location.endswith("/properties"):
            for example in node["examples"]:
                yield location, example
        for key, value in node.items():
            yield from examples(value, location + pointer(key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from examples(value, location + pointer(str(index)))


def test_every_example_in_the_spec_matches_its_schema() -> None:
    found = list(examples(SPEC))
    assert len(found) > 20
    for location, example in found:
        assert_valid(location, example, f"the example at {location}")


def test_every_schema_in_the_spec_compiles() -> None:
    for name in SPEC["components"]["schemas"]:
        validator(component(name))


def test_every_served_route_is_in_the_spec_with_the_same_methods(app: Flask) -> None:
    for path, endpoint, methods in served_operations(app):
        assert path in SPEC["paths"], f"{endpoint} serves {path}, which the spec does not list"
        documented = {method for method in SPEC["paths"][path] if method in HTTP_METHODS}
        assert methods <= documented, f"{path}: served {methods}, documented {documented}"


def test_every_spec_operation_is_served(app: Flask) -> None:
    served = {(path, method) for path, _, methods in served_operations(app) for method in methods}
    assert spec_operations() == served


def test_path_parameters_match_the_route_converters(app: Flask) -> None:
    for rule in app.url_map.iter_rules():
        if rule.endpoint.startswith(f"{client.name}."):
            continue  # the web client's page and files, not the API
        path = flask_path(rule.rule)
        item = SPEC["paths"][path]
        for method in (m for m in item if m in HTTP_METHODS):
            declared = {}
            for parameter in [*item.get("parameters", []), *item[method].get("parameters", [])]:
                resolved = parameter
                if "$ref" in parameter:
                    resolved = at(parameter["$ref"][1:])
                if resolved["in"] == "path":
                    declared[resolved["name"]] = resolved["schema"]["type"]
            converters = {
                name: "integer" if type(converter).__name__ == "IntegerConverter" else "string"
                for name, converter in rule._converters.items()
            }
            assert declared == converters, f"{method.upper()} {path}"


def test_the_served_spec_is_the_file(app: Flask) -> None:
    response = app.test_client().get("/openapi.yaml")
    assert response.status_code == 200
    assert response.mimetype == "application/yaml"
    assert response.get_data(as_text=True) == (ROOT / "openapi.yaml").read_text()


# -- problem types ----------------------------------------------------------------------------


def test_every_problem_type_of_the_error_table_is_listed() -> None:
    """The spec lists exactly the problem types of `service.errors`' one table."""
    problem = SPEC["components"]["schemas"]["Problem"]
    listed = {
        value.removeprefix(errors.PROBLEM_BASE) for value in problem["properties"]["type"]["enum"]
    }
    found = {kind.removeprefix(errors.PROBLEM_BASE) for kind in errors.every_problem_type()}
    assert {"invalid-body", "invalid-query", "unknown-table", "illegal-move"} <= found
    assert found == listed, (
        f"in the code only: {found - listed}; in the spec only: {listed - found}"
    )
    for slug in listed:
        assert f"- `{slug}` (" in problem["description"], f"{slug} has no sentence"


def test_every_problem_type_is_in_the_readme_error_table() -> None:
    """Each `type` the API can answer has a row of the README's error table, with its status."""
    rows = [
        line
        for line in (ROOT / "README.md").read_text().splitlines()
        if line.startswith("| `/problems/")
    ]
    for kind in errors.every_problem_type():
        assert any(f"`{kind}`" in row for row in rows), f"{kind} has no row in the error table"
    for problem in errors.every_problem():
        kind = errors.PROBLEM_BASE + problem.slug
        named = [row for row in rows if f"`{kind}`" in row]
        assert any(f"| {problem.status}" in row for row in named), (
            f"{kind}: no row says {problem.status}"
        )


def test_every_rule_slug_is_documented() -> None:
    rules = set()
    for path in ROOT.glob("domain/games/*.py"):
        rules |= set(re.findall(r'RuleError\(\s*"([a-z-]+)"', path.read_text()))
    assert rules
    documented = SPEC["components"]["schemas"]["Problem"]["properties"]["rule"]["description"]
    for rule in rules:
        assert f"`{rule}`" in documented, rule


# -- the walk ---------------------------------------------------------------------------------


def server_sent_events(text: str) -> list[dict[str, str]]:
    """The events of a whole text/event-stream body: one dict of fields per frame with data."""
    frames = text.split("\n\n")
    assert frames[-1] == "", "the stream ends after a whole frame"
    assert frames[0] == "retry: 1000", "a stream starts by telling clients when to reconnect"
    events = []
    for frame in frames[1:-1]:
        if frame.startswith(":"):
            continue  # a comment: keep-alive
        events.append(dict(line.split(": ", 1) for line in frame.split("\n")))
    return events


@dataclass(frozen=True)
class Reply:
    status: int
    headers: Headers
    body: Any

    @property
    def problem(self) -> str:
        slug: str = self.body["type"]
        return slug.removeprefix(errors.PROBLEM_BASE)


class ContractClient:
    """A test client that checks every response against the spec, and remembers what it saw."""

    def __init__(self, client: FlaskClient) -> None:
        self.client = client
        self.seen: set[tuple[str, str, str]] = set()
        self.titles: dict[str, set[str]] = {}

    def call(
        self,
        method: str,
        template: str,
        *,
        path: Mapping[str, object] | None = None,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        query: Mapping[str, str] | None = None,
        body: Any = None,
        data: str | bytes | None = None,
        content_type: str | None = None,
        expect: int | None = None,
        problem: str | None = None,
    ) -> Reply:
        sent = dict(headers or {})
        if token is not None:
            sent["Authorization"] = f"Bearer {token}"
        if body is not None:
            data, content_type = json.dumps(body), content_type or "application/json"
        response = self.client.open(
            template.format(**(path or {})),
            method=method.upper(),
            headers=sent,
            query_string=dict(query or {}),
            data=data,
            content_type=content_type,
        )
        raw = response.data
        response.close()  # as a server does once the body is sent: a stream frees its slot
        reply = self.conform(method, template, response.status_code, response.headers, raw)
        what = f"{method.upper()} {template} {path or ''}"
        if expect is not None:
            assert reply.status == expect, f"{what}: {reply.status} {reply.body}"
        if problem is not None:
            assert reply.problem == problem, f"{what}: {reply.body}"
        return reply

    def conform(
        self, method: str, template: str, status: int, headers: Headers, raw: bytes
    ) -> Reply:
        """Check one response against the spec: status, media type, body and headers."""
        what = f"{method.upper()} {template} -> {status}"
        responses = pointer("paths", template, method, "responses")
        assert str(status) in at(responses), f"{what} is not documented: {raw[:300]!r}"
        self.seen.add((template, method, str(status)))
        documented = follow(responses + pointer(str(status)))
        content: dict[str, Any] = at(documented).get("content", {})
        media_type = headers.get("Content-Type", "").split(";")[0].strip()
        body: Any = None
        if content:
            assert media_type in content, f"{what}: {media_type} is not one of {list(content)}"
            schema = documented + pointer("content", media_type, "schema")
            if media_type == "text/event-stream":
                body = server_sent_events(raw.decode())
                for event in body:
                    assert_valid(schema, event, what)
            elif media_type.startswith("text/"):
                assert headers.get("Content-Type", "").endswith("charset=utf-8"), what
                body = raw.decode("utf-8")
                assert_valid(schema, body, what)
            else:
                body = yaml.safe_load(raw) if media_type.endswith("yaml") else json.loads(raw)
                assert_valid(schema, body, what)
            if media_type == "application/problem+json":
                assert body["status"] == status, what
                slug = body["type"].removeprefix(errors.PROBLEM_BASE)
                assert f"`{slug}`" in at(documented)["description"], f"{what}: {slug} undocumented"
                self.titles.setdefault(slug, set()).add(body["title"])
        else:
            assert not raw, f"{what} documents no body"
        for name in at(documented).get("headers", {}):
            header = follow(documented + pointer("headers", name))
            value = headers.get(name)
            if value is None:
                assert not at(header).get("required"), f"{what}: header {name} missing"
                continue
            assert_valid(header + pointer("schema"), value, f"{what}: header {name}")
        return Reply(status, headers, body)


@pytest.fixture
def api(app: Flask) -> ContractClient:
    return ContractClient(app.test_client())


TABLES = "/v1/tables"
TABLE = "/v1/tables/{table_id}"
SEATS = TABLE + "/seats"
LEAVE = "/v1/tables/{table_id}/leave"
MOVES = TABLE + "/moves"
EVENTS = TABLE + "/events"
VERSION = TABLE + "/versions/{version}"
AUDIT = TABLE + "/audit"
EXPORT = TABLE + "/export"
SCORES = TABLE + "/scores"
STREAM = TABLE + "/stream"
GAME = "/v1/games/{game_id}"
RULES = GAME + "/rules"

WRONG_INTEGERS: list[Any] = ["2", True, False, 2.0, 2.5, None, [2], {"n": 2}]
"""Values that are not JSON integers: strings, booleans, floats (2.0 included), null, containers."""
PIG10_CARDS = 80
METRICS_TOKEN = "metrics-token-for-tests"


def check_table(table: dict[str, Any], seat: int | None) -> None:
    """Game-specific checks of a Table body: Pig 10's state, and hidden information."""
    assert table["you"] == seat
    if table["state"] is None:
        assert table["status"] == "open"
        return
    assert table["game"] == "pig10"
    assert_valid(component("Pig10State"), table["state"], "pig10 state")
    if seat is None:
        assert "hand" not in table["state"]
    else:
        assert len(table["state"]["hand"]) == table["state"]["hand_sizes"][seat]


LONE_SURROGATE = "\\ud800"
"""A JSON string escape for an unpaired UTF-16 surrogate: valid JSON syntax, not valid Unicode."""


def surrogate_walk(api: ContractClient, *, seated: bool) -> Walk:
    """A walk at a new two-seat Pig 10 table where seat 0 starts; `seated`: both seats are
    taken (the game is running) and seat 0's token kept."""
    walk = Walk(api)
    body = {"game": "pig10", "seats": 2, "options": {"first_seat": 0}}
    walk.table_id = walk.post(TABLES, 201, body=body).body["id"]
    if seated:
        walk.token[0] = walk.post(SEATS, 201, body={"name": "Ada"}).body["token"]
        walk.post(SEATS, 201, body={"name": "Bo"})
    return walk


def with_lone_surrogate(payload: dict[str, Any]) -> str:
    """`payload` as JSON, with every string "@" replaced by a lone surrogate."""
    return json.dumps(payload).replace('"@"', f'"{LONE_SURROGATE}"')


class Walk:
    """A whole two-seat Pig 10 game, step by step, with every refusal on the way."""

    def __init__(self, api: ContractClient) -> None:
        self.api = api
        self.table_id = ""
        self.token: dict[int, str] = {}
        self.rules_seen: set[str] = set()
        self.turns = 0
        self.replay: tuple[str, dict[str, str], dict[str, Any]] | None = None
        self.key: dict[str, str] = {}

    # -- requests at this walk's table ----------------------------------------------------------

    def get(self, route: str, expect: int, problem: str | None = None, **request: Any) -> Any:
        path = {"table_id": self.table_id, **request.pop("path", {})}
        reply = self.api.call("get", route, path=path, expect=expect, problem=problem, **request)
        return reply.body

    def post(self, route: str, expect: int, problem: str | None = None, **request: Any) -> Reply:
        path = {"table_id": self.table_id, **request.pop("path", {})}
        return self.api.call("post", route, path=path, expect=expect, problem=problem, **request)

    def move(
        self,
        seat: int,
        move: Any,
        version: Any,
        expect: int,
        problem: str | None = None,
        **request: Any,
    ) -> Reply:
        body = {"move": move, "expected_version": version}
        return self.post(MOVES, expect, problem, token=self.token[seat], body=body, **request)

    def log(self) -> tuple[int, int]:
        """The table's version and how many events a spectator sees in the whole log."""
        log = self.get(EVENTS, 200)
        return log["version"], len(log["events"])

    def bad_bodies(self, route: str, good: dict[str, Any], token: str | None = None) -> None:
        """Every kind of malformed body on a POST route, each answered with its problem."""
        post = partial(self.post, route, token=token)
        deep: Any = 0
        for _ in range(40):
            deep = [deep]
        for raw in [
            b"{",
            b"",
            b'{"name": "\xff"}',
            json.dumps({**good, "x": float("nan")}).encode(),
            json.dumps({**good, "x": float("-inf")}).encode(),
            with_lone_surrogate({**good, "x": "@"}).encode(),
            json.dumps({**good, "x": deep}).encode(),
        ]:
            post(400, "malformed-json", data=raw, content_type="application/json")
        post(422, "invalid-body", data="null", content_type="application/json")
        post(415, "unsupported-media-type", data=json.dumps(good), content_type="text/plain")
        post(415, "unsupported-media-type", data=json.dumps(good))
        post(422, "invalid-body", body=[good])
        post(422, "invalid-body", body="text")
        extra = post(422, "invalid-body", body={**good, "colour": "red"})
        assert extra.body["errors"] == {"colour": ["Unknown field."]}
        for name in good:
            reply = post(422, "invalid-body", body={k: v for k, v in good.items() if k != name})
            assert list(reply.body["errors"]) == [name]
        post(413, "body-too-large", body={**good, "padding": "x" * MAX_BODY})

    # -- the steps --------------------------------------------------------------------------------

    def catalogue(self) -> None:
        assert self.get("/health", 200) == {"status": "ok", "embedded": True}
        assert self.get("/openapi.yaml", 200) == SPEC
        games = self.get("/v1/games", 200)
        assert [game["id"] for game in games] == default_registry().ids()
        assert self.get(GAME, 200, path={"game_id": "pig10"}) == games[0]
        self.get(GAME, 404, "unknown-game", path={"game_id": "chess"})
        for game in games:
            book = self.get(RULES, 200, path={"game_id": game["id"]})
            assert book.startswith(f"# {game['title']}"), "each rule book is headed by its game"
        self.get(RULES, 404, "unknown-game", path={"game_id": "chess"})
        assert self.get("/ready", 200) == {"status": "ready", "embedded": True}
        bots = self.get("/v1/bots", 200)
        assert {"random", "heuristic", "search"} <= {bot["name"] for bot in bots}
        [self.key] = self.get("/v1/keys", 200)["keys"]

    def open_table(self) -> None:
        create = {"game": "pig10", "seats": 2, "options": {"first_seat": 0}, "entropy": "walk"}
        self.bad_bodies(TABLES, {"game": "pig10", "seats": 2})
        for wrong in WRONG_INTEGERS:
            reply = self.post(TABLES, 422, "invalid-body", body={**create, "seats": wrong})
            assert list(reply.body["errors"]) == ["seats"]
        wrong_members: list[tuple[str, Any]] = [
            ("game", ""),
            ("game", "g" * 65),
            ("game", 7),
            ("game", None),
            ("seats", 0),
            ("seats", 65),
            ("seats", -1),
            ("entropy", ""),
            ("entropy", "e" * 257),
            ("entropy", 1),
            ("options", None),
            ("options", []),
            ("options", "first_seat"),
        ]
        for name, wrong in wrong_members:
            self.post(TABLES, 422, "invalid-body", body={**create, name: wrong})
        self.post(TABLES, 422, "unknown-game", body={**create, "game": "chess"})
        for seats in (1, 9, 64):
            self.post(TABLES, 422, "invalid-seats", body={**create, "seats": seats})
        bad_options: list[dict[str, Any]] = [
            {"first_seat": 2},
            {"first_seat": -1},
            {"first_seat": "0"},
            {"first_seat": True},
            {"first_seat": 0.0},
            {"speed": 1},
        ]
        for options in bad_options:
            reply = self.post(TABLES, 422, "invalid-options", body={**create, "options": options})
            assert reply.body["option"] == next(iter(options))
        created = self.post(TABLES, 201, body=create)
        table = created.body
        self.table_id = table["id"]
        assert created.headers["Location"] == f"/v1/tables/{self.table_id}"
        assert (table["status"], table["version"]) == ("open", 1)
        assert table["options"] == {"first_seat": 0}
        check_table(table, None)
        assert self.get(TABLE, 200) == table
        assert self.post(TABLES, 201, body={"game": "pig10", "seats": 8}).body["options"] == {
            "first_seat": None
        }

    def unknown_tables(self) -> None:
        for unknown in ["nope", "no.such.table", "x" * 65, "%20"]:
            path = {"table_id": unknown}
            for route in (TABLE, SEATS, EVENTS, SCORES, AUDIT, EXPORT, STREAM):
                self.get(route, 404, "unknown-table", path=path)
            self.get(VERSION, 404, "unknown-table", path={**path, "version": 1})
            self.post(SEATS, 404, "unknown-table", path=path, body={"name": "Ada"})

    def leaving(self) -> None:
        """At a table of its own: a person leaves, and a bot plays the seat from then on."""
        create = {"game": "pig10", "seats": 2, "options": {"first_seat": 0}}
        path = {"table_id": self.post(TABLES, 201, body=create).body["id"]}
        self.post(LEAVE, 401, "missing-token", path=path)
        self.post(LEAVE, 404, "unknown-table", path={"table_id": "nope"}, token="any")
        first = self.post(SEATS, 201, path=path, body={"name": "leaves"}).body["token"]
        self.post(LEAVE, 409, "game-not-running", path=path, token=first)
        self.post(SEATS, 201, path=path, body={"name": "stays"})
        table = self.post(LEAVE, 200, path=path, token=first).body
        assert table["seats"][0]["bot"] == "heuristic"
        self.post(LEAVE, 409, "seat-unavailable", path=path, token=first)
        body = {"move": {"card": 1, "mode": "add"}, "expected_version": table["version"]}
        self.post(MOVES, 409, "not-your-turn", path=path, token=first, body=body)

    def open_table_reads(self) -> None:
        assert [seat["taken"] for seat in self.get(SEATS, 200)] == [False, False]
        assert self.get(SCORES, 200) == {"version": 1, "scores": []}, "no game to score yet"
        self.get(AUDIT, 409, "game-not-finished")
        self.get(EXPORT, 409, "game-not-finished")
        check_table(self.get(VERSION, 200, path={"version": 1}), None)
        self.get(VERSION, 404, "unknown-version", path={"version": 0})
        self.get(VERSION, 404, "unknown-version", path={"version": 2})
        self.get(VERSION, 404, "not-found", path={"version": "one"})
        self.get(VERSION, 404, "not-found", path={"version": "-1"})
        self.get(MOVES, 401, "missing-token")
        for after in ["x", "-1", "1.5", "", str(2**53 + 1)]:
            self.get(EVENTS, 422, "invalid-query", query={"after": after})
        self.get(EVENTS, 422, "invalid-query", query={"before": "1"})
        for limit in ["0", "-1", "x", "10001"]:
            self.get(EVENTS, 422, "invalid-query", query={"limit": limit})
        self.get(STREAM, 422, "invalid-query", query={"limit": "5"})
        self.get(STREAM, 422, "invalid-query", query={"after": "-1"})
        for resume in ["x", "-1", "1.5", "٣", "1 2"]:
            self.get(STREAM, 400, "invalid-last-event-id", headers={"Last-Event-ID": resume})
        self.too_many_streams()
        assert self.get(EVENTS, 200, query={"after": "1"}) == {
            "version": 1,
            "through": 1,
            "events": [],
        }
        assert self.get(EVENTS, 200, query={"after": "0"})["events"][0]["seq"] == 1
        page = self.get(EVENTS, 200, query={"after": "0", "limit": "1"})
        assert (page["through"], [e["seq"] for e in page["events"]]) == (1, [1])

    def take_seats(self) -> None:
        self.bad_bodies(SEATS, {"name": "Ada"})
        for wrong in WRONG_INTEGERS:
            if wrong is not None:
                self.post(SEATS, 422, "invalid-body", body={"name": "Ada", "seat": wrong})
        wrong_members: list[tuple[str, Any]] = [
            *[("name", value) for value in ("", "n" * 41, None, 1)],
            *[("seat", value) for value in (-1, 64)],
            *[("entropy", value) for value in ("", "e" * 257)],
        ]
        for name, wrong in wrong_members:
            self.post(SEATS, 422, "invalid-body", body={"name": "Ada", name: wrong})
        self.post(SEATS, 409, "seat-unavailable", body={"name": "Ada", "seat": 2})
        self.post(SEATS, 409, "seat-unavailable", body={"name": "Ada", "seat": 63})
        self.post(SEATS, 401, "invalid-token", body={"name": "Ada"}, token="no seat's token")
        first = self.post(SEATS, 201, body={"name": "Ada", "seat": 0, "entropy": "a"}).body
        self.token[0] = first["token"]
        assert (first["seat"], first["table"]["status"]) == (0, "open")
        check_table(first["table"], 0)
        self.post(SEATS, 409, "seat-unavailable", body={"name": "Eve", "seat": 0})
        self.move(0, {"card": 1, "mode": "add"}, 2, 409, "game-not-running")
        second = self.post(SEATS, 201, body={"name": "Bo", "seat": None}).body
        self.token[1] = second["token"]
        assert (second["seat"], second["table"]["status"]) == (1, "running")
        check_table(second["table"], 1)
        self.post(SEATS, 409, "seat-unavailable", body={"name": "Cy"})
        assert self.get(SEATS, 200, token="ignored") == second["table"]["seats"]

    def listing(self) -> None:
        """The walk's table, now running, heads the running tables; each outline is public."""
        table = self.get(TABLE, 200)
        running = self.get(TABLES, 200, query={"status": "running", "game": "pig10"})
        created = running[0].pop("created")
        assert running[0] == {key: table[key] for key in running[0]}
        assert created == self.get(EVENTS, 200)["events"][0]["meta"]["time"], "GameCreated's"
        newest = self.get(TABLES, 200, query={"limit": "2"})
        assert len(newest) == 2
        assert newest[0]["created"] >= newest[1]["created"], "newest first"
        assert self.table_id in {t["id"] for t in self.get(TABLES, 200, token="ignored")}
        for name, wrong in [
            ("status", "waiting"),
            ("status", ""),
            ("limit", "0"),
            ("limit", "101"),
            ("limit", "1.5"),
            ("game", ""),
            ("game", "g" * 65),
            ("order", "oldest"),
        ]:
            refused = self.get(TABLES, 422, "invalid-query", query={name: wrong})
            assert list(refused["errors"]) == [name]
        assert self.get(TABLES, 200, query={"game": "chess"}) == [], "no chess is hosted"

    def tokens(self) -> None:
        other = self.post(TABLES, 201, body={"game": "pig10", "seats": 2}).body["id"]
        outsider = self.post(SEATS, 201, path={"table_id": other}, body={"name": "Di"}).body
        headers = [
            "Bearer wrong",
            "Basic QWRhOg==",
            "Bearer",
            self.token[0],
            f"Bearer {outsider['token']}",
        ]
        for header in headers:
            bad = {"Authorization": header}
            for route in (TABLE, MOVES, EVENTS, STREAM):
                self.get(route, 401, "invalid-token", headers=bad)
            self.get(VERSION, 401, "invalid-token", headers=bad, path={"version": 1})
            body = {"move": 1, "expected_version": 1}
            self.post(MOVES, 401, "invalid-token", headers=bad, body=body)
        self.post(MOVES, 401, "missing-token", body={"move": 1, "expected_version": 1})
        self.get(TABLE, 200, headers={"Authorization": f"bEaReR {self.token[0]}"})
        nowhere = {"table_id": "nope"}
        self.get(TABLE, 404, "unknown-table", path=nowhere, token=self.token[0])
        self.get(MOVES, 404, "unknown-table", path=nowhere, token=self.token[0])
        self.get(EVENTS, 404, "unknown-table", path=nowhere, token=self.token[0])
        body = {"move": 1, "expected_version": 1}
        self.post(MOVES, 404, "unknown-table", path=nowhere, token=self.token[0], body=body)
        # Without a token nothing looks the table up before the body is read.
        self.post(MOVES, 401, "missing-token", path=nowhere, body=body)
        as_json = {"data": "{", "content_type": "application/json"}
        self.post(MOVES, 400, "malformed-json", path=nowhere, **as_json)

    def too_many_streams(self) -> None:
        """Streams held open take the server's stream slots; closing one frees its slot."""
        url = STREAM.format(table_id=self.table_id)
        held = [self.api.client.get(url, buffered=False) for _ in range(STREAMS)]
        assert [response.status_code for response in held] == [200] * STREAMS
        self.get(STREAM, 503, "too-many-streams")
        held.pop().close()
        held.append(self.api.client.get(url, buffered=False))
        assert held[-1].status_code == 200
        for response in held:
            response.close()

    def outage(self) -> None:
        """With Redis down, every route that needs it answers 503 `service-unavailable` with a
        `Retry-After`, liveness stays 200, and what needs no Redis is still served."""
        assert self.get("/health", 200)["status"] == "ok"
        self.get("/v1/games", 200)
        unavailable = partial(self.api.call, expect=503, problem="service-unavailable")
        replies = [
            unavailable("get", "/ready"),
            unavailable("get", TABLES),
            unavailable("post", TABLES, body={"game": "pig10", "seats": 2}),
            *(
                unavailable("get", route, path={"table_id": self.table_id})
                for route in (TABLE, SEATS, EVENTS, STREAM, SCORES, AUDIT, EXPORT)
            ),
            unavailable("get", VERSION, path={"table_id": self.table_id, "version": 1}),
            unavailable("post", SEATS, path={"table_id": self.table_id}, body={"name": "Late"}),
        ]
        # A seat's token is known from the cached table; its requests still need Redis.
        mine = partial(unavailable, path={"table_id": self.table_id}, token=self.token[0])
        body = {"move": {"card": 1, "mode": "add"}, "expected_version": 1}
        replies += [mine("get", MOVES), mine("post", MOVES, body=body), mine("post", LEAVE)]
        assert {reply.headers["Retry-After"] for reply in replies} == {"1"}

    def recovered(self) -> None:
        """Once Redis answers again, so does the service, without a restart."""
        assert self.get("/ready", 200)["status"] == "ready"
        assert self.get(TABLE, 200)["result"] is not None

    def metrics(self, guarded: FlaskClient) -> None:
        """`/metrics` answers this host (the test client's address is loopback), 404 a request
        a proxy passed on; a server that wants a token (`guarded`) answers 401 without it."""
        text = self.get("/metrics", 200)
        assert 'spieltisch_http_requests_total{method="GET",route="/health",status="200"}' in text
        self.get("/metrics", 404, "not-found", headers={"X-Forwarded-For": "203.0.113.9"})
        served = self.api.client
        self.api.client = guarded
        self.get("/metrics", 401, "unauthorized")
        self.get("/metrics", 200, token=METRICS_TOKEN)
        self.api.client = served

    def flooded(self, tight: FlaskClient) -> None:
        """On a web process whose limits allow one request a minute (`tight`), the second of
        each limited request is refused `429 rate-limited`, with the headers to wait by."""
        self.api.client = tight
        self.post(TABLES, 201, body={"game": "pig10", "seats": 2})
        self.post(TABLES, 429, "rate-limited", body={"game": "pig10", "seats": 2})
        self.post(SEATS, 409, "seat-unavailable", body={"name": "Cy"})
        self.post(SEATS, 429, "rate-limited", body={"name": "Cy"})
        self.move(0, {"card": 1, "mode": "add"}, 2, 409, "stale-version")
        refused = self.move(0, {"card": 1, "mode": "add"}, 2, 429, "rate-limited")
        assert int(refused.headers["Retry-After"]) > 0
        assert refused.headers["RateLimit-Remaining"] == "0"
        self.post(LEAVE, 409, "game-not-running", token=self.token[0])
        self.post(LEAVE, 429, "rate-limited", token=self.token[0])
        self.get(STREAM, 200)
        self.get(STREAM, 429, "rate-limited")
        for route, path in [
            (EVENTS, {}),
            (VERSION, {"version": 1}),
            (SCORES, {}),
            (AUDIT, {}),
            (EXPORT, {}),
        ]:
            self.get(route, 200, path=path)
            self.get(route, 429, "rate-limited", path=path)

    def over_quota(self, capped: FlaskClient) -> None:
        """On a web process that lets an address keep no table going (`capped`), opening one
        is refused `403 table-quota`."""
        self.api.client = capped
        self.post(TABLES, 403, "table-quota", body={"game": "pig10", "seats": 2})

    def stream(self, **request: Any) -> list[dict[str, Any]]:
        """A whole (finished) stream's events, after checking each against its frame."""
        events = []
        for frame in self.get(STREAM, 200, **request):
            event = json.loads(frame["data"])
            assert_valid(component("Event"), event, "a streamed event")
            assert (frame["id"], frame["event"]) == (str(event["seq"]), event["type"])
            # A stream's own (on the latest event's frame): the log's events have none.
            event.pop("deadlines", None)
            event.pop("moves", None)
            events.append(event)
        return events

    def malformed_moves(self) -> None:
        version = self.get(TABLE, 200)["version"]
        good = {"move": {"card": 1, "mode": "add"}, "expected_version": version}
        self.bad_bodies(MOVES, good, token=self.token[0])
        for wrong in [*WRONG_INTEGERS, -1]:
            reply = self.move(0, good["move"], wrong, 422, "invalid-body")
            assert list(reply.body["errors"]) == ["expected_version"]
        self.move(0, None, version, 422, "invalid-body")
        for key in ["", "k" * 201]:
            headers = {"Idempotency-Key": key}
            self.move(0, good["move"], version, 400, "invalid-idempotency-key", headers=headers)
        assert self.log()[0] == version, "a refused request wrote an event"

    def turn(self, rng: Random) -> bool:
        """Play one turn with every refusal around it; False once the game is over."""
        spectator = self.get(TABLE, 200)
        check_table(spectator, None)
        if spectator["status"] == "finished":
            return False
        seat = spectator["state"]["turn"]
        waiting, version = 1 - seat, spectator["version"]
        assert spectator["to_act"] == [seat]
        view = self.get(TABLE, 200, token=self.token[seat])
        check_table(view, seat)
        check_table(self.get(TABLE, 200, token=self.token[waiting]), waiting)
        legal = self.get(MOVES, 200, token=self.token[seat])
        assert (legal["version"], legal["seat"], legal["to_act"]) == (version, seat, True)
        for move in legal["moves"]:
            assert_valid(component("Pig10Move"), move, "a legal move")
        assert self.get(MOVES, 200, token=self.token[waiting]) == {
            "version": version,
            "seat": waiting,
            "to_act": False,
            "moves": [],
        }
        # Each card of the hand in each mode the list leaves out is refused, naming a rule.
        hand = view["state"]["hand"]
        modes = ("add", "subtract", "set")
        illegal: list[Any] = [{"card": c, "mode": m} for c in sorted(set(hand)) for m in modes]
        illegal = [move for move in illegal if move not in legal["moves"]]
        absent = next(card for card in range(11) if card not in hand)
        illegal += [{"card": absent, "mode": "add"}, {"card": 11, "mode": "add"}]
        illegal += [{"card": hand[0]}, {"card": hand[0], "mode": "add", "x": 1}, "pass", 7]
        for move in illegal:
            self.rules_seen.add(self.move(seat, move, version, 422, "illegal-move").body["rule"])
        move = rng.choice(legal["moves"])
        self.move(waiting, move, version, 409, "not-your-turn")
        stale = self.move(seat, move, version - 1, 409, "stale-version")
        assert stale.body["current_version"] == version
        assert self.log()[0] == version, "a refused move wrote an event"

        key = {"Idempotency-Key": f"walk-{self.turns}"}
        result = self.move(seat, move, version, 200, headers=key)
        assert "Idempotent-Replayed" not in result.headers
        after = result.body["version"]
        assert after == result.body["table"]["version"] > version
        assert [e["seq"] for e in result.body["events"]] == list(range(version + 1, after + 1))
        check_table(result.body["table"], seat)
        if self.replay is None:
            self.idempotency(seat, move, version, key, result)
        query = {"after": str(version)}
        log = self.get(EVENTS, 200, token=self.token[waiting], query=query)
        assert [e["seq"] for e in log["events"]] == list(range(version + 1, after + 1))
        self.turns += 1
        return True

    def idempotency(
        self, seat: int, move: Any, version: int, key: dict[str, str], first: Reply
    ) -> None:
        """The same request again gets the first answer, marked; nothing is written."""
        before = self.log()
        again = self.move(seat, move, version, 200, headers=key)
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.body == first.body
        assert self.log() == before
        self.move(
            seat, {"card": 11, "mode": "add"}, version, 422, "idempotency-key-reused", headers=key
        )
        self.move(seat, move, version + 1, 422, "idempotency-key-reused", headers=key)
        assert self.log() == before
        # Keys belong to a seat: the other seat's first use of the same key is a new request.
        other = 1 - seat
        self.move(other, move, version, 409, "stale-version", headers=key)
        assert self.log() == before
        self.replay = (self.token[seat], key, {"move": move, "expected_version": version})

    def finished(self) -> None:
        assert self.replay is not None
        token, key, body = self.replay
        late = self.post(MOVES, 200, token=token, headers=key, body=body)
        assert late.headers["Idempotent-Replayed"] == "true", "a key outlives later moves"
        table = self.get(TABLE, 200, token=self.token[0])
        assert table["result"] is not None
        assert table["seed"] is not None
        assert table["to_act"] == []
        assert sum(table["result"]["scores"]) <= PIG10_CARDS
        version = table["version"]
        self.move(0, {"card": 1, "mode": "add"}, version, 409, "game-not-running")
        no_moves = {"version": version, "seat": 0, "to_act": False, "moves": []}
        assert self.get(MOVES, 200, token=self.token[0]) == no_moves
        audit = self.get(AUDIT, 200)
        assert (audit["ok"], audit["events"], audit["problems"]) == (True, version, [])
        assert audit["seed"] == table["seed"]
        exported = self.get(EXPORT, 200)
        assert (exported["seed"], exported["version"]) == (table["seed"], version)
        report = verify(exported, decode_key(self.key["public_key"]))
        assert report.ok, report.text()
        log = self.get(EVENTS, 200)
        assert [event["seq"] for event in log["events"]] == list(range(1, version + 1))
        assert self.stream() == log["events"], "a finished game streams its whole log and ends"
        resumed = self.stream(headers={"Last-Event-ID": str(version - 3)}, query={"after": "1"})
        assert resumed == log["events"][-3:], "Last-Event-ID wins over after"
        assert self.stream(token=self.token[1], query={"after": str(version)}) == []
        assert all("command" in event["meta"] for event in log["events"]), "the log is public"
        won = {}
        for past in range(1, version + 1):
            spectator = self.get(VERSION, 200, path={"version": past})
            check_table(spectator, None)
            if spectator["state"] is not None:
                won[past] = spectator["state"]["won"]
            if past % 7 in (0, 3):
                seen_by_1 = self.get(VERSION, 200, token=self.token[1], path={"version": past})
                check_table(seen_by_1, 1)
        self.get(VERSION, 404, "unknown-version", path={"version": version + 1})
        self.score_timeline(version, won, table["result"]["scores"])

    def score_timeline(self, version: int, won: dict[int, list[int]], result: list[int]) -> None:
        """The timeline holds Pig 10's cards won at every version the game ran, in steps."""
        timeline = self.get(SCORES, 200, token="ignored")
        assert timeline["version"] == version
        pairs = timeline["scores"]
        assert (pairs[0][0], pairs[-1]) == (min(won), [version, result])
        for (start, scores), (end, _) in itertools.pairwise(pairs):
            assert all(won[past] == scores for past in range(start, end)), start
        assert all(a[1] != b[1] for a, b in itertools.pairwise(pairs[:-1])), "only changes"


def test_walk_a_whole_pig10_game_against_the_spec(
    api: ContractClient, redis_server: fakeredis.FakeServer
) -> None:
    walk = Walk(api)
    walk.catalogue()
    walk.open_table()
    walk.unknown_tables()
    walk.open_table_reads()
    walk.take_seats()
    walk.listing()
    walk.tokens()
    walk.malformed_moves()
    rng = Random(10)
    while walk.turn(rng):
        pass
    walk.finished()
    walk.leaving()
    redis_server.connected = False
    walk.outage()
    redis_server.connected = True
    walk.recovered()
    guarded = Config(metrics="token", metrics_token=METRICS_TOKEN)
    walk.metrics(
        web_app(guarded, redis_client=fakeredis.FakeRedis(server=redis_server)).test_client()
    )
    once = "1/minute"
    tight = Config(
        limit_tables=once, limit_seats=once, limit_moves=once, limit_streams=once, limit_reads=once
    )
    walk.flooded(
        web_app(tight, redis_client=fakeredis.FakeRedis(server=redis_server)).test_client()
    )
    capped = Config(rate_limits=False, max_open_tables=0)
    walk.over_quota(
        web_app(capped, redis_client=fakeredis.FakeRedis(server=redis_server)).test_client()
    )

    assert walk.turns == PIG10_CARDS, "every card is played, one a turn"
    assert walk.rules_seen >= {"move-format", "card-in-hand", "empty-pile", "same-card-same-number"}
    documented = {
        (path, method, status)
        for path, method in spec_operations()
        for status in SPEC["paths"][path][method]["responses"]
    }
    assert api.seen <= documented
    assert documented == api.seen, "the walk missed a documented status"


def test_each_problem_type_has_one_title(api: ContractClient) -> None:
    """A problem's `title` belongs to its `type` (RFC 9457: it does not change between
    occurrences), so a client may show it for the type: the walk's refusals of each type
    agree on it, and with the spec's example of the type."""
    walk = Walk(api)
    walk.catalogue()
    walk.open_table()
    walk.open_table_reads()
    walk.take_seats()
    walk.listing()
    walk.tokens()
    walk.malformed_moves()
    several = {slug: titles for slug, titles in api.titles.items() if len(titles) > 1}
    assert not several, f"problem types with more than one title: {several}"
    for location, example in examples(SPEC):
        if location.endswith("problem+json/schema"):
            slug = example["type"].removeprefix(errors.PROBLEM_BASE)
            assert api.titles.get(slug, {example["title"]}) == {example["title"]}, location


def test_undeclared_methods_answer_405_with_allow(api: ContractClient) -> None:
    location = follow(pointer("components", "responses", "MethodNotAllowed"))
    for path, item in SPEC["paths"].items():
        declared = {method.upper() for method in item if method in HTTP_METHODS}
        allowed = declared | {"OPTIONS"} | ({"HEAD"} if "GET" in declared else set())
        url = path.format(table_id="nope", game_id="pig10", version=1)
        for method in sorted({"GET", "POST", "PUT", "PATCH", "DELETE"} - declared):
            response = api.client.open(url, method=method)
            assert response.status_code == 405, f"{method} {path}"
            assert response.mimetype == "application/problem+json"
            assert_valid(
                location + pointer("content", "application/problem+json", "schema"),
                response.get_json(),
                f"{method} {path}",
            )
            assert response.get_json()["type"] == "/problems/method-not-allowed"
            assert set(response.headers["Allow"].split(", ")) == allowed


def test_unknown_paths_answer_a_404_problem(api: ContractClient) -> None:
    for url in ["/v1", "/v1/nothing", "/v1/tables/", "/v1/tables/a/b/c", "/static/nothing.js"]:
        response = api.client.get(url)
        assert response.status_code == 404
        assert response.mimetype == "application/problem+json"
        assert_valid(component("Problem"), response.get_json(), url)
        assert response.get_json()["type"] == "/problems/not-found"


@pytest.mark.parametrize(
    ("route", "payload"),
    [
        pytest.param(TABLES, {"game": "pig10", "seats": 2, "entropy": "@"}, id="table-entropy"),
        pytest.param(SEATS, {"name": "@"}, id="seat-name"),
        pytest.param(SEATS, {"name": "Ada", "entropy": "@"}, id="seat-entropy"),
        pytest.param(MOVES, {"move": "@", "expected_version": 6}, id="move"),
        pytest.param(MOVES, {"move": {"card": "@"}, "expected_version": 6}, id="move-member"),
    ],
)
def test_a_lone_surrogate_in_a_string_is_not_a_server_error(
    api: ContractClient, route: str, payload: dict[str, Any]
) -> None:
    """Strings that cannot be encoded as UTF-8 must be refused (or taken), never answered 500."""
    walk = surrogate_walk(api, seated=route == MOVES)
    if route == MOVES:
        assert walk.log()[0] == payload["expected_version"]
    before = walk.log()
    raw = with_lone_surrogate(payload)
    assert LONE_SURROGATE in raw
    reply = api.call(
        "post",
        route,
        path={"table_id": walk.table_id},
        token=walk.token.get(0),
        data=raw,
        content_type="application/json",
    )
    assert reply.status < 500
    assert walk.log() == before or reply.status < 300


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b'{"move": {"card": "\\ud800"}, "expected_version": 6}', id="escape"),
        pytest.param(b'{"move": {"card": "\\uDBFF"}, "expected_version": 6}', id="upper-escape"),
        pytest.param(
            '{"move": {"card": "\ud800"}, "expected_version": 6}'.encode("utf-8", "surrogatepass"),
            id="raw-bytes",
        ),
        pytest.param(
            '{"move": {"card": "\\ud800"}, "expected_version": 6}'.encode("utf-16"), id="utf-16"
        ),
    ],
)
def test_a_move_holding_a_lone_surrogate_in_any_form_is_refused(
    api: ContractClient, raw: bytes
) -> None:
    """The body check looks for lone surrogates only where they can come from; each way in."""
    walk = surrogate_walk(api, seated=True)
    before = walk.log()
    reply = api.call(
        "post",
        MOVES,
        path={"table_id": walk.table_id},
        token=walk.token[0],
        data=raw,
        content_type="application/json",
    )
    assert reply.status == 400
    assert "not valid JSON" in reply.body["detail"]
    assert walk.log() == before
