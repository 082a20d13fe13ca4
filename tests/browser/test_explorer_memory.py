"""Working with memory in the explorer, as peers' explorers allow: messages grouped into
sessions, a message or a fact added by hand, an entity's facts filtered and read as of
a past moment. Each checked against what the API answers, at a laptop's size and a
phone's."""

from __future__ import annotations

import re
import uuid
from datetime import datetime
from typing import Any

import pytest

from tests.browser.conftest import Demo
from tests.browser.test_explorer import assert_secret_kept, fresh_project, open_with
from tests.browser.test_explorer_views import assert_fits

expect = pytest.importorskip(
    "playwright.sync_api", reason="browser tests skipped: Python playwright is not installed"
).expect

SESSION_GAP_S = 30 * 60


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def test_messages_are_grouped_into_sessions(sized: Any, demo_server: Demo) -> None:
    page = sized
    open_with(page, demo_server, demo_server.secret, "#/messages")
    page.locator("#messages article").first.wait_for()
    with demo_server.api() as http:
        listed = http.get("/v1/messages").json()["messages"]
    # A heading above each message that did not occur within 30 minutes of the one
    # listed above it (the list runs newest first).
    expected = [
        m["occurred_at"]
        for i, m in enumerate(listed)
        if i == 0
        or abs((_moment(listed[i - 1]["occurred_at"]) - _moment(m["occurred_at"])).total_seconds())
        > SESSION_GAP_S
    ]
    assert 1 < len(expected) < len(listed), "the demo holds a session of two messages"
    headings = page.locator("#messages h3.session")
    expect(headings).to_have_count(len(expected))
    assert [headings.nth(i).get_attribute("data-session") for i in range(len(expected))] == (
        expected
    )
    # Each heading stands right above its session's newest message.
    order = page.eval_on_selector_all(
        "#messages > *",
        "els => els.map(e => e.tagName === 'H3' ? 'h' : e.dataset.message)",
    )
    assert [order[i + 1] for i, x in enumerate(order) if x == "h"] == [
        m["id"] for m in listed if m["occurred_at"] in expected
    ]
    assert_fits(page, "messages with sessions")


def test_adding_a_message(sized: Any, demo_server: Demo) -> None:
    page = sized
    secret = fresh_project(demo_server)
    open_with(page, demo_server, secret, "#/messages")
    page.locator("#messages article").first.wait_for()
    before = page.locator("#messages article").count()
    page.locator("details.add-memory summary").click()
    assert_fits(page, "messages, adding one")
    # Nothing written: a refusal beside the button, not a request.
    page.click("#add-message button[type=submit]")
    expect(page.locator("#add-message-error")).to_contain_text("Write the message first")
    content = "Ilse from Rotterdam now leads the Northwind Labs design team."
    page.select_option("#add-role", "assistant")
    page.fill("#add-source", "chat:9")
    page.fill("#add-content", content)
    page.click("#add-message button[type=submit]")
    first = page.locator("#messages article").first
    expect(first.locator(".content")).to_have_text(content)
    expect(page.locator("#messages article")).to_have_count(before + 1)
    assert first.locator(".role").inner_text() == "assistant"
    assert "chat:9" in first.locator(".source").inner_text()
    with demo_server.server.client(secret) as http:
        newest = http.get("/v1/messages", params={"limit": 1}).json()["messages"][0]
    assert (newest["role"], newest["source"], newest["content"]) == ("assistant", "chat:9", content)
    assert first.get_attribute("data-message") == newest["id"]
    assert_secret_kept(page, secret)


def test_an_entitys_facts_filtered_and_read_as_of_a_past_moment(
    sized: Any, demo_server: Demo
) -> None:
    page = sized
    secret = demo_server.server.new_credential(f"filters-{uuid.uuid4().hex[:8]}")
    facts = [
        {
            "subject": "Ilse",
            "predicate": "lives in",
            "object": "Rotterdam",
            "valid_from": "2020-01-01T00:00:00Z",
            "valid_to": "2024-06-01T00:00:00Z",
        },
        {
            "subject": "Ilse",
            "predicate": "lives in",
            "object": "Utrecht",
            "valid_from": "2024-06-01T00:00:00Z",
        },
        {
            "subject": "Ilse",
            "predicate": "works at",
            "object": "Northwind Labs",
            "source_role": "assistant",
        },
        {"subject": "Ilse", "predicate": "likes", "object": "herring", "object_kind": "value"},
    ]
    with demo_server.server.client(secret) as http:
        sent = [{"source_role": "user", **f} for f in facts]
        assert http.post("/v1/facts", json={"facts": sent}).status_code == 201
        stored = {
            f["statement"]: f
            for f in http.get("/v1/facts", params={"subject": "Ilse"}).json()["facts"]
        }
    open_with(page, demo_server, secret, "#/entity?name=Ilse")
    rows = page.locator("#facts tbody tr")
    expect(rows).to_have_count(4)

    def visible() -> set[str]:
        return {
            rows.nth(i).get_attribute("data-fact")
            for i in range(rows.count())
            if rows.nth(i).is_visible()
        }

    def ids(*statements: str) -> set[str]:
        return {stored[s]["id"] for s in statements}

    assert visible() == set(ids(*stored))
    assert_fits(page, "entity with filters")
    page.select_option("#filter-predicate", "lives in")
    assert visible() == ids("Ilse lives in Rotterdam", "Ilse lives in Utrecht")
    expect(page.locator("#facts-filtered")).to_have_text("2 of the 4 facts read match.")
    page.select_option("#filter-predicate", "")
    page.select_option("#filter-role", "assistant")
    assert visible() == ids("Ilse works at Northwind Labs")
    page.select_option("#filter-role", "")
    # As of 2022: Rotterdam (valid then), not Utrecht (from 2024); facts without a
    # validity hold at any moment, as a recall's as_of reads them.
    page.fill("#filter-as-of", "2022-03-01T12:00:00")
    page.dispatch_event("#filter-as-of", "change")
    assert visible() == ids(
        "Ilse lives in Rotterdam", "Ilse works at Northwind Labs", "Ilse likes herring"
    )
    expect(page.locator("#facts-filtered")).to_contain_text("valid at 2022-03-01 12:00")
    with demo_server.server.client(secret) as http:
        body = {"question": "Where does Ilse live?", "as_of": "2022-03-01T12:00:00Z"}
        recalled = {f["id"] for f in http.post("/v1/recalls", json=body).json()["facts"]}
    assert stored["Ilse lives in Utrecht"]["id"] not in recalled  # the API reads it alike
    page.fill("#filter-as-of", "2025-01-01T00:00:00")
    page.dispatch_event("#filter-as-of", "change")
    assert ids("Ilse lives in Utrecht") <= visible()
    assert not ids("Ilse lives in Rotterdam") & visible()
    page.click("#filter-clear")
    assert visible() == set(ids(*stored))
    expect(page.locator("#facts-filtered")).to_have_text("")


def test_adding_a_fact(sized: Any, demo_server: Demo) -> None:
    page = sized
    secret = fresh_project(demo_server)
    open_with(page, demo_server, secret, "#/entity?name=Atlas")
    rows = page.locator("#facts tbody tr")
    rows.first.wait_for()
    before = rows.count()
    page.locator("details.add-memory summary").click()
    page.click("#add-fact button[type=submit]")
    expect(page.locator("#add-fact-error")).to_contain_text("both a predicate and an object")
    page.fill("#add-predicate", "speaks")
    page.fill("#add-object", "Irish")
    page.select_option("#add-object-kind", "value")
    page.select_option("#add-fact-role", "assistant")
    assert_fits(page, "entity, adding a fact")
    page.click("#add-fact button[type=submit]")
    expect(rows).to_have_count(before + 1)
    with demo_server.server.client(secret) as http:
        listed = http.get("/v1/facts", params={"subject": "Atlas"}).json()["facts"]
    added = next(f for f in listed if f["statement"] == "Atlas speaks Irish")
    assert (added["object_kind"], added["source_role"]) == ("value", "assistant")
    row = page.locator(f"#facts tbody tr[data-fact='{added['id']}']")
    assert "Atlas speaks Irish" in row.inner_text() and "assistant" in row.inner_text()


def test_searching_facts_and_messages(sized: Any, demo_server: Demo) -> None:
    """The search view lists what the API's search by words finds, in its order, a page
    at a time; a message shows the passages that matched and links to itself, a fact to
    its entity."""
    page = sized
    open_with(page, demo_server, demo_server.secret, "#/search")
    page.fill("#search-words", "Galway")
    page.press("#search-words", "Enter")
    expect(page).to_have_url(re.compile(r"#/search\?q=Galway$"))
    page.locator("#search-results").wait_for()
    with demo_server.api() as http:
        found = http.get("/v1/search/facts", params={"q": "Galway"}).json()
        said = http.get("/v1/search/messages", params={"q": "Galway"}).json()
    assert found["facts"] and said["messages"], "the demo names Galway in both"
    facts = page.locator("#search-facts > li")
    messages = page.locator("#search-messages > li")
    assert [facts.nth(i).get_attribute("data-id") for i in range(facts.count())] == [
        f["id"] for f in found["facts"]
    ]
    assert [messages.nth(i).get_attribute("data-id") for i in range(messages.count())] == [
        m["id"] for m in said["messages"]
    ]
    first = said["messages"][0]
    quotes = messages.first.locator("ul.quotes > li")
    assert [quotes.nth(i).get_attribute("data-passage") for i in range(quotes.count())] == [
        p["id"] for p in first["passages"]
    ]
    assert_fits(page, "search")
    messages.first.locator("a", has_text="message").click()
    page.locator("#message-title", has_text=first["id"]).wait_for()
    page.go_back()
    facts.first.locator("a", has_text="about").click()
    expect(page.locator("#entity-title")).to_have_text(found["facts"][0]["subject"])


def test_search_results_come_a_page_at_a_time(sized: Any, demo_server: Demo) -> None:
    """Show more reads the next page with the cursor: every match once, in the API's
    order, then the button goes."""
    page = sized
    secret = demo_server.server.new_credential(f"search-pages-{uuid.uuid4().hex[:8]}")
    said = [{"role": "user", "content": f"The kiln was fired on day {n}."} for n in range(45)]
    with demo_server.server.client(secret) as http:
        # In requests of 15: each indexed before it answers (a bigger one waits the worker).
        for start in range(0, len(said), 15):
            batch = {"messages": said[start : start + 15]}
            assert http.post("/v1/messages", json=batch).status_code == 202
        pages, cursor = [], None
        while True:
            query = {"q": "kiln", "limit": 20, **({"cursor": cursor} if cursor else {})}
            body = http.get("/v1/search/messages", params=query).json()
            pages.append([m["id"] for m in body["messages"]])
            cursor = body["next_cursor"]
            if cursor is None:
                break
    assert [len(p) for p in pages] == [20, 20, 5]
    open_with(page, demo_server, secret, "#/search?q=kiln")
    shown = page.locator("#search-messages > li")
    expect(shown).to_have_count(len(pages[0]))
    for n in range(1, len(pages)):
        page.click("#more-search-messages")
        expect(shown).to_have_count(sum(len(p) for p in pages[: n + 1]))
    expect(page.locator("#more-search-messages")).to_be_hidden()
    ids = [shown.nth(i).get_attribute("data-id") for i in range(shown.count())]
    assert ids == [i for p in pages for i in p]


def _drawn(page: Any) -> dict[str, list[str]]:
    """The graph's shown nodes by kind, read from the drawing itself."""
    return page.evaluate(
        """() => {
            const cy = document.getElementById('graph').taisceGraph;
            const out = {};
            cy.nodes().filter((n) => n.style('display') !== 'none').forEach((n) => {
                (out[n.data('kind')] = out[n.data('kind')] || []).push(n.data('name'));
            });
            return out;
        }"""
    )


def test_the_graph_shows_values_grouped_or_hidden_and_one_predicate(
    sized: Any, demo_server: Demo
) -> None:
    page = sized
    open_with(page, demo_server, demo_server.secret, "#/entity?name=Acme%20Corp&hops=2")
    page.wait_for_selector("#graph[data-ready]")
    with demo_server.api() as http:
        graph = http.get(
            "/v1/entities/neighbourhood", params={"name": "Acme Corp", "hops": 2}
        ).json()
    values = sorted(n["name"] for n in graph["nodes"] if n["kind"] == "value")
    entities = sorted(n["name"] for n in graph["nodes"] if n["kind"] == "entity")
    assert values, "Acme Corp was founded in 2009: a value"
    drawn = _drawn(page)
    assert sorted(drawn["value"]) == values and sorted(drawn["entity"]) == entities
    page.select_option("#graph-values", "grouped")
    drawn = _drawn(page)
    assert "value" not in drawn
    assert drawn["values"] == [f"{len(values)} value{'s' if len(values) > 1 else ''} (grouped)"]
    page.select_option("#graph-values", "hidden")
    drawn = _drawn(page)
    assert set(drawn) == {"entity"} and sorted(drawn["entity"]) == entities
    expect(page.locator("#graph")).to_have_attribute("data-shown", str(len(entities)))
    # One predicate: its links only, and the nodes they join (the centre stays).
    page.select_option("#graph-values", "shown")
    page.select_option("#graph-predicate", "is based in")
    joined = {
        e[side]
        for e in graph["edges"]
        if e["predicate"] == "is based in"
        for side in ("source", "target")
    }
    names = {n["id"]: n["name"] for n in graph["nodes"]}
    centre = next(n["name"] for n in graph["nodes"] if n["hop"] == 0)
    shown = _drawn(page)
    assert sorted(x for kind in shown.values() for x in kind) == sorted(
        {names[i] for i in joined} | {centre}
    )
    assert_fits(page, "entity with graph filters")
    assert not [line for line in page.console_lines if line.startswith(("error", "pageerror"))]
