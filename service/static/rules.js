// A game's "How to play" page: its rule book (Markdown served by the API) rendered as the
// page's own nodes, with the way back to the lobby.

import { h } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

export async function rulesPage(main, gameId, signal, games) {
  const game = games[gameId];
  const back = h("p", { class: "links" }, h("a", { href: "#/" }, "Back to the lobby"));
  if (!game) {
    main.replaceChildren(h("h1", {}, "Not found"), h("p", {}, `There is no game "${gameId}".`), back);
    return;
  }
  document.title = `How to play ${game.title} · Spieltisch`;
  main.replaceChildren(h("p", { class: "hint" }, `Loading the rules of ${game.title}…`));
  const response = await fetch(`/v1/games/${encodeURIComponent(gameId)}/rules`, { headers: { Accept: "text/markdown" }, signal });
  if (!response.ok) throw new Error(`the rules of ${game.title} could not be loaded (HTTP ${response.status})`);
  const text = await response.text();
  if (signal.aborted) return;
  main.replaceChildren(h("article", { class: "rulebook", "aria-label": `How to play ${game.title}` },
    back, renderMarkdown(text), back.cloneNode(true)));
}
