// The public API, called with the credential kept in this tab's session storage. The
// credential never goes into a URL, the page's address, or the console.

const KEY = "taisce.credential";

export function credential() {
  return sessionStorage.getItem(KEY) || "";
}

export function setCredential(secret) {
  if (secret) sessionStorage.setItem(KEY, secret);
  else sessionStorage.removeItem(KEY);
}

const USER = "taisce.user";
export const USER_PATTERN = /^[A-Za-z0-9._:@-]{1,128}$/;

// The end user whose memory the explorer reads beside the shared memory ("" for the
// shared memory only): sent as `user` on every call.
export function user() {
  return sessionStorage.getItem(USER) || "";
}

export function setUser(name) {
  if (name) sessionStorage.setItem(USER, name);
  else sessionStorage.removeItem(USER);
}

// Whose memory the last answer came from (the Taisce-Project and Taisce-User headers).
export const answeredBy = { project: "", user: "" };
const seen = new Set();
export function onAnswer(listener) {
  seen.add(listener);
}

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }

  // What went wrong in plain words; the server's own words only where they name what
  // to change (a refused control).
  describe() {
    if (this.status === 0) return "The server could not be reached. Check that it is running, then try again.";
    if (this.status === 401) return "The credential was refused. Paste a credential for this server's project above.";
    if (this.status === 403) return "This credential may not do that.";
    if (this.status === 404) return "Not found: it may have been erased.";
    if (this.status === 413) return "The request is too large for the server.";
    if (this.status === 429) return "Too many requests just now. Wait a moment and try again.";
    if (this.status >= 500) return `The server failed to answer (${this.status}). Try again in a moment.`;
    return `The server refused the request: ${this.message}.`;
  }
}

export async function call(method, path, { query, body } = {}) {
  const secret = credential();
  if (!secret) {
    throw new ApiError(401, "unauthorized", "no credential yet");
  }
  let url = path;
  const scope = user();
  if (scope && (method === "GET" || method === "DELETE")) query = { ...(query || {}), user: scope };
  if (scope && body !== undefined) body = { ...body, user: scope };
  if (query) {
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined && v !== null && v !== "") params.set(k, String(v));
    }
    const text = params.toString();
    if (text) url += "?" + text;
  }
  const headers = { Authorization: `Bearer ${secret}` };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: "no-store",
      credentials: "omit",
      referrerPolicy: "no-referrer",
    });
  } catch (error) {
    throw new ApiError(0, "unreachable", "the server could not be reached");
  }
  const project = response.headers.get("Taisce-Project");
  if (project !== null) {
    answeredBy.project = decodeURIComponent(project);
    answeredBy.user = decodeURIComponent(response.headers.get("Taisce-User") || "");
    seen.forEach((listener) => listener(answeredBy));
  }
  if (response.status === 204) return null;
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = (data && data.error) || {};
    throw new ApiError(
      response.status,
      error.code || "error",
      error.message || `the server answered ${response.status}`,
    );
  }
  return data;
}

export const api = {
  entities: (query) => call("GET", "/v1/entities", { query }),
  neighbourhood: (name, hops) => call("GET", "/v1/entities/neighbourhood", { query: { name, hops } }),
  aliases: () => call("GET", "/v1/entities/aliases"),
  facts: (subject, cursor, limit) => call("GET", "/v1/facts", { query: { subject, cursor, limit } }),
  messages: (query) => call("GET", "/v1/messages", { query }),
  message: (id) => call("GET", "/v1/messages/" + encodeURIComponent(id)),
  recall: (body) => call("POST", "/v1/recalls", { body }),
  searchFacts: (query) => call("GET", "/v1/search/facts", { query }),
  searchMessages: (query) => call("GET", "/v1/search/messages", { query }),
  storeMessages: (messages) => call("POST", "/v1/messages", { body: { messages } }),
  storeFacts: (facts) => call("POST", "/v1/facts", { body: { facts } }),
  // One fact, nothing else: its message and its entities stay (an erasure takes a name).
  deleteFact: (id) => call("DELETE", "/v1/facts/" + encodeURIComponent(id)),
  // What an erasure would take, nothing removed; then the erasure with the other
  // entities ticked (`also`) and, for a subject that is no entity, the preview's token.
  previewErasure: (subject) => call("POST", "/v1/erasures", { body: { subject, dry_run: true } }),
  erase: (subject, also = [], token = undefined) =>
    call("POST", "/v1/erasures", { body: { subject, also, token } }),
  erasure: (id) => call("GET", "/v1/erasures/" + encodeURIComponent(id)),
  health: () => fetch("/v1/health", { cache: "no-store" }).then((r) => r.json()),
};
