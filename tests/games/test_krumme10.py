"""Krumme10 rule tests: hand-built positions pinned against `docs/rules/krumme10.md`, paragraph by
paragraph. The position builders and move shorthands at the top are shared with the other
`test_krumme10_*` modules.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable, Sequence
from functools import partial, reduce
from itertools import permutations
from random import Random
from typing import Any

import pytest

from domain.games.krumme10 import (
    KIND_OF,
    KINDS,
    PINK_FOUR,
    PLAY,
    RULES,
    STANDARD,
    TARGET,
    UPCASTS,
    VALUE,
    Card,
    Placed,
    State,
    _card_from_json,
    deal_backs,
    deck_counts,
    target_hit_v1_to_v2,
)
from domain.rules import JSON, Event, OptionError
from tests.games.refusals import refused_rule

SEED = 1010
P = PINK_FOUR
"""A pink 4 face, for short."""
FULL_DRAW = deck_counts(6)


def card(card_id: int, face: int, back: int) -> Card:
    """A card showing `face` with `back` down; refuses a pair of faces no card has."""
    assert (face, back) in KIND_OF, f"no card has {face} and {back}"
    return Card(card_id, face, back)


def shown(card_id: int, face: int, back: int, seat: int = 1, *, flipped: bool = False) -> Placed:
    """A display card played by `seat`; `flipped` if its back is public."""
    return Placed(Card(card_id, face, back, flipped), seat)


def kinds(*pairs: tuple[int, int]) -> tuple[int, ...]:
    """A draw or discard pile holding one card of each (face, back) pair in `pairs`."""
    counts = [0] * len(KINDS)
    for pair in pairs:
        counts[KIND_OF[pair]] += 1
    return tuple(counts)


def position(
    *hands: Sequence[Card],
    display: Sequence[Placed] = (),
    target: int = TARGET,
    turn: int = 0,
    draw: tuple[int, ...] = FULL_DRAW,
    discard: Sequence[Card] = (),
    scores: Sequence[int] | None = None,
    teams: tuple[int, ...] | None = None,
    variant: str = STANDARD,
    direction: int = 1,
    refilled: bool = False,
) -> State:
    """A running game with `turn` to play; the display's total is the sum of its faces. The
    draw pile's top card is its first kind in `KINDS` order, the kind's first face up."""
    ids = [c.id for hand in hands for c in hand] + [p.card.id for p in display]
    next_id = max(ids, default=-1) + 1
    top = next((Card(next_id, *KINDS[kind]) for kind, n in enumerate(draw) if n), None)
    return State(
        hands=tuple(tuple(sorted(hand, key=lambda c: c.id)) for hand in hands),
        draw_pile=draw,
        scores=tuple(scores) if scores is not None else (0,) * len(hands),
        won=((),) * len(hands),
        discarded=tuple(discard),
        teams=teams,
        variant=variant,
        display=tuple(display),
        total=sum(VALUE[p.card.face] for p in display),
        target=target,
        turn=turn,
        direction=direction,
        phase=PLAY,
        refilled=refilled,
        next_id=next_id + (top is not None),
        draw_top=top,
    )


def fold(state: State, events: Iterable[Event]) -> State:
    return reduce(RULES.evolve, events, state)


def act(state: State, seat: int, move: JSON, seed: int = SEED) -> tuple[State, list[Event]]:
    """Decide `move` and fold its events; checks `decide` left `state` as it was."""
    before = copy.deepcopy(state)
    events = RULES.decide(state, seat, move, Random(seed))
    assert state == before
    return fold(state, events), events


def acts(state: State, *steps: tuple[int, JSON]) -> tuple[State, list[Event]]:
    """Several moves in a row; returns the last state and every event."""
    events: list[Event] = []
    for seat, move in steps:
        state, new = act(state, seat, move)
        events += new
    return state, events


broken_rule = partial(refused_rule, RULES, SEED)


def play(card_id: int, flip: bool = False) -> dict[str, JSON]:
    return {"type": "play", "card": card_id, "flip": flip}


def steal(card_id: int) -> dict[str, JSON]:
    return {"type": "steal", "card": card_id}


def score(flip: bool = False, jackpot: Sequence[int] = ()) -> dict[str, JSON]:
    return {"type": "score", "flip": flip, "flip_jackpot": list(jackpot)}


def direction(reverse: bool) -> dict[str, JSON]:
    return {"type": "direction", "reverse": reverse}


def foul_score(card_id: int, flip: bool = False) -> dict[str, JSON]:
    return {"type": "foul_score", "card": card_id, "flip": flip}


PASS: dict[str, JSON] = {"type": "pass"}


def of_type(events: Iterable[Event], kind: str) -> list[dict[str, Any]]:
    return [dict(event.data) for event in events if event.type == kind]


def types(events: Iterable[Event]) -> list[str]:
    return [event.type for event in events]


def drawn_by(events: Iterable[Event]) -> list[int]:
    """The seats that drew, one entry per card, in order."""
    return [data["seat"] for data in of_type(events, "CardDrawn")]


def dealt(players: int, seed: int, **given: JSON) -> tuple[list[Event], State]:
    options = RULES.info.resolve_options(players, given)
    events = RULES.setup(players, options, Random(seed))
    return events, fold(RULES.initial_state(players, options), events)


# --- components ----------------------------------------------------------------------------------


def test_the_deck_has_54_cards_nine_of_each_pair() -> None:
    counts = deck_counts(6)
    assert sum(counts) == 54
    per_pair: dict[frozenset[int], int] = {}
    for (first, second), count in zip(KINDS, counts, strict=True):
        pair = frozenset({VALUE[first], VALUE[second]})
        per_pair[pair] = per_pair.get(pair, 0) + count
    assert per_pair == {
        frozenset(pair): 9 for pair in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 5), (5, 0)]
    }


@pytest.mark.parametrize(
    ("pink_fours", "on_3_4", "on_4_5"), [(6, 3, 3), (0, 0, 0), (1, 1, 0), (7, 4, 3), (18, 9, 9)]
)
def test_pink_fours_are_spread_evenly(pink_fours: int, on_3_4: int, on_4_5: int) -> None:
    counts = deck_counts(pink_fours)
    assert counts[KIND_OF[3, P]] == on_3_4
    assert counts[KIND_OF[P, 5]] == on_4_5
    assert counts[KIND_OF[3, 4]] + on_3_4 == counts[KIND_OF[4, 5]] + on_4_5 == 9


@pytest.mark.parametrize("value", [-1, 19, True, "6", None])
def test_pink_fours_option_refuses_other_values(value: object) -> None:
    with pytest.raises(OptionError):
        RULES.info.resolve_options(3, {"pink_fours": value})


@pytest.mark.parametrize(("pink_fours", "banned"), [(0, P), (18, 4)])
def test_the_deal_uses_the_pink_fours_deck(pink_fours: int, banned: int) -> None:
    for seed in range(30):
        _, state = dealt(6, seed, pink_fours=pink_fours)
        assert all(banned not in (c.face, c.back) for hand in state.hands for c in hand)
        assert state.draw_pile[KIND_OF[3, banned]] == state.draw_pile[KIND_OF[banned, 5]] == 0


def test_two_to_six_players() -> None:
    assert (RULES.info.min_players, RULES.info.max_players) == (2, 6)


# --- the secret ----------------------------------------------------------------------------------


def test_every_seat_sees_what_a_spectator_sees() -> None:
    _, state = dealt(4, 3)
    spectator = RULES.view(state, None)
    assert all(RULES.view(state, seat) == spectator for seat in range(4))
    assert spectator["hands"] == [
        [{"id": c.id, "face": VALUE[c.face], "pink": c.face == P} for c in hand]
        for hand in state.hands
    ]


def test_dealt_and_drawn_cards_hide_the_back_from_everyone_the_owner_included() -> None:
    events, state = dealt(3, 5)
    mover = state.turn or 0
    _, played = act(state, mover, play(state.hands[mover][0].id))
    for event in [*events, *played]:
        for seat in [0, 1, 2, None]:
            redacted = RULES.redact(event, seat)
            assert redacted is not None
            assert "back" not in json.dumps(redacted.data)
    assert "back" in json.dumps([e.data for e in events])
    assert of_type(played, "CardDrawn")


@pytest.mark.parametrize("seed", range(5))
def test_card_ids_are_the_dealing_order(seed: int) -> None:
    """Ids say nothing about the card: seat s is always dealt 3s, 3s+1, 3s+2."""
    _, state = dealt(5, seed)
    assert [[c.id for c in hand] for hand in state.hands] == [
        [3 * s, 3 * s + 1, 3 * s + 2] for s in range(5)
    ]
    assert state.draw_top is not None
    assert state.draw_top.id == 15, "the draw pile's top card is turned up next"
    assert state.next_id == 16


def test_orientation_is_random_at_the_shuffle() -> None:
    seen: set[tuple[int, int]] = set()
    for seed in range(40):
        _, state = dealt(6, seed)
        seen |= {(c.face, c.back) for hand in state.hands for c in hand}
    assert seen == set(KIND_OF)


# --- setup ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", range(2, 7))
def test_setup_deals_three_cards_each(players: int) -> None:
    events, state = dealt(players, players, first_seat=players - 1)
    assert types(events) == ["CardsDealt"] * players + ["FirstSeatChosen", "TopCardShown"]
    assert [len(hand) for hand in state.hands] == [3] * players
    assert state.draw_pile_size == 54 - 3 * players
    assert RULES.to_act(state) == {players - 1}
    assert state.target == TARGET
    assert state.total == 0


# --- a turn --------------------------------------------------------------------------------------


def three_seats(**kwargs: Any) -> State:
    return position(
        [card(1, 2, 3), card(2, 5, 0), card(3, 1, 0)],
        [card(4, 3, 2), card(5, 0, 1), card(6, 4, 5)],
        [card(7, 2, 1), card(8, 3, 4), card(9, 5, 4)],
        **kwargs,
    )


def test_legal_moves_play_any_card_normally_or_flipped() -> None:
    state = three_seats()
    assert RULES.legal_moves(state, 0) == [
        play(card_id, flip) for card_id in (1, 2, 3) for flip in (False, True)
    ]
    assert RULES.legal_moves(state, 1) == []
    assert RULES.to_act(state) == {0}


@pytest.mark.parametrize(("flip", "counted"), [(False, 2), (True, 3)])
def test_a_card_counts_its_up_face_or_flipped_its_back(flip: bool, counted: int) -> None:
    state = three_seats(display=[shown(20, 3, 2)])
    after, events = act(state, 0, play(1, flip))
    (played,) = of_type(events, "CardPlayed")
    assert played == {
        "seat": 0,
        "card": 1,
        "flip": flip,
        "face": counted,
        "pink": False,
        "total": 3 + counted,
        "target": 10,
    }
    assert after.total == 3 + counted
    assert after.display[-1] == Placed(Card(1, counted, 5 - counted, flip), 0)
    assert drawn_by(events) == [0]
    assert [len(hand) for hand in after.hands] == [3, 3, 3]
    assert RULES.to_act(after) == {1}


def test_a_flipped_card_shows_its_back_to_everyone() -> None:
    after, _ = act(three_seats(), 0, play(1, flip=True))
    entry = RULES.view(after, None)["display"][0]
    assert entry == {
        "id": 1,
        "face": 3,
        "pink": False,
        "seat": 0,
        "flipped": True,
        "back": {"face": 2, "pink": False},
        "stolen_from": None,
    }
    normal, _ = act(three_seats(), 0, play(1))
    assert RULES.view(normal, 2)["display"][0]["back"] is None


def test_only_own_cards_and_only_in_turn() -> None:
    state = three_seats()
    assert broken_rule(state, 0, play(4)) == "card-in-front"
    assert broken_rule(state, 0, play(99)) == "card-in-front"
    assert broken_rule(state, 1, play(4)) == "turn-order"


@pytest.mark.parametrize(
    "move",
    [
        None,
        [],
        {},
        {"type": "play"},
        {"type": "play", "card": 1},
        {"type": "play", "card": True, "flip": False},
        {"type": "play", "card": "1", "flip": False},
        {"type": "play", "card": -1, "flip": False},
        {"type": "play", "card": 1, "flip": 0},
        {"type": "play", "card": 1, "flip": False, "extra": 1},
        {"type": ["play"], "card": 1, "flip": False},
        {"type": "dance"},
        {"type": "pass", "card": 1},
    ],
)
def test_garbage_moves_are_refused_as_move_format(move: object) -> None:
    assert broken_rule(three_seats(), 0, move) == "move-format"


# --- the display and its target ------------------------------------------------------------------


@pytest.mark.parametrize("four", [4, P])
def test_a_4_raises_the_target_to_15_before_it_counts(four: int) -> None:
    """ "The pink 4 prevents a foul": 8 + 4 = 12 is no foul, the target is 15 first."""
    state = position(
        [card(1, four, 5), card(2, 0, 1), card(3, 1, 0)],
        [card(4, 3, 2)],
        display=[shown(20, 5, 0), shown(21, 3, 2)],
    )
    after, events = act(state, 0, play(1))
    assert of_type(events, "CardPlayed")[0]["target"] == 15
    assert (after.total, after.target) == (12, 15)
    assert not of_type(events, "Fouled")
    if four == P:
        assert after.phase == "direction"
        after, events = act(after, 0, direction(False))
    assert after.phase == "play"
    assert RULES.to_act(after) == {1}
    assert after.display[-1].card.id == 1


def test_a_4_cannot_hit_10_because_the_target_is_15_by_then() -> None:
    state = position(
        [card(1, 4, 3), card(2, 0, 1), card(3, 1, 0)],
        [card(4, 3, 2)],
        display=[shown(20, 5, 0), shown(21, 1, 2)],
    )
    after, events = act(state, 0, play(1))
    assert (after.total, after.target) == (10, 15)
    assert not of_type(events, "TargetHit")
    assert RULES.to_act(after) == {1}


def test_further_4s_keep_the_target_at_15() -> None:
    state = position(
        [card(1, 4, 5), card(2, 0, 1), card(3, 1, 0)],
        [card(4, 3, 2)],
        display=[shown(20, 4, 3), shown(21, 2, 1)],
        target=15,
    )
    after, events = act(state, 0, play(1))
    assert (after.total, after.target) == (10, 15)
    assert of_type(events, "CardPlayed")[0]["target"] == 15


def test_a_4_over_15_is_a_foul() -> None:
    state = position(
        [card(1, 4, 5), card(2, 0, 1), card(3, 1, 0)],
        [card(4, 3, 2)],
        display=[shown(20, 4, 3), shown(21, 5, 0), shown(22, 3, 2)],
        target=15,
    )
    _, events = act(state, 0, play(1))
    assert of_type(events, "Fouled") == [
        {"seat": 0, "total": 16, "target": 15, "any_card": True, "scorers": [1]}
    ]


def test_a_pink_4_lets_the_mover_reverse_the_direction() -> None:
    state = position(
        [card(1, P, 5), card(2, 0, 1), card(3, 1, 0)],
        [card(4, 3, 2)],
        [card(5, 3, 2)],
        [card(6, 3, 2)],
    )
    after, events = act(state, 0, play(1))
    assert after.phase == "direction"
    assert RULES.to_act(after) == {0}
    assert RULES.legal_moves(after, 0) == [direction(False), direction(True)]
    assert broken_rule(after, 0, play(2)) == "pink-4-direction"
    assert not of_type(events, "CardDrawn"), "the turn is not over before the choice"
    kept, _ = act(after, 0, direction(False))
    assert kept.direction == 1
    assert RULES.to_act(kept) == {1}
    reversed_, events = act(after, 0, direction(True))
    assert of_type(events, "DirectionChosen") == [{"seat": 0, "reverse": True, "direction": -1}]
    assert reversed_.direction == -1
    assert RULES.to_act(reversed_) == {3}
    assert RULES.view(reversed_, None)["direction"] == "counterclockwise"


@pytest.mark.parametrize("flip", [False, True])
def test_a_flipped_pink_4_and_a_blue_4(flip: bool) -> None:
    """Flipping a 3 to its pink 4 gives the choice; a blue 4 never does."""
    state = position([card(1, 3, P), card(2, 4, 3), card(3, 1, 0)], [card(4, 3, 2)])
    after, _ = act(state, 0, play(1, flip))
    assert (after.phase == "direction") is flip
    blue, _ = act(state, 0, play(2))
    assert blue.phase == "play"
    assert broken_rule(blue, 1, direction(True)) == "pink-4-direction"


# --- exactly on target ---------------------------------------------------------------------------


def test_exactly_10_scores_the_last_card_and_discards_the_rest() -> None:
    state = position(
        [card(1, 3, 2), card(2, 0, 1), card(3, 1, 0)],
        [card(4, 3, 2), card(5, 3, 2), card(6, 3, 2)],
        display=[shown(20, 5, 0), shown(21, 2, 1)],
        scores=(4, 1),
    )
    after, events = act(state, 0, play(1))
    assert after.phase == "choice"
    assert RULES.legal_moves(after, 0) == [score(False), score(True)]
    assert not of_type(events, "CardDrawn")
    for flip, points in [(False, 3), (True, 2)]:
        scored, events = act(after, 0, score(flip))
        (hit,) = of_type(events, "TargetHit")
        assert hit == {
            "seat": 0,
            "card": 1,
            "flip": flip,
            "face": points,
            "pink": False,
            "points": points,
            "jackpot": [],
            "jackpot_points": 0,
        }
        assert scored.scores == (4 + points, 1)
        assert (scored.display, scored.total, scored.target) == ((), 0, 10)
        assert sum(scored.discard_pile) == 2
        assert scored.discard_pile == kinds((5, 0), (2, 1))
        assert drawn_by(events) == [0]
        assert RULES.to_act(scored) == {1}


def test_scoring_may_flip_an_already_flipped_card_back() -> None:
    state = position(
        [card(1, 2, 3), card(2, 0, 1), card(3, 1, 0)],
        [card(4, 3, 2)],
        display=[shown(20, 5, 0), shown(21, 2, 1)],
    )
    after, _ = acts(state, (0, play(1, flip=True)), (0, score(flip=True)))
    assert after.scores == (2, 0)


def test_15_exactly_scores_the_jackpot_of_pink_4s_showing() -> None:
    state = position(
        [card(1, 2, 3), card(2, 0, 1), card(3, 1, 0)],
        [card(4, 3, 2)],
        display=[
            shown(20, P, 5),
            shown(22, 0, 1),
            shown(23, P, 3, flipped=True),
            shown(24, 3, P),
        ],
        target=15,
    )
    state = State(**{**state.__dict__, "hands": ((card(1, 4, 5),), *state.hands[1:])})
    after, events = acts(state, (0, play(1)), (0, score()))
    (hit,) = of_type(events, "TargetHit")
    assert (hit["points"], hit["jackpot_points"]) == (4, 8)
    assert hit["jackpot"] == [
        {"card": 20, "flip": False, "face": 4, "pink": True},
        {"card": 23, "flip": False, "face": 4, "pink": True},
    ]
    assert after.scores == (12, 0)
    assert after.discard_pile == kinds((0, 1), (3, P)), "a pink 4 face down is no jackpot"


def test_a_pink_4_landing_on_15_is_the_last_card_not_jackpot_too() -> None:
    state = position(
        [card(1, P, 5), card(2, 0, 1), card(3, 1, 0)],
        [card(4, 3, 2)],
        display=[shown(20, P, 3), shown(21, 5, 0), shown(22, 2, 1)],
        target=15,
    )
    after, events = acts(state, (0, play(1)), (0, direction(False)), (0, score(flip=True)))
    (hit,) = of_type(events, "TargetHit")
    assert (hit["card"], hit["points"]) == (1, 5)
    assert hit["jackpot"] == [{"card": 20, "flip": False, "face": 4, "pink": True}]
    assert after.scores == (9, 0)


# --- over the target: a foul ---------------------------------------------------------------------


def foul_table(
    display: Sequence[Placed] = (shown(20, 3, 2), shown(21, P, 5)), **kwargs: Any
) -> State:
    return position(
        [card(1, 5, 4), card(2, 0, 1), card(3, 1, 0)],
        [card(4, 3, 2), card(5, 2, 3), card(6, 2, 1)],
        [card(7, 5, 0), card(8, 4, 5), card(9, 3, 4)],
        [card(10, 1, 2), card(11, 0, 5), card(12, 0, 1)],
        display=display,
        **kwargs,
    )


def test_a_foul_clears_the_display_and_the_others_score_in_turn_order() -> None:
    state = foul_table()
    fouled, events = act(state, 0, play(1))
    assert of_type(events, "Fouled") == [
        {"seat": 0, "total": 12, "target": 10, "any_card": False, "scorers": [1, 2, 3]}
    ]
    assert (fouled.display, fouled.total, fouled.target) == ((), 0, 10)
    assert fouled.discard_pile == kinds((3, 2), (P, 5), (5, 4)), "pink 4s are discarded too"
    assert not of_type(events, "CardDrawn"), "the causer draws after the foul scorers"
    assert RULES.to_act(fouled) == {1}
    assert RULES.legal_moves(fouled, 1) == [
        foul_score(5, False),
        foul_score(5, True),
        foul_score(6, False),
        foul_score(6, True),
        PASS,
    ], "the lowest card by up face; ties are the scorer's choice"
    assert RULES.view(fouled, None)["foul"] == {"scorers": [1, 2, 3], "any_card": False}
    assert broken_rule(fouled, 1, foul_score(4)) == "foul-lowest-card"
    assert broken_rule(fouled, 1, foul_score(7)) == "card-in-front"
    assert broken_rule(fouled, 2, PASS) == "turn-order"
    assert broken_rule(fouled, 1, play(4)) == "foul-points"

    after, events = act(fouled, 1, foul_score(6, flip=True))
    assert of_type(events, "FoulScored") == [
        {"seat": 1, "card": 6, "flip": True, "face": 1, "pink": False, "points": 1}
    ]
    assert drawn_by(events) == [1], "a foul scorer draws at once"
    assert RULES.to_act(after) == {2}
    assert RULES.legal_moves(after, 2) == [foul_score(9, False), foul_score(9, True), PASS]
    after, events = act(after, 2, PASS)
    assert types(events) == ["FoulPassed"]
    after, events = act(after, 3, foul_score(12))
    assert of_type(events, "FoulScored")[0]["points"] == 0
    assert drawn_by(events) == [3, 0]
    assert after.scores == (0, 1, 0, 0)
    assert RULES.to_act(after) == {1}, "play goes on after the causer"
    assert [len(hand) for hand in after.hands] == [3, 3, 3, 3]


def test_a_foul_over_15_lets_them_score_any_card() -> None:
    state = foul_table((shown(20, 4, 3), shown(21, P, 5), shown(22, 5, 0)), target=15)
    fouled, events = act(state, 0, play(1))
    assert of_type(events, "Fouled")[0]["any_card"] is True
    assert [m for m in RULES.legal_moves(fouled, 1) if m["type"] == "foul_score"] == [
        foul_score(card_id, flip) for card_id in (4, 5, 6) for flip in (False, True)
    ]
    after, _ = act(fouled, 1, foul_score(4))
    assert after.scores == (0, 3, 0, 0)


def test_foul_scorers_follow_a_reversed_direction() -> None:
    _, events = act(foul_table(direction=-1), 0, play(1))
    assert of_type(events, "Fouled")[0]["scorers"] == [3, 2, 1]


def test_a_pink_4_that_fouls_still_offers_the_direction_first() -> None:
    state = position(
        [card(1, P, 3), card(2, 0, 1), card(3, 1, 0)],
        [card(4, 3, 2)],
        [card(5, 3, 2)],
        display=[shown(20, 4, 3), shown(21, 5, 0), shown(22, 3, 2)],
        target=15,
    )
    chosen, events = act(state, 0, play(1))
    assert chosen.phase == "direction"
    assert not of_type(events, "Fouled")
    _, events = act(chosen, 0, direction(True))
    assert of_type(events, "Fouled")[0]["scorers"] == [2, 1]


# --- the 1s --------------------------------------------------------------------------------------


def one_table(*display: Placed, teams: tuple[int, ...] | None = None) -> State:
    return position(
        [card(1, 1, 0), card(2, 5, 4), card(3, 2, 3)],
        [card(4, 0, 1), card(5, 2, 1), card(6, 3, 2)],
        [card(7, 2, 3), card(8, 5, 0), card(9, 0, 5)],
        [card(10, 1, 2), card(11, 4, 3), card(12, P, 3)],
        display=display,
        teams=teams,
    )


def test_a_1_offers_a_steal_of_any_other_players_card() -> None:
    after, events = act(one_table(shown(20, 3, 2)), 0, play(1))
    assert after.phase == "choice"
    assert not of_type(events, "CardDrawn")
    assert RULES.legal_moves(after, 0) == [PASS] + [steal(card_id) for card_id in range(4, 13)]
    assert broken_rule(after, 0, steal(2)) == "steal-from-another-player"
    assert broken_rule(after, 0, steal(99)) == "steal-from-another-player"
    assert broken_rule(after, 0, score()) == "exactly-on-target"
    assert broken_rule(after, 0, play(2)) == "steal-with-a-1"
    passed, events = act(after, 0, PASS)
    assert types(events)[0] == "StealDeclined"
    assert drawn_by(events) == [0]
    assert RULES.to_act(passed) == {1}


def test_a_flipped_1_offers_a_steal_too_and_a_flipped_away_1_does_not() -> None:
    state = position([card(1, 0, 1), card(2, 1, 2), card(3, 3, 4)], [card(4, 3, 2)])
    assert act(state, 0, play(1, flip=True))[0].phase == "choice"
    assert act(state, 0, play(2, flip=True))[0].phase == "play"
    assert act(state, 0, play(1))[0].phase == "play"


def test_the_stolen_card_is_played_flipped_and_the_thief_is_liable() -> None:
    state, _ = act(one_table(shown(20, 5, 0), shown(21, 2, 1)), 0, play(1))
    fouled, events = act(state, 0, steal(8))  # a 5 whose back is 0: 8 + 0 = 8
    assert of_type(events, "CardStolen") == [
        {"seat": 0, "from": 2, "card": 8, "face": 0, "pink": False, "total": 8, "target": 10}
    ]
    assert fouled.display[-1] == Placed(Card(8, 0, 5, True), 0, 2)
    assert RULES.view(fouled, None)["display"][-1]["stolen_from"] == 2
    assert drawn_by(events) == [2, 0], "the robbed player draws before the thief"
    over, events = acts(state, (0, steal(7)))  # a 2 whose back is 3: 11, the thief's foul
    assert of_type(events, "Fouled")[0] == {
        "seat": 0,
        "total": 11,
        "target": 10,
        "any_card": False,
        "scorers": [1, 2, 3],
    }
    assert RULES.to_act(over) == {1}


def test_a_chain_of_1s() -> None:
    state, _ = act(one_table(shown(20, 3, 2)), 0, play(1))
    state, _ = act(state, 0, steal(4))  # a 0 whose back is 1
    assert state.phase == "choice"
    assert steal(5) in RULES.legal_moves(state, 0)
    state, _ = act(state, 0, steal(5))  # a 2 whose back is 1
    assert (state.total, state.phase) == (6, "choice")
    state, events = act(state, 0, steal(9))  # a 0 whose back is 5: 11, a foul
    assert of_type(events, "Fouled")[0]["scorers"] == [1, 2, 3]


def test_the_chain_ends_when_no_1_lands() -> None:
    state, _ = act(one_table(shown(20, 3, 2)), 0, play(1))
    after, events = act(state, 0, steal(6))  # a 3 whose back is 2: 6, below 10
    assert after.phase == "play"
    assert RULES.to_act(after) == {1}
    assert drawn_by(events) == [1, 0]


def test_a_stolen_4_raises_the_target_and_a_stolen_pink_4_gives_the_thief_the_choice() -> None:
    state = position(
        [card(1, 1, 0), card(2, 5, 4)],
        [card(4, 3, 4), card(5, 5, P), card(6, 4, 3)],
        display=[shown(20, 3, 2)],
    )
    state, _ = act(state, 0, play(1))
    blue, events = act(state, 0, steal(4))  # a 3 whose back is a blue 4
    assert of_type(events, "CardStolen")[0]["target"] == 15
    assert (blue.total, blue.target, blue.phase) == (8, 15, "play")
    showing_4, _ = act(state, 0, steal(6))  # a 4 played flipped comes in as its 3
    assert (showing_4.total, showing_4.target) == (7, 10)
    pink, _ = act(state, 0, steal(5))
    assert (pink.total, pink.target, pink.phase) == (8, 15, "direction")
    assert RULES.to_act(pink) == {0}
    assert RULES.legal_moves(pink, 0) == [direction(False), direction(True)]


def test_quickly_steal_a_0() -> None:
    """A 1 lands on exactly 10: score it, or steal an open 5 that comes in as 0 and score 5."""
    state = position(
        [card(1, 1, 0), card(2, 5, 4), card(3, 2, 3)],
        [card(4, 0, 1), card(5, 2, 1), card(6, 3, 2)],
        [card(7, 2, 3), card(8, 5, 0), card(9, 0, 5)],
        display=[shown(20, 5, 0), shown(21, 3, 2), shown(22, 1, 2)],
    )
    on_target, _ = act(state, 0, play(1))
    assert (on_target.total, on_target.phase) == (10, "choice")
    moves = RULES.legal_moves(on_target, 0)
    assert moves[:2] == [score(False), score(True)]
    assert steal(8) in moves
    assert PASS not in moves
    assert broken_rule(on_target, 0, PASS) == "exactly-on-target"
    safe, _ = act(on_target, 0, score())
    assert safe.scores == (1, 0, 0)
    gamble, events = act(on_target, 0, steal(8))
    assert (gamble.total, gamble.phase) == (10, "choice")
    assert RULES.legal_moves(gamble, 0) == [score(False), score(True)], "a 0 steals nothing"
    done, events = act(gamble, 0, score(flip=True))
    assert of_type(events, "TargetHit")[0]["points"] == 5
    assert done.scores == (5, 0, 0)
    assert drawn_by(events) == [2, 0]


def test_a_stolen_1_on_target_overshoots_and_fouls() -> None:
    state = position(
        [card(1, 1, 0), card(2, 5, 4)],
        [card(4, 0, 1), card(5, 2, 1)],
        display=[shown(20, 5, 0), shown(21, 3, 2), shown(22, 1, 2)],
    )
    on_target, _ = act(state, 0, play(1))
    fouled, events = act(on_target, 0, steal(4))
    assert of_type(events, "Fouled")[0]["total"] == 11
    assert RULES.to_act(fouled) == {1}


def test_the_drawing_example_alma_bernie_carla() -> None:
    """Alma plays a 1, steals two 1s from Bernie, then Carla's 2 that is a 3: 12, a foul."""
    alma, bernie, carla = 0, 1, 2
    state = position(
        [card(1, 1, 0), card(2, 5, 4), card(3, 2, 3)],
        [card(4, 0, 1), card(5, 2, 1), card(6, 3, 2)],
        [card(7, 2, 3), card(8, 4, 5), card(9, 0, 5)],
        display=[shown(20, 3, 2), shown(21, 3, 4, seat=2)],
    )
    state, _ = acts(state, (alma, play(1)), (alma, steal(4)), (alma, steal(5)))
    assert state.total == 9
    state, events = act(state, alma, steal(7))
    assert of_type(events, "Fouled")[0]["total"] == 12
    assert of_type(events, "Fouled")[0]["scorers"] == [bernie, carla]
    assert [len(hand) for hand in state.hands] == [2, 1, 2]
    state, events = act(state, bernie, foul_score(6))
    assert drawn_by(events) == [bernie]
    state, events = act(state, carla, foul_score(9, flip=True))
    assert drawn_by(events) == [carla, bernie, bernie, carla, alma]
    assert state.scores == (0, 3, 5)
    assert [len(hand) for hand in state.hands] == [3, 3, 3]
    assert RULES.to_act(state) == {bernie}


def test_no_steal_without_other_cards() -> None:
    state = position([card(1, 1, 0), card(2, 5, 4)], [], variant="showdown", draw=(0,) * len(KINDS))
    after, events = act(state, 0, play(1))
    assert types(events) == ["CardPlayed", "TurnPassed"]
    assert RULES.to_act(after) == {0}, "the only seat with cards plays again"


# --- end of the game -----------------------------------------------------------------------------


def test_the_game_ends_the_moment_the_draw_pile_is_empty() -> None:
    state, _ = act(one_table(shown(20, 3, 2)), 0, play(1))
    state = State(**{**state.__dict__, "draw_pile": kinds((2, 3)), "scores": (4, 6, 6, 1)})
    over, events = act(state, 0, steal(8))
    assert types(events)[-2:] == ["CardDrawn", "GameEnded"]
    assert drawn_by(events) == [2], "the robbed player drew the last card; the thief draws none"
    assert of_type(events, "GameEnded") == [{"reason": "draw-pile-empty"}]
    assert RULES.to_act(over) == frozenset()
    assert RULES.legal_moves(over, 0) == []
    assert broken_rule(over, 0, play(2)) == "turn-order"
    result = RULES.result(over)
    assert result is not None
    assert (result.winners, result.scores) == ((1, 2), (4, 6, 6, 1)), "ties are shared"


def test_every_jackpot_pink_4_may_be_flipped_as_it_is_scored() -> None:
    # krumme10.md: every card added to points may be flipped, jackpot pink 4s included.
    state = position(
        [card(1, 4, 5), card(2, 0, 1)],
        [card(4, 3, 2)],
        display=[shown(20, P, 5), shown(22, 0, 1), shown(23, P, 3), shown(24, 3, P)],
        target=15,
    )
    on_target, _ = act(state, 0, play(1))
    moves = RULES.legal_moves(on_target, 0)
    assert moves[:8] == [
        score(flip, jackpot) for flip in (False, True) for jackpot in ([], [20], [23], [20, 23])
    ]
    after, events = act(on_target, 0, score(False, [20]))
    (hit,) = of_type(events, "TargetHit")
    assert hit["jackpot"] == [
        {"card": 20, "flip": True, "face": 5, "pink": False},
        {"card": 23, "flip": False, "face": 4, "pink": True},
    ]
    assert (hit["points"], hit["jackpot_points"]) == (4, 9)
    assert after.scores == (13, 0)
    won = {card.id: card for card in after.won[0]}
    assert won[20] == Card(20, 5, P, True), "the flipped pink 4's back is public now"
    assert won[23] == Card(23, P, 3)
    assert broken_rule(on_target, 0, score(False, [22])) == "jackpot-flip"
    assert broken_rule(on_target, 0, score(False, [20, 20])) == "move-format"


def test_an_old_target_hit_is_read_with_its_jackpot_unflipped() -> None:
    old = {"seat": 0, "card": 1, "flip": False, "face": 4, "pink": False, "points": 4}
    upcast = target_hit_v1_to_v2({**old, "jackpot": [20, 23], "jackpot_points": 8})
    assert upcast["jackpot"] == [
        {"card": 20, "flip": False, "face": 4, "pink": True},
        {"card": 23, "flip": False, "face": 4, "pink": True},
    ]
    assert (("TargetHit", 1, target_hit_v1_to_v2),) == UPCASTS


def test_the_draw_piles_top_card_shows_its_up_face_to_everyone() -> None:
    events, state = dealt(3, SEED)
    (shown_top,) = of_type(events, "TopCardShown")
    top = state.draw_top
    assert top is not None
    assert shown_top["card"]["id"] == top.id == 9
    for seat in (None, 0, 1, 2):
        assert RULES.view(state, seat)["draw_top"] == {
            "id": top.id,
            "face": VALUE[top.face],
            "pink": top.face == P,
        }
        redacted = RULES.redact(events[-1], seat)
        assert redacted is not None
        assert "back" not in redacted.data["card"], "its back stays unknown"
    seat = state.turn
    assert seat is not None
    after, drawn = act(state, seat, play(state.hands[seat][0].id))
    (got,) = of_type(drawn, "CardDrawn")
    assert _card_from_json(got["card"]) == top, "the drawer gets the top card, face as shown"
    assert after.draw_top is not None
    assert after.draw_top.id == top.id + 1
    assert types(drawn)[types(drawn).index("CardDrawn") + 1] == "TopCardShown"


def test_the_last_card_drawn_leaves_no_top_card() -> None:
    state = position(
        [card(1, 3, 2), card(2, 0, 1), card(3, 1, 0)], [card(4, 3, 2)], draw=kinds((1, 2))
    )
    assert state.draw_top == Card(5, 1, 2)
    over, events = act(state, 0, play(1))
    assert types(events) == ["CardPlayed", "CardDrawn", "GameEnded"]
    assert over.draw_top is None
    assert RULES.view(over, None)["draw_top"] is None


def test_a_foul_scorers_draw_can_end_the_game() -> None:
    fouled, _ = act(foul_table(), 0, play(1))
    top = Card(fouled.next_id, 5, 0)
    fouled = State(**{**fouled.__dict__, "draw_pile": kinds((5, 0)), "draw_top": top})
    assert fouled.foul_scorers == (1, 2, 3)
    over, events = act(fouled, 1, foul_score(5))
    assert types(events) == ["FoulScored", "CardDrawn", "GameEnded"]
    assert RULES.result(over) is not None
    assert RULES.to_act(over) == frozenset(), (
        "the foul round ends with the game: 2 and 3 get nothing"
    )
    assert over.scores[2:] == (0, 0)


def test_too_short_reshuffles_the_discard_pile_once() -> None:
    state = position(
        [card(1, 3, 2), card(2, 0, 1), card(3, 1, 0)],
        [card(4, 3, 2), card(5, 2, 3), card(6, 4, 5)],
        variant="too_short",
        draw=kinds((1, 2)),
        discard=[card(30, 5, 0), card(31, 0, 1)],
    )
    after, events = act(state, 0, play(1))
    assert types(events) == [
        "CardPlayed",
        "CardDrawn",
        "DiscardReshuffled",
        "TopCardShown",
        "TurnPassed",
    ]
    assert of_type(events, "DiscardReshuffled") == [{"cards": 2}]
    assert (after.draw_pile, sum(after.discard_pile), after.refilled) == (
        kinds((5, 0), (0, 1)),
        0,
        True,
    )
    assert RULES.view(after, None)["refilled"] is True
    after, events = act(after, 1, play(4))
    assert RULES.result(after) is None
    after, events = act(after, 0, play(2))
    assert types(events)[-2:] == ["CardDrawn", "GameEnded"], "the second run-out ends it"


def test_too_short_turns_each_reshuffled_card_either_side_up() -> None:
    """Shuffling the discard pile into a new draw pile lands each card either way up, as the
    deal does: a card that was scored as a 5 may come back showing its 0."""
    shown = set()
    for seed in range(16):
        state = position(
            [card(1, 3, 2), card(2, 0, 1), card(3, 1, 0)],
            [card(4, 3, 2)],
            variant="too_short",
            draw=kinds((1, 2)),
            discard=[card(30, 5, 0)],
        )
        _, events = act(state, 0, play(1), seed=seed)
        (turned_up,) = of_type(events, "TopCardShown")
        shown.add(turned_up["card"]["face"])
    assert shown == {5, 0}


def test_too_short_with_an_empty_discard_pile_ends_at_once() -> None:
    state = position(
        [card(1, 3, 2), card(2, 0, 1), card(3, 1, 0)],
        [card(4, 3, 2)],
        variant="too_short",
        draw=kinds((1, 2)),
    )
    _, events = act(state, 0, play(1))
    assert types(events) == ["CardPlayed", "CardDrawn", "DiscardReshuffled", "GameEnded"]


def test_showdown_plays_on_without_drawing_and_skips_empty_hands() -> None:
    state = position(
        [card(1, 3, 2), card(2, 0, 1)],
        [card(3, 5, 4), card(5, 0, 1)],
        [card(4, 3, 2), card(6, 2, 1), card(7, 0, 1)],
        variant="showdown",
        draw=kinds((2, 3), (2, 3)),
    )
    after, events = act(state, 0, play(1))
    assert drawn_by(events) == [1, 0], "while the draw pile lasts, hands are refilled"
    assert after.draw_pile == (0,) * len(KINDS)
    assert [len(hand) for hand in after.hands] == [2, 3, 3]
    assert RULES.result(after) is None, "an empty draw pile does not end a showdown"
    after, events = acts(after, (1, play(3)), (2, play(4)))  # 3 + 5 + 3 = 11: a foul
    assert drawn_by(events) == []
    after, _ = acts(after, (0, PASS), (1, PASS), (0, play(2)), (1, play(5)), (2, play(6)))
    assert [len(hand) for hand in after.hands] == [1, 1, 1]
    after, _ = acts(after, (0, play(9)), (1, play(8)))
    assert RULES.to_act(after) == {2}, "seats without cards are skipped"
    after, events = act(after, 2, play(7))
    assert of_type(events, "GameEnded") == [{"reason": "cards-gone"}]
    assert RULES.result(after) is not None


def test_showdown_foul_scorers_without_cards_are_skipped() -> None:
    state = position(
        [card(1, 5, 4)],
        [],
        [card(4, 3, 2)],
        variant="showdown",
        draw=(0,) * len(KINDS),
        display=[shown(20, 3, 2), shown(21, 3, 4)],
    )
    after, events = act(state, 0, play(1))
    assert of_type(events, "Fouled")[0]["scorers"] == [2]
    after, events = act(after, 2, foul_score(4))
    assert types(events) == ["FoulScored", "GameEnded"]
    assert after.scores == (0, 0, 3)


# --- teams ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "seating"), [(4, [0, 1, 0, 1]), (5, [0, 1, 2, 0, 1]), (6, [0, 1, 0, 1, 0, 1])]
)
def test_team_seating(players: int, seating: list[int]) -> None:
    _, state = dealt(players, 1, teams=True)
    assert RULES.view(state, 0)["teams"] == seating
    _, alone = dealt(players, 1)
    assert RULES.view(alone, 0)["teams"] is None


@pytest.mark.parametrize("players", [2, 3])
def test_teams_need_4_to_6_players(players: int) -> None:
    with pytest.raises(OptionError) as error:
        RULES.info.resolve_options(players, {"teams": True})
    assert error.value.option == "teams"
    assert RULES.info.resolve_options(players, {"teams": False})["teams"] is False


def test_after_a_team_foul_only_the_other_team_scores() -> None:
    _, events = act(foul_table(teams=(0, 1, 0, 1)), 0, play(1))
    assert of_type(events, "Fouled")[0]["scorers"] == [1, 3]


def test_stealing_from_a_teammate_is_allowed() -> None:
    state, _ = act(one_table(shown(20, 3, 2), teams=(0, 1, 0, 1)), 0, play(1))
    assert steal(7) in RULES.legal_moves(state, 0)
    after, events = act(state, 0, steal(7))
    assert of_type(events, "CardStolen")[0]["from"] == 2
    assert len(after.hands[2]) == 3, "the teammate drew back"


@pytest.mark.parametrize(
    ("points", "winners", "team_scores"),
    [
        ((3, 4, 5, 5, 4), (2,), [4.0, 4.0, 5.0]),
        ((3, 4, 4, 5, 4), (0, 1, 2, 3, 4), [4.0, 4.0, 4.0]),
        ((9, 4, 5, 2, 4), (0, 3), [5.5, 4.0, 5.0]),
    ],
)
def test_a_team_scores_its_sum_divided_by_its_size(
    points: tuple[int, ...], winners: tuple[int, ...], team_scores: list[float]
) -> None:
    state = position([], [], [], [], [], scores=points, teams=(0, 1, 2, 0, 1))
    assert RULES.result(state) is None
    state = State(**{**state.__dict__, "phase": "over", "turn": None})
    result = RULES.result(state)
    assert result is not None
    assert result.winners == winners
    assert result.scores == points
    assert result.details["team_scores"] == team_scores
    assert result.details["teams"] == [[0, 3], [1, 4], [2]]


def test_won_and_discarded_cards_are_shown_with_backs_only_once_flipped() -> None:
    state = position(
        [card(1, 2, 3), card(2, 0, 1), card(3, 1, 0)],
        [card(4, 3, 2)],
        display=[shown(20, 5, 0), shown(21, 2, 1, flipped=True)],
        scores=(4, 0),
    )
    scored, _ = acts(state, (0, play(1, flip=True)), (0, score(flip=True)))
    view = RULES.view(scored, None)
    assert view["won"] == [
        [{"id": 1, "face": 2, "pink": False, "flipped": True, "back": {"face": 3, "pink": False}}],
        [],
    ]
    assert view["discarded"] == [
        {"id": 20, "face": 5, "pink": False, "flipped": False, "back": None},
        {"id": 21, "face": 2, "pink": False, "flipped": True, "back": {"face": 1, "pink": False}},
    ]
    assert view["discard_pile"] == 2


# --- search support: sample and evaluate ---------------------------------------------------------


def all_known_0_1_cards() -> State:
    """Every 0/1 card has been won flipped, so no hidden card can be one."""
    won = tuple(Card(40 + n, 1, 0, True) for n in range(9))
    state = position(
        [card(1, 1, 2), card(2, 0, 5), card(3, 3, 4)],
        [card(4, 5, 4), card(5, 0, 5), card(6, 2, 1)],
        display=[shown(20, 2, 3)],
        scores=(0, 9),
    )
    out = [c for hand in state.hands for c in hand] + [p.card for p in state.display] + list(won)
    dealt = [KIND_OF[c.face, c.back] for c in out]
    draw = tuple(count - dealt.count(kind) for kind, count in enumerate(FULL_DRAW))
    return State(**{**state.__dict__, "won": ((), won), "draw_pile": draw})


def test_a_sample_deals_hidden_backs_only_from_cards_nobody_has_seen_both_sides_of() -> None:
    state = all_known_0_1_cards()
    view = RULES.view(state, 0)
    options = RULES.info.resolve_options(2, {})
    rng = Random(SEED)
    for _ in range(200):
        sampled = RULES.sample(2, options, view, 0, rng)
        assert RULES.view(sampled, 0) == view
        hidden = [c for hand in sampled.hands for c in hand] + [p.card for p in sampled.display]
        assert all(KIND_OF[c.face, c.back] != KIND_OF[0, 1] for c in hidden)
        assert sampled.hands[0][0].back == 2, "a 1 that is no 0/1 card is a 1/2 card"
        assert sampled.hands[0][1].back == 5, "a 0 that is no 0/1 card is a 5/0 card"
        assert sampled.draw_pile[KIND_OF[0, 1]] == 0
        dealt = [KIND_OF[c.face, c.back] for c in [*hidden, *sampled.won[1]]]
        in_deck = [sampled.draw_pile[kind] + dealt.count(kind) for kind in range(len(KINDS))]
        assert in_deck == list(FULL_DRAW), "the sample holds the whole deck"


def test_sampled_backs_follow_the_odds_of_the_deal() -> None:
    """Two 0/1 cards, a 1/2 and a 5/0: one shows a 1, one a 0, two are still to draw. Every way
    the four cards could lie is equally likely; the sampler must agree."""
    deck = [KIND_OF[0, 1], KIND_OF[0, 1], KIND_OF[1, 2], KIND_OF[5, 0]]
    exact: dict[tuple[int, int], int] = {}
    for order in permutations(deck):
        showing_1, showing_0 = KINDS[order[0]], KINDS[order[1]]
        if 1 in showing_1 and 0 in showing_0:
            pair = (sum(showing_1) - 1, sum(showing_0) - 0)
            exact[pair] = exact.get(pair, 0) + 1
    supply = tuple(deck.count(kind) for kind in range(len(KINDS)))
    demand = (1, 1, 0, 0, 0, 0, 0)
    rng, draws = Random(SEED), 6000
    seen: dict[tuple[int, int], int] = {}
    for _ in range(draws):
        backs, rest = deal_backs(demand, supply, rng)
        pair = (backs[1][0], backs[0][0])
        seen[pair] = seen.get(pair, 0) + 1
        assert sum(rest) == 2
    total = sum(exact.values())
    for pair in exact.keys() | seen.keys():
        assert seen.get(pair, 0) / draws == pytest.approx(exact.get(pair, 0) / total, abs=0.03)


def test_a_clear_leader_near_the_end_gets_the_largest_share() -> None:
    hands = ([card(1, 3, 2)], [card(2, 3, 2)], [card(3, 3, 2)])
    late = position(*hands, scores=(20, 12, 10), draw=kinds((5, 0), (2, 3)))
    early = position(*hands, scores=(20, 12, 10))
    late_shares, early_shares = RULES.evaluate(late), RULES.evaluate(early)
    assert max(late_shares) == late_shares[0] > 0.9
    assert late_shares[1] > late_shares[2]
    assert early_shares[0] < late_shares[0], "a lead is worth more the less is left to play"
    level = position(*hands, scores=(5, 5, 5))
    assert RULES.evaluate(level) == pytest.approx((1 / 3, 1 / 3, 1 / 3))


def test_evaluation_counts_points_about_to_be_scored() -> None:
    state = position(
        [card(1, 5, 4), card(2, 0, 1)],
        [card(4, 3, 2)],
        display=[shown(20, 3, 2), shown(21, 2, 1)],
        scores=(3, 3),
    )
    on_target, _ = act(state, 0, play(1))
    assert on_target.phase == "choice"
    assert RULES.evaluate(on_target)[0] > 0.5 == RULES.evaluate(state)[0]


def test_team_shares_are_split_between_members() -> None:
    hands = [[card(seat + 1, 3, 2)] for seat in range(5)]
    state = position(*hands, scores=(9, 4, 5, 2, 4), teams=(0, 1, 2, 0, 1))
    shares = RULES.evaluate(state)
    assert sum(shares) == pytest.approx(1)
    assert shares[0] == shares[3]
    assert shares[1] == shares[4]
    assert shares[0] + shares[3] > shares[2] > shares[1] + shares[4], "team averages 5.5, 5, 4"
