"""The search bot: it sees only its seat's view, plans in sampled worlds, and keeps its budget."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping
from dataclasses import replace
from random import Random
from typing import Any

import pytest

from domain.bots import Turn
from domain.dice import rng_at
from domain.game import SearchTuning
from domain.registry import AnyRules, GameRegistry
from domain.rules import JSON
from domain.search import LEVELS, Budget, Clock, SearchBot
from tests.sixth_game import PLAY, STEP, with_sixth_game

REGISTRY = with_sixth_game()
GAMES = [pytest.param(rules, id=rules.info.id) for rules in REGISTRY]
TEST_BUDGET = Budget(iterations=40, seconds=math.inf, horizon=6)
"""No time limit, so a choice depends on nothing but its inputs and seed."""


def stopped_clock() -> float:
    """A clock that never moves: with it only the budget's iterations end a search."""
    return 0.0


def search(budget: Budget = TEST_BUDGET, clock: Clock = stopped_clock) -> SearchBot:
    return SearchBot(budget, REGISTRY, clock)


def decisions(rules: AnyRules, seed: int) -> Iterator[tuple[Any, int, int, Mapping[str, JSON]]]:
    """States of a seeded random game where the seat to act has a real choice."""
    players = rules.info.min_players + seed % 2
    options = rules.info.resolve_options(players, {})
    chance = b"search" + seed.to_bytes(4, "big")
    state = rules.initial_state(players, options)
    for event in rules.setup(players, options, rng_at(chance, (), 0)):
        state = rules.evolve(state, event)
    choices = Random(seed)
    for step in itertools.count(1):
        if rules.result(state) is not None:
            return
        seat = choices.choice(sorted(rules.to_act(state)))
        moves = rules.legal_moves(state, seat)
        if len(moves) > 1:
            yield state, seat, players, options
        for event in rules.decide(state, seat, choices.choice(moves), rng_at(chance, (), step)):
            state = rules.evolve(state, event)


def turn_at(rules: AnyRules, state: Any, seat: int, players: int, options: Any) -> Turn:
    return Turn(
        rules, seat, players, options, rules.view(state, seat), rules.legal_moves(state, seat)
    )


class Sampling:
    """The rules, recording every world the bot samples."""

    def __init__(self, rules: AnyRules) -> None:
        self.rules = rules
        self.samples: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rules, name)

    def sample(self, *args: Any) -> Any:
        world = self.rules.sample(*args)
        self.samples.append(world)
        return world


@pytest.mark.parametrize("rules", GAMES)
def test_worlds_the_seat_cannot_tell_apart_get_the_same_move(rules: AnyRules) -> None:
    """The bot is given only the view, so two true states that look the same to the seat must
    get the same move for the same seed; and it plans in sampled worlds, not the true one."""
    bot = search()
    twins = 0
    for index, (state, seat, players, options) in enumerate(decisions(rules, 3)):
        if index % 5:
            continue
        twin = rules.conceal(state, seat, Random(index))
        if twin == state:
            continue
        twins += 1
        assert rules.view(twin, seat) == rules.view(state, seat)
        sampling = Sampling(rules)
        real = turn_at(sampling, state, seat, players, options)
        chosen = bot.choose(real, Random(index))
        assert chosen == bot.choose(turn_at(rules, twin, seat, players, options), Random(index))
        assert chosen in real.moves
        if REGISTRY.game(rules.info.id).search.paired:
            # Every sampled world is shared by all the moves still compared in it.
            assert 0 < len(sampling.samples) < TEST_BUDGET.iterations
        else:
            assert len(sampling.samples) == TEST_BUDGET.iterations
        assert any(world != state for world in sampling.samples), "it plans in sampled worlds"
        if twins == 4:
            return
    # A game that hides nothing (Roll'n Bump draws each card only as it is turned up) has no
    # twins: its seats see the whole state. The bot must still choose the same each time.
    assert twins == 0
    state, seat, players, options = next(decisions(rules, 3))
    turn = turn_at(rules, state, seat, players, options)
    assert rules.sample(players, options, turn.view, seat, Random(1)) == rules.sample(
        players, options, turn.view, seat, Random(2)
    ), "nothing hidden, nothing to draw"
    assert bot.choose(turn, Random(9)) == bot.choose(turn, Random(9))


@pytest.mark.parametrize("rules", GAMES)
def test_every_level_chooses_a_legal_move(rules: AnyRules) -> None:
    state, seat, players, options = next(decisions(rules, 5))
    turn = turn_at(rules, state, seat, players, options)
    for level in LEVELS:
        easy = Budget(iterations=min(LEVELS[level].iterations, 20), seconds=math.inf, horizon=3)
        assert search(easy).choose(turn, Random(level)) in turn.moves


def test_each_level_thinks_more_than_the_one_below() -> None:
    """A harder level gets more iterations and more time than an easier one."""
    budgets = list(LEVELS.values())
    for easier, harder in itertools.pairwise(budgets):
        assert harder.iterations > easier.iterations
        assert harder.seconds > easier.seconds


def test_a_single_legal_move_is_played_without_searching() -> None:
    rules = REGISTRY["pig10"]
    sampling = Sampling(rules)
    state, seat, players, options = next(decisions(rules, 1))
    only = rules.legal_moves(state, seat)[:1]
    turn = Turn(sampling, seat, players, options, rules.view(state, seat), only)
    assert search().choose(turn, Random(0)) == only[0]
    assert sampling.samples == []


def test_the_time_budget_stops_the_search() -> None:
    rules = REGISTRY["krumme10"]
    ticks = itertools.count(step=0.1)
    sampling = Sampling(rules)
    state, seat, players, options = next(decisions(rules, 2))
    turn = turn_at(sampling, state, seat, players, options)
    bot = search(Budget(iterations=1000, seconds=0.25, horizon=4), lambda: next(ticks))
    assert bot.choose(turn, Random(0)) in turn.moves
    # The deadline is read once at the start and once before every iteration after the first.
    assert len(sampling.samples) == 3


def test_the_time_budget_stops_paired_playouts() -> None:
    rules = REGISTRY["krasskariert"]
    assert REGISTRY.game("krasskariert").search.paired
    ticks = itertools.count(step=0.01)
    sampling = Sampling(rules)
    state, seat, players, options = next(decisions(rules, 2))
    turn = turn_at(sampling, state, seat, players, options)
    bot = search(Budget(iterations=1000, seconds=0.1, horizon=4), lambda: next(ticks))
    assert bot.choose(turn, Random(0)) in turn.moves
    # The clock moves 0.01 a read, one read per world: the deadline comes long before the
    # 1000 playouts do.
    assert 0 < len(sampling.samples) < 10


@pytest.mark.parametrize("paired", [False, True], ids=["tree", "paired"])
def test_a_games_declared_doubt_keeps_search_on_its_heuristics_move(paired: bool) -> None:
    """Search reads a game's tuning from its declaration: with infinite doubt it never leaves
    the move the game's heuristic plays, whether it grows a tree or compares paired playouts."""
    declared = REGISTRY.game("sprint")
    assert declared.heuristic is not None
    stubborn = replace(declared, search=SearchTuning(doubt=math.inf, paired=paired))
    bot = SearchBot(TEST_BUDGET, GameRegistry([stubborn]), stopped_clock)
    for index, (state, seat, players, options) in enumerate(decisions(declared.rules, 4)):
        turn = turn_at(declared.rules, state, seat, players, options)
        assert bot.choose(turn, Random(index)) == declared.heuristic(turn, Random(index))


@pytest.mark.parametrize("paired", [False, True], ids=["tree", "paired"])
def test_search_starts_from_a_declared_planners_move(paired: bool) -> None:
    """A game's planner, where it declares one, gives the move search keeps unless its
    playouts show a better one: with infinite doubt search plays the planner's move, not the
    heuristic's."""
    declared = REGISTRY.game("sprint")
    assert declared.heuristic is not None
    planned = replace(
        declared,
        planner=lambda turn, rng: turn.moves[-1],
        search=SearchTuning(doubt=math.inf, paired=paired),
    )
    bot = SearchBot(TEST_BUDGET, GameRegistry([planned]), stopped_clock)
    disagreements = 0
    for index, (state, seat, players, options) in enumerate(decisions(declared.rules, 4)):
        turn = turn_at(declared.rules, state, seat, players, options)
        disagreements += declared.heuristic(turn, Random(index)) != turn.moves[-1]
        assert bot.choose(turn, Random(index)) == turn.moves[-1]
    assert disagreements > 0


def test_paired_playouts_leave_a_poor_heuristic_for_a_clearly_better_move() -> None:
    """A heuristic that only ever steps one square loses to playing a card worth three; search
    comparing paired playouts sees it and plays the card."""
    declared = REGISTRY.game("sprint")
    plodding = replace(declared, heuristic=lambda turn, rng: STEP, search=SearchTuning(paired=True))
    bot = SearchBot(TEST_BUDGET, GameRegistry([plodding]), stopped_clock)
    threes = 0
    for index, (state, seat, players, options) in enumerate(decisions(declared.rules, 4)):
        turn = turn_at(declared.rules, state, seat, players, options)
        # Near the goal the race may be decided either way: then stepping is as good.
        if turn.view["hand"] == 3 and max(turn.view["positions"]) + 10 < turn.view["goal"]:
            threes += 1
            assert bot.choose(turn, Random(index)) == PLAY
    assert threes > 0


def test_a_paired_level_compares_in_a_game_that_grows_a_tree() -> None:
    """A level that asks for paired playouts compares the game's shortlist though the game's
    tuning grows a tree: with only the plodding step on the list, it never plays the card the
    tree finds better."""
    declared = REGISTRY.game("sprint")
    plodding = replace(
        declared, heuristic=lambda turn, rng: STEP, shortlist=lambda turn, rng: [STEP]
    )
    assert not plodding.search.paired
    games = GameRegistry([plodding])
    paired = SearchBot(replace(TEST_BUDGET, paired=True), games, stopped_clock)
    tree = SearchBot(TEST_BUDGET, games, stopped_clock)
    tree_plays = set()
    for index, (state, seat, players, options) in enumerate(decisions(declared.rules, 4)):
        turn = turn_at(declared.rules, state, seat, players, options)
        assert paired.choose(turn, Random(index)) == STEP
        tree_plays.add(repr(tree.choose(turn, Random(index))))
    assert repr(PLAY) in tree_plays


def test_rollnbump_leaves_re_rolls_to_its_planner_at_hard_and_medium_as_it_was() -> None:
    """Roll'n Bump's shortlist is read only where paired playouts compare (hard): there a
    re-roll is the planner's, played without a playout; medium's tree chooses as it did before
    the game declared a shortlist."""
    declared = REGISTRY.game("rollnbump")
    assert declared.shortlist is not None
    assert declared.planner is not None
    without = GameRegistry([replace(declared, shortlist=None)])
    medium = SearchBot(replace(LEVELS["medium"], seconds=math.inf), REGISTRY, stopped_clock)
    medium_before = SearchBot(medium.budget, without, stopped_clock)
    hard = SearchBot(replace(LEVELS["hard"], seconds=math.inf), REGISTRY, stopped_clock)
    rolls = 0
    for index, (state, seat, players, options) in enumerate(decisions(declared.rules, 5)):
        if index % 7:
            continue
        turn = turn_at(declared.rules, state, seat, players, options)
        assert medium.choose(turn, Random(index)) == medium_before.choose(turn, Random(index))
        planned = declared.planner(turn, Random(index))
        if planned["type"] == "roll":
            rolls += 1
            sampling = Sampling(declared.rules)
            sampled = turn_at(sampling, state, seat, players, options)
            assert hard.choose(sampled, Random(index)) == planned
            assert sampling.samples == []
    assert rolls > 0
