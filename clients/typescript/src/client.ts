// The hand-written facade: one method per thing a caller does, over openapi-fetch's
// client typed from docs/openapi.json (./schema.d.ts, generated). Each method returns the
// API's JSON as typed by the description, or throws TaisceError / TaisceNetworkError.
import createClient, { type Client } from "openapi-fetch";
import { TaisceNetworkError, apiError } from "./errors.js";
import type { components, paths } from "./schema.js";

type Schemas = components["schemas"];

export type Health = Schemas["Health"];
export type Status = Schemas["Status"];
export type NewMessage = Schemas["MessageIn"];
export type NewFact = Schemas["FactIn"];
export type Fact = Schemas["Fact"];
export type Recall = Schemas["Recall"];
export type RecallRequest = Schemas["RecallRequest"];
/** Every recall control and filter; one left out takes the server's default. */
export type RecallControls = Omit<RecallRequest, "question">;
export type MessageList = Schemas["MessageList"];
export type ListedMessage = Schemas["ListedMessage"];
export type MessageWithPassages = Schemas["MessageWithPassages"];
export type EntityList = Schemas["EntityList"];
export type EntityEntry = Schemas["EntityEntry"];
export type Neighbourhood = Schemas["Neighbourhood"];
export type AliasEntry = Schemas["AliasEntry"];
export type AliasPage = Schemas["Aliases"];
export type FactPage = Schemas["Facts"];
export type SearchedFacts = Schemas["SearchedFacts"];
export type SearchedMessages = Schemas["SearchedMessages"];
export type Merged = Schemas["Merged"];
export type Proposals = Schemas["Proposals"];
export type ErasureAnswer = Schemas["ErasureAnswer"];
export type ErasurePreview = Schemas["ErasurePreview"];
export type Role = NewMessage["role"];
export type ListedCredential = Schemas["ListedCredential"];
export type MintedCredential = Schemas["MintedCredential"];
export type CredentialList = Schemas["CredentialList"];

/** The end user a call acts for: it sees the shared memory and this user's, and stores
 * into this user's. Left out: the client's `user`, else the shared memory only. */
export interface ForUser {
  user?: string;
}

export interface ListMessagesOptions {
  role?: Role;
  /** An exact source, e.g. "chat:1". */
  source?: string;
  /** 1-100, default 50. */
  limit?: number;
  /** `next_cursor` of the previous page. */
  cursor?: string;
  /** Each message also carries its passages. */
  passages?: boolean;
  user?: string;
}

export interface SearchOptions {
  /** Only what this role said. */
  role?: Role;
  /** 1-100, default 50. */
  limit?: number;
  /** `next_cursor` of the previous page of the same search. */
  cursor?: string;
  user?: string;
}

export interface SearchMessagesOptions extends SearchOptions {
  /** An exact source, e.g. "chat:1". */
  source?: string;
}

export interface ListEntitiesOptions {
  /** Keeps the entities whose normalised name holds this text. */
  search?: string;
  limit?: number;
  cursor?: string;
  user?: string;
}

/** Paging of factsAbout and aliases: `limit` items a request (the server's default page
 * if left out), from `cursor` (a `next_cursor` the caller holds) if given. */
export interface PageOptions {
  limit?: number;
  cursor?: string;
  user?: string;
}

export interface TaisceOptions {
  /** Default: $TAISCE_URL, else http://127.0.0.1:8080. */
  url?: string;
  /** The bearer credential; default: $TAISCE_API_KEY. `health()` needs none. */
  apiKey?: string;
  /** Per request, including reading the body (default 30,000 ms). */
  timeoutMs?: number;
  /** How often a 408, 429 or 5xx (not 505 or 507) is sent again (default 3); nothing else
   * is retried. */
  retries?: number;
  /** The first retry waits up to this, doubling each time, unless Retry-After says (500 ms). */
  backoffMs?: number;
  /** A fetch of your own (a proxy, a test); default: the global fetch. */
  fetch?: typeof globalThis.fetch;
  /** The end user every call acts for unless it names its own (default: none, shared). */
  user?: string;
}

const DEFAULT_URL = "http://127.0.0.1:8080";
const MAX_RETRY_AFTER_MS = 30_000;

type Result<T> = { data?: T; error?: unknown; response: Response };

function environment(): Record<string, string | undefined> {
  // process exists on Node, not in a browser: read it without depending on Node's types.
  const holder = globalThis as { process?: { env?: Record<string, string | undefined> } };
  return holder.process?.env ?? {};
}

/** The query without the options left out, so openapi-fetch sends only what was given. */
function given<T extends object>(options: T): T {
  return Object.fromEntries(
    Object.entries(options).filter(([, value]) => value !== undefined && value !== null),
  ) as T;
}

/** Worth sending again: the server asked for a pause (429, or 503 with too many
 * connections, both with Retry-After), the request arrived too slowly to run (408), or it
 * failed. An HTTP version it does not serve (505) and a full disk (507, until space is
 * freed) are refused again, as is every other refusal. */
function retryable(status: number): boolean {
  return status === 408 || status === 429 || (status >= 500 && status !== 505 && status !== 507);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Taisce over HTTP. The credential decides the project; `user` the end user. */
export class Taisce {
  readonly url: string;
  /** The end user calls act for when they name none (undefined: the shared memory). */
  readonly user: string | undefined;
  /** The openapi-fetch client itself: every route, typed from the API's description. */
  readonly api: Client<paths>;
  private readonly retries: number;
  private readonly backoffMs: number;

  constructor(options: TaisceOptions = {}) {
    const env = environment();
    this.url = (options.url ?? env.TAISCE_URL ?? DEFAULT_URL).replace(/\/+$/, "");
    this.user = options.user;
    const apiKey = options.apiKey ?? env.TAISCE_API_KEY;
    const timeoutMs = options.timeoutMs ?? 30_000;
    this.retries = options.retries ?? 3;
    this.backoffMs = options.backoffMs ?? 500;
    const send = options.fetch ?? globalThis.fetch;
    const url = this.url;
    this.api = createClient<paths>({
      baseUrl: url,
      headers: apiKey ? { Authorization: `Bearer ${apiKey}` } : {},
      // fetch's own failures (refused, reset, timed out) become TaisceNetworkError here,
      // so an error thrown later (a body that is not JSON) is never taken for one.
      fetch: async (request: Request) => {
        try {
          return await send(request, { signal: AbortSignal.timeout(timeoutMs) });
        } catch (error) {
          throw new TaisceNetworkError(url, error);
        }
      },
    });
  }

  /** Sends `call` until it is answered without a retryable refusal; the data or a TaisceError. */
  private async run<T>(call: () => Promise<Result<T>>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let result: Result<T>;
      try {
        result = await call();
      } catch (error) {
        // The body is read after fetch returns: a timeout or a reset while reading it is
        // still no answer. A body that is not JSON (SyntaxError) is not an outage.
        if (error instanceof TaisceNetworkError || error instanceof SyntaxError) throw error;
        throw new TaisceNetworkError(this.url, error);
      }
      const { data, error, response } = result;
      if (response.ok) return data as T;
      if (!retryable(response.status) || attempt >= this.retries) {
        throw apiError(response.status, error);
      }
      await sleep(this.delay(attempt, response));
    }
  }

  private delay(attempt: number, response: Response): number {
    const after = Number(response.headers.get("Retry-After"));
    if (response.headers.has("Retry-After") && Number.isFinite(after) && after >= 0) {
      return Math.min(after * 1000, MAX_RETRY_AFTER_MS);
    }
    return Math.random() * this.backoffMs * 2 ** attempt;
  }

  /** `{ user }` for a body or a query: the call's own user, else the client's, else none. */
  private scope(options: ForUser = {}): ForUser {
    const user = options.user ?? this.user;
    return user === undefined ? {} : { user };
  }

  /** Liveness only (`{ status: "ok" }`); needs no credential. */
  health(): Promise<Health> {
    return this.run(() => this.api.GET("/v1/health"));
  }

  /** The server's version and limits, and whether its worker has work for this
   * credential's project (`work_pending`). */
  status(): Promise<Status> {
    return this.run(() => this.api.GET("/v1/status"));
  }

  /** Stores 1-100 messages; their ids, in order. A message without an id gets one here
   * (`msg_<uuid>`) before the first attempt, so a retry never stores it twice. */
  async storeMessages(messages: readonly NewMessage[], options: ForUser = {}): Promise<string[]> {
    const withIds = messages.map((m) => ({ ...m, id: m.id ?? `msg_${crypto.randomUUID()}` }));
    const body = { messages: withIds, ...this.scope(options) };
    const stored = await this.run(() => this.api.POST("/v1/messages", { body }));
    return stored.messages.map((m) => m.id);
  }

  /** Stores 1-100 facts; their ids, in order (`fact_<uuid>` made here when not given). */
  async storeFacts(facts: readonly NewFact[], options: ForUser = {}): Promise<string[]> {
    const withIds = facts.map((f) => ({ ...f, id: f.id ?? `fact_${crypto.randomUUID()}` }));
    const body = { facts: withIds, ...this.scope(options) };
    const stored = await this.run(() => this.api.POST("/v1/facts", { body }));
    return stored.facts.map((f) => f.id);
  }

  /** A budgeted bundle of memory for a question. The server judges the controls: a wrong
   * one is a TaisceError with code `invalid_recall_controls` naming it in `control`. */
  async recall(question: string, controls: RecallControls = {}): Promise<Recall> {
    const body = { ...this.scope(), ...given(controls), question };
    const answer = await this.run(() => this.api.POST("/v1/recalls", { body }));
    // openapi-fetch's answer type drops a key whose type is only null (a passage's
    // `why.matched`, always null on the wire); the schema's own type keeps it.
    return answer as Recall;
  }

  /** Every fact whose subject is this entity (by normalised name), in storing order: the
   * server's pages followed to the end. `factsPage` reads one page. */
  async factsAbout(subject: string, options: PageOptions = {}): Promise<Fact[]> {
    const facts: Fact[] = [];
    let cursor = options.cursor;
    for (;;) {
      const page = await this.factsPage(subject, { ...options, cursor });
      facts.push(...page.facts);
      if (page.next_cursor === null || page.next_cursor === undefined) return facts;
      cursor = page.next_cursor;
    }
  }

  /** One page of the facts about this entity; send `next_cursor` back as `cursor`. */
  factsPage(subject: string, options: PageOptions = {}): Promise<FactPage> {
    const { limit, cursor } = options;
    const query = { subject, ...given({ limit, cursor }), ...this.scope(options) };
    return this.run(() => this.api.GET("/v1/facts", { params: { query } }));
  }

  /** Deletes one fact; a TaisceError `not_found` when the project has no such fact. */
  async deleteFact(factId: string, options: ForUser = {}): Promise<void> {
    const path = { fact_id: factId };
    const query = this.scope(options);
    await this.run(() => this.api.DELETE("/v1/facts/{fact_id}", { params: { path, query } }));
  }

  /** A page of messages, newest first; send `next_cursor` back as `cursor` for the next. */
  listMessages(options: ListMessagesOptions = {}): Promise<MessageList> {
    const query = { ...given(options), ...this.scope(options) };
    return this.run(() => this.api.GET("/v1/messages", { params: { query } }));
  }

  /** A page of the facts holding these words, best first (closed ones too);
   * `degraded: ["search"]` when the server has no index to search. */
  searchFacts(q: string, options: SearchOptions = {}): Promise<SearchedFacts> {
    const query = { q, ...given(options), ...this.scope(options) };
    return this.run(() => this.api.GET("/v1/search/facts", { params: { query } }));
  }

  /** A page of the messages holding these words, best first, each with the passages
   * that matched. */
  searchMessages(q: string, options: SearchMessagesOptions = {}): Promise<SearchedMessages> {
    const query = { q, ...given(options), ...this.scope(options) };
    return this.run(() => this.api.GET("/v1/search/messages", { params: { query } }));
  }

  /** One message with its passages (by start). */
  message(messageId: string, options: ForUser = {}): Promise<MessageWithPassages> {
    const path = { message_id: messageId };
    const query = this.scope(options);
    return this.run(() => this.api.GET("/v1/messages/{message_id}", { params: { path, query } }));
  }

  /** A page of the entities named by live facts, by normalised name. */
  listEntities(options: ListEntitiesOptions = {}): Promise<EntityList> {
    const query = { ...given(options), ...this.scope(options) };
    return this.run(() => this.api.GET("/v1/entities", { params: { query } }));
  }

  /** The facts valid now around an entity, as nodes and edges (hops 1 or 2). */
  neighbourhood(name: string, hops: 1 | 2 = 1, options: ForUser = {}): Promise<Neighbourhood> {
    const query = { name, hops, ...this.scope(options) };
    return this.run(() => this.api.GET("/v1/entities/neighbourhood", { params: { query } }));
  }

  /** Every alias of the project, by normalised alias: the server's pages followed to the
   * end. `aliasPage` reads one page. */
  async aliases(options: PageOptions = {}): Promise<AliasEntry[]> {
    const found: AliasEntry[] = [];
    let cursor = options.cursor;
    for (;;) {
      const page = await this.aliasPage({ ...options, cursor });
      found.push(...page.aliases);
      if (page.next_cursor === null || page.next_cursor === undefined) return found;
      cursor = page.next_cursor;
    }
  }

  /** One page of the project's aliases; send `next_cursor` back as `cursor`. */
  aliasPage(options: PageOptions = {}): Promise<AliasPage> {
    const { limit, cursor } = options;
    const query = { ...given({ limit, cursor }), ...this.scope(options) };
    return this.run(() => this.api.GET("/v1/entities/aliases", { params: { query } }));
  }

  /** Merges `alias` into the entity `into` (another name of the same one). */
  merge(alias: string, into: string, options: ForUser = {}): Promise<Merged> {
    const body = { alias, into, ...this.scope(options) };
    return this.run(() => this.api.POST("/v1/entities/merges", { body }));
  }

  /** Pairs of names similar enough to be one entity (needs an embedding model). */
  proposals(options: ForUser = {}): Promise<Proposals> {
    const query = this.scope(options);
    return this.run(() => this.api.GET("/v1/entities/proposals", { params: { query } }));
  }

  /** Erases everything the project holds about one entity. The embedded store answers
   * `done`; a deploy whose worker erases it answers `pending`: with `waitMs` the status is
   * read every `pollMs` until done or the time is up (the last answer is returned).
   * `also`: other entities whose names hold the subject, taken too (otherwise they stay);
   * `token`: the preview's, for a subject that is no entity and would mask much. */
  async erase(
    subject: string,
    options: { waitMs?: number; pollMs?: number; also?: string[]; token?: string } & ForUser = {},
  ): Promise<ErasureAnswer> {
    const body = {
      subject,
      ...(options.also ? { also: options.also } : {}),
      ...(options.token ? { token: options.token } : {}),
      ...this.scope(options),
    };
    // Without dry_run the answer is the erasure's status, never a preview.
    let answer = (await this.run(() => this.api.POST("/v1/erasures", { body }))) as ErasureAnswer;
    const deadline = Date.now() + (options.waitMs ?? 0);
    while (answer.status !== "done" && Date.now() < deadline) {
      await sleep(Math.min(options.pollMs ?? 1000, Math.max(0, deadline - Date.now())));
      answer = await this.erasure(answer.id, options);
    }
    return answer;
  }

  /** What an erasure of `subject` (with `also`) would take, nothing removed: the names
   * taken and spared, the counts, the first facts and passages, and the token a subject
   * that is no entity needs when `needs_token`. */
  async previewErasure(
    subject: string,
    options: { also?: string[] } & ForUser = {},
  ): Promise<ErasurePreview> {
    const body = {
      subject,
      dry_run: true,
      ...(options.also ? { also: options.also } : {}),
      ...this.scope(options),
    };
    return (await this.run(() => this.api.POST("/v1/erasures", { body }))) as ErasurePreview;
  }

  /** An erasure's status; a TaisceError `not_found` for an id the project never had. */
  erasure(erasureId: string, options: ForUser = {}): Promise<ErasureAnswer> {
    const path = { erasure_id: erasureId };
    const query = this.scope(options);
    return this.run(() => this.api.GET("/v1/erasures/{erasure_id}", { params: { path, query } }));
  }

  /** Mints a credential (an admin credential only): bound to `user` when given, else a
   * project credential. Its `secret` is in this answer only. */
  createCredential(options: { user?: string; label?: string } = {}): Promise<MintedCredential> {
    const body = given(options);
    return this.run(() => this.api.POST("/v1/credentials", { body }));
  }

  /** A page of the project's credentials by id, never their secrets (an admin's only). */
  listCredentials(options: { limit?: number; cursor?: string } = {}): Promise<CredentialList> {
    const query = given(options);
    return this.run(() => this.api.GET("/v1/credentials", { params: { query } }));
  }

  /** Revokes one of the project's credentials (an admin credential only). */
  async revokeCredential(credentialId: string): Promise<void> {
    const path = { credential_id: credentialId };
    await this.run(() => this.api.DELETE("/v1/credentials/{credential_id}", { params: { path } }));
  }
}
