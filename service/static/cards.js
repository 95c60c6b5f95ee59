// Pictures of cards, dice and chips, each with its text alternative. A thing the player may
// click is a button carrying `data-pick`; the table frame enables it when a legal move uses it.

import { h } from "./dom.js";

/**
 * A card: `text` is what is printed on it, `label` what a screen reader says.
 * `pick` makes it clickable; `tone` picks a colour class (e.g. "pink", "red", "cyan").
 */
export function card({ text, label, pick, tone, small = false, extra = [] }) {
  const classes = ["card", tone && `tone-${tone}`, small && "small"].filter(Boolean).join(" ");
  if (pick !== undefined) {
    return h("button", { type: "button", class: classes, "aria-label": label, title: label, dataset: { pick }, disabled: true },
      h("span", { "aria-hidden": "true" }, text), extra);
  }
  return h("span", { class: classes, role: "img", "aria-label": label, title: label },
    h("span", { "aria-hidden": "true" }, text), extra);
}

/** A face-down card or pile: a count, never a face. */
export function back({ label, count, tone }) {
  return h("span", { class: `card back${tone ? ` tone-${tone}` : ""}`, role: "img", "aria-label": label, title: label },
    h("span", { "aria-hidden": "true" }, count === undefined ? "" : String(count)));
}

const PIPS = ["⚀", "⚁", "⚂", "⚃", "⚄", "⚅"];

/** A die showing `value` (1 to 6); `tone` colours it. */
export function die({ value, label, pick, tone }) {
  const text = value >= 1 && value <= 6 ? PIPS[value - 1] : "?";
  const name = label || `die showing ${value}`;
  const classes = `die${tone ? ` tone-${tone}` : ""}`;
  if (pick !== undefined) {
    return h("button", { type: "button", class: classes, "aria-label": name, title: name, dataset: { pick }, disabled: true },
      h("span", { "aria-hidden": "true" }, text), h("span", { class: "die-value", "aria-hidden": "true" }, value));
  }
  return h("span", { class: classes, role: "img", "aria-label": name, title: name },
    h("span", { "aria-hidden": "true" }, text), h("span", { class: "die-value", "aria-hidden": "true" }, value));
}

/** A row of things under a heading, e.g. a hand or a pile. */
export function zone(title, ...children) {
  return h("section", { class: "zone", "aria-label": title }, h("h3", {}, title), h("div", { class: "row" }, children));
}

/** A seat's name as the table shows it. */
export function seatName(ctx, seat) {
  if (seat === null || seat === undefined) return "nobody";
  const name = ctx.names[seat] || `Seat ${seat + 1}`;
  // Two bots of a kind share a name; their seat numbers tell them apart.
  const shared = ctx.names.filter((other) => other === name).length > 1;
  const shown = shared ? `${name} (seat ${seat + 1})` : name;
  return seat === ctx.seat ? `${shown} (you)` : shown;
}
