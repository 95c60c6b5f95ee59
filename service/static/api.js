// The public API, as the client uses it: JSON in and out, problems as errors, and the live
// event stream read with fetch (EventSource cannot send the seat's Authorization header).

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

export async function api(path, { method = "GET", body, token, headers = {} } = {}) {
  const init = { method, headers: { Accept: "application/json", ...headers } };
  if (token) init.headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(`/v1${path}`, init);
  } catch (error) {
    throw new ApiError(0, { title: "Network error", detail: `the server did not answer (${error.message})` });
  }
  const text = await response.text();
  let payload = null;
  try { payload = text ? JSON.parse(text) : null; } catch { payload = { detail: text }; }
  if (!response.ok) throw new ApiError(response.status, payload || {});
  return payload;
}

/**
 * Follow a table's event stream: `onEvent({seq, type, data, meta})` for each event after `after`.
 * Reconnects with Last-Event-ID when the server ends the stream, until the game is over or
 * `signal` aborts. `onState("live" | "reconnecting")` reports the connection.
 */
export async function follow(tableId, { token, after = 0, signal, onEvent, onState = () => {} }) {
  let last = after;
  let retry = 1000;
  while (!signal.aborted) {
    let finished = false;
    try {
      const headers = { Accept: "text/event-stream" };
      if (token) headers.Authorization = `Bearer ${token}`;
      if (last) headers["Last-Event-ID"] = String(last);
      const response = await fetch(`/v1/tables/${encodeURIComponent(tableId)}/stream`, { headers, signal });
      if (!response.ok) throw new ApiError(response.status, await response.json().catch(() => ({})));
      onState("live");
      for await (const message of messages(response.body, signal)) {
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
    }
    if (finished || signal.aborted) return;
    onState("reconnecting");
    await new Promise((resolve) => setTimeout(resolve, retry));
  }
}

/** The messages of a text/event-stream body: {id, event, data, retry}. */
async function* messages(body, signal) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  signal.addEventListener("abort", () => reader.cancel().catch(() => {}), { once: true });
  let buffer = "";
  let message = {};
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
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
