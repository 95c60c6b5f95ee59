// The five games' table modules. Each exports one object with the same small interface:
//
//   render(state, ctx) -> Node          the game's part of the table, as `ctx.seat` sees it;
//                                       a thing a move can use is a button with `data-pick`
//   move(move, state, ctx) -> {picks, label}
//                                       which picks a legal move uses, and its words
//   scores(state) -> number[]           each seat's score as the game counts it
//   describe(event, ctx) -> string|null one line of the event log (null: not worth a line)
//
// ctx: {seat: the viewer's seat or null, names: [seat names], table: the table view,
//       game: the game's info from /v1/games}.

import { krasskariert } from "./krasskariert.js";
import { krumme10 } from "./krumme10.js";
import { pig10 } from "./pig10.js";
import { rollnbump } from "./rollnbump.js";
import { wobble } from "./wobble.js";

export const GAMES = { pig10, krumme10, krasskariert, wobble, rollnbump };

export function gameModule(id) {
  const module = GAMES[id];
  if (!module) throw new Error(`this client has no table for the game ${id}`);
  return module;
}
