"""Wobble rule tests: hand-built positions pinned against `docs/rules/wobble.md`, paragraph by
paragraph (the section names below follow the rules file).

Every test talks to the engine through the `RULES` contract; events are folded with
`RULES.evolve`, randomness comes from seeded `random.Random` instances. Positions draw from a
draw pile of one repeated card, so what is drawn is known in advance.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from functools import partial, reduce
from random import Random
from typing import Any

import pytest

from domain.games.wobble import (
    ATTACK,
    CARD,
    CARDS,
    CHOOSING,
    INFO,
    NAME,
    NO_CARDS,
    OFFENSIVE_UNITS,
    OPENING,
    OVER,
    REPORT,
    RESOLVE,
    RULES,
    TASK,
    TURN,
    Attack,
    State,
    Step,
    Wobble,
    choices,
    deck_counts,
    matches,
    parse_deck,
)
from domain.rules import Event, OptionError
from tests.games.refusals import refused_rule

SEED = 138
FILLER = "yellow:9"
"""The card every hand-built draw pile consists of (it matches nothing cyan)."""


# --- helpers -------------------------------------------------------------------------------------


def counts(cards: Iterable[str]) -> tuple[int, ...]:
    result = list(NO_CARDS)
    for card in cards:
        result[CARDS.index(CARD[card])] += 1
    return tuple(result)


def position(
    *hands: Sequence[str],
    top: str = "cyan:5",
    colour: str | None = None,
    turn: int | None = 0,
    phase: str = TURN,
    attack: Attack | None = None,
    draw: Sequence[str] = (FILLER,) * 12,
    discard: Sequence[str] = (),
    toss: str | None = None,
    toss_by: int | None = None,
    tasks: bool = False,
    scores: Sequence[int] | None = None,
    steps: Sequence[Step] = (),
    named: Sequence[int] = (),
    away: Sequence[tuple[int, ...]] | None = None,
    score_limit: int = 500,
    direction: int = 1,
) -> State:
    """A running round (round 0, dealer 0) with the given hands, seats in order 0..n-1."""
    n = len(hands)
    return State(
        players=n,
        deck=deck_counts("standard", False),
        tasks=tasks,
        score_limit=score_limit,
        first_dealer=0,
        scores=tuple(scores) if scores is not None else (0,) * n,
        ring=tuple(range(n)),
        round=0,
        dealer=0,
        direction=direction,
        hands=tuple(tuple(sorted(hand)) for hand in hands),
        draw=counts(draw),
        discard=counts(discard),
        top=top,
        colour=colour or CARD[top].colours[0],
        phase=phase,
        turn=turn,
        attack=attack,
        steps=tuple(steps),
        toss=toss,
        toss_by=toss_by,
        named=tuple(named),
        lost=(0,) * n,
        away=tuple(away) if away is not None else ((),) * n,
    )


def sitting_out(players: int, seat: int, turns: int = 1) -> tuple[tuple[int, ...], ...]:
    """`State.away` with `seat` sitting out (AFK) until each other seat has had `turns` turns."""
    waits = tuple(0 if other == seat else turns for other in range(players))
    return tuple(waits if other == seat else () for other in range(players))


def turns_away(state: State) -> list[int]:
    """Per seat, the turns of others it still sits out, as every view shows them."""
    away: list[int] = RULES.view(state, None)["away"]
    return away


def attacked(
    *hands: Sequence[str], symbol: str, amount: int, owner: int, target: int, **kw: Any
) -> State:
    """A position with an open attack (its top card is `top`, default cyan of the symbol)."""
    kw.setdefault("top", f"cyan:{symbol}")
    attack = Attack(symbol, amount, owner, target, owner)
    return position(*hands, phase=ATTACK, turn=None, attack=attack, **kw)


def fold(state: State, events: Iterable[Event]) -> State:
    return fold_with(RULES, state, events)


def fold_with(rules: Wobble, state: State, events: Iterable[Event]) -> State:
    return reduce(rules.evolve, events, state)


def act(
    state: State, seat: int, move: dict[str, Any], seed: int = SEED
) -> tuple[State, list[Event]]:
    """Decide `move` (it must be listed as legal) and fold its events."""
    assert move in RULES.legal_moves(state, seat), RULES.legal_moves(state, seat)
    events = RULES.decide(state, seat, move, Random(seed))
    return fold(state, events), events


def play(*cards: str, **choices: Any) -> dict[str, Any]:
    return {"type": "play", "cards": list(cards), **choices}


broken_rule = partial(refused_rule, RULES, SEED)


def types(events: Iterable[Event]) -> list[str]:
    return [event.type for event in events]


def of_type(events: Iterable[Event], kind: str) -> list[dict[str, Any]]:
    return [dict(event.data) for event in events if event.type == kind]


def start_with(card: str, players: int = 4, *hands: Sequence[str]) -> State:
    """Round 0 dealt by hand (`hands`, then six fillers each), `card` turned up by the dealer,
    seat 0."""
    state = RULES.initial_state(players, INFO.resolve_options(players, {}))
    events = [Event("RoundStarted", {"round": 0, "dealer": 0})]
    dealt = [list(hand) for hand in hands] + [[FILLER] * 6] * (players - len(hands))
    events += [Event("CardsDealt", {"seat": s, "cards": dealt[s]}) for s in range(players)]
    return fold(state, [*events, Event("StartCardTurned", {"seat": 0, "card": card})])


def random_game(players: int, options: dict[str, Any], seed: int) -> tuple[State, Counter[str]]:
    """A whole game of uniformly random legal moves by random seats of `may_act`."""
    rng = Random(seed)
    resolved = INFO.resolve_options(players, options)
    state = fold(RULES.initial_state(players, resolved), RULES.setup(players, resolved, rng))
    seen: Counter[str] = Counter()
    while RULES.result(state) is None:
        seat = rng.choice(sorted(RULES.may_act(state)))
        move = rng.choice(RULES.legal_moves(state, seat))
        events = RULES.decide(state, seat, move, rng)
        seen.update(e.type for e in events)
        seen.update(
            card for e in events for card in e.data.get("cards") or [] if isinstance(card, str)
        )
        state = fold(state, events)
        assert seen.total() < 400_000
    return state, seen


# --- Components ----------------------------------------------------------------------------------


def test_the_default_deck_has_138_cards_in_the_listed_groups() -> None:
    deck = dict(zip((card.code for card in CARDS), deck_counts("standard", False), strict=True))
    assert sum(deck.values()) == 138
    by_group = Counter[str]()
    for code, count in deck.items():
        by_group[CARD[code].group] += count
    assert by_group == {
        "number": 76,
        "offensive": 32,
        "neutral": 16,
        "swap": 4,
        "grey": 7,
        "brown": 3,
    }
    assert deck["cyan:0"] == 1
    assert deck["cyan:7"] == 2
    assert deck["magenta:skip"] == deck["magenta:+3"] == deck["magenta:reverse"] == 2
    assert deck["green:+5"] == deck["green:minus20"] == deck["green:magnet"] == 1
    assert deck["green:afk"] == deck["yellow:half_hand"] == deck["yellow:card_exchange"] == 1
    assert {code for code in deck if code.startswith("swap:")} == {
        "swap:magenta/cyan",
        "swap:cyan/yellow",
        "swap:yellow/green",
        "swap:green/magenta",
    }
    assert deck["grey:dodge"] == deck["grey:you"] == deck["grey:mirror"] == 2
    assert deck["grey:unlucky"] == deck["brown:not_me"] == deck["brown:capture"] == 1


def test_card_values_for_minus_points() -> None:
    assert CARD["cyan:7"].value == 7
    assert CARD["cyan:0"].value == 0
    assert CARD["cyan:+5"].value == CARD["swap:cyan/yellow"].value == 20
    assert CARD["grey:dodge"].value == CARD["green:half_hand"].value == 20
    assert CARD["brown:double"].value == 70


def test_two_to_eight_players() -> None:
    assert (INFO.min_players, INFO.max_players) == (2, 8)


def test_first_game_plays_with_the_practice_cards_only() -> None:
    deck = dict(zip((card.code for card in CARDS), deck_counts("standard", True), strict=True))
    kept = {CARD[code].symbol for code, count in deck.items() if count}
    assert kept == {
        *map(str, range(10)),
        "reverse",
        "color_swap",
        "skip",
        "+3",
        "+5",
        "magnet",
        "dodge",
        "you",
        "mirror",
    }
    # Minus 20, AFK, Half Hand and Card Exchange (4 each), Who is unlucky, the 3 Jerk cards.
    assert sum(deck.values()) == 138 - 4 * 4 - 1 - 3


def test_the_deck_option_changes_counts_and_refuses_what_is_not_a_deck() -> None:
    assert parse_deck("afk=0, not_me=3")["afk"] == 0
    assert sum(deck_counts("afk=0,not_me=3", False)) == 138 - 4 + 2
    for bad in ("afk", "nope=1", "afk=3", "0=2", "afk=-1", "1=0,2=0,3=0,4=0"):
        with pytest.raises(OptionError):
            INFO.resolve_options(4, {"deck": bad})
    with pytest.raises(OptionError):
        INFO.resolve_options(4, {"tasks": "sometimes"})
    with pytest.raises(OptionError):
        INFO.resolve_options(4, {"score_limit": 0})
    assert INFO.resolve_options(4, {})["score_limit"] == 500


# --- A round -------------------------------------------------------------------------------------


def test_deal_six_hidden_cards_each_and_turn_up_a_colour_card() -> None:
    for seed in range(30):
        options = INFO.resolve_options(5, {})
        events = RULES.setup(5, options, Random(seed))
        state = fold(RULES.initial_state(5, options), events)
        assert [len(hand) for hand in state.hands] == [6] * 5
        assert state.top is not None
        assert CARD[state.top].group not in ("grey", "brown")
        assert state.draw_size == 138 - 30 - 1
        dealt = of_type(events, "CardsDealt")[1]
        assert RULES.redact(Event("CardsDealt", dealt), 2) == Event(
            "CardsDealt", {"seat": 1, "cards": None, "count": 6}
        )


def test_the_dealer_deals_and_the_next_player_starts() -> None:
    state = start_with("cyan:5")
    assert (state.dealer, state.turn, state.phase) == (0, 1, TURN)
    named = RULES.initial_state(4, INFO.resolve_options(4, {"first_seat": 2}))
    assert named.first_dealer == 1
    events = RULES.setup(4, INFO.resolve_options(4, {"first_seat": 2}), Random(SEED))
    assert of_type(events, "RoundStarted") == [{"round": 0, "dealer": 1}]


def test_the_named_first_seat_moves_first_unless_the_starting_card_says_otherwise() -> None:
    """`first_seat` names who moves first: the seat before it deals, and the dealer's next
    player moves first, after the starting card's action. An ordinary card leaves the named
    seat the first to move; a Change of direction turns play the other way, so the seat on the
    dealer's other side moves first; an attack is aimed at the named seat, which answers it."""
    options = INFO.resolve_options(4, {"first_seat": 2})
    started: dict[str, State] = {}
    for seed in range(200):
        state = fold(RULES.initial_state(4, options), RULES.setup(4, options, Random(seed)))
        card = CARD[state.top or ""]
        kind = (
            "attack"
            if state.phase == ATTACK
            else card.symbol
            if card.group != "number"
            else "number"
        )
        if state.phase != OPENING:
            started.setdefault(kind, state)
    assert {"number", "reverse", "attack"} <= started.keys()
    assert (started["number"].dealer, started["number"].turn) == (1, 2)
    assert (started["reverse"].direction, started["reverse"].turn) == (-1, 0)
    attack = started["attack"].attack
    assert attack is not None
    assert attack.target == 2


def test_the_first_dealer_is_drawn_not_always_seat_0() -> None:
    options = INFO.resolve_options(4, {})
    assert RULES.initial_state(4, options).first_dealer is None
    dealers = {
        of_type(RULES.setup(4, options, Random(seed)), "RoundStarted")[0]["dealer"]
        for seed in range(40)
    }
    assert dealers == {0, 1, 2, 3}
    events = RULES.setup(4, options, Random(SEED))
    state = fold(RULES.initial_state(4, options), events)
    dealer = of_type(events, "RoundStarted")[0]["dealer"]
    assert state.first_dealer == state.dealer == dealer
    assert of_type(events, "StartCardTurned")[0]["seat"] == dealer


def test_the_starting_card_counts_as_played_by_the_dealer() -> None:
    reverse = start_with("cyan:reverse")
    assert (reverse.direction, reverse.turn) == (-1, 3)
    plus3 = start_with("cyan:+3")
    assert plus3.phase == ATTACK
    assert plus3.attack is not None
    assert (plus3.attack.owner, plus3.attack.target, plus3.attack.amount) == (0, 1, 3)
    swap = start_with("swap:cyan/yellow")
    assert swap.phase == OPENING
    assert RULES.to_act(swap) == {0}
    assert RULES.legal_moves(swap, 0) == [
        {"type": "start", "colour": "cyan"},
        {"type": "start", "colour": "yellow"},
    ]
    after, _ = act(swap, 0, {"type": "start", "colour": "yellow"})
    assert (after.colour, after.turn) == ("yellow", 1)
    zero = start_with("cyan:0")
    after, _ = act(zero, 0, {"type": "start", "swap_with": 2})
    assert after.ring == (2, 1, 0, 3)
    assert after.turn == 3


def test_the_dealer_rotates_each_round() -> None:
    state = position(["cyan:3"], [FILLER], [FILLER])
    after, events = act(state, 0, play("cyan:3"))
    assert of_type(events, "RoundEnded")[0]["points"] == [0, 9, 9]
    assert of_type(events, "RoundStarted") == [{"round": 1, "dealer": 1}]
    assert after.round == 1
    assert after.dealer == 1
    assert after.scores == (0, 9, 9)


def test_matching_by_colour_or_symbol() -> None:
    state = position(["cyan:2", "magenta:5", "green:7", "magenta:skip"], [FILLER])
    plays = [move["cards"][0] for move in RULES.legal_moves(state, 0)]
    assert plays == ["cyan:2", "magenta:5"]
    assert broken_rule(state, 0, play("green:7")) == "matching"


def test_color_swap_plays_on_either_colour_and_turns_to_the_other() -> None:
    state = position(["swap:cyan/yellow", "swap:green/magenta"], [FILLER])
    assert RULES.legal_moves(state, 0) == [
        {"type": "play", "cards": ["swap:cyan/yellow"], "colour": "yellow"}
    ]
    after, _ = act(state, 0, RULES.legal_moves(state, 0)[0])
    assert after.colour == "yellow"
    # On a Color Swap whose active colour is neither of its colours, the player picks one.
    after = replace(after, hands=(("swap:green/magenta",), (FILLER,)), turn=0)
    assert RULES.legal_moves(after, 0) == [
        {"type": "play", "cards": ["swap:green/magenta"], "colour": "green"},
        {"type": "play", "cards": ["swap:green/magenta"], "colour": "magenta"},
    ]


def test_grey_and_brown_cards_only_answer_attacks() -> None:
    state = position(["grey:dodge", "brown:not_me", "cyan:1"], [FILLER])
    assert [m["cards"] for m in RULES.legal_moves(state, 0)] == [["cyan:1"]]
    rule = broken_rule(state, 0, play("grey:dodge"))
    assert rule == "grey-brown-only-on-attack"


def test_forced_play_and_playing_the_drawn_card() -> None:
    state = position(["cyan:1", "green:2"], [FILLER])
    assert broken_rule(state, 0, {"type": "draw"}) == "forced-play"
    cannot = position(["green:2"], [FILLER], draw=["cyan:8"])
    assert RULES.legal_moves(cannot, 0) == [{"type": "draw"}]
    drawn, events = act(cannot, 0, {"type": "draw"})
    assert of_type(events, "CardDrawn") == [{"seat": 0, "card": "cyan:8"}]
    assert RULES.redact(events[0], 1) == Event("CardDrawn", {"seat": 0, "card": None})
    assert drawn.phase == "drawn"
    assert RULES.to_act(drawn) == {0}
    assert RULES.legal_moves(drawn, 0) == [play("cyan:8")]
    assert RULES.view(drawn, 0)["drawn"] == "cyan:8"
    assert RULES.view(drawn, 1)["drawn"] is None
    assert broken_rule(drawn, 0, play("green:2")) in ("card-in-hand", "play-drawn-card")
    after, _ = act(drawn, 0, play("cyan:8"))
    assert after.top == "cyan:8"
    assert after.turn == 1
    no_match = position(["green:2"], [FILLER])
    after, _ = act(no_match, 0, {"type": "draw"})
    assert after.turn == 1
    assert after.hands[0] == ("green:2", FILLER)


def test_two_identical_cards_count_double() -> None:
    plus = position(["cyan:+3", "cyan:+3", "cyan:1"], [FILLER], [FILLER])
    after, _ = act(plus, 0, play("cyan:+3", "cyan:+3"))
    assert after.attack is not None
    assert after.attack.amount == 6
    reverse = position(["cyan:reverse", "cyan:reverse", "cyan:1"], [FILLER], [FILLER])
    after, _ = act(reverse, 0, play("cyan:reverse", "cyan:reverse"))
    assert after.direction == 1
    assert after.turn == 1
    single, _ = act(reverse, 0, play("cyan:reverse"))
    assert single.direction == -1
    assert single.turn == 2
    assert broken_rule(plus, 0, play("cyan:+3", "cyan:1")) in ("identical-pair", "card-in-hand")


def test_both_cards_of_a_pair_stay_in_the_game() -> None:
    state = position(["cyan:7", "cyan:7", "cyan:1"], [FILLER], [FILLER])
    after, _ = act(state, 0, play("cyan:7", "cyan:7"))
    assert after.top == "cyan:7"
    assert after.discard == counts(["cyan:5", "cyan:7"])


def test_two_identical_skips_skip_two_players() -> None:
    state = position(["cyan:skip", "cyan:skip", "cyan:1"], [FILLER], [FILLER], [FILLER])
    attacked_, _ = act(state, 0, play("cyan:skip", "cyan:skip"))
    assert attacked_.attack is not None
    assert attacked_.attack.target == 1
    after, _ = act(attacked_, 1, {"type": "accept"})
    assert after.turn == 3
    assert after.lost == (0, 0, 0, 0)


def test_a_hand_of_grey_cards_only_may_be_exchanged() -> None:
    state = position(["grey:dodge", "grey:you"], [FILLER])
    assert RULES.legal_moves(state, 0) == [{"type": "draw"}, {"type": "exchange_greys"}]
    after, events = act(state, 0, {"type": "exchange_greys"})
    assert after.hands[0] == (FILLER, FILLER)
    assert after.turn == 1
    assert after.draw[CARDS.index(CARD["grey:you"])] == 1
    shown = of_type(events, "GreysExchanged")[0]
    assert shown["shown"] == ["grey:dodge", "grey:you"]
    assert RULES.redact(events[0], 1).data["drawn"] is None  # type: ignore[union-attr]
    mixed = position(["grey:dodge", "green:2"], [FILLER])
    assert broken_rule(mixed, 0, {"type": "exchange_greys"}) == "grey-exchange"


def test_the_shown_greys_are_shuffled_in_before_the_new_cards_are_drawn() -> None:
    """One card in the draw pile and two greys shown: both new cards can only be drawn from
    the pile the greys went into."""
    state = position(["grey:dodge", "grey:you"], [FILLER], draw=[FILLER])
    for seed in range(8):
        after, events = act(state, 0, {"type": "exchange_greys"}, seed)
        drawn = of_type(events, "GreysExchanged")[0]["drawn"]
        assert len(drawn) == len(after.hands[0]) == 2
        assert after.draw_size == 1


def test_an_empty_draw_pile_is_refilled_from_the_discard_pile_but_its_top_card() -> None:
    state = position(["green:2"], [FILLER], draw=[], discard=["cyan:8", "green:4"])
    after, events = act(state, 0, {"type": "draw"})
    assert types(events)[:2] == ["DiscardsReshuffled", "CardDrawn"]
    assert after.top == "cyan:5"
    assert after.discard_size == 0
    assert after.draw_size == 1
    empty = position(["green:2"], [FILLER], draw=[], discard=[])
    after, events = act(empty, 0, {"type": "draw"})
    assert of_type(events, "CardDrawn") == [{"seat": 0, "card": None}]
    assert after.turn == 1


@pytest.mark.parametrize(
    ("moves", "drawn"),
    [
        ([(1, {"type": "accept"})], {1: 3}),
        ([(1, {"type": "attempt"}), (0, {"type": "report", "success": False})], {1: 6}),
        ([(2, {"type": "jerk", "card": "brown:not_me"})], {1: 3, 0: 3}),
    ],
    ids=["attack", "task-failed", "not-me"],
)
def test_an_empty_draw_pile_is_refilled_for_the_cards_an_attack_makes_draw(
    moves: list[tuple[int, dict[str, Any]]], drawn: dict[int, int]
) -> None:
    state = attacked(
        ["green:1"],
        [FILLER],
        ["brown:not_me", FILLER],
        symbol="+3",
        amount=3,
        owner=0,
        target=1,
        tasks=len(moves) > 1,
        draw=[FILLER],
        discard=[f"cyan:{number}" for number in range(1, 10)],
    )
    after, events = state, []
    for seat, move in moves:
        after, more = act(after, seat, move)
        events += more
    assert types(events).count("DiscardsReshuffled") == 1
    assert {seat: len(after.hands[seat]) - len(state.hands[seat]) for seat in drawn} == drawn


def test_commands_out_of_turn_are_refused_without_a_penalty() -> None:
    state = position(["cyan:1"], ["cyan:2"])
    assert RULES.to_act(state) == {0}
    assert broken_rule(state, 1, play("cyan:2")) == "out-of-turn"
    assert broken_rule(state, 0, {"type": "fly"}) == "move-format"
    assert broken_rule(state, 0, {"type": "play", "cards": "cyan:1"}) == "move-format"
    assert broken_rule(state, 0, {"type": "play", "cards": ["cyan:1"], "swap_with": True}) in (
        "move-format",
    )


def test_a_listed_move_is_taken_as_listed_and_any_other_is_checked_field_by_field() -> None:
    state = position(["cyan:0", "green:7"], ["cyan:2"])
    listed = next(m for m in RULES.legal_moves(state, 0) if m.get("swap_with") == 1)
    _, events = act(state, 0, listed)
    # An equal move built anew decides the same; `True == 1` must not pass for seat 1.
    assert RULES.decide(state, 0, dict(listed), Random(SEED)) == events
    assert broken_rule(state, 0, {**listed, "swap_with": True}) == "move-format"
    assert broken_rule(state, 0, {**listed, "swap_with": 1.0}) == "move-format"


# --- Toss in (out of turn) -----------------------------------------------------------------------


def tossable() -> State:
    """Seat 0 just played cyan:5; seat 1 is to move; seat 2 holds the identical card."""
    return position(
        [FILLER],
        ["green:1"],
        ["cyan:5", "cyan:6"],
        ["magenta:5"],
        turn=1,
        toss="cyan:5",
        toss_by=0,
    )


def test_the_identical_card_may_be_tossed_in_out_of_turn() -> None:
    state = tossable()
    assert RULES.to_act(state) == {1}, "nobody is told who holds the identical card"
    assert RULES.may_act(state) == {1, 2}
    assert RULES.legal_moves(state, 2) == [{"type": "toss", "cards": ["cyan:5"]}]
    assert RULES.legal_moves(state, 3) == []  # same number, other colour: not identical
    after, events = act(state, 2, {"type": "toss", "cards": ["cyan:5"]})
    assert of_type(events, "CardsPlayed")[0]["how"] == "toss"
    assert after.turn == 3
    assert after.toss == "cyan:5"
    assert after.toss_by == 2


def test_the_toss_in_window_closes_when_the_next_player_acts() -> None:
    state = tossable()
    after, _ = act(state, 1, {"type": "draw"})
    assert after.toss is None
    assert after.turn == 2
    assert broken_rule(after, 2, {"type": "toss", "cards": ["cyan:5"]}) == "toss-in-window"
    drawn, _ = act(replace(state, draw=counts(["cyan:8"])), 1, {"type": "draw"})
    assert drawn.phase == "drawn"
    assert RULES.to_act(drawn) == {1}
    assert broken_rule(drawn, 2, {"type": "toss", "cards": ["cyan:5"]}) == "out-of-turn"


def twin_out(symbol: str, **kw: Any) -> State:
    """Seat 0 has just played the cyan `symbol` at seat 1, and seat 3 holds its twin: the
    toss-in window is open until seat 1 reacts."""
    return attacked(
        ["green:1"],
        ["brown:double", "green:2"],
        ["green:3"],
        [f"cyan:{symbol}", "green:4"],
        symbol=symbol,
        amount=OFFENSIVE_UNITS[symbol],
        owner=0,
        target=1,
        toss=f"cyan:{symbol}",
        toss_by=0,
        **kw,
    )


REACTIONS: dict[str, tuple[State, dict[str, Any]]] = {
    **{
        f"{symbol} accepted": (twin_out(symbol), {"type": "accept"})
        for symbol in ("+3", "+5", "skip", "minus20", "afk", "magnet")
    },
    "task attempted": (twin_out("+3", tasks=True), {"type": "attempt"}),
    "jerk by the target": (twin_out("+3"), {"type": "jerk", "card": "brown:double"}),
    "greys exchanged": (
        position(
            [FILLER],
            ["grey:dodge"],
            [FILLER],
            ["cyan:5", "green:4"],
            turn=1,
            toss="cyan:5",
            toss_by=0,
        ),
        {"type": "exchange_greys"},
    ),
}
"""Seat 1's reactions to the card just played, seat 1 being the next player (its draw and its
defence have tests of their own)."""


@pytest.mark.parametrize("reaction", REACTIONS)
def test_the_toss_in_window_closes_when_the_next_player_reacts(reaction: str) -> None:
    state, move = REACTIONS[reaction]
    twin = {"type": "toss", "cards": [state.toss]}
    assert twin in RULES.legal_moves(state, 3)
    after, _ = act(state, 1, move)
    assert RULES.view(after, None)["toss_in"] is None
    assert twin not in RULES.legal_moves(after, 3)


def test_a_race_is_open_whoever_holds_the_card_to_join_it() -> None:
    """Bots are paced by `race_open`, so it must not tell whether anyone holds the twin or a
    Jerk: the same after cyan:5 whether seat 2 holds its twin or not, and on an attack whether
    anyone holds a Jerk or not."""
    nobody = replace(tossable(), hands=((FILLER,), ("green:1",), ("cyan:6",), ("magenta:5",)))
    assert RULES.may_act(nobody) == RULES.to_act(nobody) == {1}
    assert RULES.may_act(tossable()) == {1, 2}
    assert RULES.race_open(tossable())
    assert RULES.race_open(nobody)
    drawn, _ = act(tossable(), 1, {"type": "draw"})
    assert not RULES.race_open(drawn), "the next player acted: the window closed"
    attack = Attack("+3", 3, 0, 1, 0, jerk_open=True)
    jerkable = attacked(
        [FILLER], ["green:1"], ["green:2"], symbol="+3", amount=3, owner=0, target=1
    )
    jerkable = replace(jerkable, attack=attack)
    closed = replace(jerkable, attack=replace(attack, jerk_open=False))
    assert RULES.may_act(jerkable) == {1}, "nobody holds a Jerk"
    assert RULES.race_open(jerkable)
    assert not RULES.race_open(closed)


def test_a_tossed_in_action_acts_as_if_the_tosser_played_it() -> None:
    state = position(
        [FILLER],
        ["green:1"],
        ["cyan:reverse", "cyan:6"],
        [FILLER],
        top="cyan:reverse",
        turn=3,
        direction=-1,
        toss="cyan:reverse",
        toss_by=0,
    )
    after, _ = act(state, 2, {"type": "toss", "cards": ["cyan:reverse"]})
    assert after.direction == 1
    assert after.turn == 3


def test_who_just_played_may_toss_in_its_own_twin() -> None:
    state = position(
        ["cyan:5", "green:3"],
        ["green:1"],
        [FILLER],
        turn=1,
        toss="cyan:5",
        toss_by=0,
    )
    assert RULES.legal_moves(state, 0) == [{"type": "toss", "cards": ["cyan:5"]}]
    after, _ = act(state, 0, {"type": "toss", "cards": ["cyan:5"]})
    assert (after.turn, after.toss_by) == (1, 0)
    assert after.hands[0] == ("green:3",)


def test_the_dealer_may_toss_in_the_twin_of_the_starting_card() -> None:
    state = start_with("cyan:5")
    state = replace(state, hands=(("cyan:5", FILLER), *state.hands[1:]))
    assert (state.toss, state.toss_by) == ("cyan:5", 0)
    assert RULES.legal_moves(state, 0) == [{"type": "toss", "cards": ["cyan:5"]}]
    after, _ = act(state, 0, {"type": "toss", "cards": ["cyan:5"]})
    assert after.turn == 1


def test_grey_and_brown_cards_are_never_tossed_in() -> None:
    state = attacked(
        ["cyan:1"],
        ["grey:dodge"],
        ["grey:dodge", "cyan:2"],
        symbol="+3",
        amount=3,
        owner=0,
        target=1,
        toss="cyan:+3",
        toss_by=0,
    )
    after, _ = act(state, 1, {"type": "defend", "card": "grey:dodge"})
    assert after.toss is None
    assert all(m["type"] != "toss" for m in RULES.legal_moves(after, 2))


def test_an_offensive_card_tossed_in_passes_the_attack_on_from_the_tosser() -> None:
    state = attacked(
        [FILLER],
        [FILLER],
        [FILLER],
        ["cyan:+3", "green:1"],
        symbol="+3",
        amount=3,
        owner=0,
        target=1,
        toss="cyan:+3",
        toss_by=0,
    )
    assert RULES.to_act(state) == {1}
    assert RULES.may_act(state) == {1, 3}
    after, _ = act(state, 3, {"type": "toss", "cards": ["cyan:+3"]})
    assert after.attack == Attack("+3", 6, 3, 0, 3, passed=True, jerk_open=True)


# --- Action cards: neutral -----------------------------------------------------------------------


def test_half_hand_puts_half_the_hand_at_random_under_the_pile() -> None:
    hand = ["cyan:half_hand", "green:1", "green:2", "green:3", "green:4", "green:5"]
    state = position(hand, [FILLER])
    moves = RULES.legal_moves(state, 0)
    assert {"type": "play", "cards": ["cyan:half_hand"], "discard_half": True} in moves
    after, events = act(state, 0, play("cyan:half_hand", discard_half=True))
    (discarded,) = of_type(events, "HalfHandDiscarded")
    assert len(discarded["cards"]) == 2
    assert len(after.hands[0]) == 3
    assert after.discard_size == 1 + 2
    assert after.top == "cyan:half_hand"
    seen = RULES.view(after, 1)
    assert (seen["discard_pile"], seen["discarded"]) == (3, ["cyan:5"])
    assert RULES.redact(events[-1], 1) == Event(
        "HalfHandDiscarded", {"seat": 0, "cards": None, "count": 2}
    )
    kept, _ = act(state, 0, play("cyan:half_hand", discard_half=False))
    assert len(kept.hands[0]) == 5


def test_card_exchange_swaps_hands_even_when_it_was_the_last_card() -> None:
    state = position(["cyan:card_exchange", "green:1"], ["green:2", "green:3"], [FILLER])
    assert [m["exchange_with"] for m in RULES.legal_moves(state, 0)] == [1, 2]
    after, _ = act(state, 0, play("cyan:card_exchange", exchange_with=1))
    assert after.hands[0] == ("green:2", "green:3")
    assert after.hands[1] == ("green:1",)
    last = position(["cyan:card_exchange"], ["green:2", "green:3"], [FILLER])
    after, events = act(last, 0, play("cyan:card_exchange", exchange_with=2))
    assert of_type(events, "RoundEnded")[0]["points"] == [9, 5, 0]


def test_a_zero_may_swap_seats_and_play_goes_on_from_the_new_seat() -> None:
    state = position(["cyan:0", "green:1"], [FILLER], [FILLER], [FILLER])
    moves = RULES.legal_moves(state, 0)
    assert [m["swap_with"] for m in moves] == [None, 1, 2, 3]
    after, _ = act(state, 0, play("cyan:0", swap_with=2))
    assert after.ring == (2, 1, 0, 3)
    assert after.turn == 3
    stay, _ = act(state, 0, play("cyan:0", swap_with=None))
    assert stay.ring == (0, 1, 2, 3)
    assert stay.turn == 1


# --- Action cards: offensive ---------------------------------------------------------------------


def test_skip_accepted_loses_the_targets_turn() -> None:
    state = position(["cyan:skip", "green:1"], [FILLER], [FILLER])
    opened, _ = act(state, 0, play("cyan:skip"))
    assert opened.attack is not None
    assert opened.attack.target == 1
    after, _ = act(opened, 1, {"type": "accept"})
    assert after.turn == 2


def test_minus_20_gives_the_target_20_minus_points_at_once() -> None:
    state = attacked(["green:1"], [FILLER], symbol="minus20", amount=20, owner=0, target=1)
    after, _ = act(state, 1, {"type": "accept"})
    assert after.scores == (0, 20)
    assert after.turn == 1


def test_plus_3_and_plus_5_make_the_target_draw() -> None:
    state = attacked(["green:1"], [FILLER], [FILLER], symbol="+5", amount=5, owner=0, target=1)
    assert RULES.legal_moves(state, 1) == [{"type": "accept"}]
    after, events = act(state, 1, {"type": "accept"})
    assert len(after.hands[1]) == 6
    assert after.turn == 1
    assert after.phase == TURN
    assert RULES.redact(events[-1], 0) == Event(
        "CardsDrawn", {"seat": 1, "cards": None, "count": 5, "reason": "attack"}
    )


@pytest.mark.parametrize(("success", "drawn"), [(True, 0), (False, 6)])
def test_tasks_on_the_table_draw_nothing_or_double(success: bool, drawn: int) -> None:
    state = attacked(
        ["green:1"], [FILLER], [FILLER], symbol="+3", amount=3, owner=0, target=1, tasks=True
    )
    assert RULES.legal_moves(state, 1) == [{"type": "accept"}, {"type": "attempt"}]
    trying, _ = act(state, 1, {"type": "attempt"})
    assert trying.phase == RESOLVE
    assert RULES.to_act(trying) == {0}
    assert RULES.legal_moves(trying, 0) == [
        {"type": "report", "success": True},
        {"type": "report", "success": False},
    ]
    after, _ = act(trying, 0, {"type": "report", "success": success})
    assert len(after.hands[1]) == 1 + drawn
    assert after.turn == 1
    off = attacked(["green:1"], [FILLER], symbol="+3", amount=3, owner=0, target=1)
    assert broken_rule(off, 1, {"type": "attempt"}) == "tasks"


def test_the_task_of_the_cards_own_player_is_reported_by_who_sent_it_back() -> None:
    state = attacked(
        ["green:1"],
        ["grey:you", "green:2"],
        [FILLER],
        symbol="+3",
        amount=3,
        owner=0,
        target=1,
        tasks=True,
    )
    back, _ = act(state, 1, {"type": "defend", "card": "grey:you", "target": 0})
    trying, _ = act(back, 0, {"type": "attempt"})
    assert trying.steps == (Step(REPORT, 1, 0),), "seat 1 aimed it at seat 0: seat 1 reports"
    assert RULES.to_act(trying) == {1}


def test_afk_sits_out_until_every_other_player_has_had_a_turn() -> None:
    state = attacked(
        ["green:1", "green:2"],
        [FILLER] * 2,
        ["green:3", "green:4"],
        symbol="afk",
        amount=1,
        owner=0,
        target=1,
        top="green:afk",
    )
    after, _ = act(state, 1, {"type": "accept"})
    assert after.turn == 2
    assert turns_away(after) == [0, 1, 0]
    after, _ = act(after, 2, play("green:3"))
    assert after.turn == 0
    assert turns_away(after) == [0, 0, 0]
    after, _ = act(after, 0, play("green:1"))
    assert after.turn == 1


def afk_before_three_turns_of_one_seat() -> State:
    """Seat 0's AFK at seat 1, to accept; seat 2 then takes a +3 and a +5 back from seat 3."""
    return attacked(
        ["green:1", "green:2"],
        [FILLER] * 2,
        ["green:+3", "green:+5", "green:reverse", "green:4"],
        ["grey:you", "grey:you", "green:6", FILLER],
        symbol="afk",
        amount=1,
        owner=0,
        target=1,
        top="green:afk",
    )


def test_an_afk_seat_waits_for_each_other_seat_however_many_turns_one_seat_takes() -> None:
    """Seat 2 is given the turn three times in a row (twice as the target of a +3 or +5 it
    accepts), which must not bring seat 1 back before seats 0 and 3 have had a turn."""
    state = afk_before_three_turns_of_one_seat()
    after, _ = act(state, 1, {"type": "accept"})
    assert (after.turn, turns_away(after)) == (2, [0, 2, 0, 0])
    for card in ("green:+3", "green:+5"):
        after, _ = act(after, 2, play(card))
        after, _ = act(after, 3, {"type": "defend", "card": "grey:you", "target": 2})
        after, _ = act(after, 2, {"type": "accept"})
        assert (after.turn, turns_away(after)) == (2, [0, 2, 0, 0])
    after, _ = act(after, 2, play("green:reverse"))
    assert after.turn == 0, "seat 1 still sits out: play goes past it the other way"
    assert RULES.view(after, None)["waiting_for"] == [[], [0, 0, 0, 1], [], []]
    after, _ = act(after, 0, play("green:1"))
    assert (after.turn, turns_away(after)) == (3, [0, 0, 0, 0])
    after, _ = act(after, 3, play("green:6"))
    after, _ = act(after, 2, play("green:4"))
    assert after.turn == 1


def test_rules_version_2_counts_turns_of_any_seats_for_an_afk_seat() -> None:
    """Tables created under rules version 2 play on under it: there, an AFK seat sat out
    `amount` turns of any seats per other seat, so seat 2 given the turn three times in a row
    brings seat 1 back before seats 0 and 3 have moved (the position of the test above)."""
    version_2 = Wobble(rules_version=2)

    def act_2(state: State, seat: int, move: dict[str, Any]) -> State:
        assert move in version_2.legal_moves(state, seat)
        return fold_with(version_2, state, version_2.decide(state, seat, move, Random(SEED)))

    # A table's states carry its rules version's way of counting from its first one on.
    state = replace(afk_before_three_turns_of_one_seat(), afk_counts_any_turns=True)
    after = act_2(state, 1, {"type": "accept"})
    assert (after.turn, version_2.view(after, None)["away"]) == (2, [0, 2, 0, 0])
    for card, away in (("green:+3", 1), ("green:+5", 0)):
        after = act_2(after, 2, play(card))
        after = act_2(after, 3, {"type": "defend", "card": "grey:you", "target": 2})
        after = act_2(after, 2, {"type": "accept"})
        assert (after.turn, version_2.view(after, None)["away"]) == (2, [0, away, 0, 0])
    after = act_2(after, 2, play("green:reverse"))
    assert after.turn == 1, "seat 1 is back already: play goes to it the other way"
    assert version_2.view(after, None)["waiting_for"] == [[], [], [], []]
    assert (version_2.info.rules_version, RULES.info.rules_version) == (2, 3)


def not_me_at_hand_for_an_afk() -> State:
    """Seat 0's AFK at seat 1, open; seat 3 holds a Not Me to throw in."""
    return attacked(
        ["green:1", "green:2"],
        [FILLER] * 2,
        [FILLER] * 2,
        ["brown:not_me", "green:3", "green:4"],
        symbol="afk",
        amount=1,
        owner=0,
        target=1,
        top="green:afk",
    )


def test_two_seats_away_at_once_both_come_back() -> None:
    """Not Me on an AFK sends every seat but the Not Me player away. A seat passed over because
    it sits out has had its turn too, or seats 1 and 2 would wait for each other for ever."""
    state = not_me_at_hand_for_an_afk()
    after, _ = act(state, 3, {"type": "jerk", "card": "brown:not_me"})
    assert after.turn == 3, "the victims' turns are passed over: the Not Me player moves"
    assert RULES.view(after, None)["waiting_for"] == [[], [1, 0, 0, 0], [1, 0, 0, 0], []]
    after, _ = act(after, 3, play("green:3"))
    assert (after.turn, turns_away(after)) == (0, [0, 0, 0, 0])
    after, _ = act(after, 0, play("green:1"))
    assert after.turn == 1


def test_a_not_me_player_with_turns_of_its_own_to_lose_is_passed_over_too() -> None:
    """The turn comes to the Not Me player after the victims', but it still owes a Skip turn of
    its own: it loses that one, and play goes on to the next seat."""
    state = not_me_at_hand_for_an_afk()
    state = replace(state, lost=(0, 0, 0, 1))
    after, _ = act(state, 3, {"type": "jerk", "card": "brown:not_me"})
    assert after.turn == 0, "seat 3 loses its own Skip turn, so play goes on past it"
    assert after.lost == (0, 0, 0, 0)
    assert turns_away(after) == [0, 0, 0, 0], "seat 0's turn brings seats 1 and 2 back"
    after, _ = act(after, 0, play("green:1"))
    assert after.turn == 1


def test_a_pair_of_afks_waits_for_two_turns_of_each_other_seat() -> None:
    state = position(
        ["green:afk", "green:afk", "green:1", "green:2"],
        [FILLER] * 2,
        ["green:3", "green:4", "green:5"],
        top="green:7",
    )
    after, _ = act(state, 0, play("green:afk", "green:afk"))
    after, _ = act(after, 1, {"type": "accept"})
    assert RULES.view(after, None)["waiting_for"] == [[], [2, 0, 1], []]
    for seat, card, away in ((2, "green:3", 3), (0, "green:1", 2), (2, "green:4", 1)):
        assert (after.turn, turns_away(after)) == (seat, [0, away, 0])
        after, _ = act(after, seat, play(card))
    assert (after.turn, turns_away(after)) == (0, [0, 0, 0])
    after, _ = act(after, 0, play("green:2"))
    assert after.turn == 1


def test_a_seat_that_loses_its_turn_has_had_it_for_a_seat_sitting_out() -> None:
    """Seat 1 sits out for a turn of seats 0 and 2; seat 2 loses its turn to a Skip, which
    counts: seat 1 is back as soon as the turn comes round to seat 0."""
    state = position(["cyan:skip", "cyan:1"], [FILLER] * 2, [FILLER] * 2, away=sitting_out(3, 1))
    attack, _ = act(state, 0, play("cyan:skip"))
    after, _ = act(attack, 2, {"type": "accept"})
    assert (after.turn, turns_away(after)) == (0, [0, 0, 0])
    after, _ = act(after, 0, play("cyan:1"))
    assert after.turn == 1


def test_when_every_seat_sits_out_they_all_come_back() -> None:
    """Seats 0 and 1 sit out; seat 2's AFK goes to seat 0 all the same (every other seat is
    away), and seat 0's You! sends it back: with every seat sitting out nobody could move."""
    state = position(
        ["grey:you", FILLER],
        [FILLER],
        ["green:afk", "green:1"],
        top="green:7",
        turn=2,
        away=((0, 1, 1), (1, 0, 1), ()),
    )
    attack, _ = act(state, 2, play("green:afk"))
    back, _ = act(attack, 0, {"type": "defend", "card": "grey:you", "target": 2})
    after, _ = act(back, 2, {"type": "accept"})
    assert (after.turn, turns_away(after)) == (2, [0, 0, 0])


def test_a_toss_in_counts_as_its_tossers_turn() -> None:
    """A tossed-in card acts as if its tosser had played it, and play goes on after the
    tosser: for a seat sitting out, that was the tosser's turn."""
    state = attacked(
        ["green:3", "green:1"],
        [FILLER] * 2,
        ["green:3", "green:4"],
        [FILLER] * 2,
        symbol="afk",
        amount=1,
        owner=0,
        target=1,
        top="green:afk",
    )
    after, _ = act(state, 1, {"type": "accept"})
    after, _ = act(after, 2, play("green:3"))
    assert after.turn == 3
    assert RULES.view(after, None)["waiting_for"][1] == [1, 0, 0, 0]
    after, _ = act(after, 0, {"type": "toss", "cards": ["green:3"]})
    assert (after.turn, turns_away(after)) == (1, [0, 0, 0, 0])


def test_a_seat_sitting_out_is_not_aimed_at_and_does_not_react() -> None:
    """AFK's "the others play on and leave the player out" (the service's reading): while a
    seat sits out, attacks, passes and Dodges go past it, and it tosses in no twin and throws
    no Jerk card into an attack aimed at another seat."""
    hands = (
        ["cyan:+3", "green:1"],
        ["cyan:7", "brown:double"],
        ["grey:dodge", "green:2"],
        [FILLER],
    )
    away = sitting_out(4, 1)
    attack, _ = act(position(*hands, away=away), 0, play("cyan:+3"))
    assert attack.attack is not None
    assert attack.attack.target == 2, "the seat after seat 0 sits out: the +3 goes to seat 2"
    assert RULES.legal_moves(attack, 1) == [], "no Jerk card from a seat sitting out"
    assert 1 not in RULES.may_act(attack)
    here = position(*hands)
    at_the_table, _ = act(here, 0, play("cyan:+3"))
    assert {"type": "jerk", "card": "brown:double"} in RULES.legal_moves(at_the_table, 1)
    dodged, _ = act(attack, 2, {"type": "defend", "card": "grey:dodge"})
    assert dodged.attack is not None
    assert dodged.attack.target == 3
    tossing = position(*hands, top="cyan:7", toss="cyan:7", toss_by=3, turn=0, away=away)
    assert RULES.legal_moves(tossing, 1) == [], "no toss-in from a seat sitting out"
    assert 1 not in RULES.may_act(tossing)
    assert {"type": "toss", "cards": ["cyan:7"]} in RULES.legal_moves(
        replace(tossing, away=((),) * 4), 1
    )


def test_a_seat_sitting_out_may_throw_a_jerk_card_into_an_attack_aimed_at_it() -> None:
    state = position(
        ["cyan:+3", "green:1"],
        ["grey:you", "green:2"],
        ["brown:double", "green:3"],
        away=sitting_out(3, 2),
    )
    attack, _ = act(state, 0, play("cyan:+3"))
    assert RULES.legal_moves(attack, 2) == []
    named, _ = act(attack, 1, {"type": "defend", "card": "grey:you", "target": 2})
    assert {"type": "jerk", "card": "brown:double"} in RULES.legal_moves(named, 2)
    doubled, _ = act(named, 2, {"type": "jerk", "card": "brown:double"})
    assert doubled.attack is not None
    assert doubled.attack.amount == 6


def test_magnet_names_a_number_and_takes_every_card_of_it() -> None:
    state = attacked(
        ["green:5", "green:1"],
        ["cyan:1"],
        ["cyan:5", "magenta:5", "green:3"],
        symbol="magnet",
        amount=1,
        owner=0,
        target=1,
        named=[1, 2],
    )
    naming, _ = act(state, 1, {"type": "accept"})
    assert naming.steps == (Step(NAME, 1, 1),)
    assert [m["number"] for m in RULES.legal_moves(naming, 1)] == [3, 4, 5, 6, 7, 8, 9]
    assert broken_rule(naming, 1, {"type": "name", "number": 2}) == "magnet-named"
    after, events = act(naming, 1, {"type": "name", "number": 5})
    assert after.hands[1] == ("cyan:1", "cyan:5", "green:5", "magenta:5")
    assert after.hands[2] == ("green:3",)
    assert after.named == (1, 2, 5)
    assert after.turn == 1
    hidden = RULES.redact(events[0], 0)
    assert hidden is not None
    assert hidden.data["taken"] == [
        {"seat": 0, "cards": ["green:5"]},
        {"seat": 2, "cards": None, "count": 2},
    ]


def test_magnet_names_a_colour_once_all_nine_numbers_are_named() -> None:
    state = attacked(
        ["green:5", "cyan:7"],
        ["cyan:1"],
        ["cyan:5", "green:skip"],
        symbol="magnet",
        amount=1,
        owner=0,
        target=1,
        named=range(1, 10),
    )
    naming, _ = act(state, 1, {"type": "accept"})
    assert RULES.legal_moves(naming, 1) == [
        {"type": "name", "colour": colour} for colour in ("magenta", "cyan", "yellow", "green")
    ]
    after, _ = act(naming, 1, {"type": "name", "colour": "green"})
    assert after.hands[1] == ("cyan:1", "green:5", "green:skip")


# --- While an attack is open ---------------------------------------------------------------------


def test_passing_on_with_the_same_symbol_adds_up() -> None:
    state = attacked(
        ["green:1"],
        ["magenta:+3", "magenta:+5"],
        [FILLER],
        symbol="+3",
        amount=3,
        owner=0,
        target=1,
    )
    assert {"type": "pass", "cards": ["magenta:+5"]} not in RULES.legal_moves(state, 1)
    after, _ = act(state, 1, {"type": "pass", "cards": ["magenta:+3"]})
    assert after.attack == Attack("+3", 6, 1, 2, 1, passed=True)
    assert after.top == "magenta:+3"
    assert after.colour == "magenta"
    assert broken_rule(after, 2, {"type": "pass", "cards": [FILLER]}) == "pass-same-symbol"


def test_dodge_moves_the_attack_to_the_next_player() -> None:
    state = attacked(
        ["green:1"], ["grey:dodge"], [FILLER], [FILLER], symbol="+3", amount=3, owner=0, target=1
    )
    after, _ = act(state, 1, {"type": "defend", "card": "grey:dodge"})
    assert after.attack is not None
    assert after.attack.target == 2
    assert after.top == "cyan:+3"
    assert after.discard[CARDS.index(CARD["grey:dodge"])] == 1


def test_you_names_any_player_as_the_new_target() -> None:
    state = attacked(["green:1"], ["grey:you"], [FILLER], symbol="+3", amount=3, owner=0, target=1)
    assert [m.get("target") for m in RULES.legal_moves(state, 1)] == [0, 2, None]
    after, _ = act(state, 1, {"type": "defend", "card": "grey:you", "target": 0})
    assert after.attack is not None
    assert after.attack.target == 0
    assert RULES.to_act(after) == {0}


def test_mirror_reverses_the_direction_and_sends_a_single_card_back() -> None:
    state = attacked(
        ["green:1"],
        ["grey:mirror"],
        [FILLER],
        [FILLER],
        symbol="skip",
        amount=1,
        owner=0,
        target=1,
    )
    after, _ = act(state, 1, {"type": "defend", "card": "grey:mirror"})
    assert after.direction == -1
    assert after.attack is not None
    assert after.attack.target == 0


def test_a_passed_on_plus_3_stack_reversed_by_a_mirror_goes_to_who_added_its_last_card() -> None:
    state = attacked(
        ["green:1"],
        ["magenta:+3", "green:2"],
        [FILLER, "grey:mirror"],
        [FILLER],
        symbol="+3",
        amount=3,
        owner=0,
        target=1,
    )
    passed, _ = act(state, 1, {"type": "pass", "cards": ["magenta:+3"]})
    mirrored, _ = act(passed, 2, {"type": "defend", "card": "grey:mirror"})
    assert mirrored.direction == -1
    assert mirrored.attack == Attack("+3", 6, 1, 1, 2, passed=True)
    after, _ = act(mirrored, 1, {"type": "accept"})
    assert len(after.hands[1]) == 1 + 6
    assert after.turn == 1


def test_who_is_unlucky_lets_the_generator_pick_any_player_defender_included() -> None:
    state = attacked(
        ["green:1"], ["grey:unlucky"], [FILLER], symbol="+3", amount=3, owner=0, target=1
    )
    picked = set()
    for seed in range(40):
        after, events = act(state, 1, {"type": "defend", "card": "grey:unlucky"}, seed)
        assert after.attack is not None
        picked.add(after.attack.target)
        assert of_type(events, "DefencePlayed")[0]["target"] == after.attack.target
    assert picked == {0, 1, 2}


def test_accepting_skip_or_afk_moves_play_past_the_target_others_keep_it() -> None:
    for symbol, turn in (("skip", 2), ("afk", 2), ("+3", 1), ("minus20", 1)):
        state = attacked(
            ["green:1"], [FILLER], [FILLER], symbol=symbol, amount=1, owner=0, target=1
        )
        after, _ = act(state, 1, {"type": "accept"})
        assert after.turn == turn, symbol


# --- Jerk cards ----------------------------------------------------------------------------------


def test_not_me_hits_everyone_else_and_cannot_be_defended() -> None:
    state = attacked(
        ["green:1"],
        ["grey:dodge"],
        [FILLER],
        ["brown:not_me", "green:2"],
        symbol="+3",
        amount=3,
        owner=0,
        target=1,
    )
    assert RULES.to_act(state) == {1}, "nobody is told who holds a Jerk card"
    assert RULES.may_act(state) == {1, 3}
    after, events = act(state, 3, {"type": "jerk", "card": "brown:not_me"})
    assert [len(hand) for hand in after.hands] == [4, 4, 4, 1]
    assert [e["seat"] for e in of_type(events, "CardsDrawn")] == [1, 2, 0]
    assert after.phase == TURN
    assert after.attack is None
    assert after.turn == 1
    assert after.discard[CARDS.index(CARD["brown:not_me"])] == 1


def test_not_me_on_a_magnet_makes_every_other_player_name() -> None:
    state = attacked(
        ["green:1"],
        ["green:2"],
        ["brown:not_me", "green:5", "cyan:7"],
        symbol="magnet",
        amount=1,
        owner=0,
        target=1,
    )
    after, _ = act(state, 2, {"type": "jerk", "card": "brown:not_me"})
    assert after.steps == (Step(NAME, 1, 1), Step(NAME, 0, 0))
    after, _ = act(after, 1, {"type": "name", "number": 5})
    after, _ = act(after, 0, {"type": "name", "number": 2})
    assert after.hands == (("green:1", "green:2"), ("green:5",), ("cyan:7",))


def test_not_me_with_tasks_lets_each_victim_choose_and_its_player_reports() -> None:
    state = attacked(
        ["green:1"],
        ["green:2"],
        ["brown:not_me", "green:5"],
        symbol="+3",
        amount=3,
        owner=0,
        target=1,
        tasks=True,
    )
    after, _ = act(state, 2, {"type": "jerk", "card": "brown:not_me"})
    assert after.steps == (Step(TASK, 1, 1), Step(TASK, 0, 0))
    after, _ = act(after, 1, {"type": "attempt"})
    assert after.steps == (Step(REPORT, 2, 1), Step(TASK, 0, 0))
    after, _ = act(after, 2, {"type": "report", "success": False})
    after, _ = act(after, 0, {"type": "accept"})
    assert [len(hand) for hand in after.hands] == [4, 7, 1]
    assert after.turn == 1


def test_capture_makes_the_jerk_player_the_owner_and_retargets() -> None:
    state = attacked(
        ["green:1"],
        [FILLER],
        ["brown:capture", "green:5"],
        [FILLER],
        symbol="+5",
        amount=5,
        owner=0,
        target=1,
    )
    moves = [m for m in RULES.legal_moves(state, 2) if m["type"] == "jerk"]
    assert [m["target"] for m in moves] == [0, 1, 3]
    after, _ = act(state, 2, {"type": "jerk", "card": "brown:capture", "target": 0})
    assert after.attack is not None
    assert (after.attack.owner, after.attack.target, after.attack.amount) == (2, 0, 5)
    assert 2 not in RULES.may_act(after)  # one Jerk per card, and never on your own card


def test_double_doubles_the_whole_stack_and_on_magnet_means_two_numbers() -> None:
    state = attacked(
        ["green:1", "cyan:7"],
        [FILLER],
        ["brown:double", "green:5", "cyan:8"],
        symbol="magnet",
        amount=1,
        owner=0,
        target=1,
    )
    doubled, _ = act(state, 2, {"type": "jerk", "card": "brown:double"})
    assert doubled.attack is not None
    assert doubled.attack.amount == 2
    naming, _ = act(doubled, 1, {"type": "accept"})
    assert naming.steps == (Step(NAME, 1, 1), Step(NAME, 1, 1))
    after, _ = act(naming, 1, {"type": "name", "number": 5})
    after, _ = act(after, 1, {"type": "name", "number": 1})
    assert after.hands[1] == ("green:1", "green:5", FILLER)
    assert after.named == (1, 5)


def test_a_double_on_a_skip_makes_the_target_skip_twice_and_nobody_else_in_three() -> None:
    # The seed: with Double on a Skip "the player skips twice"; its Jerk player loses nothing.
    state = attacked(
        ["cyan:1", "cyan:2"],
        [FILLER, FILLER],
        ["brown:double", "cyan:5", "cyan:6"],
        symbol="skip",
        amount=1,
        owner=0,
        target=1,
    )
    doubled, _ = act(state, 2, {"type": "jerk", "card": "brown:double"})
    assert doubled.attack is not None
    assert (doubled.attack.amount, doubled.attack.doubled) == (1, 1)
    assert RULES.view(doubled, None)["attack"]["doubled"] == 1
    after, _ = act(doubled, 1, {"type": "accept"})
    assert after.turn == 2, "the Double's own player keeps its turn"
    assert after.lost == (0, 1, 0), "the target still loses its next turn too"
    after, _ = act(after, 2, play("cyan:5"))
    after, _ = act(after, 0, play("cyan:1"))
    assert after.turn == 2, "seat 1 skips a second time"
    assert after.lost == (0, 0, 0)


def test_a_double_on_a_skip_in_two_players_does_not_cancel_it() -> None:
    state = attacked(
        ["cyan:1", "cyan:2", "cyan:3"],
        ["brown:double", FILLER],
        symbol="skip",
        amount=1,
        owner=0,
        target=1,
    )
    doubled, _ = act(state, 1, {"type": "jerk", "card": "brown:double"})
    after, _ = act(doubled, 1, {"type": "accept"})
    assert after.turn == 0
    after, _ = act(after, 0, play("cyan:1"))
    assert after.turn == 0, "seat 1 loses both of its next turns"
    after, _ = act(after, 0, play("cyan:2"))
    assert after.turn == 1


def test_a_skip_pair_doubled_skips_the_target_twice_and_the_next_player_once() -> None:
    state = attacked(
        ["green:1"],
        [FILLER],
        ["brown:double", FILLER],
        [FILLER],
        symbol="skip",
        amount=2,
        owner=0,
        target=1,
    )
    doubled, _ = act(state, 2, {"type": "jerk", "card": "brown:double"})
    after, _ = act(doubled, 1, {"type": "accept"})
    assert after.turn == 3
    assert after.lost == (0, 1, 0, 0), "seat 1 has lost one of its two turns, seat 2 its one"


def test_not_me_after_a_doubled_skip_stack_costs_every_victim_twice() -> None:
    state = attacked(
        ["green:1"],
        ["magenta:skip", FILLER],
        ["brown:double", FILLER],
        [FILLER, "brown:not_me"],
        symbol="skip",
        amount=1,
        owner=0,
        target=1,
    )
    doubled, _ = act(state, 2, {"type": "jerk", "card": "brown:double"})
    passed, _ = act(doubled, 1, {"type": "pass", "cards": ["magenta:skip"]})
    assert passed.attack is not None
    assert (passed.attack.amount, passed.attack.doubled, passed.attack.target) == (2, 1, 2)
    after, _ = act(passed, 3, {"type": "jerk", "card": "brown:not_me"})
    assert after.turn == 3
    assert after.lost == (4, 4, 3, 0)


def test_the_view_tells_a_stack_the_deal_turned_up_from_one_a_seat_played() -> None:
    """The web client names the attack's origin by `dealt`: a Skip turned up for the dealer
    stays the deal's under a Double, and becomes the seat's that passes it on."""
    state = start_with("magenta:skip", 3, [FILLER], ["cyan:skip", FILLER], ["brown:double"])
    assert state.attack is not None
    assert (state.attack.owner, state.attack.target) == (0, 1)
    assert RULES.view(state, None)["attack"]["dealt"] is True
    doubled, _ = act(state, 2, {"type": "jerk", "card": "brown:double"})
    assert RULES.view(doubled, 1)["attack"]["dealt"] is True, "a Jerk card played on it"
    passed, _ = act(doubled, 1, {"type": "pass", "cards": ["cyan:skip"]})
    view = RULES.view(passed, 0)["attack"]
    assert (view["owner"], view["dealt"]) == (1, False)


def test_one_jerk_per_offensive_card_never_by_its_owner_a_new_card_reopens() -> None:
    state = attacked(
        ["brown:capture", "green:1"],
        ["magenta:+3", "green:2"],
        ["brown:double", "brown:not_me"],
        symbol="+3",
        amount=3,
        owner=0,
        target=1,
    )
    assert all(m["type"] != "jerk" for m in RULES.legal_moves(state, 0))
    assert broken_rule(state, 0, {"type": "jerk", "card": "brown:capture", "target": 2}) == (
        "out-of-turn"
    )
    doubled, _ = act(state, 2, {"type": "jerk", "card": "brown:double"})
    assert broken_rule(doubled, 2, {"type": "jerk", "card": "brown:not_me"}) == "out-of-turn"
    passed, _ = act(doubled, 1, {"type": "pass", "cards": ["magenta:+3"]})
    assert passed.attack is not None
    assert passed.attack.amount == 9
    assert passed.attack.jerk_open
    assert {0, 2} <= RULES.may_act(passed)


# --- End of a round and of the game --------------------------------------------------------------


def test_a_last_card_attack_sent_back_to_its_player_keeps_the_round_going() -> None:
    state = position(["cyan:+3"], ["grey:mirror", "green:1"], [FILLER])
    opened, events = act(state, 0, play("cyan:+3"))
    assert "RoundEnded" not in types(events)
    assert opened.phase == ATTACK
    back, _ = act(opened, 1, {"type": "defend", "card": "grey:mirror"})
    assert back.attack is not None
    assert back.attack.target == 0
    after, events = act(back, 0, {"type": "accept"})
    assert "RoundEnded" not in types(events)
    assert len(after.hands[0]) == 3
    assert after.turn == 0


def test_a_last_card_attack_accepted_ends_the_round_after_its_action() -> None:
    state = position(["cyan:+3"], ["grey:mirror", "green:1"], [FILLER])
    opened, _ = act(state, 0, play("cyan:+3"))
    after, events = act(opened, 1, {"type": "accept"})
    ended = of_type(events, "RoundEnded")[0]
    assert ended["points"] == [0, 20 + 1 + 3 * 9, 9]
    assert types(events).index("CardsDrawn") < types(events).index("RoundEnded")
    assert after.round == 1


def test_minus_points_add_up_and_the_game_ends_at_the_score_limit() -> None:
    state = position(["cyan:3"], ["brown:double", "green:4"], ["grey:you"], scores=[10, 420, 30])
    _after, events = act(state, 0, play("cyan:3"))
    ended = of_type(events, "RoundEnded")[0]
    assert ended == {"round": 0, "points": [0, 74, 20], "scores": [10, 494, 50], "final": False}
    limit = replace(state, score_limit=450)
    over, events = act(limit, 0, play("cyan:3"))
    assert types(events)[-1] == "RoundEnded"
    assert over.phase == OVER
    result = RULES.result(over)
    assert result is not None
    assert result.winners == (0,)
    assert result.scores == (10, 494, 50)
    assert RULES.to_act(over) == frozenset()


def test_minus_20_counts_towards_the_limit() -> None:
    state = attacked(
        ["cyan:1"],
        [FILLER],
        symbol="minus20",
        amount=20,
        owner=0,
        target=1,
        scores=[491, 462],
        score_limit=500,
    )
    after, _ = act(state, 1, {"type": "accept"})
    assert after.scores == (491, 482)
    ended, _events = act(after, 1, {"type": "draw"})
    assert ended.phase == TURN
    assert ended.turn == 0
    over, _ = act(ended, 0, play("cyan:1"))
    result = RULES.result(over)
    assert result is not None
    assert result.scores == (491, 500)
    assert result.winners == (0,)


def test_a_tie_for_the_fewest_minus_points_shares_the_win() -> None:
    state = position(["cyan:3"], ["green:5"], ["brown:double"], scores=[100, 95, 480])
    over, events = act(state, 0, play("cyan:3"))
    assert of_type(events, "RoundEnded")[0]["scores"] == [100, 100, 550]
    result = RULES.result(over)
    assert result is not None
    assert result.winners == (0, 1)


def test_the_score_limit_is_looked_at_when_the_round_ends() -> None:
    """Minus points are added up at the end of a round, and the game ends there: a Minus 20
    that takes a seat past the limit in the middle of a round lets the round play on."""
    state = attacked(
        ["cyan:1", "cyan:2"],
        [FILLER, FILLER],
        symbol="minus20",
        amount=20,
        owner=0,
        target=1,
        scores=[0, 490],
        score_limit=500,
    )
    after, events = act(state, 1, {"type": "accept"})
    assert after.scores == (0, 510)
    for seat, move in [(1, {"type": "draw"}), (0, play("cyan:1")), (1, {"type": "draw"})]:
        assert "RoundEnded" not in types(events)
        assert (after.phase, after.turn, RULES.result(after)) == (TURN, seat, None)
        after, events = act(after, seat, move)
    over, events = act(after, 0, play("cyan:2"))
    assert of_type(events, "RoundEnded")[0]["final"] is True
    result = RULES.result(over)
    assert result is not None
    assert result.winners == (0,)


# --- Views ---------------------------------------------------------------------------------------


def test_views_show_only_the_own_hand() -> None:
    state = tossable()
    mine = RULES.view(state, 2)
    assert mine["hand"] == ["cyan:5", "cyan:6"]
    assert mine["hand_sizes"] == [1, 1, 2, 1]
    assert "hand" not in RULES.view(state, None)
    assert mine["toss_in"] == {"card": "cyan:5", "by": 0}


# --- Options, played to the end ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "options"),
    [
        (3, {"first_game": True}),
        (4, {"tasks": "table"}),
        (5, {"deck": "not_me=4,capture=4,double=4,afk=2,minus20=2,magnet=2", "tasks": "table"}),
        (2, {"score_limit": 60, "first_seat": 1}),
        (8, {"deck": "half_hand=1,card_exchange=1,0=1,unlucky=4,you=4"}),
    ],
)
def test_every_option_plays_to_the_end(players: int, options: dict[str, Any]) -> None:
    for seed in range(3):
        final, seen = random_game(players, options, seed)
        result = RULES.result(final)
        assert result is not None
        assert result.winners
        assert max(final.scores) >= final.score_limit
        if options.get("first_game"):
            assert not any(code in seen for code in ("green:afk", "grey:unlucky", "brown:not_me"))
        if options.get("tasks") == "table" and seed == 0:
            assert seen["TaskAttempted"] or seen["AttackAccepted"]


def test_the_same_seed_gives_the_same_game() -> None:
    first, _ = random_game(4, {"tasks": "table"}, 7)
    again, _ = random_game(4, {"tasks": "table"}, 7)
    assert first == again


# --- Planning on a view: sample and evaluate -----------------------------------------------------


def dealt(state: State) -> State:
    """`state` with the draw pile holding exactly the cards of the deck found nowhere else."""
    out = [*(card for hand in state.hands for card in hand), *([state.top] if state.top else [])]
    draw = [a - b - c for a, b, c in zip(state.deck, state.discard, counts(out), strict=True)]
    assert min(draw) >= 0, "a position holding more copies of a card than the deck"
    return replace(state, draw=tuple(draw))


def samples(state: State, seat: int, count: int = 40) -> list[State]:
    """`count` samples of what `seat` sees of `state`, each checked to look the same to it."""
    options = INFO.resolve_options(state.players, {})
    view = RULES.view(state, seat)
    drawn = [RULES.sample(state.players, options, view, seat, Random(n)) for n in range(count)]
    assert all(RULES.view(sample, seat) == view for sample in drawn)
    return drawn


def test_samples_hide_only_cards_the_seat_has_not_seen() -> None:
    mine = ["green:7", "green:7", "cyan:1"]
    others = (["green:2", "green:2", "yellow:4", "yellow:4"], ["magenta:1", "green:3", "green:3"])
    state = dealt(position(mine, *others, discard=["cyan:+5", "cyan:9"]))
    unseen = Counter(dict(zip((card.code for card in CARDS), state.deck, strict=True)))
    unseen.subtract([*mine, "cyan:+5", "cyan:9", "cyan:5"])
    for sample in samples(state, 0):
        assert sample.hands[0] == state.hands[0]
        assert [len(hand) for hand in sample.hands] == [3, 4, 3]
        hidden = Counter([*sample.hands[1], *sample.hands[2]])
        hidden.update(dict(zip((card.code for card in CARDS), sample.draw, strict=True)))
        assert +hidden == +unseen
    assert len({sample.hands[1] for sample in samples(state, 0)}) > 1


def test_a_sampled_seat_that_had_to_draw_held_no_match() -> None:
    state = dealt(position(["cyan:1"], ["cyan:8", "green:2", "green:4"], turn=1, phase="drawn"))
    state = replace(state, drawn="cyan:8")
    for sample in samples(state, 0):
        assert sample.drawn is not None
        assert sample.drawn in sample.hands[1]
        assert [matches(sample, CARD[card]) for card in sample.hands[1]].count(True) == 1
        assert {move["cards"][0] for move in RULES.legal_moves(sample, 1)} == {sample.drawn}


def test_samples_keep_half_hand_cards_face_down() -> None:
    hand = ["cyan:half_hand", "green:1", "green:2", "green:3", "green:4", "green:5"]
    state = dealt(position(hand, [FILLER]))
    after, _ = act(state, 0, play("cyan:half_hand", discard_half=True))
    for sample in samples(after, 1):
        assert sample.discard == after.discard
        assert sum(sample.buried) == 2
        assert sample.draw_size == after.draw_size


def test_samples_keep_who_sits_out_and_for_whose_turns() -> None:
    state = dealt(
        position(
            ["cyan:1", "green:2"],
            ["cyan:3"],
            ["green:4", "green:6"],
            ["cyan:7"],
            away=((), (1, 0, 0, 2), (1, 1, 0, 0), ()),
        )
    )
    assert RULES.view(state, 0)["away"] == [0, 3, 2, 0]
    for sample in samples(state, 0):
        assert sample.away == state.away


def test_evaluate_favours_the_fewest_points_and_more_so_near_the_end() -> None:
    hands = (["cyan:1", "cyan:2"], ["cyan:3", "cyan:4"], ["green:1", "green:2"])
    early = RULES.evaluate(position(*hands, scores=[150, 50, 160]))
    late = RULES.evaluate(position(*hands, scores=[450, 350, 460]))
    assert max(early) == early[1]
    assert late[1] > early[1] > 1 / 3
    assert sum(late) == pytest.approx(1)


def test_evaluate_favours_the_smaller_and_cheaper_hand() -> None:
    small = ["cyan:1"]
    big = ["cyan:skip", "green:+3", "brown:double", "green:9", "yellow:9", "magenta:9"]
    shares = RULES.evaluate(position(small, big, scores=[100, 100]))
    assert shares[0] > shares[1]
    over = replace(position(small, big, scores=[520, 100]), phase=OVER)
    assert RULES.evaluate(over) == (0.0, 1.0)


@pytest.mark.parametrize("colour", ["yellow", "cyan"])
def test_the_cards_that_ask_for_a_choice_are_the_ones_listed_as_choosing(colour: str) -> None:
    """`_plays` lists the other cards' moves without asking `choices`: a card that comes to ask
    for one must join `CHOOSING`, or its choice would never be offered."""
    state = position([FILLER], [FILLER], [FILLER], top=f"{colour}:5")
    for card in CARDS:
        asks = choices(state, 0, card) != [{}]
        assert asks == (card.code in CHOOSING), card.code
