"""Projections dump answers exactly as their marshmallow schemas do (`service/projection.py`).

Every answer of a whole game of each registered game is compared with its schema's own dump in
`test_api_games.py` (`Differential`); the cases here are the edges real answers rarely reach,
and values of every shape, right or wrong, drawn for each schema the routes use.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from marshmallow import Schema, fields, post_dump

from service import routes
from service.projection import projection


@dataclass
class Differential:
    """Stands in for `routes.projection`: dumps each answer both ways and keeps any difference."""

    compared: dict[str, int] = field(default_factory=dict)
    differences: list[tuple[str, Any, Any]] = field(default_factory=list)

    def __call__(self, schema: Schema) -> Any:
        fast = projection(schema)
        name = type(schema).__name__

        def checked(value: Any) -> Any:
            projected, dumped = fast(value), schema.dump(value)
            self.compared[name] = self.compared.get(name, 0) + 1
            # Equal as values and in key order: the answer's bytes are the same.
            if projected != dumped or repr(projected) != repr(dumped):
                self.differences.append((name, projected, dumped))
            return projected

        return checked

    def install(self, monkeypatch: pytest.MonkeyPatch) -> Differential:
        monkeypatch.setattr(routes, "projection", self)
        return self


class Inner(Schema):
    n = fields.Integer()
    s = fields.String(allow_none=True)


class Outer(Schema):
    version = fields.Integer()
    name = fields.String()
    flag = fields.Boolean()
    raw = fields.Raw(allow_none=True)
    plain = fields.Dict(allow_none=True)
    typed = fields.Dict(keys=fields.String(), values=fields.Integer(allow_none=True))
    numbers = fields.List(fields.Integer(allow_none=True))
    one = fields.Nested(Inner, allow_none=True)
    many = fields.List(fields.Nested(Inner))
    listed = fields.Nested(Inner, many=True)
    renamed = fields.Integer(data_key="renamedKey", attribute="source")


VALUES = [
    {},
    {"version": 3, "name": "x", "flag": True, "raw": [1, {"a": None}], "plain": {"k": [1]}},
    {"version": True, "name": b"bytes", "flag": 0, "raw": None, "plain": None},
    {"typed": {1: 2, "b": None}, "numbers": [1, None, False], "one": None},
    {"one": {"n": 1, "s": None, "extra": "never sent"}, "many": [{"n": 2}, {}]},
    {"listed": [{"n": 1}, {"s": 5}], "source": 9, "renamed": "ignored", "secret": "dropped"},
    {"version": None, "name": None, "numbers": None, "many": None, "listed": None},
]


@pytest.mark.parametrize("value", VALUES)
def test_a_projection_dumps_what_the_schema_dumps(value: dict[str, Any]) -> None:
    schema = Outer()
    projected = projection(schema)(value)
    assert projected == schema.dump(value)
    assert list(projected) == list(schema.dump(value)), "keys in the schema's order"


def test_what_a_schema_does_not_declare_is_never_sent() -> None:
    projected = projection(Outer())({"secret": 1, "one": {"n": 1, "hand": [3]}})
    assert projected == {"one": {"n": 1}}


def test_a_value_that_is_not_a_dict_is_dumped_by_the_schema() -> None:
    @dataclass
    class Thing:
        n: int
        s: str

    assert projection(Inner())(Thing(4, "t")) == {"n": 4, "s": "t"}
    assert projection(Inner(many=True))([{"n": 1}, Thing(2, "u")]) == [{"n": 1}, {"n": 2, "s": "u"}]


class Hooked(Schema):
    n = fields.Integer()

    @post_dump
    def doubled(self, data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {"n": data["n"] * 2}


class Computed(Schema):
    n = fields.Function(lambda value: value["m"] + 1)


class DictNamed(Schema):
    items = fields.Raw()


class Defaulted(Schema):
    n = fields.Integer(dump_default=7)


@pytest.mark.parametrize("schema", [Hooked(), Computed(), DictNamed(), Defaulted()])
def test_a_schema_a_projection_cannot_reproduce_is_dumped_by_marshmallow(schema: Schema) -> None:
    assert projection(schema) == schema.dump
    value = {"n": 2, "m": 1}
    assert projection(schema)(value) == schema.dump(value)


def test_the_answers_that_moves_and_reads_write_are_projected_not_dumped() -> None:
    """The answers of the hot paths must not fall back on marshmallow unnoticed."""
    for schema in (routes.MOVE_RESULT, routes.TABLE_VIEW, routes.EVENT_LOG, routes.LEGAL_MOVES):
        assert projection(schema) != schema.dump, type(schema).__name__


JSON_LEAVES = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
JSON = st.recursive(
    JSON_LEAVES,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)


def shaped(schema: Schema, depth: int = 0) -> st.SearchStrategy[Any]:
    """Dicts with some of `schema`'s fields (values of their own kind, None or any JSON) and
    keys it does not declare."""

    def value(field: fields.Field[Any]) -> st.SearchStrategy[Any]:
        if isinstance(field, fields.Nested) and depth < 3:
            one = shaped(field.schema, depth + 1)
            return st.none() | (st.lists(one, max_size=3) if field.schema.many else one)
        if isinstance(field, fields.List):
            return st.none() | st.lists(value(field.inner), max_size=3)
        return JSON

    declared = {name: value(field) for name, field in schema.dump_fields.items()}
    return st.fixed_dictionaries(
        {}, optional={**declared, "undeclared": JSON, "token_sha256": st.text()}
    )


def outcome(dump: Any, value: Any) -> str:
    """What dumping `value` gives: the answer (its keys in order), or that it was refused (a
    value of the wrong kind fails both ways, not always with the same exception)."""
    try:
        return repr(dump(value))
    except (TypeError, ValueError, AttributeError, OverflowError):  # int(inf) overflows
        return "refused"


SCHEMAS = [
    pytest.param(schema, id=name)
    for name, schema in vars(routes).items()
    if isinstance(schema, Schema)
]
"""Every schema the routes use (requests too: a projection works for any schema)."""


@pytest.mark.parametrize("schema", SCHEMAS)
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_value_is_dumped_or_refused_as_the_schema_does(
    schema: Schema, data: st.DataObject
) -> None:
    value = data.draw(st.lists(shaped(schema), max_size=3) if schema.many else shaped(schema))
    assert outcome(projection(schema), value) == outcome(schema.dump, value)
