// The errors the client throws. TaisceError: the API (or API Gateway in front of it)
// answered with a refusal. TaisceNetworkError: no answer at all (unreachable, timed out).
import type { components } from "./schema.js";

/** The API's error object, `{"error": {"code", "message"[, "control"][, "request_id"]}}`. */
export type ErrorDetail = components["schemas"]["ErrorDetail"];

/** The API's codes, plus `http_error`, which the client gives an answer that is not in
 * the API's shape (API Gateway's own 429 becomes `rate_limited`, as `taisce serve`'s is). */
export type ErrorCode = ErrorDetail["code"] | "rate_limited" | "http_error";

/** The API refused a request. `details` is the body exactly as it came (parsed JSON when
 * it was JSON, else its text), so a field a newer server adds is still reachable. */
export class TaisceError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  /** The refused recall control (`invalid_recall_controls` only). */
  readonly control: string | undefined;
  /** The id to find a failure in the server's logs (`internal` only). */
  readonly requestId: string | undefined;
  readonly details: unknown;

  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    options: { control?: string; requestId?: string; details?: unknown } = {},
  ) {
    super(message);
    this.name = "TaisceError";
    this.status = status;
    this.code = code;
    this.control = options.control;
    this.requestId = options.requestId;
    this.details = options.details;
  }

  /** One line for a person: `TaisceError: invalid_recall_controls (max_rows): ...`. */
  override toString(): string {
    const where = this.control ? ` (${this.control})` : "";
    return `${this.name}: ${this.code}${where}: ${this.message}`;
  }
}

/** The server could not be reached or did not answer in time; `cause` is fetch's error. */
export class TaisceNetworkError extends Error {
  readonly url: string;

  constructor(url: string, cause: unknown) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(`could not reach Taisce at ${url}: ${reason}`, { cause });
    this.name = "TaisceNetworkError";
    this.url = url;
  }
}

// API Gateway answers some requests itself with `{"message": "..."}`: the API's code for
// each (401 no or a refused credential, 403 a cached refusal, 404 no such route, 413 over
// its body limit, 429 throttled; 5xx the function failed or timed out).
const GATEWAY_CODES: Record<number, ErrorCode> = {
  401: "unauthorized",
  403: "unauthorized",
  404: "not_found",
  413: "payload_too_large",
  429: "rate_limited",
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The typed error for a refused response, from its status and parsed body. */
export function apiError(status: number, body: unknown): TaisceError {
  const error = isObject(body) ? body.error : undefined;
  if (isObject(error) && typeof error.code === "string") {
    // A code this client does not know yet is kept as the server sent it.
    return new TaisceError(
      status,
      error.code as ErrorCode,
      String(error.message ?? `HTTP ${status}`),
      {
        control: typeof error.control === "string" ? error.control : undefined,
        requestId: typeof error.request_id === "string" ? error.request_id : undefined,
        details: body,
      },
    );
  }
  const gateway = isObject(body) && Object.keys(body).length === 1 ? body.message : undefined;
  if (typeof gateway === "string" && (status in GATEWAY_CODES || status >= 500)) {
    const code = GATEWAY_CODES[status] ?? "internal";
    return new TaisceError(status, code, `API Gateway: ${gateway} (HTTP ${status})`, {
      details: body,
    });
  }
  // Not the API's shape (a proxy's page, an empty body): name the status instead.
  return new TaisceError(status, "http_error", `the server answered HTTP ${status}`, {
    details: body,
  });
}
