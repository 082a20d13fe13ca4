// Messages: newest first, with their passages marked, filtered by role and source
// (GET /v1/messages?passages=true: a page of messages with their passages, one request).

import { api } from "../api.js";
import { h, markedText, messageLink, pagesWanted, rememberPages, roleBadge, when } from "../dom.js";

const ROLES = ["user", "assistant", "system", "tool"];
const PAGE = 20;

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

export async function messagesView(params, { showError }) {
  const role = params.get("role") || "";
  const source = params.get("source") || "";
  const list = h("div", { class: "messages", id: "messages" });
  const more = h("button", { type: "button", class: "more", hidden: true }, "Show older messages");
  const summary = h("p", { class: "muted", "aria-live": "polite" });
  let cursor = null;
  let shown = 0;
  let pages = 0;

  async function load() {
    const page = await api.messages({ role, source, cursor, limit: PAGE, passages: true });
    page.messages.forEach((m) => list.append(messageCard(m, m.passages)));
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
    form,
    h("p", { class: "legend muted" }, "Passages are shaded in turn; hover one for its id and offsets."),
    summary,
    list,
    more,
    moreError,
  );
}
