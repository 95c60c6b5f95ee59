// Roll'n Bump: roll five dice up to three times, lay them on face-up cards whose pattern they
// show, bump weaker claims; cards still under your dice at your next turn are yours.
//
// Picks: "die:i" is the i-th of the unplaced dice of the seat to move (the view keeps them
// sorted), "white" the white die its holder has rolled, "stack:k" a stack's face-up card,
// "spot" the white-die spot and "joker" the joker. Dice of one value are interchangeable, so a
// move names the first unused die of each value it needs.

import { card, die, seatName, zone } from "../cards.js";
import { h, plural } from "../dom.js";

const COLOURS = ["red", "yellow", "blue", "black"];
const PIPS = ["⚀", "⚁", "⚂", "⚃", "⚄", "⚅"];
const DEFAULT_POINTS = { single: 1, pair: 2, triple: 4, quad: 8, "run-3": 2, "run-4": 4, "run-5": 6, joker: 15 };
const SAME = { pair: 2, triple: 3, quad: 4 };
const NUMBER_WORDS = ["no", "one", "two", "three", "four", "five", "six"];

/** What a card kind asks for: its face, a short name, the words a screen reader says. */
function kindInfo(kind) {
  if (kind.startsWith("single-")) {
    const value = Number(kind.slice(7));
    return { face: PIPS[value - 1], sub: `${value}s`, name: `single ${value}`, points: "single",
      rule: `one or more dice showing ${value}` };
  }
  if (kind in SAME) {
    return { face: `${SAME[kind]}×`, sub: "same", name: kind, points: kind,
      rule: `${NUMBER_WORDS[SAME[kind]]} dice of one number` };
  }
  const length = Number(kind.slice(4));
  return { face: `${length}↗`, sub: "run", name: `run of ${length}`, points: kind,
    rule: `${NUMBER_WORDS[length]} dice in a row` };
}

/** "yellow-run-4" -> {colour: "yellow", kind: "run-4"} */
function splitCard(id) {
  const dash = id.indexOf("-");
  return { colour: id.slice(0, dash), kind: id.slice(dash + 1) };
}

function cardName(id) {
  const { colour, kind } = splitCard(id);
  return `${colour} ${kindInfo(kind).name}`;
}

/** Points per kind from the table's `card_points` option; kinds it leaves out keep the default. */
function cardPoints(ctx) {
  const points = { ...DEFAULT_POINTS };
  for (const item of String(ctx.table?.options?.card_points ?? "").split(",")) {
    const [kind, value] = item.split("=").map((part) => part.trim());
    if (kind in points && /^\d+$/.test(value ?? "")) points[kind] = Number(value);
  }
  return points;
}

function pointsOf(id, points) {
  return points[kindInfo(splitCard(id).kind).points];
}

function setBonus(count) {
  return count >= 2 ? (count * (count + 1)) / 2 : 0;
}

function diceText(values) {
  return values.join(" ");
}

/** Indices into the sorted `dice` for the values a move uses: the first unused die of each. */
function diceIndices(dice, values) {
  const used = new Set();
  return values.map((value) => {
    const index = dice.findIndex((face, i) => face === value && !used.has(i));
    used.add(index);
    return index;
  });
}

function dicePicks(dice, values) {
  return diceIndices(dice, values).map((index) => `die:${index}`);
}

/** The name alone, for narrow places; no "(you)". */
function shortName(ctx, seat) {
  return ctx.names[seat] || `Seat ${seat + 1}`;
}

/** A name under a tile, in the seat's colour; cut short there, whole on hover. */
function ownerName(ctx, seat) {
  const name = shortName(ctx, seat);
  return h("span", { class: `owner seat-text-${seat % 6}`, title: name }, name);
}

/** "your" or "Ann's", so that labels never say "Ann (you)'s". */
function whose(ctx, seat) {
  return seat === ctx.seat ? "your" : `${seatName(ctx, seat)}'s`;
}

/** A seat's die; its colour is the seat's, as in the seat list and the score chart. */
function seatDie(ctx, seat, value, pick) {
  const label = value === null ? `${whose(ctx, seat)} die, not rolled yet` : `${whose(ctx, seat)} die showing ${value}`;
  return die({ value, label, pick, tone: `seat-${seat % 6}` });
}

function whiteDie(value, label, pick) {
  return die({ value, label, pick, tone: "white" });
}

function claimWords(ctx, claim) {
  return `${whose(ctx, claim.seat)} dice ${diceText(claim.dice)} lie on it`;
}

/** The dice on a card or the spot, drawn small; the card's own label already says them. */
function claimRow(ctx, claim) {
  if (!claim) return h("div", { class: "claim empty", "aria-hidden": "true" }, "free");
  return h("div", { class: "claim", "aria-hidden": "true" },
    ownerName(ctx, claim.seat),
    h("span", { class: "claim-dice" }, claim.dice.map((value) => seatDie(ctx, claim.seat, value))));
}

function faceCard(id, points, { pick, label, small = false } = {}) {
  const { colour, kind } = splitCard(id);
  const info = kindInfo(kind);
  const worth = points[info.points];
  return card({
    text: [h("span", { class: "face" }, info.face), h("span", { class: "sub" }, info.sub)],
    label: label || `${colour} ${info.name}, ${plural(worth, "point")}`,
    pick,
    small,
    tone: colour,
    extra: h("span", { class: "points", "aria-hidden": "true" }, worth),
  });
}

function stackTile(state, ctx, index, mine, points) {
  const stack = state.stacks[index];
  const title = `Stack ${index + 1}`;
  const under = `${plural(stack.face_down, "card")} face down`;
  if (!stack.card) {
    return h("li", { class: "stack empty-stack" }, h("span", { class: "stack-name", "aria-hidden": "true" }, title),
      h("span", { class: "card gone", role: "img", "aria-label": `${title}: empty` }, h("span", { "aria-hidden": "true" }, "empty")));
  }
  const info = kindInfo(splitCard(stack.card).kind);
  const label = `${title}: ${cardName(stack.card)} (${info.rule}), ${plural(pointsOf(stack.card, points), "point")}; `
    + `${stack.claim ? claimWords(ctx, stack.claim) : "no dice on it"}; ${under}`;
  return h("li", { class: `stack${stack.claim ? ` claimed seat-line-${stack.claim.seat % 6}` : ""}` },
    h("span", { class: "stack-name", "aria-hidden": "true" }, title,
      h("span", { class: "under", title: under }, ` +${stack.face_down}`)),
    faceCard(stack.card, points, { pick: mine ? `stack:${index}` : undefined, label }),
    claimRow(ctx, stack.claim));
}

function whiteSpotTile(state, ctx, mine) {
  const holder = state.white_die.holder;
  if (holder !== null) {
    return h("li", { class: "stack spot" }, h("span", { class: "stack-name", "aria-hidden": "true" }, "White die"),
      h("span", { class: "card spot-card", role: "img", "aria-label": `White-die spot: empty, ${seatName(ctx, holder)} holds the white die` },
        h("span", { class: "face", "aria-hidden": "true" }, "○"), h("span", { class: "sub", "aria-hidden": "true" }, "held")),
      h("div", { class: "claim", "aria-hidden": "true" }, "held by", ownerName(ctx, holder)));
  }
  const spot = state.white_spot;
  const label = `White-die spot: the white die lies here; place dice of any values, the highest sum wins it; ${spot ? claimWords(ctx, spot) : "no dice on it"}`;
  const face = [h("span", { class: "face" }, "◻"), h("span", { class: "sub" }, "sum")];
  const tile = mine
    ? h("button", { type: "button", class: "card spot-card", "aria-label": label, title: label, dataset: { pick: "spot" }, disabled: true },
      h("span", { "aria-hidden": "true" }, face))
    : h("span", { class: "card spot-card", role: "img", "aria-label": label, title: label }, h("span", { "aria-hidden": "true" }, face));
  return h("li", { class: `stack spot${spot ? ` claimed seat-line-${spot.seat % 6}` : ""}` },
    h("span", { class: "stack-name", "aria-hidden": "true" }, "White die"), tile, claimRow(ctx, spot));
}

function jokerTile(state, ctx, mine, points) {
  const { holder, colour } = state.joker;
  const taken = holder !== null;
  const label = taken
    ? `Joker: taken by ${seatName(ctx, holder)}, counts as ${colour}`
    : `Joker, ${plural(points.joker, "point")}: five dice of one number take it at once`;
  const face = [h("span", { class: "face" }, "★"), h("span", { class: "sub" }, taken ? colour : "5 same")];
  const tile = card({ text: face, label, pick: mine && !taken ? "joker" : undefined, tone: taken ? colour : "joker",
    extra: h("span", { class: "points", "aria-hidden": "true" }, points.joker) });
  return h("li", { class: `stack joker${taken ? " taken" : ""}` },
    h("span", { class: "stack-name", "aria-hidden": "true" }, "Joker"), tile,
    taken ? h("div", { class: "claim", "aria-hidden": "true" }, "taken by", ownerName(ctx, holder))
      : h("div", { class: "claim empty", "aria-hidden": "true" }, "free"));
}

/** The seat to move: its unplaced dice (rolled, or still to roll) and the white die if it holds it. */
function diceZone(state, ctx, mine) {
  const seat = state.turn;
  const holdsWhite = state.white_die.holder === seat;
  const rolled = state.rolls > 0;
  const dice = rolled
    ? state.dice.map((value, index) => rolledDie(ctx, seat, value, mine ? `die:${index}` : undefined))
    : Array.from({ length: state.dice_count }, () => seatDie(ctx, seat, null));
  const white = holdsWhite
    ? whiteDie(state.white_die.value, state.white_die.value === null ? "the white die, not rolled yet" : `the white die showing ${state.white_die.value}`,
      mine && state.white_die.value !== null ? "white" : undefined)
    : null;
  const title = mine ? "Your dice" : `${seatName(ctx, seat)}: dice`;
  const section = zone(title, dice.length ? dice : h("span", { class: "empty" }, "all placed"),
    white ? h("span", { class: "white-slot" }, white, h("span", { class: "hint" }, "white")) : null);
  if (mine) equalDiceInOrder(section);
  return section;
}

function rolledDie(ctx, seat, value, pick) {
  const node = seatDie(ctx, seat, value, pick);
  node.dataset.face = value;
  return node;
}

const dieIndex = (node) => Number(node.dataset.pick.slice(4));
const isPicked = (node) => node.getAttribute("aria-pressed") === "true";

/**
 * Moves name the leftmost dice of each value (see diceIndices), yet a player may click any of
 * their equal dice: a click is handed on as one on the first unpicked die of that value (or,
 * taking one back, the last picked). The frame reads the key when the click reaches the board,
 * after this listener, so swapping the two equal dice's keys is all it takes.
 */
function equalDiceInOrder(section) {
  section.addEventListener("click", (event) => {
    const node = event.target.closest("[data-pick^='die:']");
    if (!node || node.disabled) return;
    const equal = [...section.querySelectorAll("[data-pick^='die:']")]
      .filter((other) => other.dataset.face === node.dataset.face)
      .sort((a, b) => dieIndex(a) - dieIndex(b));
    const stand = isPicked(node) ? equal.filter(isPicked).at(-1) : equal.find((other) => !isPicked(other));
    [node.dataset.pick, stand.dataset.pick] = [stand.dataset.pick, node.dataset.pick];
  });
}

function turnLine(state, ctx) {
  if (state.turn === null) {
    if (ctx.table?.result) return "Game over";
    return state.stacks.every((stack) => !stack.card) ? "Dealing the stacks" : "Between turns";
  }
  const who = state.turn === ctx.seat ? "Your turn" : `${shortName(ctx, state.turn)}'s turn`;
  if (state.step === "claim") return `${who}: claiming`;
  return state.rolls ? `${who}: roll ${state.rolls} of 3` : `${who}: ${plural(state.dice_count, "die", "dice")} to roll`;
}

/** How the seat whose turn it is makes its move, in a few words (the first roll: none). */
function hintText(state) {
  if (state.rolls === 0) return null;
  if (state.step === "roll" && state.rolls < 3) {
    return "Your move: click dice to keep and re-roll the rest, or click dice and a card (or the white-die spot) to claim it.";
  }
  return "Your move: click dice and a card (or the white-die spot) to claim it; end the turn when done.";
}

/** A seat's won cards by colour, with each colour's set bonus. */
function wonCards(state, seat, points) {
  const byColour = COLOURS.map((colour) => state.won[seat].filter((id) => splitCard(id).colour === colour));
  const joker = state.joker.holder === seat ? state.joker.colour : null;
  const groups = COLOURS.map((colour, index) => {
    const cards = byColour[index];
    const count = cards.length + (joker === colour ? 1 : 0);
    if (!count) return null;
    return h("div", { class: `set set-${colour}`, role: "group", "aria-label": `${colour}: ${plural(count, "card")}, set bonus ${setBonus(count)}` },
      cards.map((id) => faceCard(id, points, { small: true })),
      joker === colour ? card({ text: "★", label: `joker as ${colour}`, tone: colour, small: true }) : null,
      h("span", { class: "bonus", "aria-hidden": "true" }, `+${setBonus(count)}`));
  }).filter(Boolean);
  return groups.length ? groups : h("span", { class: "empty" }, "no cards");
}

function seatTally(state, ctx, seat, points) {
  const white = state.white_die;
  const whiteNote = white.holder !== seat ? null
    : ctx.table?.result && white.value !== null ? ` · white die rolled ${white.value}` : " · holds the white die";
  return h("li", { class: `tally${seat === state.turn ? " turn" : ""}` },
    h("p", { class: "tally-head" },
      h("span", { class: `swatch seat-${seat % 6}`, "aria-hidden": "true" }),
      h("strong", {}, seatName(ctx, seat)), seat === state.turn ? h("span", { class: "visually-hidden" }, ", to move") : null,
      ` · ${plural(state.scores[seat] ?? 0, "point")} · ${plural(state.won[seat].length, "card")}`, whiteNote),
    h("div", { class: "sets" }, wonCards(state, seat, points)));
}

export const rollnbump = {
  render(state, ctx) {
    const points = cardPoints(ctx);
    const mine = state.turn !== null && state.turn === ctx.seat;
    return h("div", { class: "game rollnbump" },
      h("p", { class: "headline" }, turnLine(state, ctx)),
      h("section", { class: "zone", "aria-label": "Cards won and scores" },
        h("h3", {}, "Cards won"),
        h("ul", { class: "tallies" }, state.won.map((_, seat) => seatTally(state, ctx, seat, points)))),
      h("section", { class: "zone", "aria-label": "Stacks" },
        h("h3", {}, `Stacks (+n: cards face down) · ${plural(state.unseen_cards, "card")} not seen yet`),
        h("ul", { class: "stacks" },
          state.stacks.map((_, index) => stackTile(state, ctx, index, mine, points)),
          whiteSpotTile(state, ctx, mine),
          jokerTile(state, ctx, mine, points))),
      // The dice come last: the frame puts the move buttons right under the board.
      state.turn !== null ? diceZone(state, ctx, mine) : null);
  },

  hint(moves, state) {
    return hintText(state);
  },

  move(move, state, ctx) {
    const dice = state.dice;
    switch (move.type) {
      case "roll": return rollMove(move, state);
      case "claim": {
        const stack = state.stacks[move.stack];
        return { picks: [...dicePicks(dice, move.dice), `stack:${move.stack}`],
          label: `Claim stack ${move.stack + 1} (${cardName(stack.card)}) with ${diceText(move.dice)}${bumped(ctx, stack.claim)}` };
      }
      case "claim_white_spot": {
        const sum = move.dice.reduce((total, value) => total + value, 0);
        return { picks: [...dicePicks(dice, move.dice), "spot"],
          label: `Claim the white die with ${diceText(move.dice)} (sum ${sum})${bumped(ctx, state.white_spot)}` };
      }
      case "claim_joker":
        return { picks: [...dicePicks(dice, move.dice), "joker"],
          label: `Take the joker with five ${move.dice[0]}s as a ${move.colour} card` };
      case "use_white_die":
        return { picks: ["white", ...dicePicks(dice, [move.die])],
          label: `White die: turn a ${move.die} into ${state.white_die.value}` };
      case "end_turn": return { picks: [], label: "End turn" };
      default: return { picks: [], label: JSON.stringify(move) };
    }
  },

  scores(state) {
    return state.scores;
  },

  describe(event, ctx) {
    const data = event.data;
    const who = seatName(ctx, data.seat);
    switch (event.type) {
      case "StacksDealt":
        return `${plural(data.tops.length, "stack")} dealt, ${plural(data.face_down, "card")} face down under each top card`;
      case "TurnStarted": return `${who} starts a turn with ${plural(data.dice, "die", "dice")}`;
      case "DiceRolled": {
        const kept = data.kept.length ? `, kept ${diceText(data.kept)}` : "";
        const white = data.white === null ? "" : `, white die ${data.white}`;
        return `${who} rolled ${diceText(data.rolled)}${kept}${white} (roll ${data.roll} of 3)`;
      }
      case "CardClaimed":
        return `${who} claimed stack ${data.stack + 1} (${cardName(data.card)}) with ${diceText(data.dice)}${bumped(ctx, data.bumped)}`;
      case "WhiteSpotClaimed": return `${who} claimed the white die with ${diceText(data.dice)}${bumped(ctx, data.bumped)}`;
      case "JokerTaken": return `${who} took the joker with ${diceText(data.dice)} as a ${data.colour} card`;
      case "WhiteDieUsed": return `${who} used the white die: a ${data.replaced} became a ${data.value}`;
      case "TurnEnded": return `${who} ended the turn`;
      case "Collected": {
        const things = data.cards.map((taken) => cardName(taken.card));
        if (data.white_die) things.push("the white die");
        return things.length ? `${who} took ${things.join(", ")}` : null;
      }
      case "CardRevealed": return `Stack ${data.stack + 1} turned up the ${cardName(data.card)}`;
      case "WhiteDieRolled": return `${who} rolled the white die for ${plural(data.value, "point")}`;
      case "GameEnded": return `Game over: ${data.empty_stacks.map((stack) => `stack ${stack + 1}`).join(" and ")} empty`;
      default: return null;
    }
  },
};

function bumped(ctx, bump) {
  return bump ? `, bumping ${seatName(ctx, bump.seat)} (${diceText(bump.dice)})` : "";
}

/** A roll keeps some dice (picked) and throws the rest; its label says both. */
function rollMove(move, state) {
  const picks = [...dicePicks(state.dice, move.keep), ...(move.keep_white ? ["white"] : [])];
  // Keeping nothing is also the turn's first roll, which the frame may label with the state of
  // the turn before (it reads the table and the moves one after the other): words from the
  // move alone stay true.
  if (!picks.length) return { picks, label: "Roll all dice" };
  const thrown = [...state.dice];
  for (const value of move.keep) thrown.splice(thrown.indexOf(value), 1);
  const throwsWhite = state.white_die.holder === state.turn && !move.keep_white;
  const throwing = [thrown.length ? diceText(thrown) : null, throwsWhite ? "the white die" : null].filter(Boolean).join(" and ");
  const keeping = [move.keep.length ? diceText(move.keep) : null, move.keep_white ? "the white die" : null].filter(Boolean).join(" and ");
  return { picks, label: `Re-roll ${throwing}, keep ${keeping}` };
}
