// Search: one box over facts and messages. It runs a recall with every role and only
// the facts and passages surfaces, at the server's whole budget (the default), so it finds what a
// recall would: facts of the entities the words name (and facts close in meaning), and
// passages that share the words or their meaning, best first.

import { api } from "../api.js";
import { bdi, entityLink, h, messageLink, roleBadge, when } from "../dom.js";

const ROLES = ["user", "assistant", "system", "tool"];

function factItem(fact) {
  return h(
    "li",
    { "data-id": fact.id },
    bdi(fact.statement),
    " ",
    roleBadge(fact.source_role),
    h(
      "span",
      { class: "small" },
      " · ",
      entityLink(fact.subject, ["about ", bdi(fact.subject)]),
      fact.message_id ? [" · ", messageLink(fact.message_id, `message ${fact.message_id}`)] : null,
    ),
  );
}

function passageItem(passage) {
  return h(
    "li",
    { "data-id": passage.id },
    roleBadge(passage.role),
    passage.source ? h("span", { class: "small source" }, " ", bdi(passage.source), " ") : " ",
    h("q", {}, passage.quote),
    " ",
    messageLink(passage.message_id, "message"),
    passage.occurred_at ? h("span", { class: "small muted" }, ` · said ${when(passage.occurred_at)}`) : null,
  );
}

function results(words, answer) {
  const list = (title, id, items, make) =>
    h(
      "section",
      { class: "surface", "aria-labelledby": id + "-title" },
      h("h3", { id: id + "-title" }, `${title} (${items.length})`),
      items.length ? h("ol", { id }, items.map(make)) : h("p", { class: "muted" }, "None found."),
    );
  return h(
    "div",
    { id: "search-results" },
    h(
      "p",
      { class: "muted", role: "status" },
      `For “`,
      bdi(words),
      `”: ${answer.facts.length} fact${answer.facts.length === 1 ? "" : "s"} and ` +
        `${answer.passages.length} passage${answer.passages.length === 1 ? "" : "s"}, best first` +
        (answer.truncated ? " (more were found than fit in one answer)" : "") +
        (answer.degraded.length ? `; could not search: ${answer.degraded.join(", ")}` : "") +
        ".",
    ),
    list("Facts", "search-facts", answer.facts, factItem),
    list("In messages", "search-passages", answer.passages, passageItem),
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
      "Finds what a recall over every role would: the facts of the entities your words name and facts close in meaning, and the passages of messages that share your words or their meaning.",
    ),
    slot,
  );
  if (words) {
    try {
      const answer = await api.recall({
        question: words,
        source_roles: ROLES,
        surfaces: ["facts", "passages"],
      });
      section.append(results(words, answer));
    } catch (error) {
      showError(error, slot);
    }
  }
  return section;
}
