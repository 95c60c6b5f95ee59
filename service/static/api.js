// The public API, as the client uses it: JSON in and out, problems as errors, and the live
// event stream read with fetch (EventSource cannot send the seat's Authorization header).

const REQUEST_TIMEOUT_MS = 20000;
/** A stream that says nothing for this long is taken for dead and opened again, until its
 * answer says how often the server sends keep-alives (`Stream-Keepalive`, 15 s by default). */
const STREAM_SILENCE_MS = 45000;
const KEEPALIVES_MISSED = 3;
const LONGEST_WAIT_S = 30;

export class ApiError extends Error {
  constructor(status, problem, retryAfter = null) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
    this.retryAfter = retryAfter;  // seconds, when the server said how long to wait
  }
}

function retryAfterOf(response) {
  const seconds = Number(response.headers.get("Retry-After"));
  return seconds > 0 ? seconds : null;
}

/** How long to wait before trying again after `failures` failures in a row: a doubling pause
 * of at most half a minute, or longer if the server asked for longer (asking again sooner would
 * only be refused again). */
export function backoffSeconds(error, failures) {
  return Math.max(error?.retryAfter ?? 0, Math.min(LONGEST_WAIT_S, 2 ** Math.max(0, failures - 1)));
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function pause(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) { resolve(); return; }  // an aborted signal fires no more "abort"
    const done = () => { clearTimeout(timer); signal?.removeEventListener("abort", done); resolve(); };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}

export async function api(path, { method = "GET", body, token, headers = {} } = {}) {
  // A request that hangs (a dead connection, a server that stopped answering) would leave the
  // page waiting for good: it is given up after a while, as a network error.
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), REQUEST_TIMEOUT_MS);
  const init = { method, headers: { Accept: "application/json", ...headers }, signal: timeout.signal };
  if (token) init.headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  let text;
  try {
    response = await fetch(`/v1${path}`, init);
    text = await response.text();
  } catch (error) {
    const why = timeout.signal.aborted ? `no answer within ${REQUEST_TIMEOUT_MS / 1000} s` : error.message;
    throw new ApiError(0, { title: "Network error", detail: `the server did not answer (${why})` });
  } finally {
    clearTimeout(timer);
  }
  let payload = null;
  try { payload = text ? JSON.parse(text) : null; } catch { payload = { detail: text }; }
  if (!response.ok) throw new ApiError(response.status, payload || {}, retryAfterOf(response));
  return payload;
}

const POST_ATTEMPTS = 4;

/** Whether a request may have gone unanswered or been turned away before it was acted on (no
 * answer, a timeout, an outage, a rate limit): sent again under its Idempotency-Key, it is safe. */
export function unanswered(error) {
  return error instanceof ApiError && (error.status === 0 || error.status === 429 || error.status >= 500);
}

export function idempotencyKey() {
  const bytes = new Uint8Array(16);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * POST `body` under one Idempotency-Key (`key`, else a new one), sent again after a pause while
 * no answer comes or the server answers that it cannot now: what the first try did, if it did
 * anything, is answered again, never done twice. `onRetry(error)` is told before each pause.
 */
export async function postOnce(path, { body, token, key = idempotencyKey(), signal, onRetry = () => {} }) {
  const headers = { "Idempotency-Key": key };
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await api(path, { method: "POST", body, token, headers });
    } catch (error) {
      if (!unanswered(error) || attempt === POST_ATTEMPTS || signal?.aborted) throw error;
      onRetry(error);
      await pause(backoffSeconds(error, attempt) * 1000, signal);
    }
  }
}

/**
 * Follow a table's event stream: `onEvent({seq, type, data, meta})` for each event after `after`.
 * Reconnects with Last-Event-ID when the server ends the stream, until the game is over or
 * `signal` aborts. `onState("live" | "reconnecting")` reports the connection.
 */
export async function follow(tableId, { token, after = 0, signal, onEvent, onState = () => {} }) {
  let last = after;
  let retry = 1000;
  let failures = 0;
  while (!signal.aborted) {
    let finished = false;
    let failure = null;
    // This connection alone ends when the page is left or the stream goes silent.
    const connection = new AbortController();
    const close = () => connection.abort();
    signal.addEventListener("abort", close, { once: true });
    let silence;
    let silenceMs = STREAM_SILENCE_MS;
    const heard = () => { clearTimeout(silence); silence = setTimeout(close, silenceMs); };
    heard();
    try {
      const headers = { Accept: "text/event-stream" };
      if (token) headers.Authorization = `Bearer ${token}`;
      if (last) headers["Last-Event-ID"] = String(last);
      const response = await fetch(`/v1/tables/${encodeURIComponent(tableId)}/stream`, { headers, signal: connection.signal });
      if (!response.ok) {
        throw new ApiError(response.status, await response.json().catch(() => ({})), retryAfterOf(response));
      }
      const keepalive = Number(response.headers.get("Stream-Keepalive"));
      if (keepalive > 0) silenceMs = KEEPALIVES_MISSED * keepalive * 1000 + 1000;
      heard();
      onState("live");
      failures = 0;
      for await (const message of messages(response.body, connection.signal, heard)) {
        if (message.retry) retry = message.retry;
        if (!message.data) continue;
        const event = JSON.parse(message.data);
        last = event.seq;
        onEvent(event);
        if (event.type === "table.GameFinished") finished = true;
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ApiError && error.status >= 400 && error.status < 500 && error.status !== 429) throw error;
      failure = error;
    } finally {
      clearTimeout(silence);
      signal.removeEventListener("abort", close);
    }
    if (finished || signal.aborted) return;
    onState("reconnecting");
    // A stream the server ended comes back after its `retry:`; a failed one backs off.
    if (failure) failures += 1;
    await pause(failure ? Math.max(retry, backoffSeconds(failure, failures) * 1000) : retry, signal);
  }
}

/** The messages of a text/event-stream body: {id, event, data, retry}. */
async function* messages(body, signal, heard) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  signal.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
  let buffer = "";
  let message = {};
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    heard();  // keep-alive comments count: the connection lives
    buffer += value;
    let end;
    while ((end = buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
      if (line === "") {
        yield message;
        message = {};
      } else if (!line.startsWith(":")) {
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "data") message.data = message.data ? `${message.data}\n${text}` : text;
        else if (field === "retry") message.retry = Number(text) || undefined;
        else message[field] = text;
      }
    }
  }
}
