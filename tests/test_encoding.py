"""Answers and frames are written by orjson, and read back as the standard library wrote them;
what orjson cannot write is written by the standard library, never failed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from flask import Flask, Response

from service.encoding import FastJSONProvider, compact

VALUES: list[Any] = [
    {"seat": 0, "hand": [3, 8, 10], "name": "Zoë ☕", "nested": {"ok": True, "none": None}},
    [1.5, -0.0, 1e-7, 2**63 - 1],
    {"0": "keys", 1: "int keys become strings"},
]


@pytest.mark.parametrize("value", VALUES)
def test_compact_reads_back_as_what_the_standard_library_writes(value: Any) -> None:
    standard = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    assert json.loads(compact(value)) == json.loads(standard)
    if not any(isinstance(item, float) for item in value):
        assert compact(value) == standard, "floats aside (1e-7, not 1e-07), the same text"


def test_an_integer_past_64_bits_is_written_exactly() -> None:
    value = {"big": 2**70}
    assert json.loads(compact(value)) == value
    app = Flask(__name__)
    app.json = FastJSONProvider(app)
    with app.app_context():
        answer = app.json.response(value)
    assert isinstance(answer, Response)
    assert json.loads(answer.get_data()) == value


@pytest.mark.parametrize("value", VALUES[:2])
def test_an_answer_reads_back_as_flasks_own_provider_wrote_it(value: Any) -> None:
    app = Flask(__name__)
    app.json = FastJSONProvider(app)
    with app.app_context():
        answer = app.json.response(value)
    assert isinstance(answer, Response)
    assert answer.mimetype == "application/json"
    assert answer.get_data().endswith(b"\n"), "a newline ends the body, as Flask ends it"
    assert json.loads(answer.get_data()) == value
