// Search: one box over facts and messages, by words (GET /v1/search/facts and
// /v1/search/messages). Every role, closed facts too, best match first, a page at a
// time with "Show more"; each message shows the passages that matched.

import { api } from "../api.js";
import { bdi, entityLink, h, messageLink, roleBadge, when } from "../dom.js";

const PAGE = 20;

function factItem(fact) {
  return h(
    "li",
    { "data-id": fact.id },
    bdi(fact.statement),
    " ",
    roleBadge(fact.source_role),
    fact.valid_to ? h("span", { class: "small muted" }, ` · closed ${when(fact.valid_to)}`) : null,
    h(
      "span",
      { class: "small" },
      " · ",
      entityLink(fact.subject, ["about ", bdi(fact.subject)]),
      fact.message_id ? [" · ", messageLink(fact.message_id, `message ${fact.message_id}`)] : null,
    ),
  );
}

function messageItem(message) {
  return h(
    "li",
    { "data-id": message.id },
    roleBadge(message.role),
    message.source ? h("span", { class: "small source" }, " ", bdi(message.source), " ") : " ",
    messageLink(message.id, "message"),
    message.occurred_at ? h("span", { class: "small muted" }, ` · said ${when(message.occurred_at)}`) : null,
    h(
      "ul",
      { class: "quotes" },
      (message.passages || []).map((p) => h("li", { "data-passage": p.id }, h("q", {}, p.quote))),
    ),
  );
}

// One list of matches: its first page, then "Show more" while the server has more.
function matches({ title, id, first, read, key, make, showError }) {
  const list = h("ol", { id });
  const count = h("span", { class: "count" });
  const slot = h("div", { class: "action-error" });
  const more = h("button", { type: "button", class: "more", id: "more-" + id }, "Show more");
  let cursor = null;
  let shown = 0;
  const add = (page) => {
    list.append(...page[key].map(make));
    shown += page[key].length;
    cursor = page.next_cursor;
    more.hidden = !cursor;
    count.textContent = ` (${shown}${cursor ? "+" : ""})`;
  };
  more.addEventListener("click", async () => {
    more.disabled = true;
    try {
      add(await read(cursor));
    } catch (error) {
      showError(error, slot);
    } finally {
      more.disabled = false;
    }
  });
  add(first);
  return h(
    "section",
    { class: "surface", "aria-labelledby": id + "-title" },
    h("h3", { id: id + "-title" }, title, count),
    shown ? list : h("p", { class: "muted" }, "None found."),
    more,
    slot,
  );
}

async function results(words, showError) {
  const readFacts = (cursor) => api.searchFacts({ q: words, limit: PAGE, cursor });
  const readMessages = (cursor) => api.searchMessages({ q: words, limit: PAGE, cursor });
  const [facts, messages] = await Promise.all([readFacts(), readMessages()]);
  const degraded = [...new Set([...facts.degraded, ...messages.degraded])];
  return h(
    "div",
    { id: "search-results" },
    h(
      "p",
      { class: "muted", role: "status" },
      `For “`,
      bdi(words),
      degraded.length
        ? "”: the server could not search (it has no index of words: no embedding model is set, or the index failed)."
        : "”: best match first.",
    ),
    matches({ title: "Facts", id: "search-facts", first: facts, read: readFacts, key: "facts", make: factItem, showError }),
    matches({
      title: "Messages",
      id: "search-messages",
      first: messages,
      read: readMessages,
      key: "messages",
      make: messageItem,
      showError,
    }),
  );
}

export async function searchView(params, { showError }) {
  const words = (params.get("q") || "").trim();
  const slot = h("div", { class: "action-error", id: "search-error" });
  const form = h(
    "form",
    {
      class: "filters",
      role: "search",
      id: "search-form",
      onsubmit: (event) => {
        event.preventDefault();
        const q = form.elements.q.value.trim();
        location.hash = "#/search" + (q ? "?" + new URLSearchParams({ q }) : "");
      },
    },
    h("label", { for: "search-words" }, "Search facts and messages"),
    h("input", { id: "search-words", name: "q", type: "search", value: words, placeholder: "e.g. Galway" }),
    h("button", { type: "submit" }, "Search"),
  );
  const section = h(
    "section",
    { "aria-labelledby": "search-title" },
    h("h2", { id: "search-title" }, "Search"),
    form,
    h(
      "p",
      { class: "muted small" },
      "Finds every fact and message holding your words, whoever said them, best match first. To ask a question within a budget, use Recall.",
    ),
    slot,
  );
  if (words) {
    try {
      section.append(await results(words, showError));
    } catch (error) {
      showError(error, slot);
    }
  }
  return section;
}
