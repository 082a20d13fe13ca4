// Messages: newest first, with their passages marked, filtered by role and source
// (GET /v1/messages?passages=true: a page of messages with their passages, one request),
// grouped into sessions, and a form that stores a new one (POST /v1/messages).

import { api } from "../api.js";
import { addMemoryForm, h, markedText, messageLink, pagesWanted, rememberPages, roleBadge, when } from "../dom.js";

const ROLES = ["user", "assistant", "system", "tool"];
const PAGE = 20;
// A session: messages that occurred within this of the one before (the API has no
// session field; a chat's turns are minutes apart, two chats hours or days).
const SESSION_GAP_MS = 30 * 60 * 1000;

// A session's heading, above its newest message (the list runs newest first).
function sessionHeading(message) {
  return h(
    "h3",
    { class: "session", "data-session": message.occurred_at },
    "Session of ",
    h("time", { datetime: message.occurred_at }, when(message.occurred_at)),
  );
}

// A form that stores one message as the API stores any (its passages, and facts once
// the worker extracts them); the list is read again after.
function addMessageForm(rerender, showError) {
  return addMemoryForm({
    id: "add-message",
    summary: "Add a message",
    note: h(
      "p",
      { class: "muted small" },
      "Stored as any message sent to the API: it is split into passages at once, and its facts are extracted in the background.",
    ),
    fields: [
      h("label", { for: "add-role" }, "Role"),
      h("select", { id: "add-role", name: "role" }, ROLES.map((r) => h("option", { value: r }, r))),
      h("label", { for: "add-source" }, "Source"),
      h("input", { id: "add-source", name: "source", type: "text", placeholder: "optional, e.g. chat:4" }),
      h("label", { for: "add-content" }, "Message"),
      h("textarea", { id: "add-content", name: "content", rows: 3 }),
      h("button", { type: "submit" }, "Store the message"),
    ],
    read: (form) => {
      const content = form.elements.content.value;
      if (!content.trim()) return "Write the message first.";
      const message = { role: form.elements.role.value, content };
      const source = form.elements.source.value.trim();
      if (source) message.source = source;
      return message;
    },
    store: (message) => api.storeMessages([message]),
    rerender,
    showError,
  });
}

export function messageCard(message, passages) {
  return h(
    "article",
    { class: "message", "data-message": message.id },
    h(
      "header",
      {},
      roleBadge(message.role),
      " ",
      messageLink(message.id),
      message.source ? h("span", { class: "source" }, " source ", h("bdi", {}, message.source)) : null,
      h(
        "span",
        { class: "muted" },
        ` · occurred ${when(message.occurred_at)} · recorded ${when(message.recorded_at)}`,
      ),
    ),
    h("p", { class: "content" }, markedText(message.content, passages || [])),
    h(
      "p",
      { class: "muted small" },
      passages ? `${passages.length} passage${passages.length === 1 ? "" : "s"}` : "passages not loaded",
    ),
  );
}

export async function messagesView(params, { showError, rerender }) {
  const role = params.get("role") || "";
  const source = params.get("source") || "";
  const list = h("div", { class: "messages", id: "messages" });
  const more = h("button", { type: "button", class: "more", hidden: true }, "Show older messages");
  const summary = h("p", { class: "muted", "aria-live": "polite" });
  let cursor = null;
  let shown = 0;
  let pages = 0;
  let newer = null; // the message above the next one listed

  async function load() {
    const page = await api.messages({ role, source, cursor, limit: PAGE, passages: true });
    for (const m of page.messages) {
      const gap = newer === null ? Infinity : Math.abs(Date.parse(newer.occurred_at) - Date.parse(m.occurred_at));
      // The heading goes above a session's newest message: the one after a gap.
      if (!(gap <= SESSION_GAP_MS)) list.append(sessionHeading(m));
      list.append(messageCard(m, m.passages));
      newer = m;
    }
    pages += 1;
    shown += page.messages.length;
    cursor = page.next_cursor;
    more.hidden = !cursor;
    summary.textContent = `${shown} message${shown === 1 ? "" : "s"} shown, newest first${cursor ? "; older ones to load" : ""}.`;
  }
  const moreError = h("div", { class: "action-error" });
  more.addEventListener("click", () =>
    load().then(
      () => {
        moreError.replaceChildren();
        rememberPages("messages", params, pages);
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
      onsubmit: (event) => {
        event.preventDefault();
        const query = new URLSearchParams();
        if (form.elements.role.value) query.set("role", form.elements.role.value);
        if (form.elements.source.value.trim()) query.set("source", form.elements.source.value.trim());
        const text = query.toString();
        location.hash = "#/messages" + (text ? "?" + text : "");
      },
    },
    h("label", { for: "message-role" }, "Role"),
    h(
      "select",
      { id: "message-role", name: "role" },
      h("option", { value: "" }, "any"),
      ROLES.map((r) => h("option", { value: r, selected: r === role }, r)),
    ),
    h("label", { for: "message-source" }, "Source"),
    h("input", { id: "message-source", name: "source", type: "text", value: source, placeholder: "exact source" }),
    h("button", { type: "submit" }, "Filter"),
  );
  return h(
    "section",
    { "aria-labelledby": "messages-title" },
    h("h2", { id: "messages-title" }, "Messages"),
    addMessageForm(rerender, showError),
    form,
    h("p", { class: "legend muted" }, "Passages are shaded in turn; hover one for its id and offsets. A session is a run of messages each within 30 minutes of the one before."),
    summary,
    list,
    more,
    moreError,
  );
}
