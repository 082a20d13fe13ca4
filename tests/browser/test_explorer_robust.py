"""The memory explorer when things go wrong: the graph library or the page's own script
blocked, a name that holds nothing, a slow answer, names built to reorder text."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.browser.conftest import Demo
from tests.browser.test_explorer import open_with
from tests.browser.test_explorer_views import axe_violations

expect = pytest.importorskip(
    "playwright.sync_api", reason="browser tests skipped: Python playwright is not installed"
).expect


def test_the_graph_library_loads_on_graph_views_only_and_its_failure_is_contained(
    page: Any, demo_server: Demo
) -> None:
    open_with(page, demo_server, demo_server.secret)
    page.locator("#entities tbody tr").first.wait_for()
    page.evaluate("location.hash = '#/messages'")
    page.locator("#messages article").first.wait_for()
    assert not [u for u in page.seen_urls if "/vendor/" in u], "loaded off a graph view"
    # Blocked (an extension, a proxy, a failed download): the entity page still stands.
    page.route("**/ui/vendor/**", lambda route: route.abort())
    page.evaluate("location.hash = '#/entity?name=Atlas'")
    page.locator("#facts tbody tr").first.wait_for()
    expect(page.locator("#graph-failed")).to_have_text(
        "The graph could not load. The linked entities are listed here."
    )
    assert page.locator("#linked a").count() >= 1
    expect(page.locator("#erase")).to_be_visible()
    assert axe_violations(page) == []
    page.evaluate("location.hash = '#/entities'")
    page.locator("#entities tbody tr").first.wait_for()
    assert not [line for line in page.console_lines if line.startswith("pageerror")]


def test_the_credential_is_never_submitted_natively(page: Any, demo_server: Demo) -> None:
    """With the page's script blocked, Use and Enter do nothing: no form sends the
    credential to an address (nor a refused submit to the console)."""
    page.route("**/ui/app.js", lambda route: route.abort())
    page.goto(demo_server.url + "/ui")
    page.fill("#credential", demo_server.secret)
    page.click("#use-credential")
    page.press("#credential", "Enter")
    page.wait_for_load_state()
    assert page.url == demo_server.url + "/ui"
    secret = demo_server.secret
    assert not [u for u in page.seen_urls if secret in u]
    assert not [line for line in page.console_lines if secret in line]


def test_a_name_that_holds_nothing_is_no_such_entity(sized: Any, demo_server: Demo) -> None:
    page = sized
    open_with(page, demo_server, demo_server.secret, "#/entity?name=Nobody%20Here")
    expect(page.locator("#entity-title")).to_have_text("No such entity")
    assert "Nobody Here" in page.inner_text("#no-such-entity")
    assert page.locator("#erase").count() == 0
    assert axe_violations(page) == []


def test_leaving_an_entity_before_its_graph_is_drawn_is_quiet(page: Any, demo_server: Demo) -> None:
    """A page left at once (the graph library still loading, or the drawing not begun)
    draws into nothing and throws nothing; a graph drawn is freed when its page goes."""
    open_with(page, demo_server, demo_server.secret)
    page.locator("#entities tbody tr").first.wait_for()
    for _ in range(3):
        page.evaluate("location.hash = '#/entity?name=Atlas'; setTimeout(() => history.back(), 0)")
        page.locator("#entities tbody tr").first.wait_for()
    page.evaluate("location.hash = '#/entity?name=Atlas'")
    page.wait_for_selector("#graph[data-ready]")
    drawn = page.evaluate_handle("document.getElementById('graph').taisceGraph")
    page.evaluate("location.hash = '#/messages'")
    page.locator("#messages article").first.wait_for()
    assert page.evaluate("(cy) => cy.destroyed()", drawn)
    page.wait_for_timeout(300)  # a frame or two for a late draw to fail in
    assert not [line for line in page.console_lines if line.startswith("pageerror")]


def test_a_page_waiting_for_its_answer_says_it_is_loading(page: Any, demo_server: Demo) -> None:
    open_with(page, demo_server, demo_server.secret)
    page.locator("#entities tbody tr").first.wait_for()
    held: list[Any] = []
    page.route("**/v1/messages?*", lambda route: held.append(route))
    page.evaluate("location.hash = '#/messages'")
    expect(page.locator("#view .loading")).to_have_text("Loading…")
    # The route's callback runs when the driver's event reaches Python, which can come
    # after the page already shows "Loading…": let Playwright dispatch it (5 s at most).
    for _ in range(100):
        if held:
            break
        page.wait_for_timeout(50)
    assert held, "the messages request is held"
    held[0].continue_()
    page.locator("#messages article").first.wait_for()
    assert page.locator("#view .loading").count() == 0


HOSTILE = "Mallory\u202egnp"  # a right-to-left override left open


def test_a_name_with_a_bidi_override_cannot_reorder_the_text_around_it(
    page: Any, demo_server: Demo
) -> None:
    secret = demo_server.server.new_credential(f"bidi-{uuid.uuid4().hex[:8]}")
    fact = {
        "subject": HOSTILE,
        "predicate": "works at",
        "object": "Acme Corp",
        "source_role": "user",
    }
    with demo_server.server.client(secret) as http:
        assert http.post("/v1/facts", json={"facts": [fact]}).status_code == 201
    open_with(page, demo_server, secret)
    page.locator("#entities tbody tr").first.wait_for()
    assert_isolated(page, "entities")
    page.locator("#entities a", has_text="Mallory").click()
    page.locator("#facts tbody tr").first.wait_for()
    assert page.locator("#entity-title bdi").inner_text() == HOSTILE
    assert_isolated(page, "entity")
    page.click("#erase")
    assert_isolated(page, "erase dialog")
    page.locator("#erase-dialog button", has_text="Cancel").click()
    page.evaluate("location.hash = '#/recall'")
    page.fill("#question", f"Where does {HOSTILE} work?")
    page.click("#recall-form button[type=submit]")
    page.locator("#bundle-facts li").first.wait_for()
    assert_isolated(page, "recall")


def assert_isolated(page: Any, view: str) -> None:
    """Every text on the page holding a bidi control sits in an isolating element."""
    loose = page.evaluate(
        r"""() => {
            const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
            const loose = [];
            while (walker.nextNode()) {
                const node = walker.currentNode;
                if (/[\u202a-\u202e\u2066-\u2069]/.test(node.data)
                    && !node.parentElement.closest("bdi, [dir=auto], textarea, input"))
                    loose.push(node.parentElement.outerHTML.slice(0, 120));
            }
            return loose;
        }"""
    )
    assert loose == [], view
