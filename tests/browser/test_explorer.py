"""The memory explorer in a real browser (headless Chromium) against `taisce serve` with
the demo memory: what each page shows is checked against what the API answers."""

from __future__ import annotations

import json
import re
import uuid
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from taisce import demo
from tests.browser.conftest import Demo

# Locator assertions poll without evaluating strings in the page, which the page's
# Content-Security-Policy (no eval) would refuse.
expect = pytest.importorskip(
    "playwright.sync_api", reason="browser tests skipped: Python playwright is not installed"
).expect


def open_with(page: Any, server: Demo, secret: str, route: str = "") -> None:
    """Load the page from / (sent to /ui), paste the credential, go to `route`."""
    page.goto(server.url + "/")
    assert page.url.startswith(server.url + "/ui")
    page.fill("#credential", secret)
    page.click("#use-credential")
    assert page.input_value("#credential") == ""  # not left in the field
    if route:
        page.evaluate("(route) => { location.hash = route; }", route)


def assert_secret_kept(page: Any, secret: str) -> None:
    """The credential never reached an address, a request URL or the console."""
    assert secret not in page.url
    assert not [u for u in page.seen_urls if secret in u]
    assert not [line for line in page.console_lines if secret in line]
    errors = [line for line in page.console_lines if line.startswith(("error", "pageerror"))]
    # A refused credential's 401 is logged by the browser as a failed resource; nothing else.
    assert all("401" in line for line in errors), errors


def fresh_project(server: Demo) -> str:
    """A project of its own holding the demo memory (for tests that change it)."""
    secret = server.server.new_credential(f"demo-{uuid.uuid4().hex[:8]}")
    with server.server.client(secret) as http:
        assert http.post("/v1/messages", json={"messages": demo.MESSAGES}).status_code == 202
        assert http.post("/v1/facts", json={"facts": demo.FACTS}).status_code == 201
    return secret


# -- credential ---------------------------------------------------------------------


def test_a_wrong_credential_is_shown_as_an_error(page: Any, demo_server: Demo) -> None:
    wrong = "tsk_" + "x" * 43
    open_with(page, demo_server, wrong)
    alert = page.locator("#alert")
    alert.wait_for(state="visible")
    assert alert.get_attribute("data-code") == "unauthorized"
    assert "credential was refused" in alert.inner_text()
    assert page.locator("#entities tbody tr").count() == 0
    assert_secret_kept(page, wrong)
    # A refused credential is not kept (nor said to be set).
    assert page.inner_text("#credential-state") == "refused: paste another"
    assert page.evaluate("sessionStorage.getItem('taisce.credential')") is None
    # A good one is kept in this tab's session storage only, and forgotten on request.
    page.fill("#credential", demo_server.secret)
    page.press("#credential", "Enter")
    page.locator("#entities tbody tr").first.wait_for()
    assert page.inner_text("#credential-state") == "set for this tab"
    assert page.evaluate("sessionStorage.getItem('taisce.credential')") == demo_server.secret
    page.click("#forget")
    assert page.evaluate("sessionStorage.getItem('taisce.credential')") is None
    assert page.evaluate("localStorage.length") == 0


@pytest.mark.parametrize("address", ["/ui", "/ui/"])
def test_without_a_credential_the_page_asks_for_one(
    page: Any, demo_server: Demo, address: str
) -> None:
    page.goto(demo_server.url + address)
    page.locator("h2", has_text="Paste a credential").wait_for()
    assert page.evaluate("document.activeElement.id") == "credential"


# -- entities -----------------------------------------------------------------------


def test_the_entities_page_lists_what_the_api_lists(page: Any, demo_server: Demo) -> None:
    open_with(page, demo_server, demo_server.secret)
    page.locator("#entities tbody tr").first.wait_for()
    with demo_server.api() as http:
        listed = http.get("/v1/entities", params={"limit": 100}).json()["entities"]
    rows = page.locator("#entities tbody tr")
    assert rows.count() == len(listed)
    for i, entity in enumerate(listed):
        cells = rows.nth(i).locator("th, td").all_inner_texts()
        counts = [entity["facts"][r] for r in ("user", "assistant", "system", "tool")]
        assert cells[0] == entity["name"]
        assert cells[1:5] == [str(n) for n in counts]
        assert cells[5] == str(sum(counts))
    # Search goes through the API's search.
    page.fill("#entity-search", "MAYA")
    page.press("#entity-search", "Enter")
    expect(page.locator("#entities tbody tr")).to_have_count(1)
    assert page.locator("#entities tbody th").inner_text() == "Maya Okafor"
    assert_secret_kept(page, demo_server.secret)


def test_an_entity_page_and_a_link_followed_in_the_graph(page: Any, demo_server: Demo) -> None:
    open_with(page, demo_server, demo_server.secret)
    page.locator("#entities a", has_text="Atlas").click()
    page.locator("#entity-title", has_text="Atlas").wait_for()
    with demo_server.api() as http:
        facts = http.get("/v1/facts", params={"subject": "Atlas"}).json()["facts"]
        graph = http.get("/v1/entities/neighbourhood", params={"name": "Atlas"}).json()
    rows = page.locator("#facts tbody tr")
    assert [rows.nth(i).get_attribute("data-fact") for i in range(rows.count())] == [
        f["id"] for f in facts
    ]
    first = rows.first.locator("td").all_inner_texts()
    assert first[0] == facts[0]["statement"] and first[1] == facts[0]["source_role"]
    assert facts[0]["quote"] in first[2]
    # The graph draws the API's neighbourhood; a click on a node opens that entity.
    page.wait_for_selector("#graph[data-ready]")
    assert int(page.get_attribute("#graph", "data-ready")) == len(graph["nodes"])
    click_node(page, "Acme Corp")
    page.locator("#entity-title", has_text="Acme Corp").wait_for()
    assert "name=Acme+Corp" in page.url
    # Two hops: the graph grows to the API's two-hop neighbourhood.
    page.locator("a", has_text="2 hops").click()
    expect(page).to_have_url(re.compile(r"hops=2"))
    with demo_server.api() as http:
        two = http.get("/v1/entities/neighbourhood", params={"name": "Acme Corp", "hops": 2}).json()
    expect(page.locator("#graph")).to_have_attribute("data-ready", str(len(two["nodes"])))
    linked = page.locator("#linked a").all_inner_texts()
    assert sorted(linked) == sorted(
        n["name"] for n in two["nodes"] if n["kind"] == "entity" and n["hop"] > 0
    )
    assert_secret_kept(page, demo_server.secret)


def click_node(page: Any, name: str) -> None:
    """Click where the graph draws the node named `name`, as a person would: the page
    scrolled to the graph, the pointer moved onto the node, then pressed. A click sent
    in the same moment as the scroll reaches the graph library before the scroll event
    that tells it where its box now is; it finds the click outside its old box and
    drops it (the test then waited for a page that never came)."""
    where = page.evaluate(
        """(name) => {
            const cy = document.getElementById('graph').taisceGraph;
            const node = cy.nodes().filter((n) => n.data('name') === name)[0];
            return node.renderedPosition();
        }""",
        name,
    )
    graph, at = page.locator("#graph"), {"x": where["x"], "y": where["y"]}
    graph.hover(position={"x": 1, "y": 1})
    graph.hover(position=at)
    graph.click(position=at)


def test_a_quote_links_to_its_message_with_the_span_highlighted(
    page: Any, demo_server: Demo
) -> None:
    open_with(page, demo_server, demo_server.secret, "#/entity?name=Atlas")
    row = page.locator("#facts tbody tr", has=page.locator("q"))
    fact_id = row.first.get_attribute("data-fact")
    fact = next(f for f in demo.FACTS if f["id"] == fact_id)
    row.first.locator("a", has_text="message").click()
    page.locator("#message-title").wait_for()
    assert page.locator("mark.quote").inner_text() == fact["quote"]
    with demo_server.api() as http:
        detail = http.get(f"/v1/messages/{fact['message_id']}").json()
    assert page.locator(".content .passage").count() >= 1
    shown = page.locator("#passages tbody tr")
    assert shown.count() == len(detail["passages"])
    assert page.locator(".message .content").inner_text() == detail["message"]["content"]


# -- messages -----------------------------------------------------------------------


def test_messages_newest_first_with_passages_and_filters(page: Any, demo_server: Demo) -> None:
    open_with(page, demo_server, demo_server.secret, "#/messages")
    page.locator("#messages article").first.wait_for()
    with demo_server.api() as http:
        listed = http.get("/v1/messages").json()["messages"]
        passages = {m["id"]: http.get(f"/v1/messages/{m['id']}").json()["passages"] for m in listed}
    cards = page.locator("#messages article")
    assert [cards.nth(i).get_attribute("data-message") for i in range(cards.count())] == [
        m["id"] for m in listed
    ]
    for i, m in enumerate(listed):
        marks = cards.nth(i).locator(".content .passage")
        assert marks.count() == len(passages[m["id"]])
        assert [marks.nth(j).get_attribute("data-passage") for j in range(marks.count())] == [
            p["id"] for p in passages[m["id"]]
        ]
    page.select_option("#message-role", "tool")
    page.click("form.filters button[type=submit]")
    expect(page).to_have_url(re.compile(r"role=tool"))
    expected = [m["id"] for m in listed if m["role"] == "tool"]
    assert expected
    expect(page.locator("#messages article")).to_have_count(len(expected))
    assert page.locator("#messages article .role").all_inner_texts() == ["tool"] * len(expected)


# -- recall -------------------------------------------------------------------------

QUESTION = "Where does Atlas work, and who manages him?"


def test_a_recall_with_controls_shows_what_the_api_answers(page: Any, demo_server: Demo) -> None:
    open_with(page, demo_server, demo_server.secret, "#/recall")
    page.fill("#question", QUESTION)
    page.fill("#max_characters", "600")
    page.select_option("#hops", "2")
    page.uncheck("#roles_default")
    page.check("#role-tool")
    page.uncheck("#surfaces_default")
    page.uncheck("#surface-reports")
    page.select_option("#themes", "false")
    page.fill("#recorded_before", "2999-01-01T00:00:00Z")
    body = {
        "question": QUESTION,
        "max_characters": 600,
        "source_roles": ["user", "tool"],
        "hops": 2,
        "surfaces": ["facts", "passages"],
        "themes": False,
        "recorded_before": "2999-01-01T00:00:00Z",
    }
    # The curl line is the same request, without the credential.
    curl = page.inner_text("#curl")
    sent = json.loads(re.search(r"-d '(.*)'$", curl).group(1))
    assert sent == body
    assert "$TAISCE_CREDENTIAL" in curl and demo_server.secret not in curl
    page.click("#recall-form button[type=submit]")
    page.locator("#bundle").wait_for()
    with demo_server.api() as http:
        answer = http.post("/v1/recalls", json=body).json()
    assert answer["facts"], "the demo recall should find facts"
    assert answer["passages"], "the demo recall should find passages"
    for kind in ("facts", "reports", "passages"):
        items = page.locator(f"#bundle-{kind} > li")
        assert [items.nth(i).get_attribute("data-id") for i in range(items.count())] == [
            item["id"] for item in answer[kind]
        ], kind
    shown = page.locator("#bundle li[data-characters]")
    per_item = [int(shown.nth(i).get_attribute("data-characters")) for i in range(shown.count())]
    assert sum(per_item) == answer["characters"]  # the page counts as the server does
    assert page.inner_text("#total").startswith(f"{answer['characters']} characters used of 600")
    assert (page.locator("#truncated").count() == 1) == answer["truncated"]
    assert (page.locator("#degraded").count() == 1) == bool(answer["degraded"])
    if answer["degraded"]:
        assert all(s in page.inner_text("#degraded") for s in answer["degraded"])
    hop2 = [f for f in answer["facts"] if f.get("path")]
    assert hop2, "hops 2 should walk a link in the demo"
    item = page.locator(f"#bundle-facts > li[data-id='{hop2[0]['id']}'] .why")
    assert " → ".join(hop2[0]["path"]) in item.inner_text()
    assert json.loads(page.text_content("#controls-used")) == answer["controls"]
    # Each passage shows when its message was said and stored, to the second, in UTC.
    for passage in answer["passages"]:
        said, stored = (
            re.sub(r"\.\d+Z$", "Z", passage[k].replace("T", " "))
            for k in ("occurred_at", "recorded_at")
        )
        item = page.locator(f"#bundle-passages > li[data-id='{passage['id']}'] .passage-time")
        expect(item).to_have_text(f"said {said} · stored {stored}")
    assert_secret_kept(page, demo_server.secret)


def test_a_refused_control_is_shown_naming_it(page: Any, demo_server: Demo) -> None:
    open_with(page, demo_server, demo_server.secret, "#/recall")
    page.fill("#question", QUESTION)
    page.fill("#as_of", "yesterday")
    page.click("#recall-form button[type=submit]")
    alert = page.locator("#recall-error .alert")
    alert.wait_for(state="visible")
    assert alert.get_attribute("data-code") == "invalid_recall_controls"
    assert "as_of" in alert.inner_text()


# -- erasure ------------------------------------------------------------------------


def test_erasing_a_subject_from_its_page(sized: Any, demo_server: Demo) -> None:
    page = sized
    secret = fresh_project(demo_server)
    open_with(page, demo_server, secret, "#/entity?name=Liam%20Walsh")
    page.locator("#entity-title", has_text="Liam Walsh").wait_for()
    page.click("#erase")
    dialog = page.locator("#erase-dialog")
    dialog.wait_for(state="visible")
    assert "Liam Walsh" in dialog.inner_text() and "cannot be undone" in dialog.inner_text()
    assert "null" not in dialog.inner_text()  # no other entity's name holds it: nothing there
    # No User set: the erasure acts on the shared memory only, and the dialog says so.
    scope = page.locator("#erase-scope").inner_text()
    assert scope.startswith("The shared memory only.") and "set the User field" in scope
    # The dialog says what the erasure's preview says it would take.
    with demo_server.server.client(secret) as http:
        preview = http.post("/v1/erasures", json={"subject": "Liam Walsh", "dry_run": True})
    would = preview.json()["would_erase"]
    shown = page.locator("#erase-preview").inner_text()
    assert f"{would['facts']} fact" in shown and f"{would['messages']} message" in shown
    assert "passages naming it masked" in shown  # whole passages go, not just the name
    # Cancel changes nothing.
    dialog.locator("button", has_text="Cancel").click()
    with demo_server.server.client(secret) as http:
        keys = [
            e["key"] for e in http.get("/v1/entities", params={"limit": 100}).json()["entities"]
        ]
    assert "liam walsh" in keys
    page.click("#erase")
    page.click("#erase-confirm")
    counts = page.locator("#erase-counts")
    counts.wait_for()
    text = counts.inner_text()
    found = {
        kind: int(n)
        for kind, n in re.findall(r"(facts|entities|messages|passages|reports): (\d+)", text)
    }
    assert found["facts"] >= 1 and found["entities"] >= 1 and found["messages"] >= 1
    with demo_server.server.client(secret) as http:
        listed = http.get("/v1/entities", params={"limit": 100}).json()["entities"]
        messages = http.get("/v1/messages").json()["messages"]
        # Erasing again finds nothing: the counts shown were the ones removed.
        again = http.post("/v1/erasures", json={"subject": "Liam Walsh"}).json()["erased"]
    assert "liam walsh" not in [e["key"] for e in listed]
    assert not [m for m in messages if "Liam Walsh" in m["content"]]
    assert set(again.values()) == {0}
    # And the page shows it gone.
    page.locator("a", has_text="Back to the entities").click()
    page.locator("#entities tbody tr").first.wait_for()
    assert "Liam Walsh" not in page.inner_text("#entities")
    assert_secret_kept(page, secret)


def test_deleting_one_fact_from_an_entity_page(sized: Any, demo_server: Demo) -> None:
    page = sized
    secret = fresh_project(demo_server)
    open_with(page, demo_server, secret, "#/entity?name=Atlas")
    page.locator("#entity-title", has_text="Atlas").wait_for()
    statement = "Atlas prefers email to calls"
    with demo_server.server.client(secret) as http:
        before = http.get("/v1/facts", params={"subject": "Atlas"}).json()["facts"]
    fact = next(f for f in before if f["statement"] == statement)
    rows = page.locator("#facts tbody tr")
    assert rows.count() == len(before)
    page.click(f'[data-delete="{fact["id"]}"]')
    dialog = page.locator("#delete-fact-dialog")
    dialog.wait_for(state="visible")
    said = dialog.inner_text()
    assert statement in said and "message it came from stays" in said
    # Cancel changes nothing.
    dialog.locator("button", has_text="Cancel").click()
    assert rows.count() == len(before)
    page.click(f'[data-delete="{fact["id"]}"]')
    page.click("#delete-fact-confirm")
    expect(page.locator(f'#facts tr[data-fact="{fact["id"]}"]')).to_have_count(0)
    expect(page.locator("#facts-shown")).to_contain_text(f"{len(before) - 1} fact")
    with demo_server.server.client(secret) as http:
        after = http.get("/v1/facts", params={"subject": "Atlas"}).json()["facts"]
        message = http.get(f"/v1/messages/{fact['message_id']}").json()
    assert [f["id"] for f in after] == [f["id"] for f in before if f["id"] != fact["id"]]
    # Not an erasure: its message keeps its words.
    assert "prefers email" in message["message"]["content"]
    assert_secret_kept(page, secret)


# -- paging -------------------------------------------------------------------------


def test_long_lists_are_read_a_page_at_a_time(page: Any, demo_server: Demo) -> None:
    secret = demo_server.server.new_credential(f"paging-{uuid.uuid4().hex[:8]}")
    facts = [
        {
            "subject": f"Person {i:03}",
            "predicate": "lives in",
            "object": f"Town {i:03}",
            "source_role": "user",
        }
        for i in range(60)
    ]
    messages = [{"role": "user", "content": f"Note {i:02}."} for i in range(25)]
    with demo_server.server.client(secret) as http:
        assert http.post("/v1/facts", json={"facts": facts}).status_code == 201
        assert http.post("/v1/messages", json={"messages": messages}).status_code == 202
    open_with(page, demo_server, secret)
    rows = page.locator("#entities tbody tr")
    expect(rows).to_have_count(50)
    # No total while pages remain (the listing counts none); exact once all are in.
    counted = page.locator("#entities-shown")
    expect(counted).to_have_text("50 entities shown; more to load.")
    page.click("text=Show more")
    expect(rows).to_have_count(100)
    page.click("text=Show more")
    expect(rows).to_have_count(120)
    expect(page.locator("button.more")).to_be_hidden()
    expect(counted).to_have_text("120 entities in all.")
    shown = [rows.nth(i).get_attribute("data-key") for i in range(120)]
    assert shown == sorted(
        {f"person {i:03}" for i in range(60)} | {f"town {i:03}" for i in range(60)}
    )
    before = len(page.seen_urls)
    page.evaluate("location.hash = '#/messages'")
    cards = page.locator("#messages article")
    expect(cards).to_have_count(20)
    page.click("text=Show older messages")
    expect(cards).to_have_count(25)
    expect(page.locator("button.more")).to_be_hidden()
    # One request per page of messages, their passages included: none per message.
    calls = [urlsplit(u) for u in page.seen_urls[before:] if "/v1/messages" in u]
    assert [c.path for c in calls] == ["/v1/messages", "/v1/messages"], calls
    assert all(parse_qs(c.query).get("passages") == ["true"] for c in calls), calls
    assert cards.first.locator(".content .passage").count() == 1  # "Note 24." is one passage
