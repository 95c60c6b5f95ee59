// A table as one seat (or a spectator) sees it: the game's own picture, whose turn it is, the
// scores, the moves to click, invitations for open seats, and the log, kept live by the stream.

import { api, ApiError, backoffSeconds, follow, idempotencyKey, pause, postOnce, unanswered } from "./api.js";
import { seatName } from "./cards.js";
import { announce, h } from "./dom.js";
import { gameModule } from "./games/index.js";
import { MoveCounter, movesText } from "./moves.js";
import { Picker } from "./picker.js";
import { heldSeats, holdSeat, playerName, rememberName } from "./seats.js";

export function seatNames(table) {
  return table.seats.map((seat) => seat.name || `Seat ${seat.seat + 1}`);
}

/** What a game's module is told about the table it draws (see games/index.js): the viewer's
 * seat, names, the table, the game, and the viewer's own legal moves (the only place a seat
 * learns it may act out of turn). */
export function contextOf(table, games, legal = null) {
  const moves = legal && legal.version === table.version ? legal.moves : [];
  return { seat: table.you, names: seatNames(table), table, game: games[table.game], moves };
}

export function resultText(table, names) {
  const result = table.result;
  if (!result) return "";
  if (!result.winners.length) return "Game over: nobody wins.";
  const winners = result.winners.map((seat) => names[seat]);
  return `Game over: ${winners.join(" and ")} ${winners.length === 1 ? "wins" : "share the win"}.`;
}

/** True when the viewer's seat was handed to a bot: it left, or timed out too often. */
function left(table) {
  return table.you !== null && table.you !== undefined && Boolean(table.seats[table.you]?.bot);
}

function waitingText(table, ctx) {
  return table.to_act.length ? `Waiting for ${table.to_act.map((seat) => seatName(ctx, seat)).join(", ")}.` : "";
}

/**
 * One line saying what to click now: the game's own words for the seat's legal moves, else
 * words from what those moves use (things on the table to click, or buttons).
 */
function hintText(module, table, ctx, picker) {
  if (!picker || !ctx.moves.length || table.status !== "running") return "";
  const own = module.hint?.(ctx.moves, table.state, ctx);
  if (own) return own;
  const clicks = picker.options.some((option) => option.picks.length);
  const buttons = picker.options.some((option) => !option.picks.length);
  if (clicks && buttons) return "Your move: click a highlighted thing on the table, or choose a button below it.";
  if (clicks) return "Your move: click a highlighted thing on the table.";
  return picker.options.length === 1 ? `Your move: click “${picker.options[0].label}” below the table.`
    : `Your move: choose one of the ${picker.options.length} buttons below the table.`;
}

function turnText(table, ctx) {
  if (table.status === "open") {
    const open = table.seats.filter((seat) => !seat.taken).length;
    return `Waiting for ${open} more ${open === 1 ? "player" : "players"} to take a seat.`;
  }
  if (table.status === "finished") return resultText(table, ctx.names);
  // Handed over because the player left, or because their time ran out too often.
  if (left(table)) return `You are no longer seated here: a bot plays your seat for the rest of the game. ${waitingText(table, ctx)}`;
  const acting = table.to_act;
  if (ctx.seat !== null && acting.includes(ctx.seat)) return "Your turn.";
  if (!acting.length) return "Resolving…";
  const waiting = waitingText(table, ctx);
  // Only this seat's own legal moves say it may act out of turn; the table never tells others.
  return ctx.moves.length ? `${waiting} You may act out of turn.` : waiting;
}

/** What is left until `deadline` (an ISO time), for a countdown. */
export function timeLeft(deadline) {
  const seconds = Math.max(0, Math.ceil((Date.parse(deadline) - Date.now()) / 1000));
  if (seconds >= 3600) return `${Math.floor(seconds / 3600)} h ${Math.floor((seconds % 3600) / 60)} min left`;
  if (seconds >= 60) return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")} left`;
  return `${seconds} s left`;
}

/** A seat's countdown as its line in the seat list ends with it: set off from the score, so
 * that "score 3" and "23 h 59 min left" never read as one number. */
function countdown(deadline) {
  return `, ${timeLeft(deadline)}`;
}

function inviteLink(tableId, seat) {
  return `${location.origin}${location.pathname}#/tables/${encodeURIComponent(tableId)}/join/${seat}`;
}

// The table whose page showed moves the server lost: the page is drawn again from the table as
// it stands, and says why once.
let rewound = null;
const REWOUND_TEXT = "The server lost the last moves shown here: this is the table as it stands now.";

/** Draw the page again, through the router as a reload would: the log, the move count and the
 * table shown all hold moves the server no longer has. */
function startOver(tableId) {
  rewound = tableId;
  window.dispatchEvent(new HashChangeEvent("hashchange"));
}

/** The page at #/tables/ID (query: seat=N to play one of several seats held here). */
export async function tablePage(main, tableId, query, signal, games, spectator = false) {
  const held = spectator ? {} : heldSeats(tableId);
  const heldNumbers = Object.keys(held).map(Number).sort((a, b) => a - b);
  let seat = query.has("seat") ? Number(query.get("seat")) : heldNumbers[0];
  if (!(seat in held)) seat = heldNumbers[0];
  const token = seat === undefined ? null : held[seat];

  const banner = h("p", { class: "banner", id: "turn" });
  const hint = h("p", { class: "move-hint", id: "move-hint" });
  const feedback = h("p", { class: "feedback", role: "alert" });
  // A lost race (the table moved on between reading it and the click) is news, not an error.
  const notice = h("p", { class: "notice", role: "status" });
  // Reads that fail (an outage, a rate limit) and are tried again: gone once one succeeds.
  const trouble = h("p", { class: "trouble", role: "status" });
  if (rewound === tableId) {
    rewound = null;
    notice.textContent = REWOUND_TEXT;
  }
  const seats = h("ol", { class: "seat-list", "aria-label": "Seats and scores" });
  const board = h("div", { class: "board" });
  const choices = h("div", { class: "choices", role: "group", "aria-label": "Your moves" });
  const invites = h("div", { class: "invites" });
  const log = h("ul", { class: "log", "aria-label": "What happened, newest first" });
  const connection = h("span", { class: "connection" }, "connecting…");
  const moveCount = h("span", { class: "move-count" });
  const leaving = h("div", { class: "leave" });
  const title = h("h1", {}, "Table");
  const howToPlay = h("a", { href: "#/" }, "How to play");
  main.replaceChildren(h("section", { class: "table-page" },
    h("div", { class: "title-row" }, title, h("span", { class: "status-line" }, moveCount, connection)),
    banner, hint, feedback, notice, trouble,
    h("div", { class: "layout" },
      h("aside", {}, h("h2", {}, "Seats"), seats,
        heldNumbers.length > 1 ? seatSwitcher(tableId, heldNumbers, seat) : null,
        h("nav", { class: "links", "aria-label": "This table" },
          h("a", { href: `#/tables/${tableId}/replay` }, "Replay"), " ",
          h("a", { href: `#/tables/${tableId}/watch` }, "Watch as spectator"), " ",
          howToPlay),
        leaving),
      h("div", { class: "play" }, board, choices)),
    invites,
    h("section", { class: "log-section" }, h("h2", {}, "Log"), log)));

  let shown = { table: null, legal: null, picker: null };
  // The countdown of each seat waited for; the deadlines themselves come with the table.
  const ticking = setInterval(() => {
    for (const node of seats.querySelectorAll("[data-deadline]")) node.textContent = countdown(node.dataset.deadline);
  }, 1000);
  signal.addEventListener("abort", () => clearInterval(ticking));
  let wasMyTurn = false;
  let sending = false;
  let over = false;  // the stream brought the game's end

  const render = () => {
    const { table, legal, picker } = shown;
    const module = gameModule(table.game);
    const ctx = contextOf(table, games, legal);
    title.textContent = ctx.game ? ctx.game.title : table.game;
    howToPlay.setAttribute("href", `#/rules/${encodeURIComponent(table.game)}`);
    document.title = `${title.textContent} · Spieltisch`;
    banner.textContent = turnText(table, ctx);
    const myTurn = table.status === "running" && ctx.moves.length > 0;
    banner.classList.toggle("mine", myTurn);
    if (myTurn && !wasMyTurn) announce(banner.textContent);
    wasMyTurn = myTurn;
    hint.textContent = hintText(module, table, ctx, picker);
    renderLeave(table);

    const scores = table.state ? module.scores(table.state) : [];
    seats.replaceChildren(...table.seats.map((info) => h("li", {
      class: [table.to_act.includes(info.seat) && "acting", info.seat === ctx.seat && "you"].filter(Boolean).join(" "),
    },
    h("span", { class: "name" }, seatName(ctx, info.seat)),
    info.bot && info.seat === ctx.seat ? h("span", { class: "bot" }, ` handed to the ${info.bot} bot`)
      : info.bot ? h("span", { class: "bot" }, ` bot: ${info.bot}${info.level ? ` (${info.level})` : ""}`) : null,
    !info.taken ? h("span", { class: "open" }, " open") : null,
    scores.length ? h("span", { class: "score" }, ` score ${scores[info.seat]}`) : null,
    table.deadlines?.[info.seat] ? h("span", { class: "deadline", dataset: { deadline: table.deadlines[info.seat] } }, countdown(table.deadlines[info.seat])) : null,
    table.to_act.includes(info.seat) ? h("span", { class: "visually-hidden" }, ", to move") : null)));

    const focused = document.activeElement;
    const focusKey = focused && (focused.dataset?.pick ? `pick:${focused.dataset.pick}` : focused.dataset?.choice ? "choice" : null);
    board.replaceChildren(table.state ? module.render(table.state, ctx) : h("p", {}, "The game starts once every seat is taken."));
    if (table.result) board.append(h("p", { class: "result" }, resultText(table, ctx.names), " ",
      h("a", { href: `#/tables/${table.id}/replay` }, "Replay and audit this game")));
    renderPicks(picker, legal);
    if (focusKey?.startsWith("pick:")) {
      const again = [...board.querySelectorAll("[data-pick]")].find((node) => node.dataset.pick === focusKey.slice(5) && !node.disabled);
      again?.focus();
    } else if (focusKey === "choice") {
      choices.querySelector("button")?.focus();
    }

    invites.replaceChildren(...(table.status === "open" ? [inviteList(table, ctx)] : []));
  };

  // Leaving takes two clicks: the first only asks whether the player means it.
  let confirming = false;
  const renderLeave = (table) => {
    if (!token || table.status !== "running" || left(table)) {
      leaving.replaceChildren();
      return;
    }
    const ask = () => { confirming = true; renderLeave(shown.table); leaving.querySelector(".danger")?.focus(); };
    const stay = () => { confirming = false; renderLeave(shown.table); leaving.querySelector("button")?.focus(); };
    leaving.replaceChildren(...(confirming
      ? [h("p", { id: "leave-question" }, `Leave for good? A bot plays seat ${table.you + 1} for the rest of the game, and you cannot take it back.`),
        h("button", { type: "button", class: "danger", "aria-describedby": "leave-question", onclick: leave }, "Leave the table"), " ",
        h("button", { type: "button", class: "secondary", onclick: stay }, "Stay")]
      : [h("button", { type: "button", class: "secondary", onclick: ask }, "Leave this table…")]));
  };

  const leave = async () => {
    confirming = false;
    feedback.textContent = "";
    try {
      const table = await api(`/tables/${tableId}/leave`, { method: "POST", token });
      shown = { table, legal: null, picker: null };
      announce("You left the table: a bot plays your seat now.");
    } catch (error) {
      feedback.textContent = `Could not leave: ${error.message}`;
    }
    render();
    refresh();
  };

  const renderPicks = (picker, legal) => {
    const active = picker && legal && legal.moves.length > 0 && !sending;
    const pickable = active ? picker.pickable() : new Set();
    for (const node of board.querySelectorAll("[data-pick]")) {
      node.disabled = !pickable.has(node.dataset.pick);
      const selected = active && picker.selected.includes(node.dataset.pick);
      node.classList.toggle("selected", selected);
      node.setAttribute("aria-pressed", String(selected));
    }
    const buttons = active ? picker.choices().map((option, index) =>
      h("button", { type: "button", class: "choice", dataset: { choice: String(index) }, onclick: () => send(option) }, option.label)) : [];
    if (active && picker.selected.length) {
      buttons.push(h("button", { type: "button", class: "secondary", onclick: () => { picker.clear(); renderPicks(picker, legal); } }, "Clear selection"));
    }
    choices.replaceChildren(...buttons);
    choices.hidden = !buttons.length;
  };

  board.addEventListener("click", (event) => {
    const node = event.target.closest("[data-pick]");
    const { picker, legal } = shown;
    if (!node || node.disabled || !picker) return;
    const decided = picker.toggle(node.dataset.pick);
    if (decided) send(decided);
    else renderPicks(picker, legal);
  });

  const send = async (option) => {
    if (sending) return;
    sending = true;
    feedback.textContent = "";
    notice.textContent = "";
    renderPicks(shown.picker, shown.legal);
    try {
      const answer = await sent(option.move, shown.legal.version);
      trouble.textContent = "";
      // The answer holds the table and this seat's moves at the new version: no reads needed.
      const legal = answer.moves ?? null;
      shown = { table: answer.table, legal, picker: legal ? new Picker(options(answer.table, legal, games)) : null };
      if (!legal) missed = Infinity;  // a replayed answer from before answers carried moves
      announce(`You: ${option.label}`);
    } catch (error) {
      if (signal.aborted) return;  // the page was left: the next page is none of this move's
      const type = error instanceof ApiError ? error.problem.type ?? "" : "";
      const stale = type.endsWith("/stale-version");
      if (stale && error.problem.current_version < shown.legal.version) {
        // The table stands before the version this move was chosen at: moves shown are lost.
        startOver(tableId);
        return;
      }
      if (stale) {
        notice.textContent = "The table moved on before your move arrived; nothing was played. Choose again.";
      } else if (type.endsWith("/not-your-turn")) {
        notice.textContent = "It was no longer your turn when your move arrived; nothing was played.";
      } else if (unanswered(error)) {
        feedback.textContent = `Your move was not confirmed (${error.message}). The table is read again: if your move shows there, it was played.`;
      } else {
        feedback.textContent = `Move refused: ${error.message}`;
      }
      shown.picker?.clear();
      missed = Infinity;  // read the table as it is now
    } finally {
      sending = false;
    }
    render();
    // Read again only if the answer did not carry everything or the table moved on past it.
    if (missed > shown.table.version || !shown.legal) refresh();
    missed = 0;
  };

  // A move is sent again, with the same Idempotency-Key, while the server does not answer or
  // answers that it cannot now: if the first try was played, the server answers the retry with
  // that first answer, so a move is never played twice, nor reported unplayed when it was.
  // A move clicked again at the same version after all its tries went unanswered keeps its key
  // too: the server may hold it already.
  let unconfirmed = null;  // {what: the move and its version, key}
  const sent = async (move, version) => {
    const what = JSON.stringify([move, version]);
    if (unconfirmed?.what !== what) unconfirmed = { what, key: idempotencyKey() };
    try {
      const answer = await postOnce(`/tables/${tableId}/moves`, {
        body: { move, expected_version: version },
        token,
        key: unconfirmed.key,
        signal,
        onRetry: (error) => { trouble.textContent = `Your move is sent again (${error.message}).`; },
      });
      unconfirmed = null;
      return answer;
    } catch (error) {
      if (!unanswered(error)) unconfirmed = null;  // the server saw it and answered
      throw error;
    }
  };

  // One refresh at a time; a request during one makes one more run after it. `upTo` is the
  // version an event announced: nothing to read if the table shown is there already, and
  // nothing yet while a move is on its way (its answer brings the table; `send` reads after it
  // only if events went past it).
  let refreshing = null;
  let again = false;
  let missed = 0;
  let offered = null;  // the seat's legal moves on the stream's latest frame
  let failures = 0;  // reads failed in a row
  let retrying = null;
  signal.addEventListener("abort", () => clearTimeout(retrying));

  /** Read the table and the seat's moves, and show them if they agree. */
  const read = async () => {
    const table = await api(`/tables/${tableId}`, { token });
    let legal = null;
    // A seat handed to a bot has moves no more: its token is refused for them. The moves
    // the stream's latest frame brought serve if they are of the table just read.
    if (token && table.status === "running" && !left(table)) {
      legal = offered?.version === table.version ? offered : await api(`/tables/${tableId}/moves`, { token });
    }
    if (signal.aborted) return;
    failures = 0;
    trouble.textContent = "";
    // A move landed between the two reads: show them only once they agree.
    if (legal && legal.version !== table.version) { again = true; return; }
    // A move's answer showed a later table while these reads were under way.
    if (shown.table && table.version < shown.table.version) return;
    const unchanged = shown.legal && legal && shown.legal.version === legal.version;
    const picker = unchanged ? shown.picker : legal ? new Picker(options(table, legal, games)) : null;
    shown = { table, legal, picker };
    render();
  };

  /** Seconds until a failed read is tried again, said on the page. */
  const readFailed = (error) => {
    failures += 1;
    const seconds = backoffSeconds(error, failures);
    trouble.textContent = `Could not read the table (${error.message}); trying again in ${seconds} s.`;
    return seconds;
  };

  const refresh = async (upTo) => {
    if (upTo !== undefined) {
      if (sending) { missed = Math.max(missed, upTo); return; }
      if (shown.table && shown.table.version >= upTo) return;
    }
    if (refreshing) { again = true; return refreshing; }
    refreshing = (async () => {
      do {
        again = false;
        try {
          await read();
        } catch (error) {
          if (signal.aborted) return;
          if (refusedForGood(error)) {
            // The server lost the whole table, or this seat: nothing shown can be played any
            // more, and asking again would be refused again.
            trouble.textContent = error.status === 404 ? "This table is gone from the server."
              : `The server no longer knows this browser's seat here (${error.message}).`;
            shown = { ...shown, legal: null, picker: null };
            render();
            return;
          }
          // Tried again after a pause even if no event comes to ask for it: a "Your turn"
          // must not wait for the next move of someone else.
          clearTimeout(retrying);
          retrying = setTimeout(() => refresh(), readFailed(error) * 1000);
          return;  // reading again at once would fail again; the retry reads what came meanwhile
        }
      } while (again && !signal.aborted);
    })().finally(() => { refreshing = null; });
    return refreshing;
  };

  // The page needs the table to draw anything: a first read that fails is waited out and tried
  // again (a table that does not exist goes to the router, which says so).
  while (!shown.table) {
    try {
      await read();
    } catch (error) {
      if (signal.aborted || refusedForGood(error)) throw error;
      await pause(readFailed(error) * 1000, signal);
    }
    if (signal.aborted) return;
  }
  const counter = new MoveCounter(shown.table.game);
  follow(tableId, {
    token,
    signal,
    onState: (state) => { connection.textContent = state === "live" ? "live" : "reconnecting…"; },
    onEvent: (event) => {
      if (event.type === "stream.Rewound") {
        startOver(tableId);
        return;
      }
      if (event.moves) offered = event.moves;
      if (event.type === "table.GameFinished") over = true;
      const move = counter.add(event);
      moveCount.textContent = movesText(counter.count);
      const line = describe(event, shown.table, games);
      if (line) log.prepend(logLine(move, line));
      refresh(event.seq);
    },
  }).then(() => { connection.textContent = over || shown.table.status === "finished" ? "game over" : "stream ended"; })
    .catch((error) => { connection.textContent = `stream failed: ${error.message}`; });
}

/** A line of the log, numbered by the move it belongs to (seats taken, the deal: none). */
export function logLine(move, line) {
  return h("li", { dataset: move === null ? {} : { move: String(move) } },
    h("span", { class: "move-number" }, move === null ? "" : `${move}.`), " ", line);
}

function options(table, legal, games) {
  const module = gameModule(table.game);
  const ctx = contextOf(table, games, legal);
  return legal.moves.map((move) => ({ move, ...module.move(move, table.state, ctx) }));
}

export function describe(event, table, games) {
  if (!table) return null;
  const ctx = contextOf(table, games);
  const name = (seat) => seatName(ctx, seat);
  switch (event.type) {
    case "table.GameCreated": return "Table opened";
    case "table.SeatTaken": return `${event.data.name || name(event.data.seat)} sat down at seat ${event.data.seat + 1}`;
    case "table.GameFinished": return resultText({ result: event.data.result }, ctx.names);
    case "table.MoveSubstituted": return `${name(event.data.seat)}'s move was chosen by a stand-in`;
    default: {
      // Game events are named `<game>.<Event>`; the game's module knows them by the short name.
      const type = event.type.startsWith(`${table.game}.`) ? event.type.slice(table.game.length + 1) : event.type;
      return gameModule(table.game).describe({ ...event, type }, ctx);
    }
  }
}

/** A read the server will refuse however often it is asked: no such table, or a token that
 * holds no seat at it any more. */
function refusedForGood(error) {
  return error instanceof ApiError && [401, 403, 404].includes(error.status);
}

function seatSwitcher(tableId, held, current) {
  return h("label", { class: "switcher" }, "Playing as seat ",
    h("select", { onchange: (event) => { location.hash = `#/tables/${tableId}?seat=${event.target.value}`; } },
      held.map((seat) => h("option", { value: seat, selected: seat === current }, String(seat + 1)))));
}

function inviteList(table, ctx) {
  const open = table.seats.filter((seat) => !seat.taken);
  return h("section", { "aria-label": "Invitations" }, h("h2", {}, "Invite players"),
    h("p", {}, "Send each person the link of one open seat; opening it lets them take that seat."),
    h("ul", { class: "invite-list" }, open.map((info) => {
      const link = inviteLink(table.id, info.seat);
      return h("li", {}, h("label", {}, `Seat ${info.seat + 1} `,
        h("input", { type: "text", readonly: true, value: link, size: 40, onfocus: (event) => event.target.select() })),
      " ", h("a", { href: link }, "Take it here"));
    })),
    h("p", {}, `${ctx.names.length - open.length} of ${ctx.names.length} seats taken.`));
}

/** The page at #/tables/ID/join/N: a name, then the seat. */
export async function joinPage(main, tableId, seat, games) {
  const table = await api(`/tables/${tableId}`);
  const title = games[table.game]?.title ?? table.game;
  const info = table.seats[seat];
  const name = h("input", { id: "join-name", name: "name", required: true, maxlength: 40, autocomplete: "nickname", value: playerName() });
  const feedback = h("p", { class: "feedback", role: "alert" });
  const form = h("form", { class: "join", onsubmit: async (event) => {
    event.preventDefault();
    try {
      // Sent again under its key if no answer comes: a seat taken whose answer was lost is
      // answered again with its token, not taken twice nor lost.
      const taken = await postOnce(`/tables/${tableId}/seats`, { body: { seat, name: name.value.trim() } });
      rememberName(name.value.trim());
      holdSeat(tableId, taken.seat, taken.token);
      location.hash = `#/tables/${tableId}?seat=${taken.seat}`;
    } catch (error) {
      feedback.textContent = `Could not take the seat: ${error.message}`;
    }
  } },
  h("label", { for: "join-name" }, "Your name"), name,
  h("button", { type: "submit" }, `Take seat ${seat + 1}`));
  main.replaceChildren(h("section", { class: "join-page" },
    h("h1", {}, `Join a table of ${title}`),
    info && !info.taken ? form : h("p", {}, `Seat ${seat + 1} is taken. `, h("a", { href: `#/tables/${tableId}/watch` }, "Watch the game")),
    feedback));
  name.focus();
}
