// The seats this browser holds: tokens are shown once, when a seat is taken, so they are kept in
// localStorage, per table. Whoever holds the link and the token plays the seat.

const SEATS = "spieltisch.seats";
const NAME = "spieltisch.name";

function all() {
  try { return JSON.parse(localStorage.getItem(SEATS)) || {}; } catch { return {}; }
}

/** {seat: token} held for `tableId`. */
export function heldSeats(tableId) {
  return all()[tableId] || {};
}

/** Every table this browser holds a seat of: {tableId: {seat: token}}. */
export function heldTables() {
  return all();
}

/** Drop the seats held at `tableId` (its game is over and dismissed, or the table is gone). */
export function forgetTable(tableId) {
  const seats = all();
  delete seats[tableId];
  localStorage.setItem(SEATS, JSON.stringify(seats));
}

export function holdSeat(tableId, seat, token) {
  const seats = all();
  seats[tableId] = { ...(seats[tableId] || {}), [seat]: token };
  localStorage.setItem(SEATS, JSON.stringify(seats));
}

export function playerName() {
  return localStorage.getItem(NAME) || "";
}

export function rememberName(name) {
  localStorage.setItem(NAME, name);
}
