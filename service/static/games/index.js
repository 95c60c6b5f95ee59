// The games' table modules. The server lists which games have a module (`games/<id>.js`) and a
// stylesheet (`games/<id>.css`) of their own; both are loaded before any page renders, and every
// other game gets the generic table. Each module exports one object, named after its game, with
// the same small interface:
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

import { generic } from "../generic.js";

const listing = await fetch("/client/games.json");
if (!listing.ok) throw new Error(`the list of game tables failed: ${listing.status}`);
const { tables, stylesheets } = await listing.json();

const [modules] = await Promise.all([
  Promise.all(tables.map(async (id) => [id, (await import(`./${id}.js`))[id]])),
  Promise.all(stylesheets.map((id) => linkStylesheet(`/static/games/${id}.css`))),
]);
const GAMES = new Map(modules);

function linkStylesheet(href) {
  return new Promise((resolve, reject) => {
    const link = document.createElement("link");
    link.rel = "stylesheet";
    link.href = href;
    link.onload = () => resolve(link);
    link.onerror = () => reject(new Error(`the stylesheet ${href} failed to load`));
    document.head.append(link);
  });
}

export function gameModule(id) {
  return GAMES.get(id) ?? generic;
}
