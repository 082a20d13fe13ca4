"""The memory explorer on a big memory: a hub entity with more facts and neighbours than
fit on a page or a graph, and lists read a page at a time that Back returns to whole."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.conftest import Demo
from tests.browser.test_explorer import open_with
from tests.browser.test_explorer_views import axe_violations

expect = pytest.importorskip(
    "playwright.sync_api", reason="browser tests skipped: Python playwright is not installed"
).expect

PEOPLE = 60


@pytest.fixture(scope="module")
def hub(demo_server: Demo) -> Iterator[str]:
    """A project where one entity, Hub, knows 60 people (61 entities in all)."""
    secret = demo_server.server.new_credential(f"hub-{uuid.uuid4().hex[:8]}")
    facts = [
        {"subject": "Hub", "predicate": "knows", "object": f"Person {i:03}", "source_role": "user"}
        for i in range(PEOPLE)
    ]
    with demo_server.server.client(secret) as http:
        assert http.post("/v1/facts", json={"facts": facts}).status_code == 201
    yield secret


def test_a_hub_pages_its_facts_and_caps_its_graph(page: Any, demo_server: Demo, hub: str) -> None:
    open_with(page, demo_server, hub, "#/entity?name=Hub")
    rows = page.locator("#facts tbody tr")
    expect(rows).to_have_count(50)
    expect(page.locator("#facts-shown")).to_have_text("50 facts shown, more to load.")
    page.click("#more-facts")
    expect(rows).to_have_count(PEOPLE)
    expect(page.locator("#facts-shown")).to_have_text(f"{PEOPLE} facts shown.")
    expect(page.locator("#more-facts")).to_be_hidden()
    # The graph draws the hub, its 40 nearest and one node for the other 20; the list
    # beside it names all 60.
    page.wait_for_selector("#graph[data-ready]")
    assert page.get_attribute("#graph", "data-ready") == str(1 + 40 + 1)
    assert page.get_attribute("#graph", "data-hidden") == str(PEOPLE - 40)
    assert page.locator("#linked a").count() == PEOPLE
    zoom = "document.getElementById('graph').taisceGraph.zoom()"
    before = page.evaluate(zoom)
    page.click("#graph-zoom-in")
    assert page.evaluate(zoom) > before
    page.click("#graph-fit")
    extent = page.evaluate(
        """() => {
            const cy = document.getElementById('graph').taisceGraph;
            const box = cy.elements().renderedBoundingBox();
            return [box.x1, box.y1, box.x2, box.y2, cy.width(), cy.height()];
        }"""
    )
    x1, y1, x2, y2, width, height = extent
    assert x1 >= 0 and y1 >= 0 and x2 <= width and y2 <= height, extent  # all in view
    assert axe_violations(page) == []
    # One of them lists the hub's fact naming it, with a link back to the hub.
    page.locator("#linked a", has_text="Person 007").click()
    named = page.locator("#object-facts li")
    expect(named).to_have_count(1)
    assert named.get_attribute("data-fact") and "Hub knows Person 007" in named.inner_text()
    named.locator("a", has_text="Hub").click()
    page.locator("#entity-title", has_text="Hub").wait_for()


def test_back_to_a_list_after_show_more_keeps_it(page: Any, demo_server: Demo, hub: str) -> None:
    open_with(page, demo_server, hub)
    rows = page.locator("#entities tbody tr")
    expect(rows).to_have_count(50)
    page.click("text=Show more")
    expect(rows).to_have_count(PEOPLE + 1)
    link = page.locator("#entities a", has_text="Person 055")
    link.scroll_into_view_if_needed()
    scrolled = page.evaluate("scrollY")
    assert scrolled > 0
    link.click()
    page.locator("#entity-title", has_text="Person 055").wait_for()
    page.go_back()
    expect(rows).to_have_count(PEOPLE + 1)
    assert page.evaluate("scrollY") == scrolled
