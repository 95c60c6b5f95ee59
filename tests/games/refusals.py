"""The check every game's rule tests share: which rule refuses a move, with nothing changed."""

from __future__ import annotations

import copy
import json
from random import Random
from typing import Any

import pytest

from domain.registry import AnyRules
from domain.rules import RuleError


def refused_rule(rules: AnyRules, seed: int, state: Any, seat: int, attempt: object) -> str:
    """The rule slug `decide` refuses `attempt` with. Also checks that the refusal explains
    itself, left `state` untouched, and that `legal_moves` never offered the attempt."""
    before = copy.deepcopy(state)
    with pytest.raises(RuleError) as error:
        rules.decide(state, seat, attempt, Random(seed))
    assert state == before
    assert error.value.detail
    # Compared as JSON, where `true` is not `1` (in Python it is).
    legal = {json.dumps(move, sort_keys=True) for move in rules.legal_moves(state, seat)}
    assert json.dumps(attempt, sort_keys=True, default=repr) not in legal
    return error.value.rule
