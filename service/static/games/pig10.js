// Pig 10: one pile, cards 0 to 10, exactly 10 wins the pile.

import { back, card, seatName, zone } from "../cards.js";
import { h, plural } from "../dom.js";

function valueCard(value, props = {}) {
  const name = value === 0 ? "frog" : value === 5 ? "pigmaid" : null;
  const label = name ? `${value} (${name})` : String(value);
  return card({ text: value, label: props.label || label, tone: name ? "green" : undefined, ...props });
}

export const pig10 = {
  render(state, ctx) {
    const pile = state.pile.map((played) =>
      valueCard(played.card, { small: true, label: `${played.card}, played by ${seatName(ctx, played.seat)}` }));
    return h("div", { class: "game pig10" },
      h("p", { class: "headline" }, `Pile value ${state.pile_value} of 10`),
      h("div", { class: "row piles" },
        zone("Pile: the cards played, worth their total", pile.length ? pile : h("span", { class: "empty" }, "empty")),
        zone("Draw pile", back({ label: `draw pile, ${plural(state.draw_pile, "card")}`, count: state.draw_pile }))),
      h("ul", { class: "tallies", "aria-label": "Hands and cards won" },
        state.hand_sizes.map((size, seat) =>
          h("li", {}, `${seatName(ctx, seat)}: ${plural(size, "card")} in hand, ${plural(state.won[seat], "card")} won`))),
      state.hand ? zone("Your hand", state.hand.map((value) => valueCard(value, { pick: `card:${value}` }))) : null);
  },

  hint(moves) {
    const several = new Set(moves.map((move) => move.card)).size < moves.length;
    return `Your move: click a card in your hand to play it on the pile${several ? " (a card that can add or subtract offers both as buttons)" : ""}.`;
  },

  move(move, state) {
    const label = move.mode === "set" ? `Play ${move.card}: set the pile to ${move.card}`
      : `Play ${move.card}: ${move.mode} → pile ${move.mode === "subtract" ? state.pile_value - move.card : state.pile_value + move.card}`;
    return { picks: [`card:${move.card}`], label };
  },

  scores(state) {
    return state.won;
  },

  describe(event, ctx) {
    const who = seatName(ctx, event.data.seat);
    switch (event.type) {
      case "CardPlayed": return `${who} played ${event.data.card} (${event.data.mode}): pile at ${event.data.value}`;
      case "PileWon": return `${who} won the pile (${plural(event.data.cards.length, "card")}${event.data.reason === "bust" ? ", over 10" : ""})`;
      case "FirstSeatChosen": return `${who} starts`;
      default: return null;
    }
  },
};
