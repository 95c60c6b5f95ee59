"""Roll'n Bump rules of thumb: aim the re-rolls at the most valuable card within reach, stop
when the dice in hand already claim more, then place every die where it is worth most.

Values are in points: what a card adds to its taker's score (its points and the growth of its
colour's set bonus), weighed by how likely the claim survives until it is collected.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import product
from math import comb
from random import Random
from typing import NamedTuple

from domain.bots import Turn
from domain.frozen import replace
from domain.game import Game, SearchTuning
from domain.games.rollnbump import (
    CARD_NUMBERS,
    CARDS_PER_COLOUR,
    CLAIM,
    CLAIM_JOKER,
    CLAIM_WHITE_SPOT,
    COLOURS,
    DICE,
    END_TURN,
    FACES,
    JOKER,
    MOST_CARDS,
    PAIR,
    QUAD,
    ROLL,
    ROLLS,
    RULES,
    RUN_3,
    STEP_CLAIM,
    USE_WHITE_DIE,
    WHITE_DIE_MEAN,
    claims_for,
    dice_without,
    kind_points,
    set_bonus,
    strength,
    sub_multisets,
)
from domain.rules import JSON

Dice = tuple[int, ...]

ATTENTION = 0.5
"""How often an opponent who could bump a claim goes for it rather than for something else."""
MOST_PIPS = DICE * max(FACES)


class Target(NamedTuple):
    """A face-up card the seat may claim: its stack, kind, worth in points, and what to beat. A
    tuple, so that a plan's cache key hashes and compares the targets as plainly as it can."""

    stack: int
    kind: int
    worth: float
    to_beat: int


@dataclass(frozen=True)
class Table:
    """What the rules of thumb read from the seat's view."""

    targets: tuple[Target, ...]
    opponents: int
    spot_to_beat: int | None
    """The white-die spot's pip sum to beat; None when the seat may not claim it."""
    joker_colour: int | None
    """The colour the joker would join; None once it is taken."""
    joker_worth: float
    dice: Dice
    rolls: int
    claiming: bool
    white: int | None
    """The white die's value while the seat holds it and has rolled it."""


@dataclass(frozen=True)
class Plan:
    """Claims for a set of dice, and what they are worth together."""

    value: float
    moves: tuple[JSON, ...] = ()


# --- what cards are worth ------------------------------------------------------------------------


KIND_AND_COLOUR: Mapping[str, tuple[int, int]] = {
    card_id: (number % CARDS_PER_COLOUR, number // CARDS_PER_COLOUR)
    for card_id, number in CARD_NUMBERS.items()
}
"""Each card id's kind and colour: every move of a playout reads every card on the table."""

SET_GROWTH = tuple(set_bonus(count + 1) - set_bonus(count) for count in range(MOST_CARDS + 1))
"""What one more card adds to the set bonus of a colour of which `count` are held."""


def colour_counts(view: Mapping[str, JSON], seat: int) -> list[int]:
    """Cards per colour `seat` holds, the joker included."""
    counts = [0] * len(COLOURS)
    for card in view["won"][seat]:
        counts[KIND_AND_COLOUR[card][1]] += 1
    joker = view["joker"]
    if joker["holder"] == seat:
        counts[COLOURS.index(joker["colour"])] += 1
    return counts


def card_gain(counts: Sequence[int], colour: int, points: int) -> int:
    """A card is worth its points plus what it adds to its colour's set bonus: the fifth card of
    a colour brings 5 on top of its own points, so collect colours you already hold."""
    return points + SET_GROWTH[counts[colour]]


def bump_share(opponents: int) -> float:
    """Bumping takes a card from its holder: worth the holder's gain in a duel, but with more
    players the other opponents profit from it as much as you do."""
    return 1 / opponents


def read_table(turn: Turn) -> Table:
    """The targets with their worth to the seat, and the rest the rules of thumb need."""
    view, seat = turn.view, turn.seat
    points = kind_points(turn.options)
    counts = [colour_counts(view, other) for other in range(turn.players)]
    mine, share = counts[seat], bump_share(turn.players - 1)
    targets = []
    for stack, entry in enumerate(view["stacks"]):
        card, claim = entry["card"], entry["claim"]
        if card is None or (claim is not None and claim["seat"] == seat):
            continue
        kind, colour = KIND_AND_COLOUR[card]
        worth = float(card_gain(mine, colour, points[kind]))
        to_beat = -1
        if claim is not None:
            worth += card_gain(counts[claim["seat"]], colour, points[kind]) * share
            to_beat = strength(kind, tuple(claim["dice"]))
        targets.append(Target(stack, kind, worth, to_beat))
    white, spot, joker = view["white_die"], view["white_spot"], view["joker"]
    spot_to_beat = None
    if white["holder"] is None and (spot is None or spot["seat"] != seat):
        spot_to_beat = 0 if spot is None else sum(spot["dice"])
    joker_to = None if joker["holder"] is not None else joker_colour(mine)
    return Table(
        targets=tuple(targets),
        opponents=turn.players - 1,
        spot_to_beat=spot_to_beat,
        joker_colour=joker_to,
        joker_worth=0.0 if joker_to is None else card_gain(mine, joker_to, points[JOKER]),
        dice=tuple(view["dice"]),
        rolls=view["rolls"],
        claiming=view["step"] == STEP_CLAIM,
        white=white["value"] if white["holder"] == seat else None,
    )


def joker_colour(counts: Sequence[int]) -> int:
    """The joker joins the colour whose set bonus it raises most: the one you hold most of,
    short of a full set of twelve."""
    open_colours = [colour for colour, count in enumerate(counts) if count < CARDS_PER_COLOUR]
    return max(open_colours, key=lambda colour: counts[colour])


# --- how likely dice do what is needed -----------------------------------------------------------


@cache
def hits_of_a_kind(missing: int, rolled: int, rolls: int) -> float:
    """The chance to add `missing` dice of one face, re-rolling the other `rolled` dice up to
    `rolls` times and keeping every hit."""
    if missing <= 0:
        return 1.0
    if rolls == 0 or rolled < missing:
        return 0.0
    return sum(
        comb(rolled, hits)
        * (1 / 6) ** hits
        * (5 / 6) ** (rolled - hits)
        * hits_of_a_kind(missing - min(hits, missing), rolled - min(hits, missing), rolls - 1)
        for hits in range(rolled + 1)
    )


@cache
def faces_covered(missing: int, rolled: int) -> tuple[float, ...]:
    """The chance that `rolled` dice show exactly j of `missing` wanted faces, by j."""
    outcomes = [0] * (missing + 1)
    for roll in product(range(len(FACES)), repeat=rolled):
        outcomes[len({face for face in roll if face < missing})] += 1
    return tuple(count / len(FACES) ** rolled for count in outcomes)


@cache
def hits_of_a_run(missing: int, rolled: int, rolls: int) -> float:
    """The chance to add `missing` different faces, re-rolling the other `rolled` dice up to
    `rolls` times and keeping one die of each face found."""
    if missing <= 0:
        return 1.0
    if rolls == 0 or rolled < missing:
        return 0.0
    return sum(
        chance * hits_of_a_run(missing - found, rolled - found, rolls - 1)
        for found, chance in enumerate(faces_covered(missing, rolled))
    )


def completion_chance(wanted: Dice, kept: Dice, rolled: int, rolls: int) -> float:
    """The chance that re-rolling `rolled` dice completes `wanted` around the `kept` dice."""
    missing = len(wanted) - len(kept)
    if wanted[0] == wanted[-1]:
        return hits_of_a_kind(missing, rolled, rolls)
    return hits_of_a_run(missing, rolled, rolls)


@cache
def patterns(kind: int, to_beat: int) -> tuple[Dice, ...]:
    """Every set of dice that claims a card of `kind` over a claim of strength `to_beat`. A few
    hundred, each asked for at every new hand `aims` meets."""
    if kind < PAIR:
        return tuple((kind + 1,) * count for count in range(max(1, to_beat + 1), DICE + 1))
    if kind <= QUAD:
        size = kind - PAIR + 2
        return tuple((face,) * size for face in FACES if face * size > to_beat)
    length = kind - RUN_3 + 3
    runs = (tuple(range(low, low + length)) for low in range(1, 8 - length))
    return tuple(run for run in runs if sum(run) > to_beat)


@cache
def bump_chance(kind: int, held: int) -> float:
    """The chance that an opponent going for it beats a claim of strength `held` in a turn."""
    miss = 1.0
    for wanted in patterns(kind, held):
        miss *= 1 - completion_chance(wanted, (), DICE, ROLLS)
    return 1 - miss


@cache
def claim_safety(kind: int, held: int, opponents: int) -> float:
    """A claim pays only if it survives every opponent's turn: claim with high pips on a
    pattern card and with several dice on a single card, which few rolls can beat. Remembered:
    a few hundred answers, asked for by every new hand `aims` and `claim_options` meet."""
    return (1 - ATTENTION * bump_chance(kind, held)) ** opponents


def spot_safety(pips: int, opponents: int) -> float:
    """The white-die spot is bumped by any higher pip sum of leftover dice: pile pips on it."""
    return (1 - ATTENTION * (1 - pips / MOST_PIPS)) ** opponents


# --- placing the dice ----------------------------------------------------------------------------


def _common(dice: Dice, wanted: Dice) -> Dice:
    """The dice of `dice` that also appear in `wanted`, as a multiset."""
    kept, remaining = [], list(dice)
    for die in wanted:
        if die in remaining:
            remaining.remove(die)
            kept.append(die)
    return tuple(kept)


def joker_for(table: Table, dice: Dice) -> int | None:
    """The colour the joker would join if `dice` (sorted) claimed it: five of a kind, while the
    joker is free; else None."""
    if len(dice) == DICE and dice[0] == dice[-1]:
        return table.joker_colour
    return None


def leftover_plan(table: Table, dice: Dice) -> Plan:
    """Dice no card wants: five of a kind take the joker, which nobody can bump, else all go
    on the white-die spot, since a placed die costs nothing and more pips hold it better."""
    if (joker := joker_for(table, dice)) is not None:
        colour = COLOURS[joker]
        return Plan(
            table.joker_worth, ({"type": CLAIM_JOKER, "dice": list(dice), "colour": colour},)
        )
    worth = leftover_value(table, dice)
    # A claim of the spot is worth something, however likely it is bumped.
    return Plan(worth, ({"type": CLAIM_WHITE_SPOT, "dice": list(dice)},)) if worth else Plan(0.0)


def leftover_value(table: Table, dice: Dice) -> float:
    """What `leftover_plan(table, dice)` is worth, without building its move: the plan search
    asks at the end of every branch."""
    if joker_for(table, dice) is not None:
        return table.joker_worth
    if table.spot_to_beat is None or (pips := sum(dice)) <= table.spot_to_beat:
        return 0.0
    return WHITE_DIE_MEAN * spot_safety(pips, table.opponents)


def best_plan(table: Table, dice: Dice) -> Plan:
    """Place every die: the set of claims on different cards worth most together."""
    plan = _kept_plan(table, dice)
    # The kept plan's moves stay in the cache: the caller gets copies it may change.
    return Plan(plan.value, tuple(_copied(move) for move in plan.moves))


def plan_value(table: Table, dice: Dice) -> float:
    """What `best_plan(table, dice)` is worth, without copying its moves."""
    return _kept_plan(table, dice).value


PLANS_KEPT = 10_000
"""Plans `_kept_plan` remembers (a kilobyte or two each). A hard choice's playouts start from one
table whose dice fall the same way again and again: four plans in five are found there, some
thousand new ones a choice."""
_plans: dict[tuple[object, ...], Plan] = {}


@cache
def reach(dice: Dice) -> tuple[int, ...]:
    """For each kind, the strength of the strongest claim `dice` make on a card of it; -1 if
    none fits, which beats no `Target.to_beat` (-1 on an unclaimed card)."""
    return tuple(
        max((strength(kind, claim) for claim in claims_for(kind, dice)), default=-1)
        for kind in range(JOKER)
    )


def _kept_plan(table: Table, dice: Dice) -> Plan:
    """`_search_plan`, remembered by what the plan depends on: the targets the dice can claim,
    the rest of the table a plan reads (the joker only for five of a kind) and the dice;
    forgets everything once `PLANS_KEPT` are kept. The plan is a pure function of them, so
    the cache changes no result. Keyed by the whole table, it searched more than twice as
    many plans in hard's playouts, which mostly change cards the dice do not fit."""
    strongest = reach(dice)
    targets = tuple([target for target in table.targets if strongest[target.kind] > target.to_beat])
    joker = None if joker_for(table, dice) is None else (table.joker_colour, table.joker_worth)
    key = (targets, table.opponents, table.spot_to_beat, joker, dice)
    plan = _plans.get(key)
    if plan is None:
        if len(_plans) >= PLANS_KEPT:
            _plans.clear()
        plan = _plans[key] = _search_plan(table, targets, dice)
    return plan


def _copied(move: JSON) -> JSON:
    """A copy of `move` sharing no list with it."""
    return {
        field: list(value) if isinstance(value, list) else value for field, value in move.items()
    }


def _search_plan(table: Table, targets: Sequence[Target], dice: Dice) -> Plan:
    """`best_plan` searched over `targets`, the table's targets the dice can claim (a target
    they cannot would only pass the same dice on): every claim on each, or none, with the dice
    left. The search weighs values only, the moves being built once, along the best claims."""
    # (index, dice) -> what the dice are worth from target `index` on, the claim on it that
    # gets that (None: none) and the dice it leaves.
    best: dict[tuple[int, Dice], tuple[float, Dice | None, Dice]] = {}

    def search(index: int, dice: Dice) -> float:
        if index == len(targets):
            return leftover_value(table, dice)
        if (index, dice) in best:
            return best[index, dice][0]
        found: tuple[float, Dice | None, Dice] = search(index + 1, dice), None, dice
        target = targets[index]
        options = claim_options(target.kind, target.to_beat, table.opponents, dice)
        for claim, left, safety in options:
            value = search(index + 1, left) + target.worth * safety
            if value > found[0]:
                found = value, claim, left
        best[index, dice] = found
        return found[0]

    value = search(0, dice)
    moves: list[JSON] = []
    for index, target in enumerate(targets):
        _, claim, dice = best[index, dice]
        if claim is not None:
            moves.append({"type": CLAIM, "stack": target.stack, "dice": list(claim)})
    return Plan(value, (*moves, *leftover_plan(table, dice).moves))


@lru_cache(maxsize=10_000)
def claim_options(
    kind: int, to_beat: int, opponents: int, dice: Dice
) -> tuple[tuple[Dice, Dice, float], ...]:
    """Each claim of `dice` on a card of `kind` over a claim of strength `to_beat`: its dice, the
    dice left, and its `claim_safety`. The plan search meets the same ones over and over."""
    options = []
    for claim in claims_for(kind, dice):
        held = strength(kind, claim)
        if held > to_beat:
            options.append((claim, dice_without(dice, claim), claim_safety(kind, held, opponents)))
    return tuple(options)


def white_die_swap(table: Table, keep: float) -> tuple[float, JSON | None]:
    """Spend the white die only when the die it replaces wins more than holding it is worth
    (its scoring roll), counting that its spot opens again for your leftover dice. Gives what
    the swap adds over the dice's plan worth `keep` with the die held, and the move."""
    if table.white is None:
        return 0.0, None
    reopened = replace(table, spot_to_beat=0)
    best: tuple[float, JSON | None] = 0.0, None
    for die in sorted(set(table.dice) - {table.white}):
        swapped = tuple(sorted((*dice_without(table.dice, (die,)), table.white)))
        extra = plan_value(reopened, swapped) - keep - WHITE_DIE_MEAN
        if extra > best[0]:
            best = extra, {"type": USE_WHITE_DIE, "die": die}
    return best


def reroll(table: Table, rng: Random) -> tuple[float, JSON | None]:
    """Aim the next rolls at the target worth most once its chance is counted: keep the dice
    it needs, re-roll the rest; a miss still leaves what the kept dice can claim."""
    rolls = ROLLS - table.rolls
    aimed = [
        (wanted, target.worth * safety, kept, chance)
        for target in table.targets
        for wanted, safety, kept, chance in aims(
            target.kind, target.to_beat, table.opponents, table.dice, rolls
        )
    ]
    if table.joker_colour is not None:
        for wanted in FIVE_OF_A_KIND:
            aim = aim_chance(table.dice, wanted, rolls)
            if aim is not None:
                aimed.append((wanted, table.joker_worth, *aim))
    fallbacks: dict[Dice, float] = {}
    best: tuple[float, float, JSON | None] = float("-inf"), 0.0, None
    for wanted, worth, kept, chance in aimed:
        if kept not in fallbacks:
            fallbacks[kept] = _kept_plan(table, kept).value
        value = chance * worth + (1 - chance) * fallbacks[kept]
        tie = rng.random()
        if (value, tie) > best[:2]:
            # A held white die showing a face still wanted can replace a die once rolling ends.
            keep_white = table.white is not None and table.white in dice_without(wanted, kept)
            best = value, tie, {"type": ROLL, "keep": list(kept), "keep_white": keep_white}
    return best[0], best[2]


FIVE_OF_A_KIND = tuple((face,) * DICE for face in FACES)
"""The dice that take the joker."""


@lru_cache(maxsize=10_000)
def aims(
    kind: int, to_beat: int, opponents: int, dice: Dice, rolls: int
) -> tuple[tuple[Dice, float, Dice, float], ...]:
    """Every set of dice `reroll` may aim at on a card of `kind` over `to_beat` from `dice`
    with `rolls` rolls left, in `patterns` order: the set, the `claim_safety` of claiming it,
    the dice to keep and the chance to complete it (`aim_chance`). Playouts from one table
    meet the same cards and dice again and again."""
    found = []
    for wanted in patterns(kind, to_beat):
        aim = aim_chance(dice, wanted, rolls)
        if aim is not None:
            safety = claim_safety(kind, strength(kind, wanted), opponents)
            found.append((wanted, safety, *aim))
    return tuple(found)


@lru_cache(maxsize=10_000)
def aim_chance(dice: Dice, wanted: Dice, rolls: int) -> tuple[Dice, float] | None:
    """The dice of `dice` to keep when aiming at `wanted`, and the chance that `rolls` more
    rolls of the others complete it; None if the dice already show `wanted` or too few would
    roll."""
    kept = _common(dice, wanted)
    rolled = len(dice) - len(kept)
    if len(kept) == len(wanted) or rolled < len(wanted) - len(kept):
        return None
    return kept, completion_chance(wanted, kept, rolled, rolls)


def choose(turn: Turn, rng: Random) -> JSON:
    """Roll while the best target promises more than the dice in hand claim, then swap in the
    white die if it pays, then make the claims of the best plan one by one."""
    return play_turn(turn, rng, aimed_roll)


Roller = Callable[[Table, float, Random], JSON | None]
"""The re-roll that promises more than stopping, given what a white-die swap would add to
stopping; None to stop."""


def play_turn(turn: Turn, rng: Random, roller: Roller) -> JSON:
    """Roll while `roller` says so, then swap in the white die if it pays, then make the claims
    of the best plan one by one."""
    if len(turn.moves) == 1:
        return turn.moves[0]
    table = read_table(turn)
    # Only the first move of the plan is played: copying the rest from the cache is waste.
    plan = _kept_plan(table, table.dice)
    extra, swap = white_die_swap(table, plan.value)
    if not table.claiming and table.rolls < ROLLS:
        roll = roller(table, extra, rng)
        if roll is not None and roll in turn.moves:
            return roll
    if swap is not None:
        return swap
    return _copied(plan.moves[0]) if plan.moves else {"type": END_TURN}


def aimed_roll(table: Table, extra: float, rng: Random) -> JSON | None:
    """The re-roll aimed at the best target (`reroll`), if it promises more than stopping."""
    # Whatever the dice show, leftovers can go on the white-die spot: it decides nothing.
    cards_only = replace(table, spot_to_beat=None)
    promised, roll = reroll(cards_only, rng)
    now = plan_value(cards_only, table.dice) + extra
    return roll if promised > now else None


# --- planning every roll of the turn --------------------------------------------------------------


@cache
def roll_outcomes(count: int) -> tuple[tuple[Dice, float], ...]:
    """Every sorted result of rolling `count` dice, with its chance."""
    tally = Counter(tuple(sorted(roll)) for roll in product(FACES, repeat=count))
    return tuple((dice, times / len(FACES) ** count) for dice, times in tally.items())


@cache
def rolls_after(keep: Dice, dice: int) -> tuple[tuple[Dice, float], ...]:
    """Every sorted set of `dice` dice that keeping `keep` and rolling the others may give, with
    its chance, in `roll_outcomes` order. The planner meets each keep at every roll it plans."""
    return tuple(
        (tuple(sorted((*keep, *rolled))), chance)
        for rolled, chance in roll_outcomes(dice - len(keep))
    )


def planned_keep(table: Table) -> tuple[float, Dice | None]:
    """The dice to keep for the next roll that promise most, and what they promise (None: no
    dice to roll). Whether that beats stopping is the caller's to judge.

    Expectimax over the rest of the turn: every keep, every roll of the other dice and every
    later keep, each set of dice at the end placed by `best_plan`. Unlike `reroll` it keeps
    dice that serve several targets at once and counts every card a roll may hit, not only
    the one aimed at. Sets of five dice are few (252), so the whole turn takes some thousand
    plans."""
    stopping: dict[Dice, float] = {}
    reached: dict[tuple[Dice, int], float] = {}
    promised: dict[tuple[Dice, int], float] = {}

    def stop(dice: Dice) -> float:
        if dice not in stopping:
            stopping[dice] = _kept_plan(table, dice).value
        return stopping[dice]

    def best(dice: Dice, rolls: int) -> float:
        if rolls == ROLLS:
            return stop(dice)
        # Some thousand rolls land on the same 252 sets of dice: weigh their keeps once.
        if (dice, rolls) not in reached:
            reached[dice, rolls] = max(
                [stop(dice), *(keep_worth(keep, len(dice), rolls) for keep in keeps(dice))]
            )
        return reached[dice, rolls]

    def keep_worth(keep: Dice, dice: int, rolls: int) -> float:
        if (keep, rolls) not in promised:
            promised[keep, rolls] = sum(
                chance * best(after, rolls + 1) for after, chance in rolls_after(keep, dice)
            )
        return promised[keep, rolls]

    choice: tuple[float, Dice | None] = float("-inf"), None
    for keep in keeps(table.dice):
        worth = keep_worth(keep, len(table.dice), table.rolls)
        if worth > choice[0]:
            choice = worth, keep
    return choice


ROUNDING = 1e-9
"""Points a roll must promise beyond stopping: a sum of chances is 1 only up to rounding."""


def keeps(dice: Dice) -> list[Dice]:
    """The dice a re-roll may keep: any of them but not all."""
    return [keep for keep in sub_multisets(dice) if len(keep) < len(dice)]


def plan_turn(turn: Turn, rng: Random) -> JSON:
    """`choose`, but the rolls planned by `planned_keep`: search's move at its root, where a few
    dozen playouts cannot tell re-rolls apart (their dice differ more than the re-rolls do) and
    some milliseconds for a whole plan are well spent; far too slow for every playout move."""
    return play_turn(turn, rng, planned_roll)


def planned_roll(table: Table, extra: float, rng: Random) -> JSON | None:
    """The re-roll `planned_keep` finds best, if it promises more than stopping."""
    promised, keep = planned_keep(table)
    if keep is None or promised <= plan_value(table, table.dice) + extra + ROUNDING:
        return None
    # The white die is rolled again with the others: only stopping counts a swap.
    return {"type": ROLL, "keep": list(keep), "keep_white": False}


def shortlist(turn: Turn, rng: Random) -> list[JSON]:
    """The moves paired playouts compare (the hard level's root; medium grows a tree, which
    reads no shortlist): the planner's move, then every claim, swap or end of the turn, never
    another re-roll. Whether and what to re-roll is the planner's alone: its expectimax over
    the dice is exact for the turn, while a playout finishes the turn by the heuristic, whose
    cruder re-rolls misjudge a keep, and some dozen re-rolls drawn from a few hundred
    playouts let noise pass for an edge. The playouts weigh the placing of the dice, where they
    play the opponents' replies that the planner's fixed safety only estimates: against
    medium, in the same 400 games, hard won 55.2% and the planner alone 52.1%."""
    first = plan_turn(turn, rng)
    if first["type"] == ROLL:
        return [first]
    return [first, *(move for move in turn.moves if move != first and move["type"] != ROLL)]


GAME = Game(
    RULES,
    heuristic=choose,
    search=SearchTuning(doubt=2.0),
    shortlist=shortlist,
    planner=plan_turn,
)
"""Roll'n Bump's playouts are mostly dice, so its search estimates lie more often: at a doubt of
1 medium search left its heuristic for worse moves (43.5% against it in 400 games, 50.1% at 2).
Starting from the planner's move instead, medium beat the heuristic in 68.1% of 400 games. Hard,
with the re-rolls left to the planner (`shortlist`), beat medium in 53.9-57.4% of 400 games over
three runs and in 55.5% of 1,000 (p = 0.00024; 48.0% of 100 before); the planner alone, in 52.1%
of 400."""
