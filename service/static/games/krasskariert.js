// Krass Kariert: beat the combination in the middle with adjacent cards of a hand that may never
// be sorted, or take a reserve card into it. The last to hold cards gives up a chip.

import { back, card, seatName, zone } from "../cards.js";
import { h, plural } from "../dom.js";

const SPECIAL = {
  X: { tone: "magenta", label: "X card (joker)" },
  DRAW: { tone: "cyan", label: "DRAW card" },
  STOP: { tone: "red", label: "STOP card" },
};

function cardLabel(value) {
  return SPECIAL[value]?.label || String(value);
}

function kkCard(value, props = {}) {
  return card({ text: value, tone: SPECIAL[value]?.tone, ...props, label: props.label || cardLabel(value) });
}

/** A combination in words, as the rules name it: "2-run 7–8", "pair of 9s". */
function combination(kind, rank) {
  switch (kind) {
    case "single": return `single ${rank}`;
    case "2-run": return `2-run ${rank - 1}–${rank}`;
    case "3-run": return `3-run ${rank - 2}–${rank}`;
    case "pair": return `pair of ${rank}s`;
    case "triple": return `triple of ${rank}s`;
    case "draw": return "DRAW card";
    case "stop": return "STOP card";
  }
}

const RUN_LENGTH = { "2-run": 2, "3-run": 3 };

/** What the X cards of `cards` stand for when played as `kind` of `rank`: "" without any X. */
function jokerNote(cards, kind, rank) {
  const jokers = cards.filter((value) => value === "X").length;
  if (!jokers) return "";
  const length = RUN_LENGTH[kind];
  const values = length
    ? Array.from({ length }, (_, index) => rank - length + 1 + index).filter((value) => !cards.includes(value))
    : Array(jokers).fill(rank);
  return ` (X as ${values.join(", ")})`;
}

/** Where a card inserted at `at` ends up in `hand`, in words. */
function place(hand, at) {
  if (!hand.length) return "your only card";
  const where = at === 0 ? `before ${cardLabel(hand[0])}`
    : at === hand.length ? `after ${cardLabel(hand[at - 1])}`
      : `between ${cardLabel(hand[at - 1])} and ${cardLabel(hand[at])}`;
  return `card ${at + 1}, ${where}`;
}

function you(ctx, seat) {
  return seat === ctx.seat ? "You" : seatName(ctx, seat);
}

/** A seat's number badge and name: bots may share a name, their seats never do. */
function seatTag(ctx, seat) {
  return [h("span", { class: "seat-no" }, h("span", { class: "visually-hidden" }, "seat "), seat + 1),
    " ", h("span", { class: "name" }, seatName(ctx, seat))];
}

function headline(state, ctx) {
  const who = you(ctx, state.turn);
  const hand = `Hand ${state.hand_number}: `;
  switch (state.phase) {
    case "lead": return `${hand}${who} ${state.turn === ctx.seat ? "lead" : "leads"} the trick with any combination`;
    case "follow": return state.to_beat
      ? `${hand}${who} must beat the ${combination(state.to_beat.kind, state.to_beat.rank)} or pass`
      : `${hand}${who} may play any combination (only DRAW cards lie in the middle)`;
    case "insert": return `${hand}${who} won the trick and ${state.turn === ctx.seat ? "draw" : "draws"}: ${plural(state.draws_left, "card")} to insert`;
    case "over": return `Game over: ${state.losers.map((seat) => seatName(ctx, seat)).join(" and ")} lost`;
    default: return state.hand_number ? `${hand}the trick is decided` : "Dealing…";
  }
}

/** Index of the combination the next player must beat (DRAW and STOP cards never count). */
function highestPlay(trick) {
  for (let index = trick.length - 1; index >= 0; index -= 1) {
    if (trick[index].kind !== "draw" && trick[index].kind !== "stop") return index;
  }
  return -1;
}

function trickZone(state, ctx) {
  const highest = highestPlay(state.trick);
  const plays = state.trick.map((play, index) => {
    const words = combination(play.kind, play.rank);
    const mark = index === highest && state.phase === "follow" ? "to beat" : null;
    return h("li", { class: `play${mark ? " highest" : ""}${play.seat === state.trick_winner ? " winner" : ""}` },
      h("span", { class: "who" }, seatTag(ctx, play.seat)),
      h("span", { class: "row" }, play.cards.map((value) => kkCard(value, { small: true }))),
      h("span", { class: "what" }, words + jokerNote(play.cards, play.kind, play.rank)),
      mark ? h("span", { class: "badge" }, mark) : null,
      play.seat === state.trick_winner ? h("span", { class: "badge won" }, "wins the trick") : null);
  });
  const waiting = state.phase === "follow" && state.waiting.length
    ? h("p", { class: "hint" }, `Still to play after this turn: ${state.waiting.map((seat) => seatName(ctx, seat)).join(", ")}`)
    : null;
  return h("section", { class: "zone trick", "aria-label": "The trick" },
    h("h3", {}, state.leader === null ? "The trick" : `The trick, led by ${seatName(ctx, state.leader)}`),
    plays.length ? h("ol", { class: "plays" }, plays) : h("p", { class: "empty" }, "Nothing played yet."),
    waiting);
}

function chips(count, startingChips) {
  const lost = Math.max(0, startingChips - count);
  return h("span", { class: "chips", role: "img", "aria-label": plural(count, "chip") },
    h("span", { "aria-hidden": "true" }, "●".repeat(count), h("span", { class: "spent" }, "○".repeat(lost))));
}

function seatRow(state, ctx, seat, startingChips) {
  const size = state.hand_sizes[seat];
  const acting = state.turn === seat;
  const reserve = state.reserves[seat];
  // Everyone saw a reserve card go in face up, and where; positions move with the hand.
  const known = state.known[seat].flatMap((value, at) => (value === null ? [] : [`card ${at + 1} is ${cardLabel(value)}`]));
  let status = null;
  if (state.losers.includes(seat)) status = h("span", { class: "badge lost" }, "lost the game");
  else if (acting) status = h("span", { class: "badge turn" }, "▶ to play");
  else if (!size && state.hand_number) status = h("span", { class: "badge safe" }, "out of cards: safe this hand");
  return h("li", { class: ["seat", acting && "acting", seat === ctx.seat && "you"].filter(Boolean).join(" ") },
    h("div", { class: "seat-head" },
      seatTag(ctx, seat), chips(state.chips[seat], startingChips), status),
    h("div", { class: "row" },
      back({ label: `${plural(size, "card")} in hand`, count: size }),
      seat === ctx.seat
        ? h("span", { class: "hint" }, reserve.length ? `reserve: ${plural(reserve.length, "card")}, shown above` : "no reserve")
        : h("span", { class: "reserve", role: "group", "aria-label": `reserve, ${plural(reserve.length, "card")}` },
          h("span", { class: "hint", "aria-hidden": "true" }, reserve.length ? "reserve" : "no reserve"),
          reserve.map((value) => kkCard(value, { small: true, label: `reserve ${cardLabel(value)}` })))),
    seat !== ctx.seat && known.length
      ? h("p", { class: "hint" }, `Known in hand (taken from reserve): ${known.join(", ")}`)
      : null);
}

function gap(hand, at) {
  const label = `Insert here: as ${place(hand, at)}`;
  return h("button", { type: "button", class: "gap", "aria-label": label, title: label, dataset: { pick: `gap:${at}` }, disabled: true },
    h("span", { "aria-hidden": "true" }, "+"));
}

/** The viewer's hand in its fixed order; with the gaps a card can go into when one may. */
function handRow(hand, withGaps) {
  const cards = hand.map((value, index) => kkCard(value, {
    pick: `hand:${index}`,
    label: `card ${index + 1}: ${cardLabel(value)}`,
    extra: h("span", { class: "pos", "aria-hidden": "true" }, index + 1),
  }));
  if (!withGaps) return cards;
  return [...cards.flatMap((node, index) => [gap(hand, index), node]), gap(hand, hand.length)];
}

function ownZones(state, ctx) {
  const hand = state.hand;
  const myTurn = state.turn === ctx.seat;
  const reserve = state.reserves[ctx.seat];
  const inserting = myTurn && (state.phase === "insert" || (state.phase === "follow" && reserve.length > 0));
  const drawn = state.drawn === undefined ? null : h("div", { class: "drawn" }, zone("You drew",
    kkCard(state.drawn, { label: `drawn card: ${cardLabel(state.drawn)}` }),
    h("span", { class: "hint" }, `It goes into your hand at a + of your choice.${state.draws_left > 1 ? ` ${plural(state.draws_left - 1, "more card")} to draw after it.` : ""}`)));
  return [
    drawn,
    zone("Your hand (fixed order: a play takes neighbouring cards)",
      hand.length || inserting ? handRow(hand, inserting) : h("span", { class: "empty" }, "No cards left: you are safe this hand.")),
    inserting ? h("p", { class: "hint gap-legend" }, state.phase === "insert"
      ? "Each + is a gap in your hand (before the first card, between two, after the last): click one to put the drawn card there. Where it goes decides which cards become neighbours."
      : "Each + is a gap in your hand (before the first card, between two, after the last). Passing takes a reserve card into your hand: click a reserve card, then the + where it should go.") : null,
    zone("Your reserve (pass: take one into your hand)",
      reserve.length ? reserve.map((value) => kkCard(value, { pick: `reserve:${value}`, label: `reserve ${cardLabel(value)}` }))
        : h("span", { class: "empty" }, "none left: no passing, only beating")),
  ];
}

function outZone(state) {
  const out = state.out;
  return h("details", { class: "out" },
    h("summary", {}, `Played in earlier tricks of this hand: ${plural(out.length, "card")}`),
    h("div", { class: "row" }, out.map((value) => kkCard(value, { small: true }))));
}

export const krasskariert = {
  render(state, ctx) {
    const startingChips = state.hand_sizes.length === 5 ? 2 : 3;
    return h("div", { class: "game krasskariert" },
      h("p", { class: "headline" }, headline(state, ctx)),
      trickZone(state, ctx),
      // The viewer's own cards sit right under the trick: on a phone the other seats come after.
      state.hand ? ownZones(state, ctx) : null,
      h("ol", { class: "kk-seats", "aria-label": "Players: chips, hands and reserves" },
        state.hand_sizes.map((_, seat) => seatRow(state, ctx, seat, startingChips))),
      zone("Draw pile", back({ label: `draw pile, ${plural(state.draw_pile, "card")}`, count: state.draw_pile }),
        h("span", { class: "hint" }, plural(state.draw_pile, "card"))),
      outZone(state));
  },

  hint(moves, state) {
    const types = new Set(moves.map((move) => move.type));
    if (types.has("insert")) return "Your move: click a + in your hand to put the drawn card there.";
    const beat = state.to_beat ? ` to beat the ${combination(state.to_beat.kind, state.to_beat.rank)}` : "";
    const ways = [
      types.has("play") || types.has("stop") || types.has("draw") ? `click cards side by side in your hand to play them${beat}` : null,
      types.has("pass") ? "pass: click a reserve card, then a + in your hand where it goes" : null,
    ].filter(Boolean);
    return ways.length ? `Your move: ${ways.join(", or ")}.` : null;
  },

  move(move, state) {
    const hand = state.hand || [];
    switch (move.type) {
      case "play": {
        const picks = Array.from({ length: move.count }, (_, index) => `hand:${move.at + index}`);
        const cards = hand.slice(move.at, move.at + move.count);
        const label = move.count === 1 && cards[0] === "X" ? `Play X as ${move.rank}`
          : `Play ${combination(move.kind, move.rank)}${jokerNote(cards, move.kind, move.rank)}`;
        return { picks, label };
      }
      case "stop": return { picks: [`hand:${move.at}`], label: "Play STOP: win the trick at once" };
      case "draw": return { picks: [`hand:${move.at}`], label: "Play DRAW: no need to beat" };
      case "pass": return { picks: [`reserve:${move.card}`, `gap:${move.at}`], label: `Pass: take reserve ${cardLabel(move.card)} in as ${place(hand, move.at)}` };
      case "insert": return { picks: [`gap:${move.at}`], label: `Insert the drawn ${cardLabel(state.drawn)} as ${place(hand, move.at)}` };
    }
  },

  scores(state) {
    return state.chips;
  },

  describe(event, ctx) {
    const data = event.data;
    const who = seatName(ctx, data.seat);
    switch (event.type) {
      case "HandStarted": return `Hand ${data.hand} dealt: ${seatName(ctx, data.leader)} leads`;
      case "CardsPlayed": return `${who} played ${combination(data.kind, data.rank)}${data.cards.length > 1 || data.cards[0] === "X" ? ` (${data.cards.join(", ")})` : ""}`
        + (data.at === undefined ? "" : ` from card ${data.at + 1}`);
      case "ReserveTaken": return `${who} passed and took reserve ${cardLabel(data.card)} into the hand`
        + (data.at === undefined ? "" : ` as card ${data.at + 1}`);
      case "TrickWon": {
        const how = { stop: " with a STOP card", highest: "", lead: " as its leader (only DRAW cards were played)" }[data.reason] ?? "";
        return `${who} won the trick${how}${data.draws ? ` and draws ${plural(data.draws, "card")}` : ""}`;
      }
      case "CardDrawn": return data.card === undefined ? null : `${who} drew ${cardLabel(data.card)}`;
      case "CardInserted": return data.card === undefined
        ? `${who} inserted a drawn card as card ${data.at + 1}` : `${who} inserted ${cardLabel(data.card)} as card ${data.at + 1}`;
      case "TrickStarted": return `${seatName(ctx, data.leader)} leads the next trick`;
      case "HandLost": {
        const seats = data.seats.map((seat) => seatName(ctx, seat)).join(" and ");
        const why = data.reason === "cannot-beat" ? "can neither beat nor take a reserve card" : "held cards last";
        return `${seats} ${why} and ${data.seats.length > 1 ? "give" : "gives"} up a chip`;
      }
      default: return null;
    }
  },
};
