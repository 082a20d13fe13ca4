// The recall playground: a question and every control of the recall page, the answer
// shown as the bundle a model would get, with the budget each item used, truncated and
// degraded made visible, why each item is there, and the same request as a curl line.

import { api, user } from "../api.js";
import { bdi, countCodePoints, entityLink, h, messageLink, rememberFact, roleBadge, when } from "../dom.js";

const ROLES = ["user", "assistant", "system", "tool"];
const SURFACES = ["facts", "reports", "passages"];
const COUNTED = {
  facts: ["subject", "predicate", "object", "statement", "source_role", "quote", "context"],
  reports: ["title", "summary"],
  passages: ["role", "source", "quote"],
};
const LAST = "taisce.recall";

// Code points an item adds to the bundle, as the server counts them (domain/budget.py).
export function itemCharacters(kind, item) {
  let total = 0;
  for (const name of COUNTED[kind]) total += countCodePoints(item[name]);
  if (Array.isArray(item.path)) for (const name of item.path) total += countCodePoints(name);
  return total;
}

// What each number of `why` means, in a few words (docs/API.md, `explain`).
const MEANINGS = {
  step: "the step that found it: a name in the question, a name like one, a report or a passage",
  matched: "the name (normalised) it was reached through",
  hop: "1: a fact of that name; 2: one link further",
  words: "the share of the question's words it holds (0 to 1)",
  similarity: "how close in meaning to the question (cosine, 1 is the same); empty without a vector",
  score: "the score it was ranked by",
  path: "kept on a path through a linked entity",
  neutral_similarity: "closeness in meaning with its names replaced by “someone”",
  asked_as: "the question's words that found a name like it",
  signal: "how those words found it: spelt alike, close in meaning, a part of the name, or a case form",
  shared: "the question's words it holds",
  vector_rank: "its rank among the passages closest in meaning (1 is first)",
  word_rank: "its rank among the passages sharing the question's words (1 is first)",
  fact_rank: "its message's rank among those cited by the facts nearest the question",
  topic_rank: "its rank among the passages closest in meaning to the question with its names replaced by “someone”",
  message_share: "the share of its score left after its own message's passages ahead of it",
  neighbour_share: "the share of its score given by the message stored just before",
  time_factor: "the asked time's factors that applied to it (above 1 lifts it)",
  cited_share: "the share of its score kept because a fact above cites its message",
  diversity_shift: "the places it moved so that the first passages say different things (above 0: later)",
};

function sentence(text) {
  const t = text.trim();
  return t ? t[0].toUpperCase() + t.slice(1) + (/[.!?]$/.test(t) ? "" : ".") : "";
}

function pathOf(item) {
  return Array.isArray(item.path) && item.path.length ? item.path : null;
}

// Why an item is in the bundle, as one plain sentence: the server's `reason` when it
// explains, else what the item itself shows. A hop-2 fact names the path it came by.
export function plainWhy(kind, item) {
  const path = pathOf(item);
  if (kind === "facts") {
    const via = path ? `reached by the path ${path.join(" → ")}` : "";
    if (item.why && item.why.reason) return sentence(item.why.reason + (via ? `, ${via}` : ""));
    return sentence(via ? `a linked fact, ${via}` : "a name in the question, or one like it");
  }
  if (item.why && item.why.reason) return sentence(item.why.reason);
  if (kind === "reports") return sentence(`a report${path ? " in " + path.join(" › ") : ""} near the question`);
  return "A passage near the question.";
}

function numbers(why) {
  const rows = Object.entries(why).filter(([name]) => name !== "reason");
  const shown = (value) => (value === null ? "—" : Array.isArray(value) ? value.join(", ") || "—" : String(value));
  return h(
    "details",
    { class: "numbers" },
    h("summary", {}, "The numbers"),
    h(
      "dl",
      {},
      rows.map(([name, value]) => [
        h("dt", {}, h("code", {}, name), " ", h("span", { class: "value" }, shown(value))),
        h("dd", {}, MEANINGS[name] || ""),
      ]),
    ),
  );
}

function requestBody(form) {
  const f = form.elements;
  const body = { question: f.question.value };
  const number = (name) => {
    const v = f[name].value.trim();
    if (v !== "") body[name] = Number(v);
  };
  number("max_characters");
  number("max_rows");
  const roles = ROLES.filter((r) => f["role-" + r].checked);
  if (!f.roles_default.checked) body.source_roles = roles;
  if (f.hops.value) body.hops = Number(f.hops.value);
  if (!f.surfaces_default.checked) body.surfaces = SURFACES.filter((s) => f["surface-" + s].checked);
  if (f.themes.value !== "") body.themes = f.themes.value === "true";
  const subjects = f.subjects.value
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (subjects.length) body.subjects = subjects;
  for (const name of ["as_of", "recorded_after", "recorded_before"]) {
    const v = f[name].value.trim();
    if (v) body[name] = v;
  }
  if (f.explain.checked) body.explain = true;
  return body;
}

// The same request for a shell. The credential is never written out: the line reads it
// from $TAISCE_CREDENTIAL.
export function curlLine(request) {
  const scope = user();
  const body = scope ? { ...request, user: scope } : request;
  // Bidi controls written as JSON escapes: the same request, and a line they cannot
  // reorder when it is shown or pasted.
  const json = JSON.stringify(body)
    .replace(/[\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"))
    .replace(/'/g, "'\\''");
  return (
    `curl -s ${location.origin}/v1/recalls -H "Authorization: Bearer $TAISCE_CREDENTIAL" ` +
    `-H 'Content-Type: application/json' -d '${json}'`
  );
}

function field(label, input, hint) {
  return h("div", { class: "field" }, h("label", { for: input.id }, label), input, hint ? h("small", { id: input.id + "-hint", class: "muted" }, hint) : null);
}

function checkbox(id, label, checked, extra = {}) {
  return h("label", { class: "check", for: id }, h("input", { type: "checkbox", id, name: id, checked, ...extra }), " ", label);
}

function form(last) {
  const q = last || {};
  const setRoles = Array.isArray(q.source_roles);
  const setSurfaces = Array.isArray(q.surfaces);
  return h(
    "form",
    { id: "recall-form", class: "recall-form" },
    field(
      "Question",
      h("textarea", { id: "question", name: "question", rows: 2, required: true, value: q.question || "" }),
    ),
    h(
      "div",
      { class: "controls" },
      field("max_characters", h("input", { id: "max_characters", name: "max_characters", type: "number", min: 1, value: q.max_characters ?? "", placeholder: "server budget" }), "empty: the server budget"),
      field("max_rows", h("input", { id: "max_rows", name: "max_rows", type: "number", min: 1, value: q.max_rows ?? "", placeholder: "server limit" }), "may only lower the server's limit"),
      field(
        "hops",
        h(
          "select",
          { id: "hops", name: "hops" },
          h("option", { value: "" }, "default (1)"),
          h("option", { value: "1", selected: q.hops === 1 }, "1"),
          h("option", { value: "2", selected: q.hops === 2 }, "2"),
        ),
      ),
      field(
        "themes",
        h(
          "select",
          { id: "themes", name: "themes" },
          h("option", { value: "" }, "default (false)"),
          h("option", { value: "true", selected: q.themes === true }, "true"),
          h("option", { value: "false", selected: q.themes === false }, "false"),
        ),
      ),
      h(
        "fieldset",
        {},
        h("legend", {}, "source_roles"),
        checkbox("roles_default", "default (user only)", !setRoles),
        ROLES.map((r) => checkbox("role-" + r, r, setRoles ? q.source_roles.includes(r) : r === "user")),
      ),
      h(
        "fieldset",
        {},
        h("legend", {}, "surfaces"),
        checkbox("surfaces_default", "default (all)", !setSurfaces),
        SURFACES.map((s) => checkbox("surface-" + s, s, setSurfaces ? q.surfaces.includes(s) : true)),
      ),
      field("subjects", h("input", { id: "subjects", name: "subjects", type: "text", value: (q.subjects || []).join(", "), placeholder: "Atlas, Maya Okafor" }), "names, comma-separated"),
      field("as_of", h("input", { id: "as_of", name: "as_of", type: "text", value: q.as_of || "", placeholder: "2026-01-01T00:00:00Z" }), "RFC 3339 with an offset"),
      field("recorded_after", h("input", { id: "recorded_after", name: "recorded_after", type: "text", value: q.recorded_after || "", placeholder: "2026-01-01T00:00:00Z" })),
      field("recorded_before", h("input", { id: "recorded_before", name: "recorded_before", type: "text", value: q.recorded_before || "", placeholder: "2027-01-01T00:00:00Z" })),
      h("div", { class: "field" }, checkbox("explain", "explain (why each item, where the server supports it)", q.explain === true)),
    ),
    h("p", {}, h("button", { type: "submit", class: "primary" }, "Recall")),
    h("div", { id: "recall-error", class: "action-error" }),
  );
}

function budgetBar(used, max, label) {
  return h(
    "span",
    { class: "budget" },
    h("meter", { min: 0, max, value: used, "aria-label": label }),
    h("span", { class: "small" }, ` ${used} / ${max} (${max ? ((100 * used) / max).toFixed(1) : 0}%)`),
  );
}

function itemRow(kind, item, max) {
  const used = itemCharacters(kind, item);
  let main;
  if (kind === "facts") {
    main = h(
      "div",
      {},
      h("strong", {}, bdi(item.statement)),
      " ",
      roleBadge(item.source_role),
      h("div", { class: "small" }, entityLink(item.subject), ` ${item.predicate} `, item.object_kind === "entity" ? entityLink(item.object) : bdi(item.object)),
      item.quote || item.message_id
        ? h(
            "div",
            { class: "small" },
            item.quote ? [h("q", {}, item.quote), " "] : null,
            item.message_id ? messageLink(item.message_id, item.quote ? "message" : "its message", item.id, () => rememberFact(item)) : null,
          )
        : null,
    );
  } else if (kind === "reports") {
    const sources = item.source_messages || [];
    main = h(
      "div",
      {},
      h("strong", {}, item.title),
      h("p", { class: "small" }, item.summary),
      sources.length
        ? h("p", { class: "small sources" }, "From ", sources.map((id, i) => [i ? ", " : "", messageLink(id, `message ${id}`)]), ".")
        : null,
    );
  } else {
    main = h(
      "div",
      {},
      roleBadge(item.role),
      item.source ? h("span", { class: "small" }, ` ${item.source} `) : " ",
      h("q", {}, item.quote),
      " ",
      messageLink(item.message_id, "message"),
      // Its message's time (not counted against the budget).
      item.occurred_at ? h("div", { class: "small muted passage-time" }, `said ${when(item.occurred_at)} · stored ${when(item.recorded_at)}`) : null,
    );
  }
  return h(
    "li",
    { class: "item", "data-kind": kind, "data-id": item.id, "data-characters": used },
    main,
    h("div", { class: "why small" }, h("span", { class: "label" }, "Why: "), plainWhy(kind, item)),
    item.why ? numbers(item.why) : null,
    budgetBar(used, max, `${used} characters of ${max}`),
  );
}

function bundle(answer) {
  const max = answer.controls.max_characters;
  const flags = [];
  if (answer.truncated) flags.push(h("span", { class: "flag warn", id: "truncated" }, "truncated: the budget or row limit closed the bundle"));
  if (answer.degraded.length) flags.push(h("span", { class: "flag bad", id: "degraded" }, `degraded: ${answer.degraded.join(", ")} could not run`));
  if (!flags.length) flags.push(h("span", { class: "flag ok" }, "complete: nothing cut, every surface ran"));
  return h(
    "div",
    { id: "bundle", class: "bundle" },
    h("h3", {}, "The bundle"),
    h("p", { id: "total" }, `${answer.characters} characters used of ${max}: `, budgetBar(answer.characters, max, "characters used of the budget")),
    h("p", { class: "flags" }, flags),
    h("details", {}, h("summary", {}, "Controls the recall used"), h("pre", { id: "controls-used" }, JSON.stringify(answer.controls, null, 2))),
    SURFACES.map((kind) =>
      h(
        "section",
        { class: "surface", "aria-label": kind },
        h("h4", {}, `${kind} (${answer[kind].length})`),
        answer[kind].length
          ? h("ol", { id: "bundle-" + kind }, answer[kind].map((item) => itemRow(kind, item, max)))
          : h("p", { class: "muted" }, "none"),
      ),
    ),
  );
}

export async function recallView(_params, { showError, clearError }) {
  const last = JSON.parse(sessionStorage.getItem(LAST) || "null");
  const theForm = form(last);
  const out = h("div", { id: "recall-out", "aria-live": "polite" });
  const curl = h("code", { id: "curl" });
  const copy = h("button", { type: "button", id: "copy-curl" }, "Copy as curl");
  const copied = h("span", { class: "muted", role: "status" });
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(curl.textContent);
      copied.textContent = " copied";
    } catch {
      const range = document.createRange();
      range.selectNodeContents(curl);
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      copied.textContent = " selected: copy it with Ctrl+C";
    }
  });
  const sync = () => {
    curl.textContent = curlLine(requestBody(theForm));
  };
  // The "default" boxes disable the choices they stand for.
  const toggle = (defaultBox, names) => {
    const apply = () => names.forEach((n) => (theForm.elements[n].disabled = theForm.elements[defaultBox].checked));
    theForm.elements[defaultBox].addEventListener("change", apply);
    apply();
  };
  toggle("roles_default", ROLES.map((r) => "role-" + r));
  toggle("surfaces_default", SURFACES.map((s) => "surface-" + s));
  theForm.addEventListener("input", sync);
  theForm.addEventListener("change", sync);
  theForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = requestBody(theForm);
    sessionStorage.setItem(LAST, JSON.stringify(body));
    sync();
    const slot = theForm.querySelector("#recall-error");
    slot.replaceChildren();
    out.replaceChildren(h("p", { class: "muted", role: "status" }, "Recalling…"));
    try {
      const answer = await api.recall(body);
      clearError();
      out.replaceChildren(bundle(answer));
    } catch (error) {
      out.replaceChildren();
      showError(error, slot);
    }
  });
  sync();
  return h(
    "section",
    { "aria-labelledby": "recall-title" },
    h("h2", { id: "recall-title" }, "Recall playground"),
    theForm,
    h("div", { class: "curl" }, h("span", { class: "small muted" }, "The same request (the credential read from $TAISCE_CREDENTIAL):"), h("div", {}, curl), copy, copied),
    out,
  );
}
