// The explorer's shell: the credential form, the alert line, and a router over the
// address's fragment (#/entities, #/entity?name=…, #/messages, #/message?id=…, #/search?q=…,
// #/recall).
// The fragment holds names and ids only, never the credential.

import { ApiError, USER_PATTERN, answeredBy, credential, onAnswer, setCredential, setUser, user } from "./api.js";
import { clear, h } from "./dom.js";
import { entitiesView } from "./views/entities.js";
import { entityView } from "./views/entity.js";
import { messagesView } from "./views/messages.js";
import { messageView } from "./views/message.js";
import { recallView } from "./views/recall.js";
import { searchView } from "./views/search.js";

const views = {
  entities: entitiesView,
  entity: entityView,
  messages: messagesView,
  message: messageView,
  recall: recallView,
  search: searchView,
};
const navFor = { entity: "entities", message: "messages" };

const view = document.getElementById("view");
const alertLine = document.getElementById("alert");
const state = document.getElementById("credential-state");
const input = document.getElementById("credential");
let rendering = 0;

export function describe(error) {
  if (error instanceof ApiError) return error.describe();
  console.error(error); // the detail for a developer; the person gets plain words
  return "Something went wrong on this page. Reload it and try again.";
}

// An error is shown next to the action that failed (`slot`, an element beside it) so it
// is seen where the person is looking; a page that could not load shows it at the top.
export function showError(error, slot) {
  dropRefused(error);
  const code = error instanceof ApiError ? error.code : "client";
  if (slot) {
    clear(slot).append(h("p", { class: "alert", role: "alert", "data-code": code }, describe(error)));
    slot.scrollIntoView({ block: "nearest" });
    return;
  }
  alertLine.textContent = describe(error);
  alertLine.hidden = false;
  alertLine.dataset.code = code;
}

export function clearError() {
  alertLine.hidden = true;
  alertLine.textContent = "";
  delete alertLine.dataset.code;
}

function showCredentialState(note) {
  state.textContent = note || (credential() ? "set for this tab" : "not set");
}

// A refused credential is not kept: the next page would only be refused again.
function dropRefused(error) {
  if (error instanceof ApiError && error.status === 401 && credential()) {
    setCredential("");
    showCredentialState("refused: paste another");
  }
}

function parseRoute() {
  const hash = location.hash.replace(/^#\/?/, "");
  const [page, query] = hash.split("?");
  return { page: page || "entities", params: new URLSearchParams(query || "") };
}

async function render() {
  const token = ++rendering;
  const { page, params } = parseRoute();
  const make = views[page] || views.entities;
  for (const link of document.querySelectorAll("nav a[data-page]")) {
    if (link.dataset.page === (navFor[page] || page)) link.setAttribute("aria-current", "page");
    else link.removeAttribute("aria-current");
  }
  clearError();
  // Graphs drawn on the page being left are freed, not left drawing into nothing.
  for (const graph of view.querySelectorAll(".graph")) graph.taisceGraph?.destroy();
  clear(view);
  if (!credential()) {
    view.append(
      h("h2", {}, "Paste a credential"),
      h(
        "p",
        {},
        "This page reads the memory of one project through the API. Paste a credential for it " +
          "in the field above (",
        h("code", {}, "make run"),
        " prints one for the demo project), then press Use.",
      ),
    );
    input.focus({ preventScroll: true });
    return;
  }
  view.append(h("p", { class: "loading", role: "status" }, "Loading…"));
  try {
    const content = await make(params, { showError, clearError, rerender: render });
    if (token !== rendering) return;
    clear(view).append(content);
    view.focus({ preventScroll: true });
    // Back to a page returns to where it was read (set when a link on it was followed).
    if (history.state && Number.isFinite(history.state.scrollY)) window.scrollTo(0, history.state.scrollY);
  } catch (error) {
    if (token !== rendering) return;
    showError(error);
    clear(view).append(h("p", { class: "muted" }, "Nothing to show."));
  }
}

function useCredential() {
  const secret = input.value.trim();
  input.value = "";
  if (!secret) return;
  setCredential(secret);
  showCredentialState();
  render();
}

document.getElementById("use-credential").addEventListener("click", useCredential);
input.addEventListener("keydown", (event) => {
  if (event.key === "Enter") {
    event.preventDefault();
    useCredential();
  }
});

document.getElementById("forget").addEventListener("click", () => {
  setCredential("");
  answeredBy.project = "";
  answeredBy.user = "";
  showScope();
  showCredentialState();
  render();
});

// Whose memory is shown: the project (as the server names it) and the end user read.
const scopeLine = document.getElementById("scope");
const userInput = document.getElementById("user");

function showScope(note) {
  const parts = [];
  if (credential() && answeredBy.project) parts.push(h("span", {}, "Project ", h("strong", { id: "project-name" }, h("bdi", {}, answeredBy.project))));
  const reading = answeredBy.user || user();
  parts.push(
    h(
      "span",
      { id: "user-scope" },
      reading ? ["User ", h("strong", {}, h("bdi", {}, reading)), " and the shared memory"] : "The shared memory only",
    ),
  );
  if (note) parts.push(h("span", { class: "warning" }, note));
  clear(scopeLine).append(...parts.flatMap((p, i) => (i ? [" · ", p] : [p])));
}

function useUser() {
  const name = userInput.value.trim();
  if (name && !USER_PATTERN.test(name)) {
    showScope("not a user id: letters, digits and . _ : @ - only, up to 128");
    return;
  }
  setUser(name);
  showScope();
  render();
}

document.getElementById("use-user").addEventListener("click", useUser);
userInput.addEventListener("keydown", (event) => {
  if (event.key === "Enter") {
    event.preventDefault();
    useUser();
  }
});
userInput.value = user();
onAnswer(() => showScope());

window.addEventListener("hashchange", render);
history.scrollRestoration = "manual"; // the page is drawn after its data: restored by hand
document.addEventListener("click", (event) => {
  const link = event.target.closest && event.target.closest('a[href^="#/"]');
  if (link) history.replaceState({ ...(history.state || {}), scrollY: window.scrollY }, "");
});
showCredentialState();
showScope();
render();
