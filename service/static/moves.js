// Moves, as players count them. A table's version counts every event (seats taken, the deal,
// each card drawn), so it is no move number: a move is one decision of a seat, recorded as the
// events one command appended (they share `meta.command_id`) with at least one game event.
// Taking a seat (no `meta.seat`) and leaving (no game event) are no moves.

export class MoveCounter {
  constructor(game) {
    this.game = game;
    this.count = 0;
    this.command = null;
    this.counted = false;
  }

  /** Take the next event of the log, in order; returns the number of the move it belongs to,
   * or null when it belongs to none. */
  add(event) {
    const meta = event.meta || {};
    if (meta.command_id !== this.command) {
      this.command = meta.command_id;
      this.counted = false;
    }
    const byASeat = Number.isInteger(meta.seat);
    const part = event.type.startsWith(`${this.game}.`) || event.type === "table.MoveSubstituted";
    if (!byASeat || !part) return this.counted ? this.count : null;
    if (!this.counted) {
      this.count += 1;
      this.counted = true;
    }
    return this.count;
  }
}

/** The number of moves in `events` (a whole log, oldest first), and the move of each `seq`. */
export function countMoves(game, events) {
  const counter = new MoveCounter(game);
  const moveAt = new Map();
  for (const event of events) {
    const move = counter.add(event);
    if (move !== null) moveAt.set(event.seq, move);
  }
  return { moves: counter.count, moveAt };
}

/** "1 move", "28 moves". */
export function movesText(count) {
  return `${count} ${count === 1 ? "move" : "moves"}`;
}
