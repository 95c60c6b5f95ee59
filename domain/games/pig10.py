"""Pig 10 (Zoch, Ayelet Pnueli): play one card a turn onto a shared pile, aim for exactly 10.

Rules as enforced: `docs/rules/pig10.md`. Cards are plain values, so a hand is a sorted tuple of
values; the draw pile is kept as the multiset of cards not yet dealt, and each draw picks from it
with the rng `decide` is given, so no future card exists in the state before it is drawn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from math import exp, sqrt
from random import Random
from typing import NamedTuple

from domain import multiset
from domain.chance import Chance
from domain.frozen import replace, with_item
from domain.rules import FIRST_SEAT, JSON, Event, FoldsAfterDeciding, GameInfo, Result, RuleError
from domain.seating import choose_first_seat, next_seat, winners_by

FROG = 0
PIGMAID = 5
TARGET = 10
HAND_SIZE = 3
DECK_COUNTS: tuple[int, ...] = (7, 8, 8, 8, 8, 5, 8, 8, 8, 8, 4)
"""How many cards of each value 0..10 the deck holds (80 in all)."""

DECK_SIZE = sum(DECK_COUNTS)
ADD, SUBTRACT, SET = "add", "subtract", "set"
MODES = (ADD, SUBTRACT, SET)
SPREAD = 1.8
"""The lead in cards won that is worth a factor e in the win odds, per square root of the cards
still in play per seat (fitted by log loss to the winners of seeded random and heuristic
playouts with 2 to 8 players)."""

INFO = GameInfo(
    id="pig10",
    title="Pig 10",
    min_players=2,
    max_players=8,
    options=(FIRST_SEAT,),
    score_range=(0, DECK_SIZE),
    summary="Play a card onto the pile; exactly 10 wins the pile, more hands it to the one "
    "who moved before you. Most cards won wins.",
)


class PileCard(NamedTuple):
    """A card on the pile and who played it: a named tuple, built on every card played, where a
    frozen dataclass's `__init__` set each field through `object.__setattr__`."""

    seat: int
    card: int


@dataclass(frozen=True)
class State:
    hands: tuple[tuple[int, ...], ...]
    draw_pile: tuple[int, ...]
    """Count of each value 0..10 still in the draw pile."""
    pile: tuple[PileCard, ...] = ()
    pile_value: int = 0
    won: tuple[int, ...] = ()
    turn: int | None = None
    started: bool = False

    @property
    def players(self) -> int:
        return len(self.hands)

    @property
    def draw_pile_size(self) -> int:
        return sum(self.draw_pile)


def _remove(cards: tuple[int, ...], card: int) -> tuple[int, ...]:
    index = cards.index(card)
    return cards[:index] + cards[index + 1 :]


def out_of_play(state: State) -> tuple[int, ...]:
    """Count per value of the cards in won piles: the deck less every hand, the draw pile and
    the pile. Each of them was shown face up when its pile was won."""
    in_play = [card for hand in state.hands for card in hand] + [p.card for p in state.pile]
    left = multiset.without(DECK_COUNTS, in_play)
    return tuple(count - drawable for count, drawable in zip(left, state.draw_pile, strict=True))


def unseen(hand: Sequence[int], pile: Sequence[PileCard], out: Sequence[int]) -> tuple[int, ...]:
    """Count per value of the cards a seat holding `hand` cannot see: in other hands or still
    to be drawn."""
    left = multiset.without(DECK_COUNTS, [*hand, *(played.card for played in pile)])
    return tuple(count - gone for count, gone in zip(left, out, strict=True))


def deal_unseen(
    sizes: Sequence[int],
    seat: int | None,
    hand: tuple[int, ...],
    cards: tuple[int, ...],
    rng: Random,
) -> tuple[tuple[tuple[int, ...], ...], tuple[int, ...]]:
    """Hands of `sizes`, `seat` holding `hand` and every other seat cards drawn from the multiset
    `cards`; and the rest of `cards` as the draw pile."""
    hidden = sum(sizes) - len(hand)
    dealt = rng.sample(range(len(cards)), hidden, counts=cards) if hidden else []
    hands: list[tuple[int, ...]] = []
    start = 0
    for other, size in enumerate(sizes):
        if other == seat:
            hands.append(hand)
        else:
            hands.append(tuple(sorted(dealt[start : start + size])))
            start += size
    return tuple(hands), multiset.without(cards, dealt)


def modes_for(state: State, card: int) -> tuple[str, ...]:
    """The modes in which `card` may be played onto the current pile, in a stable order."""
    if card == FROG:
        return (SET,)
    if not state.pile:
        return (ADD,)
    modes = [ADD]
    if card == PIGMAID and state.pile_value >= PIGMAID:
        modes.append(SUBTRACT)
    if card in (state.pile[-1].card, state.pile_value):
        modes.append(SET)
    return tuple(modes)


def pile_value_after(value: int, card: int, mode: str) -> int:
    """The announced pile value after playing `card` in `mode` (the mode assumed legal)."""
    if mode == SET:
        return card
    if mode == SUBTRACT:
        return value - card
    return value + card


class Pig10(FoldsAfterDeciding):
    """Pig 10 behind the rules contract."""

    info = INFO

    def initial_state(self, players: int, options: Mapping[str, JSON]) -> State:
        return State(hands=((),) * players, draw_pile=DECK_COUNTS, won=(0,) * players, turn=None)

    def setup(self, players: int, options: Mapping[str, JSON], rng: Chance) -> list[Event]:
        deck = [value for value, count in enumerate(DECK_COUNTS) for _ in range(count)]
        rng.shuffle(deck)
        events = [
            Event("CardsDealt", {"seat": seat, "cards": sorted(deck[seat::players][:HAND_SIZE])})
            for seat in range(players)
        ]
        first = choose_first_seat(players, options, rng)
        events.append(Event("FirstSeatChosen", {"seat": first}))
        return events

    def evolve(self, state: State, event: Event) -> State:
        data = event.data
        match event.type:
            case "CardsDealt":
                cards = list(data["cards"])
                return replace(
                    state,
                    hands=with_item(state.hands, data["seat"], tuple(sorted(cards))),
                    draw_pile=multiset.without(state.draw_pile, cards),
                )
            case "FirstSeatChosen":
                return replace(state, turn=data["seat"], started=True)
            case "CardPlayed":
                seat, card = data["seat"], data["card"]
                hands = with_item(state.hands, seat, _remove(state.hands[seat], card))
                return replace(
                    state,
                    hands=hands,
                    pile=(*state.pile, PileCard(seat, card)),
                    pile_value=data["value"],
                    turn=self._next_turn(hands, state.draw_pile_size, seat),
                )
            case "PileWon":
                won = list(state.won)
                won[data["seat"]] += len(state.pile)
                return replace(state, won=tuple(won), pile=(), pile_value=0)
            case "CardDrawn":
                seat, card = data["seat"], data["card"]
                return replace(
                    state,
                    hands=with_item(state.hands, seat, tuple(sorted((*state.hands[seat], card)))),
                    draw_pile=multiset.without(state.draw_pile, [card]),
                )
        raise ValueError(f"pig10 has no event {event.type!r}")

    @staticmethod
    def _next_turn(hands: tuple[tuple[int, ...], ...], drawable: int, mover: int) -> int | None:
        """Who moves after `mover`, once the card is played from `hands` (`drawable` cards
        left to draw)."""
        # While the draw pile lasts every hand is refilled to three, so nobody is skipped.
        if drawable:
            return (mover + 1) % len(hands)
        return next_seat(mover, len(hands), lambda seat: bool(hands[seat]))

    def to_act(self, state: State) -> frozenset[int]:
        return frozenset() if state.turn is None else frozenset({state.turn})

    def may_act(self, state: State) -> frozenset[int]:
        return self.to_act(state)  # nobody acts out of turn

    def legal_moves(self, state: State, seat: int) -> list[JSON]:
        if seat != state.turn:
            return []
        return [
            {"card": card, "mode": mode}
            for card in sorted(set(state.hands[seat]))
            for mode in modes_for(state, card)
        ]

    def decide(self, state: State, seat: int, move: JSON, rng: Chance) -> list[Event]:
        card, mode = self._parse(move)
        if seat != state.turn:
            raise RuleError("turn-order", f"seat {seat} is not the seat to move")
        if card not in state.hands[seat]:
            raise RuleError("card-in-hand", f"seat {seat} holds no {card}")
        allowed = modes_for(state, card)
        if mode not in allowed:
            raise self._mode_error(state, card, mode)
        value = pile_value_after(state.pile_value, card, mode)
        events = [Event("CardPlayed", {"seat": seat, "card": card, "mode": mode, "value": value})]
        if value >= TARGET:
            winner, reason = (seat, "pig10") if value == TARGET else (state.pile[-1].seat, "bust")
            pile_cards = [*(played.card for played in state.pile), card]
            events.append(Event("PileWon", {"seat": winner, "cards": pile_cards, "reason": reason}))
        if state.draw_pile_size:
            events.append(
                Event("CardDrawn", {"seat": seat, "card": multiset.draw(state.draw_pile, rng)})
            )
        return events

    @staticmethod
    def _parse(move: JSON) -> tuple[int, str]:
        if not isinstance(move, Mapping) or move.keys() != {"card", "mode"}:
            raise RuleError("move-format", 'a Pig 10 move is {"card": 0..10, "mode": "add"|...}')
        card, mode = move["card"], move["mode"]
        if isinstance(card, bool) or not isinstance(card, int) or not 0 <= card <= TARGET:
            raise RuleError("move-format", "card must be a whole number from 0 to 10")
        if mode not in MODES:
            raise RuleError("move-format", f"mode must be one of {list(MODES)}")
        return card, mode

    @staticmethod
    def _mode_error(state: State, card: int, mode: str) -> RuleError:
        if card == FROG:
            return RuleError("frog", "a frog (0) always sets the pile value to 0: mode must be set")
        if not state.pile:
            return RuleError("empty-pile", "a card played onto the empty pile is simply added")
        if mode == SUBTRACT and card != PIGMAID:
            return RuleError("pigmaid", "only a pigmaid (5) may subtract")
        if mode == SUBTRACT:
            return RuleError(
                "pigmaid-never-negative",
                f"subtracting 5 from {state.pile_value} would make the pile value negative",
            )
        return RuleError(
            "same-card-same-number",
            f"set needs the card before ({state.pile[-1].card}) or the pile value "
            f"({state.pile_value}) to equal {card}",
        )

    def view(self, state: State, seat: int | None) -> dict[str, JSON]:
        view: dict[str, JSON] = {
            "hand_sizes": [len(hand) for hand in state.hands],
            "draw_pile": state.draw_pile_size,
            "pile": [{"seat": played.seat, "card": played.card} for played in state.pile],
            "pile_value": state.pile_value,
            "won": list(state.won),
            "out_of_play": list(out_of_play(state)),
            "turn": state.turn,
        }
        if seat is not None:
            view["hand"] = list(state.hands[seat])
        return view

    def redact(self, event: Event, seat: int | None) -> Event | None:
        if event.type == "CardsDealt" and event.data["seat"] != seat:
            return Event(
                event.type, {"seat": event.data["seat"], "count": len(event.data["cards"])}
            )
        if event.type == "CardDrawn" and event.data["seat"] != seat:
            return Event(event.type, {"seat": event.data["seat"]})
        return event

    def result(self, state: State) -> Result | None:
        if not state.started or state.turn is not None:
            return None
        return Result(winners=winners_by(state.won, highest=True), scores=state.won)

    def scores(self, state: State) -> tuple[int, ...]:
        return state.won

    def conceal(self, state: State, seat: int | None, rng: Random) -> State:
        hand = () if seat is None else state.hands[seat]
        cards = unseen(hand, state.pile, out_of_play(state))
        sizes = [len(other) for other in state.hands]
        hands, draw_pile = deal_unseen(sizes, seat, hand, cards, rng)
        return replace(state, hands=hands, draw_pile=draw_pile)

    def sample(
        self,
        players: int,
        options: Mapping[str, JSON],
        view: Mapping[str, JSON],
        seat: int,
        rng: Random,
    ) -> State:
        hand = tuple(view["hand"])
        pile = tuple(PileCard(played["seat"], played["card"]) for played in view["pile"])
        cards = unseen(hand, pile, view["out_of_play"])
        hands, draw_pile = deal_unseen(view["hand_sizes"], seat, hand, cards, rng)
        return State(
            hands=hands,
            draw_pile=draw_pile,
            pile=pile,
            pile_value=view["pile_value"],
            won=tuple(view["won"]),
            turn=view["turn"],
            # Only the state before the deal shows the whole deck as the draw pile.
            started=view["draw_pile"] < DECK_SIZE,
        )

    def evaluate(self, state: State) -> tuple[float, ...]:
        result = self.result(state)
        if result is not None:
            return result.shares()
        # A softmax of the cards won: the cards each seat may still win decide how much a lead
        # may change.
        in_play = state.draw_pile_size + sum(map(len, state.hands)) + len(state.pile)
        temperature = SPREAD * sqrt(in_play / state.players)
        best = max(state.won)
        weights = [exp((won - best) / temperature) for won in state.won]
        total = sum(weights)
        return tuple(weight / total for weight in weights)


RULES = Pig10()
