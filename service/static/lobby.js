// The lobby: every game with its rules summary and options, a form to open a table with people
// and bots in its seats, and the tables there are to join, watch or replay.

import { api } from "./api.js";
import { h } from "./dom.js";
import { holdSeat, playerName, rememberName } from "./seats.js";

const YOU = "you";
const OPEN = "open";

export async function lobbyPage(main, signal, games) {
  const bots = await api("/bots");
  const name = h("input", { id: "player-name", maxlength: 40, autocomplete: "nickname", value: playerName(),
    onchange: (event) => rememberName(event.target.value.trim()) });
  const lists = h("div", { class: "table-lists" });
  main.replaceChildren(h("section", { class: "lobby" },
    h("h1", {}, "Lobby"),
    h("p", { class: "name-row" }, h("label", { for: "player-name" }, "Your name "), name),
    h("h2", {}, "Start a game"),
    h("div", { class: "games" }, Object.values(games).map((game) => gameCard(game, bots, name))),
    lists));
  document.title = "Spieltisch";
  await tableLists(lists, games);
  // Running games change; the lobby shows them anew every few seconds while it is open.
  const timer = setInterval(() => tableLists(lists, games).catch(() => {}), 5000);
  signal.addEventListener("abort", () => clearInterval(timer), { once: true });
}

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
        const taken = await api(`/tables/${table.id}/seats`, { method: "POST", body: { seat, name: player } });
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

async function tableLists(container, games) {
  const [open, running, finished] = await Promise.all(["open", "running", "finished"].map((status) =>
    api(`/tables?status=${status}&limit=12`).catch(() => [])));
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
      h("a", { href: `#/tables/${table.id}/watch` }, `Watch (move ${table.version})`))),
    h("section", {}, h("h2", {}, "Finished games"), rows(finished, (table) =>
      h("a", { href: `#/tables/${table.id}/replay` }, "Replay"))));
}

function range(low, high) {
  return Array.from({ length: high - low + 1 }, (_, index) => low + index);
}
