// One message with its passages marked and, coming from a fact, its quote highlighted.

import { api } from "../api.js";
import { codePoints, h, markedText, scrollBox } from "../dom.js";
import { messageCard } from "./messages.js";

// Where a fact's quote sits in the message: the server's offsets when it located the
// quote itself (extracted facts), else the first place the quoted words appear.
export function quoteSpan(content, fact) {
  if (!fact || !fact.quote) return null;
  const points = codePoints(content);
  if (Number.isInteger(fact.start) && Number.isInteger(fact.end)) {
    if (points.slice(fact.start, fact.end).join("") === fact.quote) {
      return { start: fact.start, end: fact.end };
    }
  }
  let at = content.indexOf(fact.quote);
  if (at < 0) at = content.toLowerCase().indexOf(fact.quote.toLowerCase());
  if (at < 0) return null;
  const start = codePoints(content.slice(0, at)).length;
  return { start, end: start + codePoints(fact.quote).length };
}

// What the page says of the fact it was opened from: a fact may cite a message without
// quoting it (most extracted facts do), which is not a quote gone missing.
function factNote(factId, fact, span) {
  if (span) return `The quote of fact ${factId} is highlighted.`;
  if (fact && fact.quote) return `The quote of fact ${factId} could not be found in this text.`;
  if (fact) return `Fact ${factId} cites this message; it has no quote.`;
  return `Fact ${factId} cites this message.`;
}

export async function messageView(params) {
  const id = params.get("id") || "";
  const factId = params.get("fact");
  const detail = await api.message(id);
  const known = JSON.parse(sessionStorage.getItem("taisce.quotes") || "{}");
  const span = quoteSpan(detail.message.content, factId ? known[factId] : null);
  const card = messageCard(detail.message, detail.passages);
  if (span) {
    const content = card.querySelector(".content");
    content.replaceChildren(...markedText(detail.message.content, detail.passages, span));
  }
  const passages = scrollBox("Passages table", h(
    "table",
    { class: "grid", id: "passages" },
    h("caption", {}, "Passages (offsets in code points)"),
    h(
      "thead",
      {},
      h("tr", {}, ["Passage", "Start", "End", "Quote"].map((c) => h("th", { scope: "col" }, c))),
    ),
    h(
      "tbody",
      {},
      detail.passages.map((p) =>
        h("tr", {}, h("td", {}, p.id), h("td", { class: "num" }, p.start), h("td", { class: "num" }, p.end), h("td", {}, p.quote)),
      ),
    ),
  ));
  return h(
    "section",
    { "aria-labelledby": "message-title" },
    h("h2", { id: "message-title" }, `Message ${detail.message.id}`),
    factId ? h("p", { class: span ? "" : "muted", id: "fact-note" }, factNote(factId, factId in known ? known[factId] : undefined, span)) : null,
    card,
    passages,
    h("p", {}, h("a", { href: "#/messages" }, "All messages")),
  );
}
