"""The conformance suite: every registered game must pass it, with nothing game-specific here.

Seeded random playouts drive each game to its end through the rules contract, checking at every
step what DESIGN.md promises: legal moves are accepted and illegal ones refused without change,
folding stored events (after a JSON round trip, and through the real event store) rebuilds the
live state, no view or redacted event shows a seat what it may not see, results are in range,
and the same seed always gives the same game.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from random import Random
from typing import Any

import pytest
import redis

from domain.dice import commitment, rng_at
from domain.registry import AnyRules
from domain.rules import JSON, Event, RuleError
from domain.table import CreateGame, MakeMove, Table, Tables, TakeSeat
from events.envelope import START, canonical_json, verify_chain
from events.store import Appended, EventStore
from tests.sixth_game import with_sixth_game

REGISTRY = with_sixth_game()
GAMES = [pytest.param(rules, id=rules.info.id) for rules in REGISTRY]
SEEDS = range(12)
MAX_STEPS = 20_000
"""A playout longer than this is taken as a game that never ends."""

GARBAGE_MOVES: list[JSON] = [None, 0, "move", [], {}, {"no such field": 1}, [{"card": 1}]]


@dataclass
class Step:
    """One decided move of a playout: the state before, who moved, what, and what it caused."""

    before: Any
    seat: int
    move: JSON
    events: list[Event]
    after: Any


@dataclass
class Playout:
    players: int
    options: dict[str, JSON]
    setup: list[Event]
    steps: list[Step] = field(default_factory=list)
    final: Any = None

    @property
    def events(self) -> list[Event]:
        return self.setup + [event for step in self.steps for event in step.events]


def fold(rules: AnyRules, state: Any, events: list[Event]) -> Any:
    for event in events:
        state = rules.evolve(state, event)
    return state


def play(rules: AnyRules, seed: int) -> Playout:
    """A whole game with uniformly random legal moves; chance and choices both from `seed`."""
    choices = Random(seed)
    info = rules.info
    players = info.min_players + seed % (info.max_players - info.min_players + 1)
    options = info.resolve_options(players, {})
    chance = b"conformance" + seed.to_bytes(4, "big")
    setup = rules.setup(players, options, rng_at(chance, (), 0))
    playout = Playout(players, options, setup)
    state = fold(rules, rules.initial_state(players, options), setup)
    while rules.result(state) is None:
        assert len(playout.steps) < MAX_STEPS, f"{info.id} did not end in {MAX_STEPS} moves"
        may_act = sorted(rules.may_act(state))
        assert may_act, "a running game must have a seat that may act"
        seat = choices.choice(may_act)
        moves = rules.legal_moves(state, seat)
        assert moves, f"seat {seat} may act but has no legal move"
        move = choices.choice(moves)
        events = rules.decide(state, seat, move, rng_at(chance, (), len(playout.steps) + 1))
        after = fold(rules, state, events)
        playout.steps.append(Step(state, seat, move, events, after))
        state = after
    playout.final = state
    return playout


def observers(players: int) -> list[int | None]:
    return [*range(players), None]


def seeded(rules: AnyRules) -> Iterator[tuple[int, Playout]]:
    for seed in SEEDS:
        yield seed, play(rules, seed)


@pytest.fixture(scope="module", params=GAMES)
def playouts(request: pytest.FixtureRequest) -> tuple[AnyRules, list[tuple[int, Playout]]]:
    rules: AnyRules = request.param
    return rules, list(seeded(rules))


def test_info_is_consistent(playouts: tuple[AnyRules, list[tuple[int, Playout]]]) -> None:
    info = playouts[0].info
    assert 1 <= info.min_players <= info.max_players
    assert info.score_range[0] <= info.score_range[1]
    for option in info.options:
        option.check(option.default)
    assert len({option.name for option in info.options}) == len(info.options)


def test_playouts_reach_a_result_in_range(
    playouts: tuple[AnyRules, list[tuple[int, Playout]]],
) -> None:
    rules, games = playouts
    low, high = rules.info.score_range
    for _, playout in games:
        result = rules.result(playout.final)
        assert result is not None
        assert result.winners, "a finished game has at least one winner"
        assert set(result.winners) <= set(range(playout.players))
        assert len(result.scores) == playout.players
        assert all(low <= score <= high for score in result.scores)
        assert rules.to_act(playout.final) == frozenset()
        assert rules.may_act(playout.final) == frozenset()
        json.dumps(result.to_json())


def test_same_seed_same_game(playouts: tuple[AnyRules, list[tuple[int, Playout]]]) -> None:
    rules, games = playouts
    for seed, playout in games[:4]:
        again = play(rules, seed)
        assert again.events == playout.events
        assert again.final == playout.final


def test_every_legal_move_is_accepted_and_decide_never_mutates(
    playouts: tuple[AnyRules, list[tuple[int, Playout]]],
) -> None:
    rules, games = playouts
    for seed, playout in games[:4]:
        for index, step in enumerate(playout.steps[::7]):
            pristine = copy.deepcopy(step.before)
            for seat in rules.may_act(step.before):
                moves = rules.legal_moves(step.before, seat)
                assert moves == rules.legal_moves(step.before, seat), "legal moves are stable"
                json.dumps(moves)
                for move in moves:
                    rules.decide(step.before, seat, move, Random(seed * 1000 + index))
            assert step.before == pristine


def perturbed(move: JSON) -> Iterator[JSON]:
    """Moves near `move`: each field changed to a value of the same or of another type."""
    if isinstance(move, dict):
        for key, value in move.items():
            for replacement in (*perturbed(value), None):
                yield {**move, key: replacement}
            yield {k: v for k, v in move.items() if k != key}
        yield {**move, "extra": True}
    elif isinstance(move, bool):
        yield not move
    elif isinstance(move, int):
        yield from (move + 97, -1 - move, str(move))
    elif isinstance(move, str):
        yield from (move + "?", "", 1)
    elif isinstance(move, list):
        yield from ([], [*move, *move], move[:-1])


def test_illegal_moves_are_refused_without_change(
    playouts: tuple[AnyRules, list[tuple[int, Playout]]],
) -> None:
    rules, games = playouts
    refused = 0
    for seed, playout in games[:4]:
        for index, step in enumerate(playout.steps[::5]):
            pristine = copy.deepcopy(step.before)
            rng = Random(seed * 1000 + index)
            for seat in range(playout.players):
                legal = rules.legal_moves(step.before, seat)
                candidates = [*GARBAGE_MOVES, *(p for m in legal for p in perturbed(m))]
                if seat not in rules.may_act(step.before):
                    candidates += [step.move]
                for move in candidates:
                    if move in legal:
                        continue
                    with pytest.raises(RuleError) as refusal:
                        rules.decide(step.before, seat, move, rng)
                    assert refusal.value.rule
                    assert refusal.value.detail
                    refused += 1
            assert step.before == pristine
    assert refused > 0


def test_scores_stand_for_every_seat_and_end_as_the_result(
    playouts: tuple[AnyRules, list[tuple[int, Playout]]],
) -> None:
    """After every event (a score chart may stop in the middle of a move) each seat has a
    score, the same in every world a spectator cannot tell apart; the last are the result's."""
    rules, games = playouts
    for seed, playout in games:
        state = rules.initial_state(playout.players, playout.options)
        for event in [None, *playout.events]:
            if event is not None:
                state = rules.evolve(state, event)
            scores = rules.scores(state)
            assert len(scores) == playout.players
            assert all(type(score) is int for score in scores)
        result = rules.result(state)
        assert result is not None
        assert rules.scores(state) == result.scores
        decided = [step.before for step in playout.steps] + [playout.final]
        for index, state in enumerate(decided[::3]):
            concealed = rules.conceal(state, None, Random(seed * 7919 + index))
            assert rules.scores(concealed) == rules.scores(state), "scores show hidden cards"


def test_fold_of_json_round_tripped_events_equals_live_state(
    playouts: tuple[AnyRules, list[tuple[int, Playout]]],
) -> None:
    rules, games = playouts
    for _, playout in games:
        stored = [json.loads(canonical_json([e.type, e.data, e.v])) for e in playout.events]
        events = [Event(type_, data, v) for type_, data, v in stored]
        state = fold(rules, rules.initial_state(playout.players, playout.options), events)
        assert state == playout.final


def test_views_show_nothing_a_seat_may_not_see(
    playouts: tuple[AnyRules, list[tuple[int, Playout]]],
) -> None:
    """A view must be the same in every world the seat cannot tell apart from the real one."""
    rules, games = playouts
    concealed_differently = 0
    for seed, playout in games:
        states = [step.before for step in playout.steps] + [playout.final]
        for index, state in enumerate(states[::3]):
            for seat in observers(playout.players):
                view = rules.view(state, seat)
                json.dumps(view)
                other = rules.conceal(state, seat, Random(seed * 7919 + index))
                assert rules.view(other, seat) == view, f"view of seat {seat} leaks"
                concealed_differently += other != state
    assert concealed_differently > 0 or not any(
        rules.conceal(s.before, None, Random(1)) != s.before for _, p in games for s in p.steps
    )


def test_the_table_waits_publicly_and_reactions_stay_private(
    playouts: tuple[AnyRules, list[tuple[int, Playout]]],
) -> None:
    """`to_act` is shown to everyone, so it must be the same in every world a spectator cannot
    tell apart; `may_act` is exactly the seats with a legal move, and includes `to_act`. A seat
    acts out of turn only while the game's declaration says a race is open, which is public too
    (the service paces bots by it)."""
    rules, games = playouts
    races = REGISTRY.game(rules.info.id).races
    for seed, playout in games:
        for index, step in enumerate(playout.steps):
            state = step.before
            waiting, may_act = rules.to_act(state), rules.may_act(state)
            racing = races is not None and races(state)
            assert waiting, "a running game always waits for someone"
            assert waiting <= may_act
            with_moves = {s for s in range(playout.players) if rules.legal_moves(state, s)}
            assert may_act == with_moves
            assert racing or may_act == waiting, "a seat may act out of turn outside a race"
            if index % 3 == 0:
                concealed = rules.conceal(state, None, Random(seed * 104729 + index))
                assert rules.to_act(concealed) == waiting, "to_act tells who holds a card"
                assert races is None or races(concealed) == racing, "a race tells who may join"


def test_redacted_events_tell_no_more_than_the_view(
    playouts: tuple[AnyRules, list[tuple[int, Playout]]],
) -> None:
    """Deciding the same move with other chance: where a seat's view cannot tell the outcomes
    apart, neither may the events it is shown."""
    rules, games = playouts
    compared = 0
    for seed, playout in games[:6]:
        for index, step in enumerate(playout.steps[::2]):
            alternative = rules.decide(step.before, step.seat, step.move, Random(-seed - index))
            if [e.type for e in alternative] != [e.type for e in step.events]:
                continue
            other_after = fold(rules, step.before, alternative)
            for seat in observers(playout.players):
                if rules.view(step.after, seat) != rules.view(other_after, seat):
                    continue
                for real, other in zip(step.events, alternative, strict=True):
                    assert rules.redact(real, seat) == rules.redact(other, seat)
                    compared += 1
    assert compared > 0


def test_setup_events_are_redacted_like_views(
    playouts: tuple[AnyRules, list[tuple[int, Playout]]],
) -> None:
    """Two deals a seat cannot tell apart by its view must not differ in its redacted log."""
    rules, games = playouts
    for seed, playout in games[:6]:
        start = rules.initial_state(playout.players, playout.options)
        for other_seed in range(seed + 1, seed + 40):
            other = rules.setup(playout.players, playout.options, Random(other_seed))
            if [e.type for e in other] != [e.type for e in playout.setup]:
                continue
            for seat in observers(playout.players):
                views_equal = rules.view(fold(rules, start, other), seat) == rules.view(
                    fold(rules, start, playout.setup), seat
                )
                if views_equal:
                    for real, alt in zip(playout.setup, other, strict=True):
                        assert rules.redact(real, seat) == rules.redact(alt, seat)


def test_stored_game_folds_to_the_live_table(fake_redis: redis.Redis) -> None:
    """Every game, played through the table aggregate and the real event store, folds back."""
    tables = Tables(REGISTRY)
    store = EventStore(fake_redis)
    for rules in REGISTRY:
        live, position = play_table(tables, store, rules)
        records = store.read(rules.info.id)
        assert verify_chain(records) == position
        assert tables.fold([r.event for r in records]) == live
        assert live.result is not None


def play_table(tables: Tables, store: EventStore, rules: AnyRules) -> tuple[Table, Any]:
    seed, choices = b"s" * 32, Random(5)
    game_id, players = rules.info.id, rules.info.min_players
    commands: list[Any] = [CreateGame(game_id, game_id, players, {}, commitment(seed))]
    commands += [TakeSeat(None, f"seat {n}", f"token {n}") for n in range(players)]
    table: Table | None = None
    position = START
    while commands or (table is not None and table.result is None):
        assert table is None or table.version < MAX_STEPS
        if commands:
            command = commands.pop(0)
        else:
            assert table is not None
            seat = choices.choice(tables.may_act(table))
            command = MakeMove(seat, choices.choice(tables.legal_moves(table, seat)))
        events = tables.decide(table, command, seed)
        outcome = store.append(game_id, position, events, {"command": repr(command)})
        assert isinstance(outcome, Appended)
        position = outcome.position
        table = tables.fold(events, table)
    assert table is not None
    return table, position


def test_samples_of_a_view_show_that_view_and_play_on(
    playouts: tuple[AnyRules, list[tuple[int, Playout]]],
) -> None:
    """A search bot plans on `sample`s of its view: each must look to the seat exactly like the
    real state, offer it the same moves, and be a game the rules can play to its end."""
    rules, games = playouts
    sampled_differently = concealed_differently = 0
    for seed, playout in games:
        states = [step.before for step in playout.steps]
        for index, state in enumerate(states[:: max(1, len(states) // 12)]):
            for seat in range(playout.players):
                view = rules.view(state, seat)
                sampled = rules.sample(
                    playout.players, playout.options, view, seat, Random(seed * 31 + index)
                )
                assert rules.view(sampled, seat) == view, f"sample for seat {seat} looks different"
                assert rules.legal_moves(sampled, seat) == rules.legal_moves(state, seat)
                assert (seat in rules.may_act(sampled)) == (seat in rules.may_act(state))
                assert rules.to_act(sampled) == rules.to_act(state)
                sampled_differently += sampled != state
                concealed_differently += rules.conceal(state, seat, Random(index)) != state
            if index % 4 == 0:
                finish(rules, sampled, Random(seed + index))
    # A game whose every card is drawn only when it is shown has nothing to sample.
    assert sampled_differently > 0 or concealed_differently == 0, "samples never draw anything"


def finish(rules: AnyRules, state: Any, rng: Random) -> None:
    """Play `state` to its end with random moves; every move offered must be accepted."""
    for _ in range(MAX_STEPS):
        if rules.result(state) is not None:
            return
        seat = rng.choice(sorted(rules.may_act(state)))
        state = fold(
            rules, state, rules.decide(state, seat, rng.choice(rules.legal_moves(state, seat)), rng)
        )
    raise AssertionError(f"{rules.info.id} did not end in {MAX_STEPS} moves from a sample")


def test_evaluations_are_win_shares(playouts: tuple[AnyRules, list[tuple[int, Playout]]]) -> None:
    rules, games = playouts
    for _, playout in games:
        for step in playout.steps[::7]:
            shares = rules.evaluate(step.before)
            assert len(shares) == playout.players
            assert all(0 <= share <= 1 for share in shares)
            assert sum(shares) == pytest.approx(1)
        result = rules.result(playout.final)
        assert result is not None
        assert rules.evaluate(playout.final) == pytest.approx(result.shares())


def test_step_is_decide_then_fold(playouts: tuple[AnyRules, list[tuple[int, Playout]]]) -> None:
    """`step` answers what `decide` and folding its events with `evolve` would: the same events,
    and a state equal to theirs (games that fold while deciding must not fold differently)."""
    rules, games = playouts
    for seed, playout in games[:3]:
        chance = b"conformance" + seed.to_bytes(4, "big")
        for number, step in enumerate(playout.steps, start=1):
            events, after = rules.step(
                step.before, step.seat, step.move, rng_at(chance, (), number)
            )
            assert events == step.events
            assert after == step.after


def test_listing_moves_again_gives_a_list_of_ones_own(
    playouts: tuple[AnyRules, list[tuple[int, Playout]]],
) -> None:
    """Asking twice about one state answers the same, and a caller changing its list changes
    nothing the next caller gets (legal moves may be remembered between the two questions)."""
    rules, games = playouts
    for step in games[0][1].steps[:200]:
        first = rules.legal_moves(step.before, step.seat)
        expected = list(first)
        first.clear()
        assert rules.legal_moves(step.before, step.seat) == expected
        assert step.move in expected
