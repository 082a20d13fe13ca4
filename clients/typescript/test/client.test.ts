// The client against a real `taisce serve --demo`: store, recall, list, erase, and the
// API's refusals as typed errors. Imports the package by its own name, so what is tested
// is the built dist/ and its .d.ts, as a user gets them.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { type Fact, Taisce, TaisceError, TaisceNetworkError } from "taisce-client";
import { type DemoServer, startDemoServer } from "./server.js";

let server: DemoServer;
let taisce: Taisce;

before(async () => {
  server = await startDemoServer();
  taisce = new Taisce({ url: server.url, apiKey: server.apiKey, retries: 0 });
});

after(async () => {
  await server?.stop();
});

/** The TaisceError `promise` rejects with (fails when it resolves or throws another kind). */
async function refusal(promise: Promise<unknown>): Promise<TaisceError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof TaisceError, `expected a TaisceError, got ${String(error)}`);
    return error;
  }
  assert.fail("the request was not refused");
}

describe("users inside the project", () => {
  test("a user per client and per call, stored and read in that user's memory", async () => {
    const ana = new Taisce({ url: server.url, apiKey: server.apiKey, retries: 0, user: "ts-ana" });
    const fact = {
      subject: "Tsu",
      predicate: "likes",
      object: "tea",
      source_role: "user" as const,
    };
    await ana.storeFacts([fact]);
    assert.deepEqual(
      (await ana.factsAbout("Tsu")).map((f) => f.object),
      ["tea"],
    );
    assert.deepEqual(await taisce.factsAbout("Tsu"), []);
    assert.deepEqual((await taisce.factsAbout("Tsu", { user: "ts-ana" })).length, 1);
    assert.deepEqual(await ana.factsAbout("Tsu", { user: "ts-bo" }), []);
  });

  test("the credentials routes refuse a credential that is not an admin's", async () => {
    const error = await refusal(taisce.listCredentials());
    assert.equal(error.status, 403);
    assert.equal(error.code, "forbidden");
  });
});

describe("reading the demo memory", () => {
  test("health needs no credential and says only that the server is up", async () => {
    const health = await new Taisce({ url: server.url, apiKey: "" }).health();
    assert.deepEqual(health, { status: "ok" });
  });

  test("status names the embedded store, for a credential only", async () => {
    const status = await taisce.status();
    assert.equal(status.store, "embedded");
    assert.equal(status.embeddings, "none");
    assert.ok(status.bundle_characters > 0 && status.max_rows > 0);
    assert.equal(typeof status.work_pending, "boolean");
    const error = await refusal(new Taisce({ url: server.url, apiKey: "" }).status());
    assert.equal(error.status, 401);
  });

  test("facts about a subject, in storing order", async () => {
    const facts = await taisce.factsAbout("maya okafor");
    assert.deepEqual(
      facts.map((f) => [f.subject, f.predicate, f.object]),
      [
        ["Maya Okafor", "manages", "Atlas"],
        ["Maya Okafor", "lives in", "Galway"],
        ["Maya Okafor", "commutes to", "Dublin"],
      ],
    );
  });

  test("the demo's first recall finds Atlas's employer and manager over two hops", async () => {
    const recall = await taisce.recall("Where does Atlas work, and who manages him?", {
      hops: 2,
      source_roles: ["user", "tool"],
      max_characters: 4000,
    });
    assert.equal(recall.controls.hops, 2);
    assert.deepEqual(recall.controls.source_roles, ["user", "tool"]);
    assert.ok(recall.characters <= 4000);
    const said = recall.facts.map((f) => `${f.subject} ${f.predicate} ${f.object}`);
    assert.ok(said.includes("Atlas works at Acme Corp"), said.join("; "));
    assert.ok(said.includes("Maya Okafor manages Atlas"), said.join("; "));
  });

  test("the raw openapi-fetch client reaches every route, typed", async () => {
    const { data, response } = await taisce.api.GET("/v1/entities/aliases");
    assert.equal(response.status, 200);
    assert.deepEqual(data, { aliases: [], next_cursor: null });
  });
});

describe("storing, listing and erasing", () => {
  const content = "Saoirse Byrne moved to Cork in March. She teaches piano there.";
  let messageId: string;
  let factIds: string[];

  test("messages and facts are stored and their ids returned in order", async () => {
    [messageId] = (await taisce.storeMessages([
      { role: "user", content, source: "chat:ts", occurred_at: "2026-03-10T09:00:00Z" },
    ])) as [string];
    assert.match(messageId, /^msg_[0-9a-f-]{36}$/);
    factIds = await taisce.storeFacts([
      {
        id: "ts-f1",
        subject: "Saoirse Byrne",
        predicate: "lives in",
        object: "Cork",
        source_role: "user",
        message_id: messageId,
        quote: "Saoirse Byrne moved to Cork in March.",
      },
      {
        subject: "Saoirse Byrne",
        predicate: "teaches",
        object: "piano",
        object_kind: "value",
        source_role: "user",
      },
    ]);
    assert.equal(factIds.length, 2);
    assert.equal(factIds[0], "ts-f1");
    assert.match(factIds[1]!, /^fact_[0-9a-f-]{36}$/);
    // The same id again keeps the stored fact: the answer still lists it.
    const again = await taisce.storeFacts([
      {
        id: "ts-f1",
        subject: "Saoirse Byrne",
        predicate: "lives in",
        object: "Kerry",
        source_role: "user",
      },
    ]);
    assert.deepEqual(again, ["ts-f1"]);
    const facts: Fact[] = await taisce.factsAbout("Saoirse Byrne");
    assert.deepEqual(
      facts.map((f) => [f.id, f.object, f.object_kind]),
      [
        ["ts-f1", "Cork", "entity"],
        [factIds[1], "piano", "value"],
      ],
    );
  });

  test("recall answers with the stored facts, explained", async () => {
    const recall = await taisce.recall("Where does Saoirse Byrne live?", { explain: true });
    // The fact that answers the question first, then the other fact about her: two
    // facts are all that is known of her, so both come back.
    assert.deepEqual(
      recall.facts.map((f) => [f.id, f.statement, f.message_id]),
      [
        ["ts-f1", "Saoirse Byrne lives in Cork", messageId],
        [factIds[1], "Saoirse Byrne teaches piano", null],
      ],
    );
    assert.equal(recall.facts[0]!.quote, "Saoirse Byrne moved to Cork in March.");
    assert.equal(recall.facts[0]!.why?.step, "exact_name");
    assert.match(recall.facts[1]!.why?.reason ?? "", /has few facts: all come back$/);
    assert.equal(recall.controls.explain, true);
    // Without an embedding model (this server's setting) there are no passages to rank.
    assert.ok(recall.degraded.includes("passages"), recall.degraded.join(", "));
  });

  test("listMessages pages newest first, with passages on request", async () => {
    const page = await taisce.listMessages({ source: "chat:ts", passages: true });
    assert.equal(page.next_cursor, null);
    assert.equal(page.messages.length, 1);
    const [message] = page.messages;
    assert.equal(message!.id, messageId);
    assert.equal(message!.content, content);
    assert.equal(message!.occurred_at, "2026-03-10T09:00:00Z");
    assert.ok(message!.passages && message!.passages.length >= 1);
    // Demo messages, a page of 2 at a time: every page follows on, nothing repeats.
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const next = await taisce.listMessages({ limit: 2, cursor });
      ids.push(...next.messages.map((m) => m.id));
      cursor = next.next_cursor ?? undefined;
    } while (cursor);
    assert.equal(ids.length, 6);
    assert.equal(new Set(ids).size, 6);
    assert.equal(ids[0], messageId);
    const one = await taisce.message(messageId);
    assert.equal(one.message.content, content);
    assert.deepEqual(one.passages, message!.passages);
  });

  test("searchFacts and searchMessages say when the server cannot search", async () => {
    // This server runs without an embedding model, so it has no index to search.
    const facts = await taisce.searchFacts("Cork", { role: "user", limit: 5 });
    assert.deepEqual(facts, { facts: [], next_cursor: null, degraded: ["search"] });
    const messages = await taisce.searchMessages("Cork", { source: "chat:ts" });
    assert.deepEqual(messages.degraded, ["search"]);
    assert.equal((await refusal(taisce.searchFacts("?!"))).code, "invalid_request");
  });

  test("listEntities finds the new entity with its facts per role", async () => {
    const page = await taisce.listEntities({ search: "saoirse" });
    assert.deepEqual(
      page.entities.map((e) => [e.name, e.facts.user]),
      [["Saoirse Byrne", 2]],
    );
    const all = await taisce.listEntities({ limit: 100 });
    const names = all.entities.map((e) => e.name);
    for (const name of ["Atlas", "Acme Corp", "Cork", "Saoirse Byrne"]) {
      assert.ok(names.includes(name), names.join(", "));
    }
  });

  test("erase removes the entity's facts and masks its message; the status reads back", async () => {
    const erased = await taisce.erase("Saoirse Byrne");
    assert.equal(erased.status, "done");
    assert.match(erased.id, /^era_[0-9a-f]{32}$/);
    assert.equal(erased.status_url, `/v1/erasures/${erased.id}`);
    assert.equal(erased.erased.facts, 2);
    assert.equal(erased.erased.messages, 1);
    const status = await taisce.erasure(erased.id);
    assert.equal(status.status, "done");
    assert.deepEqual(status.erased, erased.erased);

    assert.deepEqual(await taisce.factsAbout("Saoirse Byrne"), []);
    const recall = await taisce.recall("Where does Saoirse Byrne live?");
    assert.deepEqual(recall.facts, []);
    assert.ok(!JSON.stringify(recall).includes("Saoirse"));
    const { message } = await taisce.message(messageId);
    assert.equal(message.content.length, content.length);
    assert.ok(!message.content.includes("Saoirse") && message.content.includes("█"));
    // The demo's memory is untouched.
    assert.equal((await taisce.factsAbout("Atlas")).length, 2);
  });

  test("merge, aliases and the neighbourhood follow the merged name", async () => {
    const merged = await taisce.merge("Liam", "Liam Walsh");
    assert.deepEqual(merged, {
      alias: "Liam",
      into: "Liam Walsh",
      facts_moved: 0,
      aliases_moved: 0,
    });
    assert.deepEqual(await taisce.aliases(), [{ alias: "Liam", into: "Liam Walsh" }]);
    const facts = await taisce.factsAbout("Liam");
    assert.deepEqual(
      facts.map((f) => f.statement),
      ["Liam Walsh works at Northwind Labs"],
    );
    const around = await taisce.neighbourhood("Liam", 2);
    assert.equal(around.entity, "liam walsh");
    const edges = around.edges.map((e) => [e.hop, e.statement]);
    assert.ok(
      edges.some(([hop, s]) => hop === 1 && s === "Liam Walsh works at Northwind Labs"),
      JSON.stringify(edges),
    );
    assert.ok(
      edges.some(([hop, s]) => hop === 2 && s === "Northwind Labs is based in Lisbon"),
      JSON.stringify(edges),
    );
    // Proposals need name vectors; this server has no embedding model.
    const proposals = await taisce.proposals();
    assert.deepEqual(proposals.proposals, []);
    assert.deepEqual(proposals.degraded, ["proposals"]);
  });

  test("factsAbout and aliases follow next_cursor past the first page", async () => {
    // More facts about one subject than the server's default page (50) holds.
    const sent = Array.from({ length: 60 }, (_, i) => ({
      id: `ts-page-${String(i).padStart(2, "0")}`,
      subject: "Pagan Reilly",
      predicate: "visited",
      object: `Town ${i}`,
      source_role: "user" as const,
    }));
    await taisce.storeFacts(sent);
    const every = sent.map((f) => f.id);
    const first = await taisce.factsPage("Pagan Reilly");
    assert.ok(first.facts.length < every.length && first.next_cursor);
    assert.deepEqual(
      (await taisce.factsAbout("Pagan Reilly")).map((f) => f.id),
      every,
    );
    const byNine = await taisce.factsAbout("Pagan Reilly", { limit: 9 });
    assert.deepEqual(
      byNine.map((f) => f.id),
      every,
    );
    const rest = await taisce.factsAbout("Pagan Reilly", { cursor: first.next_cursor! });
    assert.deepEqual(
      [...first.facts, ...rest].map((f) => f.id),
      every,
    );

    const names = ["Pager A", "Pager B", "Pager C"];
    await taisce.storeFacts(
      [...names, "Pager Main"].map((subject) => ({
        subject,
        predicate: "works at",
        object: "Northwind Labs",
        source_role: "user" as const,
      })),
    );
    for (const name of names) await taisce.merge(name, "Pager Main");
    const page = await taisce.aliasPage({ limit: 1 });
    assert.equal(page.aliases.length, 1);
    assert.ok(page.next_cursor);
    const aliases = await taisce.aliases({ limit: 1 });
    assert.deepEqual(aliases, await taisce.aliases());
    assert.deepEqual(
      aliases.filter((a) => a.into === "Pager Main").map((a) => a.alias),
      names,
    );
  });

  test("deleteFact deletes one fact; a second time is not_found", async () => {
    const [id] = await taisce.storeFacts([
      { subject: "Ciarán Hale", predicate: "plays", object: "hurling", source_role: "user" },
    ]);
    await taisce.deleteFact(id!);
    assert.deepEqual(await taisce.factsAbout("Ciarán Hale"), []);
    const error = await refusal(taisce.deleteFact(id!));
    assert.equal(error.status, 404);
    assert.equal(error.code, "not_found");
  });
});

describe("errors", () => {
  test("a wrong credential is a 401 TaisceError with the API's body", async () => {
    const stranger = new Taisce({ url: server.url, apiKey: "tsk_not_a_real_credential" });
    const error = await refusal(stranger.recall("Where does Atlas work?"));
    assert.equal(error.status, 401);
    assert.equal(error.code, "unauthorized");
    assert.ok(error.message.length > 0);
    assert.deepEqual(error.details, { error: { code: "unauthorized", message: error.message } });
  });

  test("a refused recall control is named in `control`", async () => {
    const error = await refusal(taisce.recall("Where does Atlas work?", { max_rows: 0 }));
    assert.equal(error.status, 400);
    assert.equal(error.code, "invalid_recall_controls");
    assert.equal(error.control, "max_rows");
    assert.match(String(error), /^TaisceError: invalid_recall_controls \(max_rows\): /);
  });

  test("a bad body is a 400 invalid_request and stores nothing", async () => {
    const error = await refusal(
      taisce.storeMessages([
        { role: "user", content: "Nuala Ryan lives in Sligo.", id: "ts-ok" },
        { role: "user", content: "" },
      ]),
    );
    assert.equal(error.status, 400);
    assert.equal(error.code, "invalid_request");
    assert.equal(error.control, undefined);
    // Batches are all or nothing: the good message was not stored either.
    const missing = await refusal(taisce.message("ts-ok"));
    assert.equal(missing.code, "not_found");
    // A field the API does not know is refused too (the types would not let it through).
    const unknown = await refusal(
      taisce.recall("Where does Atlas work?", { colour: "red" } as never),
    );
    assert.equal(unknown.status, 400);
  });

  test("an erasure id the project never had is not_found", async () => {
    const error = await refusal(taisce.erasure(`era_${"0".repeat(32)}`));
    assert.equal(error.status, 404);
    assert.equal(error.code, "not_found");
  });

  test("a server that cannot be reached is a TaisceNetworkError, not a TaisceError", async () => {
    await server.stop();
    const gone = new Taisce({ url: server.url, apiKey: server.apiKey });
    await assert.rejects(gone.health(), (error: unknown) => {
      assert.ok(error instanceof TaisceNetworkError);
      assert.ok(!(error instanceof TaisceError));
      assert.equal(error.url, server.url);
      assert.ok(error.cause instanceof Error);
      return true;
    });
  });
});

// Compile-time checks (tsc runs before the tests): the types come from the API's description.
export function typeChecks(client: Taisce): void {
  // @ts-expect-error: not a control of the API
  void client.recall("q", { max_chars: 10 });
  // @ts-expect-error: not a role
  void client.storeMessages([{ role: "robot", content: "hi" }]);
  // @ts-expect-error: source_role is required on a fact
  void client.storeFacts([{ subject: "A", predicate: "b", object: "C" }]);
  // @ts-expect-error: no such route
  void client.api.GET("/v1/nothing");
}
