// What `taisce serve` never answers but API Gateway does on AWS: its own bodies
// (`{"message": ...}`), throttling and a failing function. A stand-in HTTP server on
// 127.0.0.1 answers exactly these (as docs/API.md, "Answers from API Gateway", lists
// them), and records what the client sent, so the retries can be checked.
import assert from "node:assert/strict";
import { type IncomingMessage, type ServerResponse, createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, beforeEach, test } from "node:test";
import { Taisce, TaisceError } from "taisce-client";

type Answer = { status: number; body: string; headers?: Record<string, string> };

let answers: Answer[] = [];
const received: { method: string; url: string; body: string; authorization?: string }[] = [];
const standIn = createServer((request: IncomingMessage, response: ServerResponse) => {
  let body = "";
  request.on("data", (chunk: Buffer) => (body += chunk.toString()));
  request.on("end", () => {
    received.push({
      method: request.method ?? "",
      url: request.url ?? "",
      body,
      authorization: request.headers.authorization,
    });
    const answer = answers.shift() ?? { status: 500, body: '{"message": "no answer left"}' };
    response.writeHead(answer.status, { "Content-Type": "application/json", ...answer.headers });
    response.end(answer.body);
  });
});
let url: string;

before(async () => {
  await new Promise<void>((resolve) => standIn.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(standIn.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => standIn.close(() => resolve())));
beforeEach(() => {
  answers = [];
  received.length = 0;
});

async function refusal(promise: Promise<unknown>): Promise<TaisceError> {
  const error = await promise.then(
    () => assert.fail("the request was not refused"),
    (error: unknown) => error,
  );
  assert.ok(error instanceof TaisceError, String(error));
  return error;
}

test("API Gateway's own answers get the API's codes", async () => {
  const taisce = new Taisce({ url, apiKey: "k", retries: 0 });
  const cases: [number, string, string][] = [
    [401, "Unauthorized", "unauthorized"],
    [403, "Forbidden", "unauthorized"],
    [404, "Not Found", "not_found"],
    [413, "Request Entity Too Large", "payload_too_large"],
    [429, "Too Many Requests", "rate_limited"],
    [504, "Endpoint request timed out", "internal"],
  ];
  for (const [status, message, code] of cases) {
    answers = [{ status, body: JSON.stringify({ message }) }];
    const error = await refusal(taisce.factsAbout("Atlas"));
    assert.equal(error.status, status);
    assert.equal(error.code, code);
    assert.equal(error.message, `API Gateway: ${message} (HTTP ${status})`);
    assert.deepEqual(error.details, { message });
  }
  answers = [{ status: 502, body: "<html>Bad Gateway</html>" }];
  const error = await refusal(taisce.factsAbout("Atlas"));
  assert.equal(error.code, "http_error");
  assert.equal(error.details, "<html>Bad Gateway</html>");
});

test("a 429 or 5xx is retried with the same ids; the stored answer comes back", async () => {
  const taisce = new Taisce({ url, apiKey: "secret", retries: 3, backoffMs: 1 });
  answers = [
    { status: 429, body: '{"message": "Too Many Requests"}', headers: { "Retry-After": "0" } },
    { status: 503, body: '{"message": "Service Unavailable"}' },
    { status: 202, body: '{"messages": [{"id": "m-given"}, {"id": "m-made"}]}' },
  ];
  const ids = await taisce.storeMessages([
    { id: "m-given", role: "user", content: "one" },
    { role: "user", content: "two" },
  ]);
  assert.deepEqual(ids, ["m-given", "m-made"]);
  assert.equal(received.length, 3);
  const bodies = received.map((r) => r.body);
  assert.equal(new Set(bodies).size, 1, "every attempt sends the same body");
  const sent = JSON.parse(bodies[0]!) as { messages: { id: string; content: string }[] };
  assert.equal(sent.messages[0]!.id, "m-given");
  assert.match(sent.messages[1]!.id, /^msg_[0-9a-f-]{36}$/);
  assert.deepEqual(
    received.map((r) => [r.method, r.url, r.authorization]),
    Array(3).fill(["POST", "/v1/messages", "Bearer secret"]),
  );
});

test("the retries end: the last refusal is thrown; a 400 is never retried", async () => {
  const taisce = new Taisce({ url, apiKey: "k", retries: 2, backoffMs: 1 });
  const internal = '{"error": {"code": "internal", "message": "failed", "request_id": "r-1"}}';
  answers = Array(3).fill({ status: 500, body: internal });
  const error = await refusal(taisce.recall("Where?"));
  assert.equal(received.length, 3);
  assert.equal(error.code, "internal");
  assert.equal(error.requestId, "r-1");

  received.length = 0;
  answers = [{ status: 400, body: '{"error": {"code": "invalid_request", "message": "no"}}' }];
  assert.equal((await refusal(taisce.recall(" "))).code, "invalid_request");
  assert.equal(received.length, 1);

  // taisce serve's own: a slow request (408, not run) and too many connections (503 with
  // Retry-After) are sent again; an HTTP version it does not serve (505) is not.
  received.length = 0;
  const slow = '{"error": {"code": "request_timeout", "message": "the body was slow"}}';
  const busy = '{"error": {"code": "unavailable", "message": "too many connections"}}';
  answers = [
    { status: 408, body: slow },
    { status: 503, body: busy, headers: { "Retry-After": "0" } },
    { status: 505, body: '{"error": {"code": "http_version_not_supported", "message": "1.1"}}' },
  ];
  assert.equal((await refusal(taisce.recall("Where?"))).code, "http_version_not_supported");
  assert.equal(received.length, 3);
});

test("a request that outlives timeoutMs, head or body, is a network error", async () => {
  const slow = createServer(() => {
    // never answers
  });
  await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve));
  const slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}`;
  const stalled = createServer((_request, response) => {
    // the head, then a body that never ends
    response.writeHead(200, { "Content-Type": "application/json" });
    response.write('{"status": "ok", ');
  });
  await new Promise<void>((resolve) => stalled.listen(0, "127.0.0.1", resolve));
  const stalledUrl = `http://127.0.0.1:${(stalled.address() as AddressInfo).port}`;
  try {
    const taisce = new Taisce({ url: slowUrl, timeoutMs: 200 });
    await assert.rejects(taisce.health(), { name: "TaisceNetworkError" });
    const reading = new Taisce({ url: stalledUrl, timeoutMs: 200 });
    await assert.rejects(reading.health(), { name: "TaisceNetworkError" });
  } finally {
    stalled.closeAllConnections();
    await new Promise<void>((resolve) => stalled.close(() => resolve()));
    slow.closeAllConnections();
    await new Promise<void>((resolve) => slow.close(() => resolve()));
  }
});

test("a pending erasure (a deploy's worker erases it) is read until done", async () => {
  const taisce = new Taisce({ url, apiKey: "k", retries: 0 });
  const id = `era_${"ab".repeat(16)}`;
  const answer = (status: string, facts: number) =>
    JSON.stringify({
      id,
      status,
      status_url: `/v1/erasures/${id}`,
      erased: { facts, entities: 0, messages: 0, passages: 0, reports: 0 },
      requested_at: "2026-12-03T07:00:00.000000Z",
      ...(status === "done" ? { finished_at: "2026-12-03T07:00:01.000000Z" } : {}),
    });
  answers = [
    { status: 202, body: answer("pending", 0) },
    { status: 200, body: answer("pending", 3) },
    { status: 200, body: answer("done", 4) },
  ];
  const erased = await taisce.erase("Atlas", { waitMs: 5_000, pollMs: 10 });
  assert.equal(erased.status, "done");
  assert.equal(erased.erased.facts, 4);
  assert.deepEqual(
    received.map((r) => [r.method, r.url, r.body]),
    [
      ["POST", "/v1/erasures", '{"subject":"Atlas"}'],
      ["GET", `/v1/erasures/${id}`, ""],
      ["GET", `/v1/erasures/${id}`, ""],
    ],
  );
  // Without waitMs the first answer comes back as it is.
  answers = [{ status: 202, body: answer("pending", 0) }];
  assert.equal((await taisce.erase("Atlas")).status, "pending");
});
