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

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }

  describe() {
    if (this.status === 401) {
      return `The credential was refused (401 ${this.code}): ${this.message}. Paste a credential for this server's project above.`;
    }
    return `${this.status} ${this.code}: ${this.message}`;
  }
}

export async function call(method, path, { query, body } = {}) {
  const secret = credential();
  if (!secret) {
    throw new ApiError(401, "unauthorized", "no credential yet");
  }
  let url = path;
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
  facts: (subject) => call("GET", "/v1/facts", { query: { subject } }),
  messages: (query) => call("GET", "/v1/messages", { query }),
  message: (id) => call("GET", "/v1/messages/" + encodeURIComponent(id)),
  recall: (body) => call("POST", "/v1/recalls", { body }),
  // What an erasure would take, nothing removed; then the erasure with the other
  // entities ticked (`also`) and, for a subject that is no entity, the preview's token.
  previewErasure: (subject) => call("POST", "/v1/erasures", { body: { subject, dry_run: true } }),
  erase: (subject, also = [], token = undefined) =>
    call("POST", "/v1/erasures", { body: { subject, also, token } }),
  erasure: (id) => call("GET", "/v1/erasures/" + encodeURIComponent(id)),
  health: () => fetch("/v1/health", { cache: "no-store" }).then((r) => r.json()),
};
