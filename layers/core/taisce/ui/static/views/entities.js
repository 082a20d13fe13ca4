// Entities: the project's entities with their live facts per role, searchable, a page
// at a time (GET /v1/entities).

import { api } from "../api.js";
import { entityLink, h, pagesWanted, rememberPages, scrollBox } from "../dom.js";

const ROLES = ["user", "assistant", "system", "tool"];

// The listing has no total: on DynamoDB one would read every entity of the project on
// each page. So the count is of what is loaded, and exact once the last page is in.
function counted(shown, cursor, search) {
  const count = `${shown.toLocaleString("en")} entit${shown === 1 ? "y" : "ies"}`;
  const matching = search ? ` matching "${search}"` : "";
  if (cursor) return `${count}${matching} shown; more to load.`;
  return `${count}${matching} in all.`;
}

export async function entitiesView(params, { showError }) {
  const search = params.get("search") || "";
  const body = h("tbody");
  const more = h("button", { type: "button", class: "more", hidden: true }, "Show more");
  const summary = h("p", { class: "muted", id: "entities-shown", "aria-live": "polite" });
  let cursor = null;
  let shown = 0;
  let pages = 0;

  async function load() {
    const page = await api.entities({ search, cursor, limit: 50 });
    for (const e of page.entities) {
      const total = ROLES.reduce((n, r) => n + e.facts[r], 0);
      body.append(
        h(
          "tr",
          { "data-key": e.key },
          h("th", { scope: "row" }, entityLink(e.name)),
          ROLES.map((r) => h("td", { class: e.facts[r] ? "num" : "num zero" }, e.facts[r])),
          h("td", { class: "num" }, total),
        ),
      );
    }
    pages += 1;
    shown += page.entities.length;
    cursor = page.next_cursor;
    more.hidden = !cursor;
    summary.textContent = counted(shown, cursor, search);
  }

  const moreError = h("div", { class: "action-error" });
  more.addEventListener("click", () =>
    load().then(
      () => {
        moreError.replaceChildren();
        rememberPages("entities", params, pages);
      },
      (error) => showError(error, moreError),
    ),
  );
  await load();
  for (let wanted = pagesWanted(params); pages < wanted && cursor; ) await load();

  const form = h(
    "form",
    {
      class: "filters",
      role: "search",
      onsubmit: (event) => {
        event.preventDefault();
        const value = form.elements.search.value.trim();
        location.hash = "#/entities" + (value ? "?" + new URLSearchParams({ search: value }) : "");
      },
    },
    h("label", { for: "entity-search" }, "Search names"),
    h("input", { id: "entity-search", name: "search", type: "search", value: search }),
    h("button", { type: "submit" }, "Search"),
  );

  return h(
    "section",
    { "aria-labelledby": "entities-title" },
    h("h2", { id: "entities-title" }, "Entities"),
    form,
    summary,
    scrollBox(
      "Entities table",
      h(
      "table",
      { class: "grid", id: "entities" },
      h("caption", { class: "sr-only" }, "Entities and their live facts per source role"),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", { scope: "col" }, "Entity"),
          ROLES.map((r) => h("th", { scope: "col", class: "num" }, r)),
          h("th", { scope: "col", class: "num" }, "all"),
        ),
      ),
      body,
      ),
    ),
    more,
    moreError,
  );
}
