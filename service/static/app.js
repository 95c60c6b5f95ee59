// The client's router: each page lives after the `#`, so the server serves one page and every
// link (an invitation, a replay) is a plain URL that can be shared.

import { api } from "./api.js";
import { apiPage } from "./apidocs.js";
import { h } from "./dom.js";
import { lobbyPage } from "./lobby.js";
import { replayPage } from "./replay.js";
import { rulesPage } from "./rules.js";
import { joinPage, tablePage } from "./table.js";

const main = document.getElementById("content");
let games = null;
let leaving = null;

const ROUTES = [
  [/^\/?$/, () => (view, signal) => lobbyPage(view, signal, games)],
  [/^\/api(?:\/([\w-]+))?$/, (anchor) => (view, signal) => apiPage(view, anchor, signal)],
  [/^\/rules\/([^/]+)$/, (id) => (view, signal) => rulesPage(view, id, signal, games)],
  [/^\/tables\/([^/]+)\/join\/(\d+)$/, (id, seat) => (view) => joinPage(view, id, Number(seat), games)],
  [/^\/tables\/([^/]+)\/watch$/, (id) => (view, signal, query) => tablePage(view, id, query, signal, games, true)],
  [/^\/tables\/([^/]+)\/replay(?:\/(\d+))?$/, (id, version) => (view, signal) => replayPage(view, id, Number(version), signal, games)],
  [/^\/tables\/([^/]+)$/, (id) => (view, signal, query) => tablePage(view, id, query, signal, games)],
];

async function route() {
  leaving?.abort();
  leaving = new AbortController();
  const { signal } = leaving;
  // Each page draws into an element of its own, which the next page's replaces: a page left
  // while it still loads or updates then draws into an element no longer shown, never over the
  // page the reader went on to.
  const view = h("div", { class: "page" });
  main.replaceChildren(view);
  const [path, search = ""] = decodeURIComponent(location.hash.slice(1)).split("?");
  const query = new URLSearchParams(search);
  const found = ROUTES.map(([pattern, page]) => [path.match(pattern), page]).find(([match]) => match);
  try {
    games ??= Object.fromEntries((await api("/games")).map((game) => [game.id, game]));
    if (!found) {
      view.replaceChildren(h("h1", {}, "Not found"), h("p", {}, h("a", { href: "#/" }, "Back to the lobby")));
      return;
    }
    const [match, page] = found;
    await page(...match.slice(1))(view, signal, query);
  } catch (error) {
    if (signal.aborted) return;
    view.replaceChildren(h("h1", {}, "Something went wrong"), h("p", { class: "feedback", role: "alert" }, error.message),
      h("p", {}, h("a", { href: "#/" }, "Back to the lobby")));
  }
}

window.addEventListener("hashchange", route);
// The skip link moves the focus to the page; as a plain `#content` link it would be a route.
document.querySelector("a.skip").addEventListener("click", (event) => {
  event.preventDefault();
  main.focus();
});
route();
