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
  [/^\/?$/, () => (signal) => lobbyPage(main, signal, games)],
  [/^\/api(?:\/([\w-]+))?$/, (anchor) => (signal) => apiPage(main, anchor, signal)],
  [/^\/rules\/([^/]+)$/, (id) => (signal) => rulesPage(main, id, signal, games)],
  [/^\/tables\/([^/]+)\/join\/(\d+)$/, (id, seat) => () => joinPage(main, id, Number(seat), games)],
  [/^\/tables\/([^/]+)\/watch$/, (id) => (signal, query) => tablePage(main, id, query, signal, games, true)],
  [/^\/tables\/([^/]+)\/replay(?:\/(\d+))?$/, (id, version) => (signal) => replayPage(main, id, Number(version), signal, games)],
  [/^\/tables\/([^/]+)$/, (id) => (signal, query) => tablePage(main, id, query, signal, games)],
];

async function route() {
  leaving?.abort();
  leaving = new AbortController();
  const { signal } = leaving;
  const [path, search = ""] = decodeURIComponent(location.hash.slice(1)).split("?");
  const query = new URLSearchParams(search);
  const found = ROUTES.map(([pattern, page]) => [path.match(pattern), page]).find(([match]) => match);
  try {
    games ??= Object.fromEntries((await api("/games")).map((game) => [game.id, game]));
    if (!found) {
      main.replaceChildren(h("h1", {}, "Not found"), h("p", {}, h("a", { href: "#/" }, "Back to the lobby")));
      return;
    }
    const [match, page] = found;
    await page(...match.slice(1))(signal, query);
  } catch (error) {
    if (signal.aborted) return;
    main.replaceChildren(h("h1", {}, "Something went wrong"), h("p", { class: "feedback", role: "alert" }, error.message),
      h("p", {}, h("a", { href: "#/" }, "Back to the lobby")));
  }
}

window.addEventListener("hashchange", route);
route();
