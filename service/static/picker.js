// Making a move by clicking. Each legal move is made of "picks" (the things on the table it
// uses: a card in hand, a die, a stack) and a label. Clicking picks narrows the legal moves to
// those that use every picked thing; once exactly one move is left and nothing more can be
// added, it is made. Where several moves use the same picks (a card played face up or
// flipped), or a move uses no picks (pass, roll), the moves are offered as labelled buttons.

export class Picker {
  /** @param options [{move, picks: string[], label: string}] */
  constructor(options) {
    this.options = options.map((option) => ({ ...option, picks: [...new Set(option.picks)] }));
    this.selected = [];
  }

  /** The moves that use every selected pick. */
  candidates() {
    return this.options.filter((option) => this.selected.every((pick) => option.picks.includes(pick)));
  }

  /** Picks that can be clicked now: selected ones (to take back) and any a candidate uses. */
  pickable() {
    const keys = new Set(this.selected);
    for (const option of this.candidates()) for (const pick of option.picks) keys.add(pick);
    return keys;
  }

  /** The moves offered as buttons: with no selection those needing no pick, else exact fits. */
  choices() {
    return this.candidates().filter((option) => option.picks.length === this.selected.length);
  }

  /** Select or unselect `pick`; returns the move to make now, if the picks decide it. */
  toggle(pick) {
    if (this.selected.includes(pick)) {
      this.selected = this.selected.filter((selected) => selected !== pick);
      return null;
    }
    this.selected = [...this.selected, pick];
    const candidates = this.candidates();
    if (candidates.length === 1 && candidates[0].picks.length === this.selected.length) {
      return candidates[0];
    }
    return null;
  }

  clear() {
    this.selected = [];
  }
}
