"""The README's and the spec's word on rate limits and on Redis's memory, held to the code: the
README's rate-limit table names exactly the routes `service.limits` limits, each in the row of
the variable that sets it, with its key and default; the spec documents 429 on exactly those
routes; and the README states the `maxmemory` that `deploy/redis.conf` ships."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import yaml
from flask import Flask

from service.config import Config
from service.limits import RouteLimit, by_seat, client_address, route_limits

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
SPEC = yaml.safe_load((ROOT / "openapi.yaml").read_text())
HEADER = "| routes | counted per | default | variable |"
KEYS = {"client address": client_address, "seat token (no token: client address)": by_seat}
"""What the table's "counted per" column says, by the key function it names."""


def rate_limit_rows() -> list[list[str]]:
    """The cells of each row of the README's rate-limit table."""
    lines = README[README.index(HEADER) :].splitlines()
    assert set(lines[1]) <= {"|", "-"}, "the header is followed by its rule"
    rows = []
    for line in lines[2:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip("|").split("|")])
    return rows


def routes(app: Flask, parameter: Callable[[str], str]) -> dict[str, str]:
    """Each endpoint of the app as `METHOD path`, each parameter of the path written as
    `parameter` writes its name."""
    named = {}
    for rule in app.url_map.iter_rules():
        (method,) = sorted(rule.methods - {"HEAD", "OPTIONS"})  # type: ignore[operator]
        path = re.sub(r"<(?:[a-z]+:)?([a-z_]+)>", lambda found: parameter(found[1]), rule.rule)
        named[rule.endpoint] = f"{method} {path}"
    return named


def spec_parameter(name: str) -> str:
    return f"{{{name}}}"


def readme_parameter(name: str) -> str:
    """The README writes a table's id `{id}`, a version `{v}` and a game `{game}`."""
    return {"table_id": "{id}", "version": "{v}", "game_id": "{game}"}.get(name, f"{{{name}}}")


def test_the_rate_limit_table_names_each_limited_route_with_its_variable(app: Flask) -> None:
    """Set each variable of the table to a limit of its own: every route the code limits is in
    the row of the variable whose limit it takes, keyed as the row says, at the row's default,
    and no row names a route the code does not limit."""
    rows = rate_limit_rows()
    variables = [row[3].strip("`") for row in rows]
    assert len(set(variables)) == len(rows) == 5
    environ = {variable: f"{n}/hour" for n, variable in enumerate(variables, start=1)}
    limited = route_limits(Config.from_env(environ))
    defaults = route_limits(Config())
    named = routes(app, readme_parameter)
    in_rows: list[str] = []
    for n, (listed, counted_per, default, variable) in enumerate(rows, start=1):
        in_row = set(re.findall(r"`([A-Z]+ [^`]+)`", listed))
        endpoints = [endpoint for endpoint, limit in limited.items() if limit.items[0].amount == n]
        assert endpoints, f"{variable} sets no route's limit"
        in_rows += endpoints
        assert {named[endpoint] for endpoint in endpoints} == in_row, variable
        written = [str(item) for item in RouteLimit.of(default, by_seat).items]
        for endpoint in endpoints:
            assert limited[endpoint].key is KEYS[counted_per], named[endpoint]
            assert [str(item) for item in defaults[endpoint].items] == written, named[endpoint]
    assert sorted(in_rows) == sorted(limited), "a limited route is in no row"


def test_the_spec_documents_429_on_exactly_the_limited_routes(app: Flask) -> None:
    limited = route_limits(Config())
    documented = set()
    for endpoint, route in routes(app, spec_parameter).items():
        method, path = route.split(" ", 1)
        operation = SPEC["paths"].get(path, {}).get(method.lower())
        if operation is None:
            assert endpoint not in limited, f"{route} is limited and not in the spec"
            continue
        if "429" in operation["responses"]:
            documented.add(endpoint)
    assert documented == set(limited)


def test_the_readme_states_the_shipped_maxmemory() -> None:
    """deploy/redis.conf ships a `maxmemory` (without one, Redis is never full and the 503 of a
    full storage never comes) with `noeviction`, and the README says which."""
    settings = {}
    for line in (ROOT / "deploy" / "redis.conf").read_text().splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            name, _, value = line.strip().partition(" ")
            settings[name] = value
    assert settings["maxmemory-policy"] == "noeviction"
    assert re.fullmatch(r"[1-9][0-9]*(gb|mb)", settings["maxmemory"])
    assert f"`maxmemory {settings['maxmemory']}`" in README
    assert settings["bind"].split() == ["127.0.0.1", "-::1"], "the README says loopback only"
