// Placeholder until this game's table is drawn: the state as text, moves as labelled buttons.

import { h } from "../dom.js";

export const wobble = {
  render(state) {
    return h("pre", { class: "game raw" }, JSON.stringify(state, null, 1));
  },
  move(move) {
    return { picks: [], label: JSON.stringify(move) };
  },
  scores(state) {
    return state.scores || state.chips || [];
  },
  describe() {
    return null;
  },
};
