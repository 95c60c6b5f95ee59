// Replay: any game, version by version, as a spectator saw it (or as a seat held here saw it),
// with the scores over the game and, once it is over, the audit.

import { api } from "./api.js";
import { legend, scoreChart } from "./chart.js";
import { h } from "./dom.js";
import { gameModule } from "./games/index.js";
import { countMoves } from "./moves.js";
import { contextOf, describe, resultText, seatNames } from "./table.js";

// The replay of one table: its table, log, score timeline and audit are read once, and each
// version's view once (kept as a promise, so a step and a prefetch share one request). A step
// costs at most that one request, and none when the version was seen or prefetched.
let session = null;

/** The session of `tableId`: kept while its game is over or has not moved on since. */
async function sessionOf(tableId) {
  const same = session && session.tableId === tableId;
  if (same && session.table.status === "finished") return session;
  const table = await api(`/tables/${tableId}`);
  if (same && table.version === session.table.version) return session;
  const [log, timeline] = await Promise.all([
    api(`/tables/${tableId}/events`),
    // The chart is an extra: without the timeline the replay still steps through the game.
    api(`/tables/${tableId}/scores`).catch(() => null),
  ]);
  session = { tableId, table, log, timeline, audit: null, views: same ? session.views : new Map() };
  return session;
}

/** The view of the table at `version`, read once per session. */
function viewAt(replay, version) {
  if (!replay.views.has(version)) {
    const view = api(`/tables/${replay.tableId}/versions/${version}`);
    view.catch(() => replay.views.delete(version)); // a failed read is tried again next time
    replay.views.set(version, view);
  }
  return replay.views.get(version);
}

/** The page at #/tables/ID/replay/V. */
export async function replayPage(main, tableId, version, signal, games) {
  const replay = await sessionOf(tableId);
  const { table, log, timeline } = replay;
  const last = table.version;
  const at = Math.min(last, Math.max(1, Number.isFinite(version) ? version : last));
  const names = seatNames(table);
  const game = games[table.game];
  const module = gameModule(table.game);
  const past = await viewAt(replay, at);
  if (signal.aborted) return;
  for (const next of [at + 1, at - 1]) {
    if (next >= 1 && next <= last) viewAt(replay, next).catch(() => {}); // the likely next step
  }
  const go = (target) => { location.hash = `#/tables/${tableId}/replay/${Math.min(last, Math.max(1, target))}`; };

  const slider = h("input", { id: "replay-slider", type: "range", min: 1, max: last, value: at,
    "aria-valuetext": `version ${at} of ${last}`,
    onchange: (event) => go(Number(event.target.value)) });
  const jump = h("input", { id: "replay-jump", type: "number", min: 1, max: last, value: at,
    onchange: (event) => go(Number(event.target.value)) });
  const event = log.events.find((record) => record.seq === at);
  const ctx = contextOf(past, games);
  const happened = event ? describe(event, past, games) || event.type : "";
  // Versions count events; players count moves, so the banner says which move this event is.
  const { moves, moveAt } = countMoves(table.game, log.events);
  const move = moveAt.has(at) ? ` (move ${moveAt.get(at)} of ${moves})` : "";

  const audit = table.status === "finished" ? await auditPanel(replay) : h("p", {}, "The audit is shown once the game is over.");
  if (signal.aborted) return;
  main.replaceChildren(h("section", { class: "replay-page" },
    h("h1", {}, `Replay: ${game ? game.title : table.game}`),
    h("p", { class: "banner" }, `Version ${at} of ${last}${move}${happened ? `: ${happened}` : ""}`),
    h("div", { class: "controls", role: "group", "aria-label": "Replay controls" },
      h("button", { type: "button", onclick: () => go(1), disabled: at === 1, "aria-label": "First version" }, "« First"),
      h("button", { type: "button", id: "replay-back", onclick: () => go(at - 1), disabled: at === 1, "aria-label": "Previous version" }, "‹ Back"),
      h("button", { type: "button", id: "replay-forward", onclick: () => go(at + 1), disabled: at === last, "aria-label": "Next version" }, "Next ›"),
      h("button", { type: "button", onclick: () => go(last), disabled: at === last, "aria-label": "Last version" }, "Last »"),
      h("label", { for: "replay-slider", class: "visually-hidden" }, "Scrub through versions"), slider,
      h("label", { for: "replay-jump" }, "Version "), jump),
    timeline ? h("div", { class: "chart-box" }, scoreChart(timeline.scores, names, at, go), legend(names, h)) : null,
    h("div", { class: "board" }, past.state ? module.render(past.state, ctx) : h("p", {}, "No game yet at this version: the seats were still being taken.")),
    past.result ? h("p", { class: "result" }, resultText(past, names)) : null,
    audit,
    h("nav", { class: "links" }, h("a", { href: `#/tables/${tableId}/watch` }, "Back to the table"))));
  document.title = `Replay ${at}/${last} · Spieltisch`;

  const keys = (keyEvent) => {
    if (keyEvent.target instanceof HTMLInputElement) return;
    if (keyEvent.key === "ArrowLeft" && at > 1) go(at - 1);
    else if (keyEvent.key === "ArrowRight" && at < last) go(at + 1);
    else if (keyEvent.key === "Home") go(1);
    else if (keyEvent.key === "End") go(last);
  };
  document.addEventListener("keydown", keys);
  signal.addEventListener("abort", () => document.removeEventListener("keydown", keys), { once: true });
}

async function auditPanel(replay) {
  const { tableId } = replay;
  replay.audit ??= api(`/tables/${tableId}/audit`);
  const audit = await replay.audit.catch((error) => {
    replay.audit = null;
    throw error;
  });
  const check = (ok, what) => h("li", {}, `${ok ? "✔" : "✘"} ${what}`);
  return h("section", { class: `audit ${audit.ok ? "ok" : "failed"}`, "aria-label": "Audit" },
    h("h2", {}, audit.ok ? "Audit passed" : "Audit FAILED"),
    h("ul", {},
      check(audit.chain_ok, `hash chain of ${audit.events} events intact`),
      check(audit.seed_ok, "revealed seed matches its commitment"),
      check(audit.versions_ok, `generator ${audit.chance}, rules version ${audit.rules_version}`),
      check(audit.replay_ok, `${audit.commands} commands decided again give the same events`)),
    audit.problems.length ? h("ul", { class: "problems" }, audit.problems.map((problem) => h("li", {}, problem))) : null,
    h("p", { class: "seed" }, "Seed: ", h("code", {}, audit.seed || "")),
    h("p", {}, h("a", { href: `/v1/tables/${encodeURIComponent(tableId)}/export`, download: `${tableId}.json` },
      "Download the signed log"), " to check it yourself with ", h("code", {}, "spieltisch verify"), "."));
}
