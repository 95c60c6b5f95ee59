// The lobby: every game with its rules summary and options, a form to open a table with people
// and bots in its seats, the tables this browser holds seats at, and the tables there are to
// join, watch or replay.

import { api, ApiError, backoffSeconds, pause, postOnce } from "./api.js";
import { h } from "./dom.js";
import { MoveCounter, movesText } from "./moves.js";
import { forgetTable, heldTables, holdSeat, playerName, rememberName } from "./seats.js";
import { resultText, seatNames } from "./table.js";

const YOU = "you";
const OPEN = "open";

export async function lobbyPage(main, signal, games) {
  const bots = await api("/bots");
  const name = h("input", { id: "player-name", maxlength: 40, autocomplete: "nickname", value: playerName(),
    onchange: (event) => rememberName(event.target.value.trim()) });
  const lists = h("div", { class: "table-lists" });
  // While the server cannot be reached the lists keep what they last showed, and say so.
  const trouble = h("p", { class: "trouble", role: "status" });
  const mine = h("section", { class: "your-tables", "aria-labelledby": "your-tables-title" });
  main.replaceChildren(h("section", { class: "lobby" },
    h("h1", {}, "Lobby"),
    trouble,
    h("p", { class: "name-row" }, h("label", { for: "player-name" }, "Your name "), name),
    mine,
    h("h2", {}, "Start a game"),
    h("div", { class: "games" }, Object.values(games).map((game) => gameCard(game, bots, name))),
    lists));
  document.title = "Spieltisch";
  const tallies = new Map();
  const finished = new Map();
  let failures = 0;
  // One update at a time, so that a slow answer never draws over a newer one.
  const update = async () => {
    try {
      await Promise.all([tableLists(lists, games, tallies), yourTables(mine, games, tallies, finished)]);
      failures = 0;
      trouble.textContent = "";
      return UPDATE_MS;
    } catch (error) {
      failures += 1;
      const seconds = backoffSeconds(error, failures);
      trouble.textContent = `Could not reach the server (${error.message}): the lists below may be out of date; trying again in ${seconds} s.`;
      return seconds * 1000;
    }
  };
  let wait = await update();
  // Running games change; the lobby shows them anew every few seconds while it is open.
  (async () => {
    while (!signal.aborted) {
      await pause(wait, signal);
      if (!signal.aborted) wait = await update();
    }
  })();
}

const UPDATE_MS = 5000;

function gameCard(game, bots, nameInput) {
  const id = (suffix) => `${game.id}-${suffix}`;
  const playable = bots.filter((bot) => bot.games.includes(game.id));
  const seatsSelect = h("select", { id: id("seats") },
    range(game.min_players, game.max_players).map((count) => h("option", { value: count, selected: count === Math.max(2, game.min_players) }, String(count))));
  const seatRows = h("div", { class: "seat-rows" });
  const fallbackBot = playable.find((bot) => bot.name === "heuristic") || playable[0];
  const drawSeats = () => {
    const previous = [...seatRows.querySelectorAll("select")].map((select) => select.value);
    seatRows.replaceChildren(...range(0, Number(seatsSelect.value) - 1).map((seat) => {
      const choice = h("select", { id: id(`seat-${seat}`), "aria-label": `Seat ${seat + 1}` },
        h("option", { value: YOU }, "You"),
        h("option", { value: OPEN }, "Invite someone"),
        playable.flatMap((bot) => (bot.levels.length ? bot.levels : [null]).map((level) =>
          h("option", { value: `${bot.name}:${level || ""}` }, `Bot: ${bot.name}${level ? ` (${level})` : ""}`))));
      choice.value = previous[seat] || (seat === 0 || !fallbackBot ? YOU : `${fallbackBot.name}:${fallbackBot.default_level || ""}`);
      return h("label", { class: "seat-row" }, `Seat ${seat + 1} `, choice);
    }));
  };
  seatsSelect.addEventListener("change", drawSeats);
  drawSeats();
  const optionInputs = game.options.map((option) => optionInput(game, option));
  const clockSelect = h("select", { id: id("clock") },
    CLOCK_PRESETS.map(([label, seconds], index) => h("option", { value: seconds, selected: index === 0 }, label)));
  const feedback = h("p", { class: "feedback", role: "alert" });
  const form = h("form", { class: "game-card", "aria-labelledby": id("title"), onsubmit: async (event) => {
    event.preventDefault();
    feedback.textContent = "";
    const seatChoices = [...seatRows.querySelectorAll("select")].map((select) => select.value);
    const player = nameInput.value.trim();
    if (seatChoices.includes(YOU) && !player) {
      feedback.textContent = "Enter your name first: it is shown to the other players.";
      nameInput.focus();
      return;
    }
    try {
      const options = Object.fromEntries(optionInputs.map((input) => [input.option.name, input.value()]).filter(([, value]) => value !== undefined));
      const seatBots = seatChoices.flatMap((choice, seat) => {
        if (choice === YOU || choice === OPEN) return [];
        const [bot, level] = choice.split(":");
        return [{ seat, bot, ...(level ? { level } : {}) }];
      });
      const table = await api("/tables", { method: "POST", body: { game: game.id, seats: seatChoices.length, options, bots: seatBots, clock: { turn_seconds: Number(clockSelect.value) } } });
      rememberName(player);
      const mine = seatChoices.flatMap((choice, seat) => (choice === YOU ? [seat] : []));
      for (const seat of mine) {
        const taken = await postOnce(`/tables/${table.id}/seats`, { body: { seat, name: player } });
        holdSeat(table.id, taken.seat, taken.token);
      }
      location.hash = mine.length ? `#/tables/${table.id}` : `#/tables/${table.id}/watch`;
    } catch (error) {
      const fields = error.problem?.errors ? ` (${Object.keys(error.problem.errors).join(", ")})` : "";
      feedback.textContent = `Could not open the table: ${error.message}${fields}`;
    }
  } },
  h("h3", { id: id("title") }, game.title),
  h("p", { class: "summary" }, game.summary, " ", h("a", { href: `#/rules/${game.id}` }, `How to play ${game.title}`)),
  h("p", {}, h("label", { for: id("seats") }, "Players "), seatsSelect, ` (${game.min_players} to ${game.max_players})`),
  seatRows,
  h("p", {}, h("label", { for: id("clock") }, "Time per move "), clockSelect),
  optionInputs.length ? h("details", {}, h("summary", {}, "Options"), optionInputs.map((input) => input.node)) : null,
  h("button", { type: "submit" }, `Open a table of ${game.title}`),
  feedback);
  return form;
}

/** The lobby's time controls: a limit per decision; a bot moves for whoever runs out. */
const CLOCK_PRESETS = [["1 day", 86400], ["5 minutes", 300], ["1 minute", 60], ["20 seconds", 20]];

/** A form control for one game option, and how to read its value for the request. */
function optionInput(game, option) {
  const id = `${game.id}-option-${option.name}`;
  const label = option.name.replaceAll("_", " ");
  let control;
  let value;
  if (option.type === "boolean") {
    control = h("input", { id, type: "checkbox", checked: option.default === true });
    value = () => control.checked;
  } else if (option.choices) {
    control = h("select", { id }, option.choices.map((choice) => h("option", { value: choice, selected: choice === option.default }, String(choice))));
    value = () => (option.type === "integer" ? Number(control.value) : control.value);
  } else if (option.type === "integer") {
    control = h("input", { id, type: "number", step: 1, min: option.minimum ?? undefined, max: option.maximum ?? undefined,
      value: option.default ?? "", placeholder: option.nullable ? "any" : undefined });
    value = () => (control.value === "" ? (option.nullable ? null : undefined) : Number(control.value));
  } else {
    control = h("input", { id, type: "text", value: option.default ?? "" });
    value = () => control.value;
  }
  const node = h("p", { class: "option" }, h("label", { for: id }, label, " "), control,
    h("small", { class: "hint" }, option.description));
  return { option, node, value };
}

/**
 * The number of moves made at `table` so far, read from its log: only the events after the
 * last count are fetched. `tallies` keeps each table's count between refreshes.
 */
function movesMade(table, tallies) {
  let tally = tallies.get(table.id);
  if (!tally) {
    tally = { version: 0, counter: new MoveCounter(table.game), reading: Promise.resolve() };
    tallies.set(table.id, tally);
  }
  // One read at a time per table, so no event is counted twice.
  tally.reading = tally.reading.then(async () => {
    if (tally.version >= table.version) return;
    const log = await api(`/tables/${encodeURIComponent(table.id)}/events?after=${tally.version}`);
    for (const event of log.events) tally.counter.add(event);
    tally.version = log.version;
  }).catch(() => {});
  return tally.reading.then(() => tally.counter.count);
}

/**
 * "Your tables": every table this browser holds a seat at, with the way back to each seat.
 * A table the server no longer knows, or that expired unplayed, is forgotten; a finished one
 * stays, with its replay, until it is dismissed. Finished tables are not asked for again.
 */
const drawings = new WeakMap();  // per list: the latest drawing begun, which alone may draw

async function yourTables(container, games, tallies, finished) {
  // A dismissal draws the list again at once; an update begun before it must not draw over it.
  const drawing = (drawings.get(container) ?? 0) + 1;
  drawings.set(container, drawing);
  const held = Object.entries(heldTables()).filter(([, seats]) => Object.keys(seats).length);
  const entries = await Promise.all(held.map(async ([tableId, seats]) => {
    if (finished.has(tableId)) return finished.get(tableId);
    const numbers = Object.keys(seats).map(Number).sort((a, b) => a - b);
    let table;
    try {
      table = await api(`/tables/${encodeURIComponent(tableId)}`, { token: seats[numbers[0]] });
    } catch (error) {
      // Unknown table, or a token it no longer knows: nothing to go back to. Any other
      // failure (an outage) forgets nothing, and leaves the list as it was.
      if (!(error instanceof ApiError && [401, 403, 404].includes(error.status))) throw error;
      forgetTable(tableId);
      return null;
    }
    if (table.status === "expired") {
      forgetTable(tableId);
      return null;
    }
    const entry = { table, numbers, moves: table.status === "open" ? 0 : await movesMade(table, tallies) };
    if (table.status === "finished") finished.set(tableId, entry);
    return entry;
  }));
  const order = { running: 0, open: 1, finished: 2 };
  const shown = entries.filter(Boolean).sort((a, b) => order[a.table.status] - order[b.table.status]);
  if (drawings.get(container) !== drawing) return;
  container.replaceChildren(h("h2", { id: "your-tables-title" }, "Your tables"),
    shown.length
      ? h("ul", { class: "tables" }, shown.map((entry) => yourTable(entry, games, () => {
        forgetTable(entry.table.id);
        finished.delete(entry.table.id);
        // An outage now leaves the list as it is; the next update says so.
        yourTables(container, games, tallies, finished).catch(() => {});
      })))
      : h("p", { class: "empty" }, "None: the tables you sit at appear here, in this browser."));
}

function yourTable({ table, numbers, moves }, games, dismiss) {
  const id = encodeURIComponent(table.id);
  const title = h("span", { class: "game-name" }, games[table.game]?.title || table.game);
  const names = seatNames(table);
  const seatLink = (seat) => {
    const turn = table.to_act.includes(seat) ? ", your turn" : "";
    return h("a", { href: `#/tables/${id}?seat=${seat}` }, `Play seat ${seat + 1} (${names[seat]}${turn})`);
  };
  const handed = numbers.filter((seat) => table.seats[seat]?.bot);
  const playing = numbers.filter((seat) => !table.seats[seat]?.bot);
  switch (table.status) {
    case "open":
      return h("li", { dataset: { table: table.id } }, title, " waiting for players: ",
        h("a", { href: `#/tables/${id}` }, "Open the table to invite them"));
    case "running":
      return h("li", { dataset: { table: table.id } }, title, ` running, ${movesText(moves)}: `,
        playing.map((seat, index) => [index ? ", " : "", seatLink(seat)]),
        handed.length ? [playing.length ? "; " : "", `seat ${handed.map((seat) => seat + 1).join(", ")} handed to a bot: `,
          h("a", { href: `#/tables/${id}/watch` }, "Watch")] : null);
    default:
      return h("li", { dataset: { table: table.id } }, title, ` finished after ${movesText(moves)}. ${resultText(table, names)} `,
        h("a", { href: `#/tables/${id}/replay` }, "Replay"), " ",
        h("button", { type: "button", class: "link", onclick: dismiss }, "Dismiss"));
  }
}

async function tableLists(container, games, tallies) {
  const [open, running, finished] = await Promise.all(["open", "running", "finished"].map((status) =>
    api(`/tables?status=${status}&limit=12`)));
  const counts = new Map(await Promise.all(running.map(async (table) => [table.id, await movesMade(table, tallies)])));
  const rows = (tables, action) => tables.length
    ? h("ul", { class: "tables" }, tables.map((table) => h("li", {},
      h("span", { class: "game-name" }, games[table.game]?.title || table.game), " ",
      h("span", {}, table.seats.map((seat) => seat.name || "open").join(", ")), " ",
      action(table))))
    : h("p", { class: "empty" }, "None right now.");
  container.replaceChildren(
    h("section", {}, h("h2", {}, "Waiting for players"), rows(open, (table) => {
      const seat = table.seats.find((info) => !info.taken);
      return seat ? h("a", { href: `#/tables/${table.id}/join/${seat.seat}` }, `Join seat ${seat.seat + 1}`) : null;
    })),
    h("section", {}, h("h2", {}, "Running games"), rows(running, (table) =>
      h("a", { href: `#/tables/${table.id}/watch` }, `Watch (${movesText(counts.get(table.id))})`))),
    h("section", {}, h("h2", {}, "Finished games"), rows(finished, (table) =>
      h("a", { href: `#/tables/${table.id}/replay` }, "Replay"))));
}

function range(low, high) {
  return Array.from({ length: high - low + 1 }, (_, index) => low + index);
}
