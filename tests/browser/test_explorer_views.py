"""Every view of the memory explorer at a laptop's size and a phone's (390 px wide): no
page wider than the screen, nothing in the header clipped, and axe-core (the engine the
accessibility checkers use) finding no violation."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

import pytest

from taisce import demo
from tests.browser.conftest import Demo
from tests.browser.test_explorer import QUESTION, open_with

expect = pytest.importorskip(
    "playwright.sync_api", reason="browser tests skipped: Python playwright is not installed"
).expect
AXE = pytest.importorskip(
    "axe_playwright_python.base", reason="axe-playwright-python is not installed (make install)"
).AXE_SCRIPT


def axe_violations(page: Any) -> list[str]:
    """axe-core's violations on the page as it stands, one line each."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.evaluate(AXE)
    found = page.evaluate("axe.run(document).then((r) => r.violations)")
    return [
        f"{v['id']}: {v['help']} ({', '.join(n['target'][0] for n in v['nodes'][:3])})"
        for v in found
    ]


def assert_fits(page: Any, view: str) -> None:
    """Nothing wider than the screen; the header's buttons inside it; axe finds nothing."""
    wide = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert wide[0] <= wide[1], f"{view}: the page is {wide[0]} px wide on a {wide[1]} px screen"
    for control in ("#forget", "#use-credential"):
        box = page.locator(control).bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= wide[1], f"{view}: {control} clipped"
    assert axe_violations(page) == [], view


def test_every_view_fits_the_screen_and_passes_axe(sized: Any, demo_server: Demo) -> None:
    page = sized
    page.goto(demo_server.url + "/ui")
    page.locator("h2", has_text="Paste a credential").wait_for()
    assert_fits(page, "no credential")
    open_with(page, demo_server, demo_server.secret)
    page.locator("#entities tbody tr").first.wait_for()
    assert_fits(page, "entities")
    page.evaluate("location.hash = '#/entity?name=Acme%20Corp&hops=2'")
    page.wait_for_selector("#graph[data-ready]")
    assert_fits(page, "entity")
    page.evaluate("location.hash = '#/messages'")
    page.locator("#messages article").first.wait_for()
    assert_fits(page, "messages")
    page.locator("#messages article header a").first.click()
    page.locator("#message-title").wait_for()
    assert_fits(page, "message")
    page.evaluate("location.hash = '#/recall'")
    page.fill("#question", QUESTION)
    page.select_option("#hops", "2")
    page.check("#explain")
    page.uncheck("#roles_default")
    page.check("#role-tool")
    page.click("#recall-form button[type=submit]")
    page.locator("#bundle").wait_for()
    for disclosure in page.locator("#bundle details").all():
        disclosure.locator("summary").click()  # the numbers, open: they must wrap too
    assert_fits(page, "recall")
    errors = [line for line in page.console_lines if line.startswith(("error", "pageerror"))]
    assert errors == []


def test_a_failed_recall_says_so_beside_its_button(sized: Any, demo_server: Demo) -> None:
    page = sized
    open_with(page, demo_server, demo_server.secret, "#/recall")
    page.fill("#question", QUESTION)
    page.fill("#as_of", "yesterday")
    page.click("#recall-form button[type=submit]")
    note = page.locator("#recall-error .alert")
    expect(note).to_be_visible()
    assert note.get_attribute("data-code") == "invalid_recall_controls"
    assert "as_of" in note.inner_text()
    expect(note).to_be_in_viewport()
    expect(page.locator("#alert")).to_be_hidden()  # not at the top of the page
    assert axe_violations(page) == []


def test_explain_in_one_plain_sentence_with_the_numbers_behind_a_disclosure(
    page: Any, demo_server: Demo
) -> None:
    open_with(page, demo_server, demo_server.secret, "#/recall")
    page.fill("#question", QUESTION)
    page.select_option("#hops", "2")
    page.check("#explain")
    page.uncheck("#roles_default")
    page.check("#role-tool")
    page.click("#recall-form button[type=submit]")
    page.locator("#bundle").wait_for()
    body = {"question": QUESTION, "hops": 2, "explain": True, "source_roles": ["user", "tool"]}
    with demo_server.api() as http:
        answer = http.post("/v1/recalls", json=body).json()
    hop2 = next(f for f in answer["facts"] if f.get("path"))
    item = page.locator(f"#bundle-facts > li[data-id='{hop2['id']}']")
    why = item.locator(".why").inner_text()
    assert " → ".join(hop2["path"]) in why
    assert hop2["why"]["reason"] in why.lower()
    assert "{" not in why and '"path"' not in why and why.endswith(".")
    # The numbers are behind a disclosure, each with a short meaning.
    numbers = item.locator("details.numbers")
    expect(numbers.locator("dl")).to_be_hidden()
    numbers.locator("summary").click()
    names = numbers.locator("dt code").all_inner_texts()
    assert set(names) == set(hop2["why"]) - {"reason"}
    meanings = numbers.locator("dd").all_inner_texts()
    assert all(meanings), dict(zip(names, meanings, strict=True))


def test_a_fact_without_a_quote_links_to_its_message(page: Any, demo_server: Demo) -> None:
    bare = next(f for f in demo.FACTS if not f.get("quote") and f["subject"] == "Atlas")
    open_with(page, demo_server, demo_server.secret, "#/entity?name=Atlas")
    row = page.locator(f"#facts tbody tr[data-fact='{bare['id']}']")
    assert "no quote" in row.inner_text()
    row.locator("a", has_text=bare["message_id"]).click()
    page.locator("#message-title", has_text=bare["message_id"]).wait_for()
    # Citing without a quote is not a quote gone missing.
    note = page.inner_text("#fact-note")
    assert note == f"Fact {bare['id']} cites this message; it has no quote."
    assert page.locator("mark.quote").count() == 0
    # In a recall every fact citing a message links to it, quoted or not. (A question
    # about Atlas as a whole: every fact of Atlas, whatever the model's cosines.)
    page.evaluate("location.hash = '#/recall'")
    page.fill("#question", "Tell me about Atlas.")
    page.uncheck("#roles_default")
    page.check("#role-assistant")
    page.click("#recall-form button[type=submit]")
    page.locator("#bundle").wait_for()
    body = {"question": "Tell me about Atlas.", "source_roles": ["user", "assistant"]}
    with demo_server.api() as http:
        answer = http.post("/v1/recalls", json=body).json()
    cited = [f for f in answer["facts"] if f.get("message_id")]
    assert any(not f.get("quote") for f in cited), "the question should find the unquoted fact"
    for fact in cited:
        link = page.locator(f"#bundle-facts > li[data-id='{fact['id']}'] a[href*='#/message']")
        assert f"id={fact['message_id']}" in link.get_attribute("href")


def test_the_project_and_the_user_read_are_shown(page: Any, demo_server: Demo) -> None:
    project = f"scoped-{uuid.uuid4().hex[:8]}"
    secret = demo_server.server.new_credential(project)
    shared = {"subject": "Acme Corp", "predicate": "is based in", "object": "Dublin"}
    own = {"subject": "Mom", "predicate": "likes", "object": "green tea"}
    with demo_server.server.client(secret) as http:
        for fact, scope in ((shared, {}), (own, {"user": "u-1"})):
            sent = {"facts": [{**fact, "source_role": "user"}], **scope}
            assert http.post("/v1/facts", json=sent).status_code == 201
    open_with(page, demo_server, secret)
    rows = page.locator("#entities tbody tr")
    expect(rows).to_have_count(2)
    expect(page.locator("#project-name")).to_have_text(project)
    expect(page.locator("#user-scope")).to_have_text("The shared memory only")
    # A user id that is not one is refused where it was typed; nothing changes.
    page.fill("#user", "not a user")
    page.click("#use-user")
    expect(page.locator("#scope .warning")).to_contain_text("not a user id")
    assert page.evaluate("sessionStorage.getItem('taisce.user')") is None
    # Reading as u-1: the shared memory and u-1's, every read sent with ?user=u-1.
    page.fill("#user", "u-1")
    page.press("#user", "Enter")
    expect(rows).to_have_count(4)
    assert [rows.nth(i).get_attribute("data-key") for i in range(4)] == [
        "acme corp",
        "dublin",
        "green tea",
        "mom",
    ]
    expect(page.locator("#user-scope")).to_have_text("User u-1 and the shared memory")
    listed = [u for u in page.seen_urls if "/v1/entities" in u]
    assert "user=u-1" in listed[-1] and "user=" not in listed[0]
    page.evaluate("location.hash = '#/recall'")
    page.fill("#question", "What does Mom like?")
    assert json.loads(re.search(r"-d '(.*)'$", page.inner_text("#curl")).group(1))["user"] == "u-1"
    page.click("#recall-form button[type=submit]")
    expect(page.locator("#bundle-facts li")).to_have_count(1)
    assert "Mom likes green tea" in page.inner_text("#bundle-facts")
    # Erasing with the User set acts in u-1's memory only, and the dialog says so.
    page.evaluate("location.hash = '#/entity?name=Mom'")
    page.locator("#entity-title", has_text="Mom").wait_for()
    page.click("#erase")
    scope = page.locator("#erase-scope")
    expect(scope).to_contain_text("User u-1's memory only.")
    expect(scope).to_contain_text("The shared memory is not changed")
    expect(page.locator("#erase-preview")).to_contain_text("in this user's memory")
    page.locator("#erase-dialog button", has_text="Cancel").click()
    # A user credential acts as its user whatever the User field says (here empty): the
    # dialog names that user from the answers' Taisce-User, in the same tab.
    page.fill("#user", "")
    page.press("#user", "Enter")
    page.fill("#credential", demo_server.server.new_credential(project, "user", "u-1"))
    page.click("#use-credential")
    expect(page.locator("#user-scope")).to_have_text("User u-1 and the shared memory")
    page.click("#erase")
    expect(scope).to_contain_text("User u-1's memory only.")
    expect(scope).to_contain_text("This credential acts for that user only")
    page.locator("#erase-dialog button", has_text="Cancel").click()
