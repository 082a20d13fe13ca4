// One entity: its facts (statement, role, quote linked to its message, validity,
// recorded at; filtered by predicate and role, or read as of a past moment; one added by
// hand), its aliases, its neighbourhood as a graph, and erasure.

import { answeredBy, api, user } from "../api.js";
import { addMemoryForm, bdi, clear, entityLink, h, messageLink, normalName, rememberFact, roleBadge, scrollBox, when } from "../dom.js";

// Facts are read a page at a time: a hub can hold hundreds.
const FACTS_PAGE = 50;
const ROLES = ["user", "assistant", "system", "tool"];

// Whether a fact was valid at `moment` (ms), as a recall's `as_of` reads it: from its
// valid_from (if any) until before its valid_to (if any).
function validAt(fact, moment) {
  if (fact.valid_from && Date.parse(fact.valid_from) > moment) return false;
  return !(fact.valid_to && Date.parse(fact.valid_to) <= moment);
}

// Filters over the facts read so far (predicate, role, as of a moment): rows that do not
// match are hidden, and a line says how many match. `refresh()` after more are read.
function factFilters(table, facts) {
  const status = h("p", { class: "muted", id: "facts-filtered", role: "status" });
  const predicate = h("select", { id: "filter-predicate", name: "predicate" });
  const role = h(
    "select",
    { id: "filter-role", name: "role" },
    h("option", { value: "" }, "any"),
    ROLES.map((r) => h("option", { value: r }, r)),
  );
  const asOf = h("input", { id: "filter-as-of", name: "as_of", type: "datetime-local", step: 1 });
  const apply = () => {
    const moment = asOf.value ? Date.parse(asOf.value + "Z") : null;
    let shown = 0;
    let matching = 0;
    for (const tr of table.querySelectorAll("tbody tr[data-fact]")) {
      const fact = facts.get(tr.dataset.fact);
      if (!fact) continue;
      shown += 1;
      const match =
        (!predicate.value || fact.predicate === predicate.value) &&
        (!role.value || fact.source_role === role.value) &&
        (moment === null || validAt(fact, moment));
      tr.hidden = !match;
      if (match) matching += 1;
    }
    const filtering = predicate.value || role.value || moment !== null;
    status.textContent = filtering
      ? `${matching} of the ${shown} fact${shown === 1 ? "" : "s"} read match` +
        (moment !== null ? `, valid at ${asOf.value.replace("T", " ")} UTC` : "") + "."
      : "";
  };
  const refresh = () => {
    const chosen = predicate.value;
    const names = [...new Set([...facts.values()].map((f) => f.predicate))].sort();
    clear(predicate).append(
      h("option", { value: "" }, "any"),
      ...names.map((n) => h("option", { value: n, selected: n === chosen }, n)),
    );
    apply();
  };
  const form = h(
    "form",
    { class: "filters", id: "fact-filters", role: "search", "aria-label": "Filter the facts", onsubmit: (e) => e.preventDefault() },
    h("label", { for: "filter-predicate" }, "Predicate"),
    predicate,
    h("label", { for: "filter-role" }, "Role"),
    role,
    h("label", { for: "filter-as-of" }, "As of (UTC)"),
    asOf,
    h(
      "button",
      {
        type: "button",
        id: "filter-clear",
        onclick: () => {
          predicate.value = "";
          role.value = "";
          asOf.value = "";
          apply();
        },
      },
      "Clear",
    ),
  );
  for (const control of [predicate, role, asOf]) control.addEventListener("change", apply);
  refresh();
  return { element: h("div", {}, form, status), refresh };
}

// A fact about this entity added by hand, stored as the API stores any (POST /v1/facts);
// the page is read again after.
function addFactForm(subject, rerender, showError) {
  return addMemoryForm({
    id: "add-fact",
    summary: ["Add a fact about “", bdi(subject), "”"],
    note: null,
    fields: [
      h("label", { for: "add-predicate" }, "Predicate"),
      h("input", { id: "add-predicate", name: "predicate", type: "text", placeholder: "e.g. works at" }),
      h("label", { for: "add-object" }, "Object"),
      h("input", { id: "add-object", name: "object", type: "text" }),
      h("label", { for: "add-object-kind" }, "The object is"),
      h(
        "select",
        { id: "add-object-kind", name: "object_kind" },
        h("option", { value: "entity" }, "an entity (linked in the graph)"),
        h("option", { value: "value" }, "a value (a date, a number, a phrase)"),
      ),
      h("label", { for: "add-fact-role" }, "Said by"),
      h("select", { id: "add-fact-role", name: "source_role" }, ROLES.map((r) => h("option", { value: r }, r))),
      h("button", { type: "submit" }, "Store the fact"),
    ],
    read: (form) => {
      const predicate = form.elements.predicate.value.trim();
      const object = form.elements.object.value.trim();
      if (!predicate || !object) return "Give both a predicate and an object.";
      return {
        subject,
        predicate,
        object,
        object_kind: form.elements.object_kind.value,
        source_role: form.elements.source_role.value,
      };
    },
    store: (fact) => api.storeFacts([fact]),
    rerender,
    showError,
  });
}

// `onDelete(fact, row)`: the row's Delete button was pressed.
function factRow(fact, onDelete) {
  const closed = fact.valid_to && fact.valid_to <= new Date().toISOString();
  let quote = fact.quote ? h("q", {}, fact.quote) : h("span", { class: "muted" }, "no quote");
  if (fact.message_id) {
    quote = h(
      "span",
      {},
      quote,
      " ",
      messageLink(fact.message_id, `message ${fact.message_id}`, fact.id),
    );
    quote.querySelector("a").addEventListener("click", () => rememberFact(fact));
  }
  return h(
    "tr",
    { class: closed ? "closed" : "", "data-fact": fact.id },
    h("td", {}, bdi(fact.statement), closed ? h("span", { class: "tag" }, "closed") : null),
    h("td", {}, roleBadge(fact.source_role)),
    h("td", {}, quote),
    h("td", {}, when(fact.valid_from)),
    h("td", {}, when(fact.valid_to)),
    h("td", {}, when(fact.recorded_at)),
    h(
      "td",
      {},
      h(
        "button",
        { type: "button", class: "small-button", "aria-label": `Delete the fact “${fact.statement}”`, "data-delete": fact.id },
        "Delete",
      ),
    ),
  );
}

// Delete one fact after a confirmation naming it: a correction of one statement, not an
// erasure (its message, its entities and their other facts stay).
function factDeleter(onDeleted, showError) {
  const dialog = h("dialog", { id: "delete-fact-dialog", "aria-labelledby": "delete-fact-title" });
  const slot = h("div", { class: "action-error", id: "delete-fact-error" });
  let pending = null;
  dialog.addEventListener("close", async () => {
    const chosen = pending;
    pending = null;
    if (dialog.returnValue !== "delete" || chosen === null) return;
    try {
      await api.deleteFact(chosen.fact.id);
      chosen.row.remove();
      slot.replaceChildren();
      onDeleted(chosen.fact);
    } catch (error) {
      showError(error, slot);
    }
  });
  const ask = (fact, row) => {
    pending = { fact, row };
    clear(dialog).append(
      h("h3", { id: "delete-fact-title" }, "Delete this fact?"),
      h("p", {}, "“", bdi(fact.statement), "”"),
      h(
        "p",
        {},
        "Only this statement goes. The message it came from stays as it is, and so do its entities and their other facts; to remove every trace of a name, erase it below.",
      ),
      h(
        "form",
        { method: "dialog", class: "actions" },
        h("button", { value: "cancel", autofocus: true }, "Cancel"),
        h("button", { value: "delete", class: "danger", id: "delete-fact-confirm" }, "Delete the fact"),
      ),
    );
    dialog.showModal();
  };
  return { dialog, slot, ask };
}

export async function entityView(params, { showError, rerender }) {
  const name = params.get("name") || "";
  const hops = params.get("hops") === "2" ? 2 : 1;
  const [facts, aliases, graph] = await Promise.all([
    api.facts(name, null, FACTS_PAGE),
    api.aliases(),
    api.neighbourhood(name, hops),
  ]);
  if (facts.facts.length === 0 && graph.edges.length === 0) return noSuchEntity(name);
  const center = graph.nodes.find((n) => n.hop === 0);
  const title = center ? center.name : name;
  const key = graph.entity;
  const own = aliases.aliases.filter((a) => normalName(a.into) === key);
  const incoming = graph.edges.filter((e) => e.hop === 1 && e.source !== "e:" + key);

  const section = h("section", { "aria-labelledby": "entity-title", class: "entity" });
  const heading = h("h2", { id: "entity-title" }, bdi(title));

  // -- facts
  let more = null;
  let filters = null;
  const read = new Map(); // every fact read, by id: what the filters test
  const deleter = factDeleter((fact) => {
    read.delete(fact.id);
    more.deleted();
    filters.refresh();
  }, showError);
  const row = (fact) => {
    read.set(fact.id, fact);
    const tr = factRow(fact);
    tr.querySelector("[data-delete]").addEventListener("click", () => deleter.ask(fact, tr));
    return tr;
  };
  const factsTable =
    facts.facts.length === 0
      ? h("p", { class: "muted" }, "No fact has this entity as its subject.")
      : scrollBox(`Table of the facts about ${title}`, h(
          "table",
          { class: "grid", id: "facts" },
          h("caption", { class: "sr-only" }, "Facts about ", bdi(title)),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["Statement", "Role", "Quote", "Valid from", "Valid to", "Recorded at"].map((c) =>
                h("th", { scope: "col" }, c),
              ),
              h("th", { scope: "col" }, h("span", { class: "sr-only" }, "Delete")),
            ),
          ),
          h("tbody", {}, facts.facts.map(row)),
        ));
  more = moreFacts(name, facts, factsTable, showError, row, () => filters.refresh());
  const factsMore = more.element;
  filters = factFilters(factsTable, read);

  // -- facts naming it as object (live ones, from the neighbourhood's edges)
  const nodeName = new Map(graph.nodes.map((n) => [n.id, n.name]));
  const objectList =
    incoming.length === 0
      ? h("p", { class: "muted" }, "No live fact names it as object.")
      : h(
          "ul",
          { id: "object-facts" },
          incoming.map((e) =>
            h(
              "li",
              { "data-fact": e.id },
              bdi(e.statement),
              " ",
              roleBadge(e.source_role),
              " ",
              nodeName.has(e.source) ? h("span", { class: "small" }, "(", entityLink(nodeName.get(e.source)), ")") : null,
            ),
          ),
        );

  // -- aliases
  const aliasList =
    own.length === 0
      ? h("p", { class: "muted" }, "No aliases.")
      : h("ul", { id: "aliases" }, own.map((a) => h("li", {}, bdi(a.alias))));

  // -- graph
  const canvas = h("div", {
    class: "graph",
    id: "graph",
    role: "img",
    "aria-label": `Graph of ${title} and the entities ${hops === 2 ? "up to two links" : "one link"} away`,
  });
  const neighbours = graph.nodes.filter((n) => n.kind === "entity" && n.hop > 0);
  const hopLinks = h(
    "p",
    { class: "hops" },
    "Draw: ",
    [1, 2].map((n) =>
      n === hops
        ? h("strong", { "aria-current": "true" }, `${n} hop${n === 2 ? "s" : ""}`)
        : h(
            "a",
            { href: "#/entity?" + new URLSearchParams({ name, hops: String(n) }) },
            `${n} hop${n === 2 ? "s" : ""}`,
          ),
    ).flatMap((x, i) => (i ? [" · ", x] : [x])),
  );
  const linked = h(
    "ul",
    { class: "linked", id: "linked" },
    neighbours.map((n) => h("li", {}, entityLink(n.name), h("span", { class: "muted" }, ` (hop ${n.hop})`))),
  );

  // -- erase
  const result = h("div", { id: "erase-result", role: "status", "aria-live": "polite" });
  let preview = null;
  const dialog = eraseDialog(async (also) => {
    try {
      // The preview's token matters only for a subject that is no entity, and is bound
      // to what it previewed (nothing ticked).
      const token = preview.needs_token && !also.length ? preview.token : undefined;
      let answer = await api.erase(title, also, token);
      // A deploy whose worker erases it answers 202 pending: recall already hides the
      // entity; the status is read until the worker is done.
      while (answer.status === "pending") {
        clear(result).append("Erasing “", bdi(title), "”: the worker is on it…");
        await new Promise((resolve) => setTimeout(resolve, 1000));
        answer = await api.erasure(answer.id);
      }
      const counts = answer.erased;
      clear(section).append(
        h("h2", { id: "entity-title" }, "Erased “", bdi(title), "”"),
        h(
          "p",
          { id: "erase-counts", role: "status" },
          "Removed: ",
          Object.entries(counts)
            .map(([k, v]) => `${k}: ${v}`)
            .join(", "),
          ".",
        ),
        h("p", {}, h("a", { href: "#/entities" }, "Back to the entities")),
      );
    } catch (error) {
      showError(error, result);
    }
  });
  const eraseButton = h(
    "button",
    {
      type: "button",
      class: "danger",
      id: "erase",
      // The dialog says what the erasure would take, from its preview (nothing removed).
      onclick: async () => {
        try {
          preview = await api.previewErasure(title);
          fillEraseDialog(dialog, title, preview, own);
          dialog.showModal();
        } catch (error) {
          showError(error, result);
        }
      },
    },
    "Erase “",
    bdi(title),
    "”…",
  );

  section.append(
    heading,
    h(
      "p",
      { class: "muted" },
      "Key “",
      bdi(key),
      `”. ${incoming.length} live fact${incoming.length === 1 ? "" : "s"} naming it as object` +
        `${incoming.length && graph.edges.length >= 200 ? " (of the 200 nearest drawn)" : ""}.`,
    ),
    h("h3", {}, "Facts with it as subject"),
    facts.facts.length ? filters.element : "",
    factsTable,
    factsMore,
    deleter.slot,
    deleter.dialog,
    addFactForm(title, rerender, showError),
    h("h3", {}, "Facts naming it as object"),
    objectList,
    h("h3", {}, "Aliases"),
    aliasList,
    h("h3", {}, "Neighbourhood"),
    hopLinks,
    h("div", { class: "graph-wrap" }, h("div", { class: "graph-box" }, canvas), h("nav", { "aria-label": "Linked entities" }, h("h4", {}, "Linked entities"), linked)),
    h("h3", {}, "Erase"),
    h(
      "p",
      {},
      "Erasing removes every fact naming this entity and its aliases, and in each message that names it masks the whole passages that do (█ for each character).",
    ),
    eraseButton,
    dialog,
    result,
  );
  // The graph library is loaded here only, once the section is in the page (Cytoscape
  // measures its container); if it cannot load, the page stands without the drawing.
  requestAnimationFrame(() => drawInto(canvas, graph, hops));
  return section;
}

// "Show more facts" under the table, with how many are shown (`deleted()`: one less;
// `onRead()` after a page is added).
function moreFacts(name, first, table, showError, row, onRead) {
  const status = h("p", { class: "muted", id: "facts-shown", role: "status" });
  const button = h("button", { type: "button", class: "more", id: "more-facts" }, "Show more facts");
  const slot = h("div", { class: "action-error" });
  let cursor = first.next_cursor;
  let shown = first.facts.length;
  const say = () => {
    status.textContent = `${shown} fact${shown === 1 ? "" : "s"} shown${cursor ? ", more to load" : ""}.`;
    button.hidden = !cursor;
  };
  button.addEventListener("click", async () => {
    try {
      const page = await api.facts(name, cursor, FACTS_PAGE);
      table.querySelector("tbody").append(...page.facts.map(row));
      shown += page.facts.length;
      cursor = page.next_cursor;
      slot.replaceChildren();
      say();
      onRead();
    } catch (error) {
      showError(error, slot);
    }
  });
  say();
  const deleted = () => {
    shown -= 1;
    say();
  };
  return { element: h("div", {}, status, button, slot), deleted };
}

async function drawInto(canvas, graph, hops) {
  let drawGraph;
  let applyView;
  try {
    ({ drawGraph, applyView } = await import("./graph.js"));
  } catch {
    canvas.replaceWith(
      h("p", { class: "graph-failed", id: "graph-failed", role: "status" }, "The graph could not load. The linked entities are listed here."),
    );
    return;
  }
  if (!canvas.isConnected) return; // the person has moved on: nothing to draw into
  const cy = drawGraph(canvas, graph, (target) => {
    location.hash = "#/entity?" + new URLSearchParams({ name: target, hops: String(hops) });
  });
  // The nodes drawn (the grouped values' node is hidden until values are grouped).
  canvas.dataset.ready = String(cy.nodes().filter((n) => n.style("display") !== "none").length);
  const zoomBy = (factor) =>
    cy.zoom({ level: cy.zoom() * factor, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
  canvas.before(
    h(
      "div",
      { class: "graph-controls", role: "group", "aria-label": "Graph view" },
      h("button", { type: "button", id: "graph-fit", onclick: () => cy.fit(undefined, 30) }, "Fit"),
      h("button", { type: "button", id: "graph-zoom-in", onclick: () => zoomBy(1.25) }, "Zoom in"),
      h("button", { type: "button", id: "graph-zoom-out", onclick: () => zoomBy(0.8) }, "Zoom out"),
      Number(canvas.dataset.hidden) > 0
        ? h("span", { class: "muted small" }, ` ${canvas.dataset.hidden} more linked than drawn; all are listed.`)
        : null,
    ),
    graphFilters(cy, graph, applyView, canvas),
  );
}

// What the drawing shows: values shown, grouped into one node or hidden, and the links of
// one predicate only. `data-shown` on the canvas counts the nodes shown (for the tests).
function graphFilters(cy, graph, applyView, canvas) {
  const predicates = [...new Set(graph.edges.map((e) => e.predicate))].sort();
  const values = h(
    "select",
    { id: "graph-values" },
    h("option", { value: "shown" }, "shown"),
    h("option", { value: "grouped" }, "grouped into one node"),
    h("option", { value: "hidden" }, "hidden"),
  );
  const predicate = h(
    "select",
    { id: "graph-predicate" },
    h("option", { value: "" }, "all"),
    predicates.map((p) => h("option", { value: p }, p)),
  );
  const apply = () => {
    const shown = applyView(cy, { values: values.value, predicate: predicate.value });
    canvas.dataset.shown = String(shown.length);
    cy.fit(shown, 30);
  };
  values.addEventListener("change", apply);
  predicate.addEventListener("change", apply);
  canvas.dataset.shown = canvas.dataset.ready;
  return h(
    "div",
    { class: "graph-controls", role: "group", "aria-label": "What the graph shows" },
    h("label", { for: "graph-values" }, "Values"),
    values,
    h("label", { for: "graph-predicate" }, "Links"),
    predicate,
  );
}

// A name that holds nothing (never stored, or erased): said so, with nothing to erase.
function noSuchEntity(name) {
  return h(
    "section",
    { "aria-labelledby": "entity-title", class: "entity" },
    h("h2", { id: "entity-title" }, "No such entity"),
    h("p", { id: "no-such-entity" }, "Nothing is held about “", bdi(name), "”: it was never stored, or it has been erased."),
    h("p", {}, h("a", { href: "#/entities" }, "All entities")),
  );
}

function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

function eraseDialog(onConfirm) {
  const dialog = h("dialog", { id: "erase-dialog", "aria-labelledby": "erase-title" });
  dialog.addEventListener("close", () => {
    if (dialog.returnValue !== "erase") return;
    const ticked = [...dialog.querySelectorAll("input[name=also]:checked")].map((i) => i.value);
    onConfirm(ticked);
  });
  return dialog;
}

// Whose memory the erasure acts on, as the API does: a name's erasure sent with a user
// acts in that user's memory only, one without in the shared memory only; never both.
// A user credential always acts as its user (the server fills it in).
function eraseScope(title) {
  const byCredential = answeredBy.user;
  const scoped = byCredential || user();
  if (!scoped) {
    return h(
      "p",
      { id: "erase-scope" },
      h("strong", {}, "The shared memory only."),
      " No User is set, so this erases “",
      bdi(title),
      "” from the project's shared memory. What end users stored about it under their own user id is not changed: set the User field to erase it from a user's memory.",
    );
  }
  return h(
    "p",
    { id: "erase-scope" },
    h("strong", {}, "User ", bdi(scoped), "'s memory only."),
    " This erases “",
    bdi(title),
    "” from what was stored for user ",
    bdi(scoped),
    ". The shared memory is not changed: what it holds about “",
    bdi(title),
    "” stays, and ",
    bdi(scoped),
    "'s reads still show it. ",
    byCredential
      ? "This credential acts for that user only; a project credential erases from the shared memory."
      : "To erase it from the shared memory, clear the User field and erase again.",
  );
}

// What the preview says the erasure takes; other entities whose names hold this one are
// kept unless ticked.
function fillEraseDialog(dialog, title, preview, aliases) {
  const would = preview.would_erase;
  const spared = preview.names.filter((n) => !n.taken);
  clear(dialog).append(
    h("h3", { id: "erase-title" }, "Erase everything held about “", bdi(title), "”?"),
    eraseScope(title),
    h(
      "ul",
      { id: "erase-preview" },
      h("li", {}, `${plural(would.facts, "fact", "facts")} naming “`, bdi(title), "”"),
      h("li", {}, plural(would.entities, "entity", "entities")),
      h(
        "li",
        {},
        `${plural(would.messages, "message", "messages")} with the passages naming it masked (█), ` +
          `${plural(would.passages, "passage", "passages")} removed (of ${preview.messages} messages in ` +
          `${answeredBy.user || user() ? "this user's" : "the shared"} memory)`,
      ),
      h(
        "li",
        {},
        aliases.length
          ? ["its aliases: ", aliases.map((a, i) => [i ? ", " : "", bdi(a.alias)])]
          : "no aliases",
      ),
      h("li", {}, "the reports built from those facts (rebuilt without them)"),
    ),
    spared.length
      ? h(
          "fieldset",
          { id: "erase-also" },
          h("legend", {}, "Other entities whose names hold “", bdi(title), "”: kept unless ticked"),
          spared.map((n) => h("label", {}, h("input", { type: "checkbox", name: "also", value: n.key }), " ", bdi(n.key))),
        )
      : "", // the DOM's own append writes a null as the text "null"
    h("p", { class: "warning" }, "This cannot be undone."),
    h(
      "form",
      { method: "dialog", class: "actions" },
      h("button", { value: "cancel", autofocus: true }, "Cancel"),
      h("button", { value: "erase", class: "danger", id: "erase-confirm" }, "Erase “", bdi(title), "”"),
    ),
  );
}
