"""Krumme10 rules of thumb: hit the target exactly, overshoot only when nothing else is left,
leave the next opponent no exact hit (better: nothing but overshoots), gamble on a flip or a steal
when the odds favour it, take every foul point, and flip a card you score when its back is worth
more on average.

Every rule reads only the seat's view and the legal moves. Nobody knows an unflipped back, so a
back is judged by the odds of the kinds of card still unaccounted for: the public deck table less
every card whose two faces are in view.

Moves are compared by what they are expected to change in points, each seat's points weighed by
what they mean for this seat's win: its own (its team's) count for it, every opponent's against it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from itertools import chain
from random import Random

from domain.bots import Turn
from domain.game import Game
from domain.games.krumme10 import (
    CLOCKWISE,
    FOUL,
    KIND_OF,
    KINDS,
    PINK_FOUR,
    PINK_FOURS,
    RAISED_TARGET,
    RULES,
    VALUE,
    deck_counts,
    landing,
    seats_after,
)
from domain.rules import JSON

View = Mapping[str, JSON]
Card = Mapping[str, JSON]


def face_code(card: Card) -> int:
    return PINK_FOUR if card["pink"] else card["face"]


def back_code(card: Card) -> int | None:
    """The back of a flipped card, None while nobody has seen it."""
    back = card.get("back")
    return None if back is None else PINK_FOUR if back["pink"] else back["face"]


@dataclass(frozen=True)
class Table:
    """What every rule reads: the view, who we are, the odds of each back and what a point is
    worth for us in each seat."""

    view: View
    seat: int
    backs: Mapping[int, tuple[tuple[int, float], ...]]
    """For each face code: each possible back code with its chance."""
    worth: tuple[float, ...]
    """A point for each seat, in our points: +1 for us (shared by our team), opponents' points
    count against us, spread over them."""
    faces: tuple[tuple[int, ...], ...]
    """Each seat's cards by up face code, read from the view once for every rule that asks."""
    pinks: int
    """The pink 4s showing in the display."""
    face_of: Mapping[int, int]
    """The up face code of every card in front of a player, by id: what a move names."""
    off_target: dict[int, float] = field(default_factory=dict, compare=False)
    """`off_target_value` of each face code landing, as far as worked out (`landing_value`)."""

    @staticmethod
    def of(turn: Turn) -> Table:
        view = turn.view
        teams = view["teams"]
        return Table(
            view,
            turn.seat,
            back_odds(view, turn.options.get(PINK_FOURS.name, PINK_FOURS.default)),
            point_worth(None if teams is None else tuple(teams), turn.players, turn.seat),
            tuple(tuple(map(face_code, hand)) for hand in view["hands"]),
            pinks_showing(view["display"]),
            {card["id"]: face_code(card) for hand in view["hands"] for card in hand},
        )

    def friends(self, seat: int, other: int) -> bool:
        teams = self.view["teams"]
        return seat == other if teams is None else teams[seat] == teams[other]


@cache
def point_worth(teams: tuple[int, ...] | None, players: int, seat: int) -> tuple[float, ...]:
    """+1 spread over our team, -1 spread over the other teams and their members: a point for
    everyone changes nothing, as a team's score is its members' average."""
    team_of = list(range(players)) if teams is None else list(teams)
    sizes = {team: team_of.count(team) for team in team_of}
    others = len(sizes) - 1
    return tuple(
        1 / sizes[team] if team == team_of[seat] else -1 / (sizes[team] * others)
        for team in team_of
    )


def back_odds(view: View, pink_fours: int) -> Mapping[int, tuple[tuple[int, float], ...]]:
    """The chance of each back behind each face, in proportion to the cards of each kind not yet
    seen from both sides (a guess as good as any player's, and cheap)."""
    unseen = list(deck_counts(pink_fours))
    for card in chain(view["display"], view["discarded"], *view["won"]):
        back = card["back"]
        if back is not None:
            # `face_code` and `back_code` written out: every card played so far is read here,
            # at each move of a search's playouts.
            face = PINK_FOUR if card["pink"] else card["face"]
            unseen[KIND_OF[face, PINK_FOUR if back["pink"] else back["face"]]] -= 1
    return odds_of_unseen(tuple(unseen))


@lru_cache(maxsize=256)
def odds_of_unseen(unseen: tuple[int, ...]) -> Mapping[int, tuple[tuple[int, float], ...]]:
    """`back_odds` from the count of each kind not yet seen from both sides: the same few counts
    come up in every playout of a search, so each is worked out once (callers only read it)."""
    behind: dict[int, list[tuple[int, int]]] = {face: [] for face in range(len(VALUE))}
    for kind, (first, second) in enumerate(KINDS):
        behind[first].append((second, unseen[kind]))
        behind[second].append((first, unseen[kind]))
    odds = {}
    for face, backs in behind.items():
        total = sum(count for _, count in backs) or 1
        odds[face] = tuple((back, count / total) for back, count in backs)
    return odds


def flipped_value(table: Table, face: int, back: int | None) -> float:
    """What a card showing `face` counts once flipped: its back if seen, else on average."""
    if back is not None:
        return VALUE[back]
    return sum(chance * VALUE[other] for other, chance in table.backs[face])


def scoring_value(table: Table, face: int, back: int | None = None) -> float:
    """Flip a card you score when its back is worth more: a 0 hides a 1 or a 5 (worth 3 on
    average), a 5 hides a 4 or a 0 (keep it)."""
    return max(VALUE[face], flipped_value(table, face, back))


def pinks_showing(cards: Sequence[Card]) -> int:
    return sum(card["pink"] for card in cards)


def jackpot(pinks: int, target: int) -> int:
    """Exactly 15 also scores every pink 4 showing in the display."""
    return VALUE[PINK_FOUR] * pinks if target == RAISED_TARGET else 0


def foul_points(table: Table, faces: Sequence[int], any_card: bool) -> float:
    """What a hand (its up face codes) scores from another team's foul: its lowest card (any card
    past 15), flipped when that pays."""
    if not faces:
        return 0.0
    lowest = min(VALUE[face] for face in faces)
    allowed = [face for face in faces if any_card or VALUE[face] == lowest]
    return max(scoring_value(table, face) for face in allowed)


def foul_loss(table: Table, fouler: int, any_card: bool) -> float:
    """Over the target, every player of another team than the fouler scores foul points: never
    overshoot while another move is left."""
    return sum(
        table.worth[seat] * foul_points(table, faces, any_card)
        for seat, faces in enumerate(table.faces)
        if not table.friends(seat, fouler)
    )


def next_player(table: Table, clockwise: bool) -> int | None:
    """Who moves after us in that direction: the next seat with cards in front of it."""
    hands = table.view["hands"]
    for seat in seats_after(table.seat, len(hands), 1 if clockwise else -1):
        if hands[seat]:
            return seat
    return None


def exact(total: int, target: int, face: int) -> int | None:
    """The target a card showing `face` lands exactly on, if it does."""
    after, reached = landing(total, target, face)
    return reached if after == reached else None


def safe(total: int, target: int, face: int) -> bool:
    after, reached = landing(total, target, face)
    return after <= reached


def reply_value(table: Table, total: int, target: int, pinks: int, following: int | None) -> float:
    """Below target the next player moves on our display: leave them no exact hit with a card
    they show, better still only cards that overshoot, so they foul unless a flip saves them."""
    if following is None:
        return 0.0
    faces = table.faces[following]
    hits = [
        scoring_value(table, face) + jackpot(pinks, reached)
        for face in faces
        if (reached := exact(total, target, face)) is not None
    ]
    if hits:
        return table.worth[following] * max(hits)
    if any(safe(total, target, face) for face in faces):
        return 0.0
    escape = max(
        sum(chance for back, chance in table.backs[face] if safe(total, target, back))
        for face in faces
    )
    return (1 - escape) * foul_loss(table, following, target == RAISED_TARGET)


def landing_value(table: Table, face: int, back: int | None) -> float:
    """What a card of ours landing with `face` up (its back seen or not) is worth: exactly on
    target we score it, else `off_target_value`."""
    view = table.view
    total, target = landing(view["total"], view["target"], face)
    if total == target:
        points = scoring_value(table, face, back) + jackpot(table.pinks, target)
        return table.worth[table.seat] * points
    # Off target the back plays no part, and one choice asks for the same few faces again and
    # again (each flip weighs every back it may hide): each face is worked out once per table.
    value = table.off_target.get(face)
    if value is None:
        value = table.off_target[face] = off_target_value(table, face, total, target)
    return value


def off_target_value(table: Table, face: int, total: int, target: int) -> float:
    """What a card of ours landing with `face` up, to `total` off `target`, is worth: over it we
    foul, below it the next player replies (after a pink 4 we choose which way play goes on)."""
    if total > target:
        return foul_loss(table, table.seat, target == RAISED_TARGET)
    clockwise = table.view["direction"] == CLOCKWISE
    ways = (clockwise, not clockwise) if face == PINK_FOUR else (clockwise,)
    pinks = table.pinks + (face == PINK_FOUR)
    return max(reply_value(table, total, target, pinks, next_player(table, way)) for way in ways)


def flip_landing_value(table: Table, face: int) -> float:
    """A card showing `face` played flipped (or stolen) lands on its unknown back: weigh every
    back by its odds. A flip is the gamble that may hit where no face does, or steer clear of an
    overshoot."""
    return sum(chance * landing_value(table, back, face) for back, chance in table.backs[face])


def play_value(table: Table, move: JSON) -> float:
    face = table.face_of[move["card"]]
    if move["flip"]:
        return flip_landing_value(table, face)
    return landing_value(table, face, None)


def score_value(table: Table, move: JSON) -> float:
    """Exactly on target: the last card counts (flipped if its back is worth more), with the
    jackpot on 15, each of its pink 4s flipped if that pays on average (a 3 or a 5 behind)."""
    view = table.view
    *before, last = view["display"]
    face, back = face_code(last), back_code(last)
    points = flipped_value(table, face, back) if move["flip"] else VALUE[face]
    if view["target"] == RAISED_TARGET:
        flips = set(move.get("flip_jackpot", ()))
        points += sum(
            flipped_value(table, PINK_FOUR, back_code(card))
            if card["id"] in flips
            else VALUE[PINK_FOUR]
            for card in before
            if card["pink"]
        )
    return table.worth[table.seat] * points


def steal_value(table: Table, move: JSON) -> float:
    """A 1 lets us play anyone's card flipped: worth it when its back is likely to hit (a 5 may
    hide a 0 that keeps us on target, and then scores as the 5) rather than to overshoot."""
    return flip_landing_value(table, table.face_of[move["card"]])


def pass_value(table: Table, move: JSON) -> float:
    """Passing a steal leaves the display as it is to the next player; passing foul points
    scores nothing, so every foul point is taken."""
    view = table.view
    if view["phase"] == FOUL:
        return 0.0
    following = next_player(table, view["direction"] == CLOCKWISE)
    return reply_value(table, view["total"], view["target"], table.pinks, following)


def direction_value(table: Table, move: JSON) -> float:
    """After a pink 4, send play towards the player who can do least with the display."""
    view = table.view
    if view["total"] >= view["target"]:
        return 0.0
    clockwise = (view["direction"] == CLOCKWISE) != move["reverse"]
    following = next_player(table, clockwise)
    return reply_value(table, view["total"], view["target"], table.pinks, following)


def foul_score_value(table: Table, move: JSON) -> float:
    """Foul points: the card (any card past 15) counting most, flipped if that pays on average."""
    face = table.face_of[move["card"]]
    return flipped_value(table, face, None) if move["flip"] else VALUE[face]


VALUES = {
    "play": play_value,
    "score": score_value,
    "steal": steal_value,
    "direction": direction_value,
    "foul_score": foul_score_value,
    "pass": pass_value,
}


def move_value(table: Table, move: JSON) -> float:
    """What `move` is expected to gain us, in points."""
    return VALUES[move["type"]](table, move)


def choose(turn: Turn, rng: Random) -> JSON:
    """The move expected to gain most; `rng` breaks ties."""
    table = Table.of(turn)
    return max(turn.moves, key=lambda move: (move_value(table, move), rng.random()))


GAME = Game(RULES, heuristic=choose)
