"""Every view of the explorer at both sizes on two memories made for it
(tests/browser/fixtures.py): one about the size of a long real conversation, and one of
names that try to break a page. Each view fits the screen, passes axe, logs no error,
and shows what the API holds."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import quote, urlencode

import pytest

from tests.browser import fixtures
from tests.browser.conftest import Demo
from tests.browser.test_explorer import open_with
from tests.browser.test_explorer_views import assert_fits

expect = pytest.importorskip(
    "playwright.sync_api", reason="browser tests skipped: Python playwright is not installed"
).expect


def _load(server: Demo, name: str, made: Callable[[], fixtures.Bodies]) -> str:
    secret = server.server.new_credential(f"{name}-{uuid.uuid4().hex[:8]}")
    messages, facts = made()
    with server.server.client(secret) as http:
        for body in messages:
            assert http.post("/v1/messages", json=body).status_code == 202
        for body in facts:
            assert http.post("/v1/facts", json=body).status_code == 201
    return secret


@pytest.fixture(scope="module")
def conversation(demo_server: Demo) -> str:
    return _load(demo_server, "conversation", fixtures.conversation_sized)


@pytest.fixture(scope="module")
def hostile(demo_server: Demo) -> str:
    return _load(demo_server, "hostile", fixtures.hostile)


def _go(page: Any, route: str, **query: str) -> None:
    """To a view, the query encoded as the explorer's own links encode it."""
    text = f"?{urlencode(query, quote_via=quote)}" if query else ""
    page.evaluate("(to) => { location.hash = to; }", route + text)


def visit_every_view(page: Any, server: Demo, secret: str, entity: str, question: str) -> None:
    """Entities, an entity two hops out, messages, a message, a search, a recall: each
    fits and passes axe, and nothing is logged as an error."""
    open_with(page, server, secret)
    page.locator("#entities tbody tr").first.wait_for()
    assert_fits(page, "entities")
    _go(page, "#/entity", name=entity, hops="2")
    page.wait_for_selector("#graph[data-ready], #graph-failed")
    assert_fits(page, "entity")
    _go(page, "#/messages")
    page.locator("#messages article").first.wait_for()
    assert_fits(page, "messages")
    page.locator("#messages article header a").first.click()
    page.locator("#message-title").wait_for()
    assert_fits(page, "message")
    _go(page, "#/search", q=question)
    page.locator("#search-results").wait_for()
    assert_fits(page, "search")
    _go(page, "#/recall")
    page.fill("#question", question)
    page.uncheck("#roles_default")
    for role in ("user", "assistant", "system", "tool"):
        page.check(f"#role-{role}")
    page.click("#recall-form button[type=submit]")
    page.locator("#bundle").wait_for()
    assert_fits(page, "recall")
    errors = [line for line in page.console_lines if line.startswith(("error", "pageerror"))]
    assert errors == []


def test_every_view_on_a_conversation_sized_memory(
    sized: Any, demo_server: Demo, conversation: str
) -> None:
    page = sized
    visit_every_view(
        page, demo_server, conversation, "Nora Quill", "Where did Nora meet Friend 07?"
    )
    # The lists read a page at a time and say so.
    _go(page, "#/entities")
    expect(page.locator("#entities tbody tr")).to_have_count(50)
    expect(page.locator("#entities-shown")).to_contain_text("more to load")
    _go(page, "#/messages")
    expect(page.locator("#messages article")).to_have_count(20)
    with demo_server.server.client(conversation) as http:
        newest = http.get("/v1/messages", params={"limit": 20}).json()["messages"]
        facts = http.get("/v1/facts", params={"subject": "Nora Quill", "limit": 50}).json()
    # 20 turns a minute apart: one session, headed once.
    assert len({m["occurred_at"][:10] for m in newest}) == 1
    expect(page.locator("#messages h3.session")).to_have_count(1)
    # A speaker's page shows the first 50 of their facts, each citing its message.
    _go(page, "#/entity", name="Nora Quill")
    rows = page.locator("#facts tbody tr")
    expect(rows).to_have_count(len(facts["facts"]))
    assert facts["next_cursor"], "Nora holds more than a page of facts"
    first = facts["facts"][0]
    assert page.locator(f"#facts tr[data-fact='{first['id']}'] a[href*='#/message']").count() == 1


def test_every_view_on_hostile_names(sized: Any, demo_server: Demo, hostile: str) -> None:
    page = sized
    name = fixtures.HOSTILE_NAMES[0]
    visit_every_view(page, demo_server, hostile, name, f"Who did {name} greet?")
    assert page.evaluate("window.pwned") is None  # no markup from memory ever ran
    with demo_server.server.client(hostile) as http:
        listed = http.get("/v1/entities", params={"limit": 100}).json()["entities"]
    _go(page, "#/entities")
    rows = page.locator("#entities tbody tr")
    expect(rows).to_have_count(len(listed))
    shown = [rows.nth(i).locator("th").text_content() for i in range(rows.count())]
    assert shown == [e["name"] for e in listed]  # as text, each whole


def test_each_hostile_name_has_its_own_page(page: Any, demo_server: Demo, hostile: str) -> None:
    open_with(page, demo_server, hostile)
    page.locator("#entities tbody tr").first.wait_for()
    with demo_server.server.client(hostile) as http:
        listed = http.get("/v1/entities", params={"limit": 100}).json()["entities"]
    assert len(listed) == len(fixtures.HOSTILE_NAMES)
    for entity in listed:
        _go(page, "#/entity", name=entity["name"])
        expect(page.locator("#entity-title")).to_have_text(entity["name"])
        with demo_server.server.client(hostile) as http:
            facts = http.get("/v1/facts", params={"subject": entity["name"]}).json()["facts"]
        expect(page.locator("#facts tbody tr")).to_have_count(len(facts))
    assert page.evaluate("window.pwned") is None
    errors = [line for line in page.console_lines if line.startswith(("error", "pageerror"))]
    assert errors == []
