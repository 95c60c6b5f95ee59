// The table of a game this client has no module for: the caller's view as readable text, each
// legal move a labelled button, each event a line of the log. Plain, but every game is playable.

import { seatName } from "./cards.js";
import { h } from "./dom.js";

export const generic = {
  render(state) {
    return h("div", { class: "game generic" },
      h("dl", { class: "generic-state", "aria-label": "The table as you see it" },
        Object.entries(state).map(([name, value]) => [h("dt", {}, words(name)), h("dd", {}, readable(value))])));
  },

  move(move) {
    // A move of one field reads best as its value alone: {action: "step"} is "step".
    const fields = isObject(move) ? Object.values(move) : [];
    return { picks: [], label: readable(fields.length === 1 ? fields[0] : move) };
  },

  scores() {
    return [];
  },

  describe(event, ctx) {
    const { seat, ...rest } = isObject(event.data) ? event.data : {};
    const what = [event.type, readable(rest)].filter(Boolean).join(" ");
    return Number.isInteger(seat) ? `${seatName(ctx, seat)}: ${what}` : what;
  },
};

function isObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function words(name) {
  return name.replaceAll("_", " ");
}

/** A JSON value as text: objects as "name value, ..." (in parentheses inside another value). */
function readable(value, nested = false) {
  if (Array.isArray(value)) return `[${value.map((item) => readable(item, true)).join(", ")}]`;
  if (value === null) return "none";
  if (!isObject(value)) return String(value);
  const text = Object.entries(value).map(([name, item]) => `${words(name)} ${readable(item, true)}`).join(", ");
  return nested ? `(${text})` : text;
}
