// Krumme10: double-sided cards into one display, aiming for exactly 10 (15 once a 4 lands).
// Every card's up face is public and nobody knows a down face until play turns it up, so every
// seat sees every player's cards; for a seated viewer each of them is a pick (play one's own,
// steal another's after a 1). A card shows its other side only where the view gives it.

import { card, seatName, zone } from "../cards.js";
import { h, plural } from "../dom.js";

const TEAM_LETTERS = ["A", "B", "C"];
const ARROWS = { clockwise: "↻", counterclockwise: "↺" };
const OTHER_WAY = { clockwise: "counterclockwise", counterclockwise: "clockwise" };

/** A face in words: a 4's colour matters (a pink 4 turns play and pays the jackpot). */
function faceName(face, pink) {
  if (face !== 4) return String(face);
  return pink ? "pink 4" : "blue 4";
}

/** What an unseen other side can be: one more or one less, with 0 and 5 sharing a card. */
function unknownSide(face) {
  const [low, high] = face === 0 ? [1, 5] : face === 5 ? [0, 4] : [face - 1, face + 1];
  return `${low} or ${high}`;
}

/**
 * One Krumme10 card, its up face only. `shown.back` (the other side) exists only once the view
 * reveals it, i.e. on a card that was flipped.
 */
function faceCard(shown, { pick, small = false, story = "" } = {}) {
  const name = faceName(shown.face, shown.pink);
  const back = shown.back ? faceName(shown.back.face, shown.back.pink) : null;
  const label = `${name}${story}, ${back ? `other side ${back}` : "back side unknown"}`;
  const extra = [
    shown.face === 4 ? h("span", { class: "k10-colour", "aria-hidden": "true" }, shown.pink ? "pink" : "blue") : null,
    back ? h("span", { class: `k10-other${shown.back.pink ? " pink" : ""}`, "aria-hidden": "true" }, `⟲${shown.back.face}`) : null,
  ];
  const tone = shown.face === 4 ? (shown.pink ? "pink" : "blue") : undefined;
  return card({ text: shown.face, label, pick, tone, small, extra });
}

/** The seat whose decision the game waits for, if any. */
function actingSeat(state) {
  if (state.phase === "foul") return state.foul?.scorers[0] ?? null;
  return ["play", "direction", "choice"].includes(state.phase) ? state.turn : null;
}

function lastPlaced(state) {
  return state.display[state.display.length - 1];
}

function onTarget(state) {
  return state.phase === "choice" && state.total === state.target;
}

/** The pink 4s that pay out with the last card when 15 is hit exactly. */
function jackpotPoints(state) {
  if (state.target !== 15) return 0;
  return 4 * state.display.slice(0, -1).filter((placed) => placed.face === 4 && placed.pink).length;
}

/** "your" for the viewer, else "Name's". */
function whose(ctx, seat) {
  return seat === ctx.seat ? "your" : `${seatName(ctx, seat)}'s`;
}

function capitalised(text) {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * A card in front of a player, by id. The frame may pair the moves with a state a step older,
 * so a card can be missing: then it is only "a card".
 */
function heldCard(state, id) {
  for (const [seat, hand] of state.hands.entries()) {
    const held = hand.find((shown) => shown.id === id);
    if (held) return { seat, face: held.face, name: faceName(held.face, held.pink), other: unknownSide(held.face) };
  }
  return { seat: null, face: null, name: "a card", other: "other side unknown" };
}

function phaseText(state, ctx) {
  const who = seatName(ctx, state.turn);
  switch (state.phase) {
    case "setup": return "Dealing the cards…";
    case "play": return `${who} plays one card, face up or flipped.`;
    case "direction": {
      const foul = state.total > state.target ? ` Then the display is over ${state.target}: a foul.` : "";
      return `A pink 4 landed: ${who} may reverse the direction of play.${foul}`;
    }
    case "choice": {
      const steal = lastPlaced(state)?.face === 1;
      if (state.total !== state.target) return `A 1 landed: ${who} may steal another player's card and play it flipped.`;
      return `Exactly ${state.target}! ${who} scores the last card${steal ? " or steals with the 1 and gambles" : ""}.`;
    }
    case "foul": {
      const over = state.foul?.any_card ? 15 : 10;
      const scorer = actingSeat(state);
      const [name, their] = scorer === ctx.seat ? ["You", "your"] : [seatName(ctx, scorer), "their"];
      const cards = state.foul?.any_card ? `any one of ${their} cards` : `${their} lowest card`;
      return `Foul: ${who} went over ${over}! ${name} may score ${cards} as foul points, or pass.`;
    }
    // Only between the events of one move, so only the replay shows these two.
    case "fouled": return `${who} went over ${state.target}: a foul.`;
    case "drawing": return "Everyone draws back to three cards.";
    case "over": return "Game over.";
    default: return null;
  }
}

/** How the viewer whose turn it is makes the move, in a few words. */
function hintText(state) {
  switch (state.phase) {
    case "play": return "Your move: click one of your cards, then choose face up or flipped.";
    case "direction": return "Your move: choose a direction below.";
    case "choice": {
      const steal = lastPlaced(state)?.face === 1 ? "click another player's card to steal it" : null;
      if (state.total !== state.target) return "Your move: click another player's card to steal it, or don't steal.";
      return `Your move: click the last card in the display to score it${steal ? `, or ${steal}` : ""}.`;
    }
    case "foul": return "Your move: click a card to score it, or pass.";
    default: return null;
  }
}

function headline(state) {
  const raised = state.target === 15 ? h("span", { class: "k10-chip" }, "raised by a 4") : null;
  const pinks = state.display.filter((placed) => placed.face === 4 && placed.pink).length;
  const jackpot = state.target === 15 && pinks
    ? h("span", { class: "k10-chip jackpot" }, `jackpot ${4 * pinks} at exactly 15`) : null;
  return h("div", { class: "k10-total" },
    h("p", { class: "headline" },
      h("span", { class: "visually-hidden" }, `Display total ${state.total}, target ${state.target}`),
      h("span", { class: "k10-sum", "aria-hidden": "true" }, `Σ ${state.total}`),
      h("span", { class: "k10-target", "aria-hidden": "true" }, ` / ${state.target}`)),
    raised, jackpot);
}

function displayZone(state, ctx) {
  const scorable = ctx.seat !== null && ctx.seat === state.turn && onTarget(state);
  const cards = state.display.map((placed, index) => {
    const last = index === state.display.length - 1;
    const by = placed.stolen_from === null
      ? `, played by ${seatName(ctx, placed.seat)}`
      : `, stolen from ${seatName(ctx, placed.stolen_from)} by ${seatName(ctx, placed.seat)}`;
    const story = `${placed.flipped ? ", flipped" : ""}${by}${last ? ", last card" : ""}`;
    return faceCard(placed, { pick: last && scorable ? `display:${placed.id}` : undefined, story });
  });
  return zone("Display", cards.length ? cards : h("span", { class: "empty" }, "empty"));
}

function pilesRow(state) {
  const top = state.discarded[state.discarded.length - 1];
  return h("div", { class: "row k10-piles" },
    h("span", { class: "k10-pile", role: "img", "aria-label": `draw pile, ${plural(state.draw_pile, "card")}` },
      h("span", { "aria-hidden": "true" }, `Draw ${state.draw_pile}`)),
    // A pile of double-sided cards shows its top card's up face to everyone.
    state.draw_top ? [" on top:", faceCard(state.draw_top, { small: true, story: ", top of the draw pile, drawn next" })] : null,
    h("span", { class: "k10-discards" }, `Discard pile: ${plural(state.discard_pile, "card")}`,
      top ? [", on top:", faceCard(top, { small: true, story: ", top of the discard pile" })] : null));
}

function directionNote(state) {
  return h("p", { class: "k10-direction" },
    h("span", { class: "k10-arrow", "aria-hidden": "true" }, ARROWS[state.direction] || ""), ` Play goes ${state.direction}`);
}

function variantNote(state) {
  if (state.variant === "too_short") {
    return h("p", { class: "k10-variant" }, state.refilled
      ? "Too short? The discard pile was reshuffled: the game ends when the draw pile runs out again."
      : "Too short? When the draw pile runs out, the discard pile is reshuffled once.");
  }
  if (state.variant === "showdown") {
    return h("p", { class: "k10-variant" }, "Showdown: when the draw pile runs out, play on without drawing until all cards are gone.");
  }
  return null;
}

/** Each team's members and its score: the members' points divided by the team's size. */
function teamList(state, ctx) {
  if (!state.teams) return null;
  const members = TEAM_LETTERS.map((_, team) => state.teams.flatMap((of, seat) => (of === team ? [seat] : [])))
    .filter((seats) => seats.length);
  return h("ul", { class: "k10-teams", "aria-label": "Teams" }, members.map((seats) => {
    const points = seats.reduce((sum, seat) => sum + state.scores[seat], 0);
    const score = Math.round((points / seats.length) * 100) / 100;
    return h("li", { class: `k10-team k10-team-${state.teams[seats[0]]}` },
      h("strong", {}, `Team ${TEAM_LETTERS[state.teams[seats[0]]]}`), ` (${seats.map((seat) => seatName(ctx, seat)).join(", ")}): `,
      seats.length > 1 ? `${points} ÷ ${seats.length} = ${score}` : String(score));
  }));
}

function seatPanel(state, ctx, seat) {
  const acting = actingSeat(state) === seat;
  const waiting = state.phase === "foul" && !acting && state.foul?.scorers.includes(seat);
  const team = state.teams ? h("span", { class: `k10-badge k10-team-${state.teams[seat]}` }, `Team ${TEAM_LETTERS[state.teams[seat]]}`) : null;
  const hand = state.hands[seat] || [];
  const won = state.won[seat] || [];
  const classes = ["k10-seat", `k10-seat-${seat}`, acting && "acting", seat === ctx.seat && "you"].filter(Boolean).join(" ");
  return h("section", { class: classes, "aria-label": `${seatName(ctx, seat)}${acting ? ", to move" : ""}` },
    h("h3", {},
      acting ? h("span", { class: "k10-turn" }, "▶ to move") : null,
      waiting ? h("span", { class: "k10-wait" }, "may score next") : null,
      h("span", { class: "k10-name" }, seatName(ctx, seat)), team,
      h("span", { class: "k10-score" }, plural(state.scores[seat], "point"))),
    h("div", { class: "k10-cards" },
      h("div", { class: "row", role: "group", "aria-label": `${capitalised(whose(ctx, seat))} cards` },
        hand.length
          ? hand.map((held) => faceCard(held, { pick: ctx.seat === null ? undefined : `card:${held.id}`, small: seat !== ctx.seat }))
          : h("span", { class: "empty" }, "no cards")),
      won.length ? h("div", { class: "row k10-won", role: "group", "aria-label": `${capitalised(whose(ctx, seat))} scored cards` },
        h("span", { class: "k10-won-title" }, "Scored:"), won.map((shown) => faceCard(shown, { small: true, story: ", scored" }))) : null));
}

/** The seats in turn order, the viewer's own first so their cards are near the top on a phone. */
function seatOrder(state, ctx) {
  const count = state.hands.length;
  const first = ctx.seat ?? 0;
  const step = state.direction === "counterclockwise" ? -1 : 1;
  return Array.from({ length: count }, (_, index) => (first + step * index + count) % count);
}

export const krumme10 = {
  render(state, ctx) {
    return h("div", { class: "game krumme10" },
      h("div", { class: "k10-table" },
        headline(state),
        h("p", { class: `k10-phase phase-${state.phase}` }, phaseText(state, ctx)),
        displayZone(state, ctx),
        pilesRow(state),
        directionNote(state),
        variantNote(state),
        h("p", { class: "k10-legend" }, "⟲n: the other side of a card that was flipped. No one knows the other sides of the rest.")),
      teamList(state, ctx),
      h("div", { class: "k10-seats" }, seatOrder(state, ctx).map((seat) => seatPanel(state, ctx, seat))));
  },

  hint(moves, state) {
    return hintText(state);
  },

  move(move, state, ctx) {
    const held = heldCard(state, move.card);
    switch (move.type) {
      case "play": return {
        picks: [`card:${move.card}`],
        label: move.flip ? `Play ${held.name} flipped (${held.other})` : `Play ${held.name} face up${outcome(state, held.face)}`,
      };
      case "steal": return {
        picks: [`card:${move.card}`],
        label: `Steal ${held.seat === null ? "a card" : `${whose(ctx, held.seat)} ${held.name}`}: it lands flipped (${held.other})`,
      };
      case "foul_score": return {
        picks: [`card:${move.card}`],
        label: move.flip ? `Score ${held.name} flipped (${held.other})` : `Score ${held.name} as foul points`,
      };
      case "score": return scoreMove(move, state);
      case "direction": return {
        picks: [],
        label: move.reverse ? `Reverse: play goes ${OTHER_WAY[state.direction]}` : `Keep playing ${state.direction}`,
      };
      default: return { picks: [], label: state.phase === "foul" ? "Pass: no foul points" : "Don't steal" };
    }
  },

  scores(state) {
    return state.scores;
  },

  describe(event, ctx) {
    const data = event.data;
    const who = seatName(ctx, data.seat);
    const display = () => `display ${data.total} of ${data.target}`;
    switch (event.type) {
      case "CardsDealt": return `${who} was dealt ${data.cards.map((dealt) => faceName(dealt.face, dealt.pink)).join(", ")}`;
      case "FirstSeatChosen": return `${who} starts`;
      case "CardPlayed": return `${who} played ${faceName(data.face, data.pink)}${data.flip ? " (flipped)" : ""}: ${display()}`;
      case "CardStolen": return `${who} stole ${whose(ctx, data.from)} card, flipped it to ${faceName(data.face, data.pink)}: ${display()}`;
      case "DirectionChosen": return data.reverse
        ? `${who} reversed: play goes ${data.direction === 1 ? "clockwise" : "counterclockwise"}` : `${who} kept the direction`;
      case "StealDeclined": return `${who} did not steal`;
      case "TargetHit": return `${who} hit the target and scored ${plural(data.points, "point")}${data.flip ? " (flipped)" : ""}`
        + `${data.jackpot.length ? ` plus a jackpot of ${data.jackpot_points}${jackpotFlips(data.jackpot)}` : ""}`;
      case "Fouled": return `${who} went over: ${data.total} of ${data.target}, a foul`;
      case "FoulScored": return `${who} scored ${plural(data.points, "foul point")}${data.flip ? " (flipped)" : ""}`;
      case "FoulPassed": return `${who} took no foul points`;
      case "CardDrawn": return `${who} drew ${faceName(data.card.face, data.card.pink)}`;
      case "TopCardShown": return `The draw pile now shows ${faceName(data.card.face, data.card.pink)} on top`;
      case "DiscardReshuffled": return `The discard pile (${plural(data.cards, "card")}) became the new draw pile`;
      case "GameEnded": return data.reason === "cards-gone" ? "All cards are played: game over" : "The draw pile is empty: game over";
      default: return null;
    }
  },
};

/** What playing `face` face up does to the display: the new total, and exact or foul. */
function outcome(state, face) {
  if (face === null) return "";
  const target = face === 4 ? 15 : state.target;
  const total = state.total + face;
  const verdict = total === target ? ", exactly!" : total > target ? ", a foul" : "";
  return ` → ${total} of ${target}${verdict}`;
}

/** How many jackpot pink 4s were flipped as they were scored, in words. */
function jackpotFlips(jackpot) {
  const flipped = jackpot.filter((pink) => pink.flip);
  return flipped.length ? ` (${flipped.map((pink) => faceName(pink.face, pink.pink)).join(", ")} flipped)` : "";
}

/** Scoring the last card: a click on it, then face up or flipped (with the jackpot at 15). */
function scoreMove(move, state) {
  const last = lastPlaced(state);
  const flips = move.flip_jackpot.length;
  const pinks = flips ? `, ${plural(flips, "jackpot pink 4")} flipped` : "";
  // A state a step behind the moves may not have the card yet: then plain buttons.
  if (!last) return { picks: [], label: `${move.flip ? "Score the last card flipped" : "Score the last card"}${pinks}` };
  const jackpot = jackpotPoints(state);
  const bonus = jackpot ? ` + jackpot ${jackpot}${pinks}` : "";
  const picks = [`display:${last.id}`];
  const name = faceName(last.face, last.pink);
  if (!move.flip) return { picks, label: `Score ${name} face up${bonus}` };
  const flipped = last.back ? `to ${faceName(last.back.face, last.back.pink)}` : `(${unknownSide(last.face)})`;
  return { picks, label: `Score ${name} flipped ${flipped}${bonus}` };
}
