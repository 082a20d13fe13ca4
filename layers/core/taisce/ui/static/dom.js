// Small DOM helpers. Every text from the API goes in as text (textContent), never as
// HTML, so stored memory cannot inject markup or script.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else if (key === "class") {
      el.className = value;
    } else if (key === "value") {
      el.value = String(value); // a textarea's text is its value, not an attribute
    } else if (key in el && typeof value !== "string") {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// A folded form that adds a memory (`id`, its `summary` line, a `note` or null, its
// `fields`): `read(form)` gives what to store, or a string saying what is missing (shown
// beside the form, nothing sent); `store(value)` sends it, then `rerender()` reads the
// page again, or the error is shown beside the form.
export function addMemoryForm({ id, summary, note, fields, read, store, rerender, showError }) {
  const slot = h("div", { class: "action-error", id: `${id}-error` });
  const form = h(
    "form",
    {
      id,
      class: "add",
      onsubmit: async (event) => {
        event.preventDefault();
        const value = read(form);
        if (typeof value === "string") {
          clear(slot).append(h("p", { class: "alert", role: "alert" }, value));
          return;
        }
        try {
          await store(value);
          rerender();
        } catch (error) {
          showError(error, slot);
        }
      },
    },
    fields,
  );
  return h("details", { class: "add-memory" }, h("summary", {}, summary), note, form, slot);
}

// A wide table in a box of its own that scrolls sideways (keyboard too), so a phone's
// page never does.
export function scrollBox(label, table) {
  return h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": label }, table);
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

// Offsets from the API count Unicode code points; JavaScript strings count UTF-16 units.
export function codePoints(text) {
  return Array.from(text || "");
}

export function countCodePoints(text) {
  return typeof text === "string" ? codePoints(text).length : 0;
}

// The same normalisation the server applies to names (taisce.domain.names), near enough
// to compare aliases with an entity shown on the page.
export function normalName(name) {
  return (name || "").normalize("NFKC").toLowerCase().trim().replace(/\s+/g, " ");
}

export function when(moment) {
  return moment ? moment.replace("T", " ").replace(/\.\d+Z$/, "Z") : "—";
}

// A name from memory, isolated: a right-to-left override in it cannot reorder the text
// around it.
export function bdi(text) {
  return h("bdi", {}, text);
}

export function entityLink(name, text) {
  return h("a", { href: "#/entity?" + new URLSearchParams({ name }) }, text ?? bdi(name));
}

export function messageLink(id, text, fact, onclick) {
  const query = { id };
  if (fact) query.fact = fact;
  return h("a", { href: "#/message?" + new URLSearchParams(query), onclick }, text ?? id);
}

// A fact whose message link is followed, remembered so the message page can highlight
// its quote, or say it has none (kept in this tab only).
export function rememberFact(fact) {
  const known = JSON.parse(sessionStorage.getItem("taisce.quotes") || "{}");
  known[fact.id] = { quote: fact.quote || null, start: fact.quote_start, end: fact.quote_end };
  sessionStorage.setItem("taisce.quotes", JSON.stringify(known));
}

export function roleBadge(role) {
  return h("span", { class: `role role-${role}` }, role);
}

// Marks spans of `text` (code-point offsets): passages as alternating shades, the
// highlighted span (a fact's quote) as a strong mark. Spans may nest; each code point
// takes the innermost style.
export function markedText(text, passages = [], highlight = null) {
  const points = codePoints(text);
  const passageAt = new Array(points.length).fill(-1);
  passages.forEach((p, index) => {
    for (let i = p.start; i < Math.min(p.end, points.length); i++) passageAt[i] = index;
  });
  const out = [];
  let i = 0;
  while (i < points.length) {
    const inQuote = highlight && i >= highlight.start && i < highlight.end;
    const passage = passageAt[i];
    let j = i + 1;
    while (
      j < points.length &&
      passageAt[j] === passage &&
      (highlight && j >= highlight.start && j < highlight.end) === inQuote
    ) j++;
    const chunk = points.slice(i, j).join("");
    let node = document.createTextNode(chunk);
    if (inQuote) node = h("mark", { class: "quote" }, node);
    if (passage >= 0) {
      const p = passages[passage];
      node = h(
        "span",
        {
          class: `passage passage-${passage % 2}`,
          title: `passage ${p.id} (code points ${p.start}–${p.end})`,
          "data-passage": p.id,
        },
        node,
      );
    }
    out.push(node);
    i = j;
  }
  return out;
}

// A list's pages read so far, kept in the address (without a new history entry) so Back
// to the list shows as many as before "Show more". At most 40 pages are read again.
export function pagesWanted(params) {
  const n = Number.parseInt(params.get("pages") || "1", 10);
  return Number.isFinite(n) ? Math.min(Math.max(n, 1), 40) : 1;
}

export function rememberPages(page, params, pages) {
  const query = new URLSearchParams(params);
  if (pages > 1) query.set("pages", String(pages));
  else query.delete("pages");
  const text = query.toString();
  history.replaceState(history.state, "", `#/${page}${text ? "?" + text : ""}`);
}
