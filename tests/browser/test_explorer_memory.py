"""Working with memory in the explorer, as peers' explorers allow: messages grouped into
sessions, a message or a fact added by hand, an entity's facts filtered and read as of
a past moment. Each checked against what the API answers, at a laptop's size and a
phone's."""

from __future__ import annotations

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
    page.seen_urls = []
    page.on("request", lambda r: page.seen_urls.append(r.url))
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
    page.seen_urls = []
    page.on("request", lambda r: page.seen_urls.append(r.url))
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
