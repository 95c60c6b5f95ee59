// Wobble: shed your hand onto the discard pile by colour or symbol. Attacks, defences, Jerk
// cards and toss-ins let seats act out of turn, so the table shows every open window.

import { card, seatName, zone } from "../cards.js";
import { h, plural } from "../dom.js";

const COLOURS = ["magenta", "cyan", "yellow", "green"];
const OFFENSIVE = new Set(["skip", "+3", "+5", "minus20", "magnet", "afk"]);
const NAMES = {
  skip: "Skip", "+3": "+3", "+5": "+5", minus20: "Minus 20", magnet: "Magnet", afk: "AFK",
  reverse: "Change of direction", half_hand: "Half Hand", card_exchange: "Card Exchange",
  color_swap: "Color Swap", dodge: "Dodge", you: "You!", mirror: "Mirror", unlucky: "Who is unlucky",
  not_me: "Not Me", capture: "Capture", double: "Double",
};
// What a card face shows: a big sign and a small word under it (the label says it in full).
const FACES = {
  skip: ["⊘", "skip"], "+3": ["+3", "draw"], "+5": ["+5", "draw"], minus20: ["−20", "points"],
  magnet: ["∩", "magnet"], afk: ["☕", "AFK"], reverse: ["⟲", "reverse"], half_hand: ["½", "half hand"],
  card_exchange: ["⇄", "hands"], color_swap: ["◐", "swap"], dodge: ["↷", "Dodge"], you: ["☝", "You!"],
  mirror: ["⇋", "Mirror"], unlucky: ["?", "unlucky"], not_me: ["¬", "Not Me"], capture: ["⚑", "Capture"],
  double: ["×2", "Double"],
};

/** What a card code (`cyan:7`, `swap:cyan/yellow`, `grey:mirror`, `brown:not_me`) stands for. */
function parse(code) {
  const [head, symbol] = code.split(":");
  if (head === "swap") return { code, group: "swap", symbol: "color_swap", colours: symbol.split("/") };
  if (head === "grey" || head === "brown") return { code, group: head, symbol, colours: [] };
  const group = /^\d$/.test(symbol) ? "number" : OFFENSIVE.has(symbol) ? "offensive" : "neutral";
  return { code, group, symbol, colours: [head] };
}

function cardName(code) {
  const info = parse(code);
  if (info.group === "swap") return `Color Swap ${info.colours.join("/")}`;
  if (info.group === "grey") return `${NAMES[info.symbol]} (grey)`;
  if (info.group === "brown") return `${NAMES[info.symbol]} (brown Jerk)`;
  return `${info.colours[0]} ${NAMES[info.symbol] || info.symbol}`;
}

function cardNames(cards) {
  return cards.length === 2 ? `${cardName(cards[0])} ×2` : cardName(cards[0]);
}

function tone(info) {
  if (info.group === "swap") return `swap-${info.colours.join("-")}`;
  return info.colours[0] || info.group;
}

/** A Wobble card: coloured by its colour, an offensive one marked with a crosshair. */
function wobbleCard(code, props = {}) {
  const info = parse(code);
  const [sign, word] = FACES[info.symbol] || [info.symbol, null];
  const extra = [
    word ? h("small", { class: "caption", "aria-hidden": "true" }, word) : null,
    info.group === "offensive" ? h("span", { class: "crosshair", "aria-hidden": "true" }, "⊕") : null,
    props.extra,
  ];
  return card({ text: sign, tone: tone(info), ...props, label: props.label || cardLabel(code), extra });
}

/** What a screen reader says for a card: its name, and whether it attacks. */
function cardLabel(code) {
  return `${cardName(code)}${parse(code).group === "offensive" ? ", offensive" : ""}`;
}

function mod(value, size) {
  return ((value % size) + size) % size;
}

/** The other seats in the order play reaches them from `seat` going `direction`. */
function onwards(state, seat, direction = state.direction) {
  const ring = state.seating;
  const at = ring.indexOf(seat);
  return ring.slice(1).map((_, step) => ring[mod(at + (step + 1) * direction, ring.length)]);
}

/** The next seat after `seat` in `direction` that is not away (AFK), as the engine aims attacks. */
function nextTarget(state, seat, direction = state.direction) {
  const others = onwards(state, seat, direction);
  return others.find((other) => !state.away[other]) ?? others[0];
}

/** What the target of an attack of `amount` units of `symbol` must do when taking it. */
function effect(symbol, amount) {
  switch (symbol) {
    case "+3": case "+5": return `draw ${plural(amount, "card")}`;
    case "skip": return amount === 1 ? "lose a turn"
      : amount === 2 ? "lose a turn, as does the next player" : `lose a turn, as do the next ${amount - 1} players`;
    case "minus20": return `take ${amount} minus points`;
    case "magnet": return amount === 1 ? "name a number and take every card of it" : `name ${amount} numbers and take every card of them`;
    case "afk": return amount === 1 ? "sit out one turn of every other player" : `sit out ${amount} turns of every other player`;
  }
}

/** The seat the game waits for: the seat to move, the attack's target, or who owes a step. */
function mover(state) {
  if (state.phase === "attack") return state.attack?.target ?? null;
  if (state.phase === "resolve") return state.pending[0]?.seat ?? null;
  return state.turn;
}

function stepText(step, state, ctx) {
  const who = seatName(ctx, step.seat);
  if (step.kind === "name") return `${who} names ${state.named.length < 9 ? "a number" : "a colour"} for the Magnet`;
  if (step.kind === "task") return `${who} either draws or attempts the task`;
  return `${who} reports whether ${seatName(ctx, step.subject)} managed the task`;
}

function status(state, ctx) {
  const who = seatName(ctx, state.turn);
  switch (state.phase) {
    case "dealing": return "Dealing the cards";
    case "opening": return `${who} decides how the starting card acts`;
    case "turn": return `${who} to play`;
    case "drawn": return `${who} drew a card that fits and must play it`;
    case "attack": return `${seatName(ctx, mover(state))} must answer the attack`;
    case "resolve": return stepText(state.pending[0], state, ctx);
    case "over": return `Game over after ${plural(state.round + 1, "round")}`;
  }
}

function pill(text, kind) {
  return h("span", { class: `pill ${kind}` }, text);
}

/** A seat sitting out (AFK): whose turns it still waits for, in the order they come, or only
 * how many (rules version 2 tables, whose `waiting_for` is empty). */
function awayPill(state, seat, ctx) {
  const waits = state.waiting_for?.[seat] ?? [];
  const owed = onwards(state, seat).filter((other) => waits[other] > 0);
  if (!owed.length) return pill(`away for ${plural(state.away[seat], "turn")}`, "away");
  const turns = owed.map((other, index) => `${possessive(ctx, other)} ${index ? waits[other] : plural(waits[other], "turn")}`);
  return h("span", { class: "pill away waits" }, "away", h("span", { class: "whom" }, `: waits for ${turns.join(", ")}`));
}

/** A seat's name as an owner: "Ana's", or "your" for the viewer's own seat. */
function possessive(ctx, seat) {
  return seat === ctx.seat ? "your" : `${seatName(ctx, seat)}'s`;
}

/** The seats in their order round the table, with an arrow the way play goes. */
function seatRing(state, ctx) {
  const acting = mover(state);
  const arrow = state.direction === 1 ? "→" : "←";
  const items = state.seating.map((seat, index) => h("li", {
    class: ["seat", seat === acting && "acting", seat === ctx.seat && "you"].filter(Boolean).join(" "),
  },
  seat === acting ? pill(state.phase === "attack" ? "⊕ target" : "▶ to move", "turn") : null,
  h("span", { class: "who" }, seatName(ctx, seat)),
  h("span", { class: "hand-size" }, plural(state.hand_sizes[seat] ?? 0, "card")),
  h("span", { class: "minus" }, `${state.scores[seat]} minus pts`),
  seat === state.dealer ? pill("dealer", "dealer") : null,
  state.lost_turns[seat] ? pill(`skips ${plural(state.lost_turns[seat], "turn")}`, "lost") : null,
  state.away[seat] ? awayPill(state, seat, ctx) : null,
  index < state.seating.length - 1 ? h("span", { class: "arrow", "aria-hidden": "true" }, arrow) : null));
  const way = state.direction === 1 ? "clockwise" : "counter-clockwise";
  return h("section", { class: "zone", "aria-label": `Seats round the table, play goes ${way}` },
    h("h3", {}, `Seats, play goes ${way} ${state.direction === 1 ? "↻" : "↺"}`),
    h("ol", { class: "ring" }, items));
}

function drawPile(state, ctx) {
  const label = `draw pile, ${plural(state.draw_pile, "card")}`;
  const face = h("span", { "aria-hidden": "true" }, String(state.draw_pile));
  // Drawing is clicking the pile, so a seated viewer gets it as a button.
  if (ctx.seat === null) return h("span", { class: "card back", role: "img", "aria-label": label, title: label }, face);
  return h("button", { type: "button", class: "card back", "aria-label": `${label}: draw one`, title: label, dataset: { pick: "draw" }, disabled: true }, face);
}

function colourBadge(colour) {
  if (!colour) return h("span", { class: "colour-badge" }, "colour: not chosen yet");
  return h("span", { class: `colour-badge tone-${colour}` }, h("span", { class: "swatch", "aria-hidden": "true" }), `colour: ${colour}`);
}

function centre(state, ctx) {
  const top = state.top
    ? wobbleCard(state.top, { label: `top card: ${cardName(state.top)}` })
    : h("span", { class: "empty" }, "no card yet");
  const under = state.discard_pile ? plural(state.discard_pile, "card") : "nothing";
  return h("section", { class: "zone centre", "aria-label": "Draw and discard piles" },
    h("h3", {}, "Piles"),
    h("div", { class: "row" },
      h("figure", { class: "pile" }, drawPile(state, ctx), h("figcaption", {}, "draw")),
      h("figure", { class: "pile" }, top, h("figcaption", {}, `${under} under it`)),
      colourBadge(state.colour)),
    tossWindow(state, ctx),
    discarded(state));
}

function tossWindow(state, ctx) {
  const toss = state.toss_in;
  if (!toss) return null;
  const acting = mover(state);
  // Who else may toss in is nobody's business: only this seat's own legal moves tell it.
  const yours = ctx.moves.some((move) => move.type === "toss");
  return h("p", { class: "window toss" },
    h("strong", {}, "Toss-in open: "),
    `whoever may throw in another ${cardName(toss.card)} can do so now, until ${seatName(ctx, acting)} acts.`,
    yours ? h("strong", { class: "yours" }, " You hold one: click it in your hand to toss it in.") : null);
}

/** The face-up cards under the top card, for counting; folded away as most never look. */
function discarded(state) {
  if (!state.discarded.length) return null;
  return h("details", { class: "discarded" },
    h("summary", {}, `Face-up cards under the top (${state.discarded.length})`),
    h("div", { class: "row" }, state.discarded.map((code) => wobbleCard(code, { small: true }))));
}

function attackPanel(state, ctx) {
  const attack = state.attack;
  if (!attack) return null;
  const target = attack.target === ctx.seat ? "you" : seatName(ctx, attack.target);
  const redirected = attack.directed_by === attack.owner ? "" : `, sent on by ${seatName(ctx, attack.directed_by)}`;
  const origin = attack.dealt ? `turned up by the deal as the starting card (it acts for the dealer, ${seatName(ctx, state.dealer)})`
    : `played by ${seatName(ctx, attack.owner)}`;
  return h("section", { class: "zone attack", "aria-label": "Open attack" },
    h("h3", {}, "⊕ Attack"),
    h("p", { class: "attack-line" },
      h("strong", {}, `${NAMES[attack.symbol]}${attack.passed ? " stack" : ""}: ${effect(attack.symbol, attack.amount)}`),
      ` — ${origin}${redirected}, aimed at ${target}.`),
    state.phase === "attack" ? h("p", { class: "hint" },
      `${attack.target === ctx.seat ? "You" : seatName(ctx, attack.target)} may pass it on with another ${NAMES[attack.symbol]}, defend with a grey card or take it. `,
      attack.jerk_allowed ? `Anyone but ${seatName(ctx, attack.owner)} may play a Jerk card on it.` : "Its Jerk card has been played.",
      canJerk(ctx) ? h("strong", { class: "yours" }, " You hold a Jerk card: you may play it now, even out of turn.") : null) : null,
    state.pending.length ? h("ul", { class: "steps", "aria-label": "Still to do" },
      state.pending.map((step) => h("li", {}, stepText(step, state, ctx)))) : null);
}

function canJerk(ctx) {
  return ctx.moves.some((move) => move.type === "jerk");
}

/** Numbers named for Magnets this round; the seat that names picks from here. */
function namedNumbers(state, ctx) {
  const free = (value) => !state.named.includes(value);
  const token = (value, pick, label, extra = "") => (ctx.seat === null
    ? h("span", { class: `token${extra}`, role: "img", "aria-label": label, title: label }, String(value))
    : h("button", { type: "button", class: `token${extra}`, "aria-label": label, title: label, dataset: { pick }, disabled: true }, String(value)));
  const numbers = [1, 2, 3, 4, 5, 6, 7, 8, 9].map((value) =>
    token(value, `name:${value}`, free(value) ? `${value}, not named yet` : `${value}, already named`, free(value) ? "" : " named"));
  // Once all nine are named a Magnet takes a colour instead.
  const colours = state.named.length >= 9
    ? COLOURS.map((colour) => token(colour, `name:${colour}`, `name ${colour}`, ` colour tone-${colour}`))
    : [];
  return zone("Numbers named for Magnets this round", numbers, colours);
}

function handZone(state) {
  const hand = state.hand;
  const points = hand.reduce((sum, code) => sum + cardValue(code), 0);
  const cards = hand.map((code, index) => {
    const copy = index - hand.indexOf(code);
    const drawn = code === state.drawn && !copy;
    return wobbleCard(code, {
      pick: handKey(code, copy),
      label: `${cardLabel(code)}${drawn ? ", just drawn" : ""}`,
      extra: drawn ? h("span", { class: "drawn-mark", "aria-hidden": "true" }, "new") : null,
    });
  });
  const pairs = hand.some((code, index) => index && hand[index - 1] === code && pairable(code));
  return h("section", { class: "zone hand", "aria-label": "Your hand" },
    h("h3", {}, `Your hand: ${plural(hand.length, "card")}, ${points} minus points if the round ended now`),
    h("div", { class: "row" }, cards.length ? cards : h("span", { class: "empty" }, "empty")),
    pairs ? h("p", { class: "hint" }, "Two identical cards: pick both to play them together (an action counts double).") : null);
}

function cardValue(code) {
  const info = parse(code);
  if (info.group === "number") return Number(info.symbol);
  return info.group === "brown" ? 70 : 20;
}

function pairable(code) {
  const info = parse(code);
  return info.group === "offensive" || info.symbol === "reverse" || (info.group === "number" && info.symbol !== "0");
}

/**
 * The pick of the `copy`th identical card in the hand (0 or 1). Keys name the card, not its
 * place, so a click means that card even if the hand changed between table and moves.
 */
function handKey(code, copy) {
  return copy ? `hand:${code}:${copy + 1}` : `hand:${code}`;
}

/** The hand buttons a move's cards are: a pair is both copies. */
function handPicks(cards) {
  return cards.map((code, copy) => handKey(code, copy));
}

/** Words for the choice a played card asks for (colour, seat swap, hand swap, half hand). */
function choiceText(move, state, ctx, handAfter) {
  if (move.colour) return `colour becomes ${move.colour}`;
  if ("swap_with" in move) return move.swap_with === null ? "keep your seat" : `swap seats with ${seatName(ctx, move.swap_with)}`;
  if ("exchange_with" in move) return `swap hands with ${seatName(ctx, move.exchange_with)}: you get ${plural(state.hand_sizes[move.exchange_with], "card")}`;
  if ("discard_half" in move) {
    const half = Math.floor(handAfter / 2);
    return move.discard_half ? `put ${plural(half, "random card")} under the pile` : "keep your whole hand";
  }
  return null;
}

const VERBS = { play: "Play", toss: "Toss in", pass: "Pass it on with" };

function playLabel(move, state, ctx) {
  const verb = state.phase === "drawn" ? "Play the drawn" : VERBS[move.type];
  const handAfter = (state.hand || []).length - move.cards.length;
  return [`${verb} ${cardNames(move.cards)}`, choiceText(move, state, ctx, handAfter)].filter(Boolean).join(", ");
}

// The table and its legal moves are fetched one after the other, so a move may arrive with a
// state from just before or after its attack: such labels fall back to plainer words.

function defendLabel(move, state, ctx) {
  const { symbol } = parse(move.card);
  const attack = state.attack;
  const at = (seat) => seatName(ctx, seat);
  switch (symbol) {
    case "you": return `You!: aim the attack at ${at(move.target)}`;
    case "dodge": return `Dodge: the attack moves on to ${at(nextTarget(state, ctx.seat))}`;
    case "mirror": {
      const back = attack?.passed && attack.owner !== ctx.seat ? attack.owner : nextTarget(state, ctx.seat, -state.direction);
      return `Mirror: reverse play, the attack goes to ${at(back)}`;
    }
    default: return "Who is unlucky: chance picks a new target (maybe you again)";
  }
}

function jerkLabel(move, state, ctx) {
  const { symbol } = parse(move.card);
  const attack = state.attack;
  if (symbol === "capture") return `Capture: take over the attack, aim it at ${seatName(ctx, move.target)}`;
  if (symbol === "double") return attack ? `Double: whoever takes it must ${effect(attack.symbol, attack.amount * 2)}` : "Double the attack";
  if (!attack) return "Not Me: everyone else suffers the attack";
  // Not Me costs every victim the whole Skip, not one turn each down the line.
  const suffer = attack.symbol === "skip" ? `lose ${plural(attack.amount, "turn")}` : effect(attack.symbol, attack.amount);
  return `Not Me: everyone else must ${suffer}`;
}

function acceptLabel(state) {
  const attack = state.attack;
  if (!attack) return "Accept the attack";
  if (state.phase === "resolve") return `Draw ${plural(attack.amount, "card")} instead of the task`;
  return `Accept: ${effect(attack.symbol, attack.amount)}`;
}

function attemptLabel(state) {
  return state.attack ? `Attempt the task (if it fails: draw ${state.attack.amount * 2})` : "Attempt the task";
}

function reportLabel(move, state, ctx) {
  const subject = state.pending[0]?.subject;
  const who = subject === undefined ? "The task" : `${seatName(ctx, subject)}'s task`;
  const draws = state.attack ? `: draws ${state.attack.amount * 2}` : "";
  return move.success ? `${who} succeeded: no cards` : `${who} failed${draws}`;
}

export const wobble = {
  render(state, ctx) {
    const score = ctx.table?.options?.score_limit;
    return h("div", { class: "game wobble" },
      h("p", { class: "headline" }, status(state, ctx)),
      h("p", { class: "round" },
        // Before the first RoundStarted the state has no round and no dealer yet.
        state.round < 0 ? "Before the first deal" : `Round ${state.round + 1} · dealer ${seatName(ctx, state.dealer)}`,
        score ? ` · game ends at ${score} minus points` : ""),
      seatRing(state, ctx),
      centre(state, ctx),
      attackPanel(state, ctx),
      namedNumbers(state, ctx),
      ctx.seat !== null && state.hand ? handZone(state) : null);
  },

  hint(moves, state) {
    const types = new Set(moves.map((move) => move.type));
    if (types.has("name")) return "Your move: click a number (or a colour) below to name it for the Magnet.";
    if (types.has("start")) return "Your move: choose below how the starting card acts.";
    if (types.has("report")) return "Your move: say below whether the task was managed.";
    const ways = [
      types.has("play") ? (state.phase === "drawn" ? "click the drawn card (marked new) to play it" : "click a card in your hand to play it on the discard pile") : null,
      types.has("pass") || types.has("defend") ? "click a card in your hand to pass the attack on or defend" : null,
      types.has("toss") ? "click a card in your hand that matches the top card to toss it in" : null,
      types.has("jerk") ? "click your Jerk card to play it on the attack" : null,
      types.has("draw") ? "click the draw pile to draw a card" : null,
      types.has("accept") || types.has("attempt") || types.has("exchange_greys") ? "use a button below the table" : null,
    ].filter(Boolean);
    return ways.length ? `Your move: ${ways.join(", or ")}.` : null;
  },

  move(move, state, ctx) {
    switch (move.type) {
      case "play": case "toss": case "pass":
        return { picks: handPicks(move.cards), label: playLabel(move, state, ctx) };
      case "start":
        return { picks: [], label: `Starting card: ${choiceText(move, state, ctx, (state.hand || []).length)}` };
      case "draw": return { picks: ["draw"], label: "Draw a card" };
      case "exchange_greys":
        return { picks: [], label: `Show your grey cards, shuffle them in and draw ${plural((state.hand || []).length, "new card")}` };
      case "defend": return { picks: handPicks([move.card]), label: defendLabel(move, state, ctx) };
      case "jerk": return { picks: handPicks([move.card]), label: jerkLabel(move, state, ctx) };
      case "accept": return { picks: [], label: acceptLabel(state) };
      case "attempt": return { picks: [], label: attemptLabel(state) };
      case "report": return { picks: [], label: reportLabel(move, state, ctx) };
      case "name":
        return move.number !== undefined
          ? { picks: [`name:${move.number}`], label: `Name ${move.number}` }
          : { picks: [`name:${move.colour}`], label: `Name ${move.colour}` };
      // A move this table does not know yet stays playable as a button with its raw words.
      default: return { picks: [], label: JSON.stringify(move) };
    }
  },

  scores(state) {
    return state.scores;
  },

  describe(event, ctx) {
    const data = event.data;
    const who = seatName(ctx, data.seat);
    const some = (cards, count) => (cards ? cards.map(cardName).join(", ") : plural(count, "card"));
    switch (event.type) {
      case "RoundStarted": return `Round ${data.round + 1}: ${seatName(ctx, data.dealer)} deals`;
      case "StartCardTurned": return `The deal turned up ${cardName(data.card)} as the starting card; it acts for the dealer, ${who}`;
      case "StartCardResolved": return `${who} resolved the starting card${chosen(data, ctx)}`;
      case "CardsPlayed": return played(data, ctx);
      case "HalfHandDiscarded": return `${who} put ${some(data.cards, data.count)} under the discard pile`;
      case "CardDrawn": return `${who} drew ${data.card ? cardName(data.card) : "a card"}`;
      case "CardsDrawn": return `${who} drew ${some(data.cards, data.count)}${data.reason === "task_failed" ? " for a failed task" : ""}`;
      case "DiscardsReshuffled": return `The discard pile (${plural(data.count, "card")}) was shuffled into a new draw pile`;
      case "GreysExchanged": return `${who} showed ${data.shown.map(cardName).join(", ")} and drew ${some(data.drawn, data.count)}`;
      case "DefencePlayed": return `${who} defended with ${NAMES[parse(data.card).symbol]}: the attack now aims at ${seatName(ctx, data.target)}`;
      case "JerkPlayed": return jerked(data, ctx);
      case "AttackAccepted": return `${who} took the attack`;
      case "TaskAttempted": return `${who} attempts the task`;
      case "TaskReported": return `${who} reports: ${seatName(ctx, data.subject)} ${data.success ? "managed" : "failed"} the task`;
      case "MagnetNamed": return magnetLine(data, ctx);
      case "RoundEnded": return roundLine(data, ctx);
      default: return null;
    }
  },
};

function played(data, ctx) {
  const who = seatName(ctx, data.seat);
  const what = cardNames(data.cards);
  const extra = chosen(data, ctx);
  switch (data.how) {
    case "toss": return `${who} tossed in ${what}${extra}`;
    case "pass": return `${who} passed the attack on with ${what}`;
    case "drawn": return `${who} played the drawn ${what}${extra}`;
    default: return `${who} played ${what}${extra}`;
  }
}

/** What a played card's choices did, as words after "played X". */
function chosen(data, ctx) {
  if (data.colour) return `: colour ${data.colour}`;
  if (data.swap_with !== undefined && data.swap_with !== null) return ` and swapped seats with ${seatName(ctx, data.swap_with)}`;
  if (data.exchange_with !== undefined) return ` and swapped hands with ${seatName(ctx, data.exchange_with)}`;
  // Putting half the hand away has its own event; keeping it has none.
  if (data.discard_half === false) return " and kept the whole hand";
  return "";
}

function jerked(data, ctx) {
  const who = seatName(ctx, data.seat);
  const { symbol } = parse(data.card);
  if (symbol === "capture") return `${who} captured the attack with a Jerk card and aimed it at ${seatName(ctx, data.target)}`;
  if (symbol === "double") return `${who} doubled the attack with a Jerk card`;
  return `${who} played Not Me: everyone else suffers the attack`;
}

function magnetLine(data, ctx) {
  const named = data.number ?? data.colour;
  const taken = data.taken.map((from) =>
    `${from.cards ? from.cards.map(cardName).join(", ") : plural(from.count, "card")} from ${seatName(ctx, from.seat)}`);
  return `${seatName(ctx, data.seat)} named ${named} and took ${taken.length ? taken.join("; ") : "nothing"}`;
}

function roundLine(data, ctx) {
  const points = data.points.map((added, seat) => `${seatName(ctx, seat)} +${added}`).join(", ");
  return `Round ${data.round + 1} over: ${points}${data.final ? ". The game is over" : ""}`;
}
