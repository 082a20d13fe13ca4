"""The explorer's listing routes over real HTTP, through the Python client, on the
embedded store and on DynamoDB (moto's server): entities with counts per role, messages
newest first, a message with its passages, a neighbourhood; and the page itself
(/ and /ui) with its headers."""

from __future__ import annotations

import asyncio
import base64
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import httpx
import pytest
from taisce_client import (
    AsyncClient,
    Client,
    Entity,
    EntityPage,
    FactMatches,
    InvalidRequest,
    MessageMatches,
    MessagePage,
    MessageWithPassages,
    Neighbourhood,
    NotFound,
    RoleCounts,
)

from taisce.credentials import new_credential_id, new_secret, secret_hash
from taisce.domain.model import Credential
from taisce.ui.serving import ASSETS, CONTENT_SECURITY_POLICY
from tests.moto_server import MotoDynamoDb, shared_moto
from tests.server import LocalServer, start_server

FACTS = [
    {"id": "x1", "subject": "Bob", "predicate": "works at", "object": "Acme Corp"},
    {"id": "x2", "subject": "Acme Corp", "predicate": "is based in", "object": "Dublin"},
    {"id": "x3", "subject": "Maya", "predicate": "manages", "object": "Bob", "source_role": "tool"},
    {
        "id": "x4",
        "subject": "Bob",
        "predicate": "is aged",
        "object": "41",
        "object_kind": "value",
        "source_role": "assistant",
    },
]
MESSAGES = [
    {"id": "n1", "role": "user", "content": "Bob works at Acme Corp.", "source": "chat:1"},
    {"id": "n2", "role": "tool", "content": "Maya manages Bob.\n\nShe lives in Dublin."},
    {"id": "n3", "role": "user", "content": "Hello again.", "source": "chat:2"},
]


def moto_table() -> MotoDynamoDb:
    return shared_moto().table_named("taisce-listings")


@pytest.fixture(scope="module", params=["embedded", "dynamodb"])
def running(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, LocalServer]]:
    # The embedded store with the local model, whose index holds the texts a search by
    # words reads; DynamoDB without a model (its index, OpenSearch, cannot run here).
    env = moto_table().env if request.param == "dynamodb" else {"TAISCE_EMBEDDINGS": "local"}
    server = start_server(Path(tmp_path_factory.mktemp(f"listings-{request.param}")), env)
    yield request.param, server
    server.stop()


def credential(running: tuple[str, LocalServer], project: str) -> str:
    store, server = running
    if store == "embedded":
        return server.new_credential(project)
    secret = new_secret()
    made = Credential(new_credential_id(), project, "test", "2026-01-01T00:00:00Z")
    moto_table().store().add_credential(made, secret_hash(secret))
    return secret


@pytest.fixture
def client(running: tuple[str, LocalServer]) -> Iterator[Client]:
    """The Python client on a project of this test's own, holding FACTS and MESSAGES
    (each message stored by a request of its own, so each has its own recorded_at)."""
    _, server = running
    secret = credential(running, f"listings-{uuid.uuid4().hex[:12]}")
    with Client(server.url, secret) as c:
        c.store_facts([{"source_role": "user", **f} for f in FACTS])
        for m in MESSAGES:
            c.store_messages([m])
        yield c


def test_entities_page_by_page_with_counts_per_role(client: Client) -> None:
    first = client.entities(limit=2)
    assert isinstance(first, EntityPage)
    assert [e.key for e in first.entities] == ["acme corp", "bob"]
    assert first.entities[1] == Entity("bob", "Bob", RoleCounts(user=1, assistant=1, tool=1))
    assert first.entities[1].wire() == {
        "key": "bob",
        "name": "Bob",
        "facts": {"user": 1, "assistant": 1, "system": 0, "tool": 1},
    }
    # The wire's keys still read a result, as when listings returned dicts.
    assert first["entities"][1]["facts"]["tool"] == 1
    rest = client.entities(limit=2, cursor=first.next_cursor)
    assert [e.key for e in rest.entities] == ["dublin", "maya"]
    assert rest.next_cursor is None
    assert [e.key for e in client.entities(search="ACME").entities] == ["acme corp"]


def test_messages_newest_first_with_filters_and_one_with_its_passages(client: Client) -> None:
    assert [m.id for m in client.messages().messages] == ["n3", "n2", "n1"]
    assert [m.id for m in client.messages(role="user").messages] == ["n3", "n1"]
    assert [m.id for m in client.messages(source="chat:1").messages] == ["n1"]
    page = client.messages(limit=1)
    assert isinstance(page, MessagePage)
    assert [m.id for m in client.messages(limit=5, cursor=page.next_cursor).messages] == [
        "n2",
        "n1",
    ]
    detail = client.message("n2")
    assert isinstance(detail, MessageWithPassages)
    assert detail.message.content == MESSAGES[1]["content"]
    quotes = [p.quote for p in detail.passages]
    assert quotes and all(q in MESSAGES[1]["content"] for q in quotes)
    for p in detail.passages:
        assert MESSAGES[1]["content"][p.start : p.end] == p.quote
    # wire() is the API's JSON again.
    bearer = {"Authorization": f"Bearer {client.settings.api_key}"}
    raw = httpx.get(f"{client.settings.url}/v1/messages/n2", headers=bearer, timeout=30)
    assert detail.wire() == raw.json()
    with pytest.raises(NotFound):
        client.message("n9")


def test_a_page_of_messages_with_their_passages_in_one_request(
    client: Client, running: tuple[str, LocalServer]
) -> None:
    """passages=true: each listed message carries exactly what GET /v1/messages/{id}
    gives as its passages; without it, no message has the key."""
    page = client.messages(passages=True)
    assert [m.id for m in page.messages] == ["n3", "n2", "n1"]
    for m in page.messages:
        assert m.passages == client.message(m.id).passages
        assert m.passages, m.id
    assert all(m.passages is None for m in client.messages().messages)
    assert all("passages" not in m.wire() for m in client.messages().messages)
    paged = client.messages(limit=1, cursor=client.messages(limit=1).next_cursor, passages=True)
    assert [m.id for m in paged.messages] == ["n2"]
    assert paged.messages[0].passages == page.messages[1].passages
    # A value that is not a boolean is refused in the API's shape.
    _, server = running
    with server.client(client.settings.api_key) as http:
        refused = http.get("/v1/messages", params={"passages": "maybe"})
    assert refused.status_code == 400, refused.text
    assert refused.json()["error"]["code"] == "invalid_request"


def test_the_neighbourhood_of_an_entity(client: Client) -> None:
    one = client.neighbourhood("bob")
    assert isinstance(one, Neighbourhood) and one.entity == "bob"
    assert {e.id for e in one.edges} == {"x1", "x3", "x4"}
    two = client.neighbourhood("Bob", hops=2)
    assert {e.id for e in two.edges} == {"x1", "x2", "x3", "x4"}
    names = {n.id: n.name for n in two.nodes}
    assert names["e:bob"] == "Bob" and names["e:dublin"] == "Dublin"


def _edited(cursor: str, old: bytes, new: bytes) -> str:
    """The cursor with `old` replaced by `new` inside it, still well-formed base64url."""
    raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
    assert old in raw
    return base64.urlsafe_b64encode(raw.replace(old, new)).decode().rstrip("=")


def test_search_by_words_finds_facts_and_messages(
    client: Client, running: tuple[str, LocalServer]
) -> None:
    """GET /v1/search/facts and /v1/search/messages: what holds the words, best first, a
    page at a time, with the passages that matched; the words refused in the API's shape.
    Without an index the answer says the search could not run."""
    if running[0] == "dynamodb":
        assert client.search_facts("Dublin").wire() == {
            "facts": [],
            "next_cursor": None,
            "degraded": ["search"],
        }
        assert client.search_messages("Dublin").degraded == ["search"]
        with pytest.raises(InvalidRequest):
            client.search_facts("?!")
        return
    found = client.search_facts("Dublin")
    assert isinstance(found, FactMatches) and found.degraded == []
    assert [f.id for f in found.facts] == ["x2"]
    assert sorted(f.id for f in client.search_facts("Bob").facts) == ["x1", "x3", "x4"]
    assert [f.id for f in client.search_facts("Bob", role="tool").facts] == ["x3"]
    first = client.search_facts("Bob", limit=2)
    rest = client.search_facts("Bob", limit=2, cursor=first.next_cursor)
    assert len(first.facts) == 2 and len(rest.facts) == 1 and rest.next_cursor is None
    assert {f.id for f in first.facts + rest.facts} == {"x1", "x3", "x4"}
    with pytest.raises(InvalidRequest, match="same q"):
        client.search_facts("Maya", limit=2, cursor=first.next_cursor)

    messages = client.search_messages("Dublin")
    assert isinstance(messages, MessageMatches)
    assert [m.id for m in messages.messages] == ["n2"]
    (shown,) = messages.messages
    assert shown.content == MESSAGES[1]["content"] and shown.occurred_at
    assert [p.quote for p in shown.passages or []] == [MESSAGES[1]["content"]]
    assert [m.id for m in client.search_messages("Bob", role="user").messages] == ["n1"]
    assert [m.id for m in client.search_messages("Bob", source="chat:1").messages] == ["n1"]
    for bad in ("", "?!", "x" * 501):
        with pytest.raises(InvalidRequest):
            client.search_messages(bad)


def test_an_edited_or_borrowed_cursor_is_refused(
    client: Client, running: tuple[str, LocalServer]
) -> None:
    _, server = running
    cursor = client.entities(limit=1).next_cursor
    assert cursor and client.entities(limit=1, cursor=cursor).entities  # handed out: read
    edits = [
        _edited(cursor, b"acme corp", b"bob"),  # another point in the listing
        _edited(cursor, b"entities", b"messages"),  # another route
        # As cursors were before they carried a tag: plain base64url of the JSON.
        base64.urlsafe_b64encode(b'["entities","bob"]').decode().rstrip("="),
    ]
    for edited in edits:
        with pytest.raises(InvalidRequest, match="cursor is not one this route handed out"):
            client.entities(limit=1, cursor=edited)
    # Handed out in one project, refused in another.
    with server.client(credential(running, f"listings-other-{uuid.uuid4().hex[:8]}")) as http:
        r = http.get("/v1/entities", params={"cursor": cursor})
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_request", r.text


def test_listing_errors_have_the_api_shape(
    client: Client, running: tuple[str, LocalServer]
) -> None:
    with pytest.raises(InvalidRequest):
        client.entities(cursor="not-a-cursor")
    with pytest.raises(InvalidRequest):
        client.messages(cursor=client.entities(limit=1).next_cursor)
    with pytest.raises(InvalidRequest):
        client.messages(role="robot")
    with pytest.raises(InvalidRequest):
        client.neighbourhood("bob", hops=3)
    _, server = running
    with server.client() as anonymous:
        for path in (
            "/v1/entities",
            "/v1/messages",
            "/v1/messages/n1",
            "/v1/entities/neighbourhood?name=a",
        ):
            r = anonymous.get(path)
            assert r.status_code == 401
            assert r.json()["error"]["code"] == "unauthorized"


def test_the_async_client_has_the_listings(running: tuple[str, LocalServer]) -> None:
    _, server = running
    secret = credential(running, f"listings-{uuid.uuid4().hex[:12]}")

    async def go() -> tuple[EntityPage, Neighbourhood, MessagePage, MessageWithPassages]:
        async with AsyncClient(server.url, secret) as c:
            await c.store_facts([{"source_role": "user", **f} for f in FACTS])
            await c.store_messages(MESSAGES[:1])
            return (
                await c.entities(search="bob"),
                await c.neighbourhood("bob", hops=2),
                await c.messages(role="user"),
                await c.message("n1"),
            )

    entities, graph, messages, message = asyncio.run(go())
    assert [e.key for e in entities.entities] == ["bob"]
    assert len(graph.edges) == 4
    assert [m.id for m in messages.messages] == ["n1"]
    assert message.message.source == "chat:1"


# -- the page -------------------------------------------------------------------


def test_the_page_and_its_files_are_served_with_their_headers(
    running: tuple[str, LocalServer],
) -> None:
    _, server = running
    with httpx.Client(base_url=server.url, timeout=30) as http:
        root = http.get("/", follow_redirects=False)
        assert root.status_code == 302 and root.headers["location"] == "/ui"
        page = http.get("/ui")
        assert page.status_code == 200
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert page.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        assert "'unsafe-inline'" not in CONTENT_SECURITY_POLICY
        assert page.headers["x-content-type-options"] == "nosniff"
        assert page.headers["cache-control"] == "no-cache"
        assert "<script" in page.text and "<script>" not in page.text  # no inline script
        # The address with a trailing slash is the same page (its files are named from
        # the root, so nothing resolves differently there).
        slash = http.get("/ui/", follow_redirects=False)
        assert slash.status_code == 200, slash.text
        assert slash.content == page.content
        assert slash.headers["content-security-policy"] == CONTENT_SECURITY_POLICY
        again = http.get("/ui", headers={"If-None-Match": page.headers["etag"]})
        assert again.status_code == 304 and again.content == b""
        for name, asset in ASSETS.items():
            r = http.get(f"/ui/{name}")
            assert r.status_code == 200, name
            assert r.content == asset.body
            assert r.headers["content-type"] == asset.content_type
        vendored = http.get(next(f"/ui/{n}" for n in ASSETS if n.startswith("vendor/")))
        assert "immutable" in vendored.headers["cache-control"]
        for bad in (
            "/ui/../pyproject.toml",
            "/ui/%2e%2e/template.yaml",
            "/ui/nothing.js",
            "/ui/README.md",
        ):
            r = http.get(bad)
            assert r.status_code == 404, bad
            assert r.json()["error"]["code"] == "not_found"


def test_api_answers_are_not_stored_and_head_answers_as_get(server: LocalServer) -> None:
    """Every /v1 answer, success or error, says no-store (memory is personal and changes)
    and, behind a credential, whose memory answered;
    HEAD of the page and its files has GET's status and headers, without a body."""
    project = f"no-store-{uuid.uuid4().hex[:8]} é"
    secret = server.new_credential(project)
    with server.client(secret) as http:
        answers = [
            http.get("/v1/entities"),
            http.get("/v1/health"),
            http.post("/v1/recalls", json={}),
            http.get("/v1/messages/no-such-message"),
        ]
    with httpx.Client(base_url=server.url, timeout=30) as http:
        answers.append(http.get("/v1/entities"))  # no credential: the gateway's 401
        assert [r.status_code for r in answers] == [200, 200, 400, 404, 401]
        assert all(r.headers["cache-control"] == "no-store" for r in answers)
        # Whose memory answered: the project, and a user credential's user (percent-encoded).
        assert all(unquote(r.headers["taisce-project"]) == project for r in answers[:4:2])
        assert "taisce-user" not in answers[0].headers
        assert "taisce-project" not in answers[1].headers  # health takes no credential
        mine = server.new_credential(project, "user", "u@1")
        answer = http.get("/v1/entities", headers={"Authorization": f"Bearer {mine}"})
        assert answer.status_code == 200
        assert unquote(answer.headers["taisce-project"]) == project
        assert unquote(answer.headers["taisce-user"]) == "u@1"
        for path in ("/ui", "/ui/", "/ui/app.js"):
            got, head = http.get(path), http.head(path)
            assert head.status_code == got.status_code == 200, path
            assert head.content == b"" and got.content
            for name in ("content-type", "etag", "cache-control", "content-security-policy"):
                assert head.headers[name] == got.headers[name], (path, name)


def test_the_page_files_are_sent_gzipped_to_a_browser_that_accepts_it(
    server: LocalServer,
) -> None:
    library = next(n for n in ASSETS if n.startswith("vendor/") and n.endswith(".js"))
    with httpx.Client(base_url=server.url, timeout=30) as http:
        packed = http.get(f"/ui/{library}", headers={"Accept-Encoding": "gzip"})
        plain = http.get(f"/ui/{library}", headers={"Accept-Encoding": "identity"})
        assert packed.content == plain.content == ASSETS[library].body
        assert packed.headers["content-encoding"] == "gzip"
        assert "content-encoding" not in plain.headers
        assert packed.headers["vary"] == plain.headers["vary"] == "Accept-Encoding"
        assert packed.num_bytes_downloaded < len(plain.content) / 2
        # Each variant has its own ETag, so a cache never serves one for the other.
        assert packed.headers["etag"] != plain.headers["etag"]
        again = http.get(
            f"/ui/{library}",
            headers={"Accept-Encoding": "gzip", "If-None-Match": packed.headers["etag"]},
        )
        assert again.status_code == 304


def test_the_served_scripts_use_only_the_public_api(running: tuple[str, LocalServer]) -> None:
    """Every /v1 path the page's scripts name is a route of the API (no private door)."""
    import re

    from taisce.local.routes import read_api
    from tests.server import ROOT

    routes = {r.path for r in read_api(ROOT / "template.yaml").routes}
    named: set[str] = set()
    for name, asset in ASSETS.items():
        if name.endswith(".js") and not name.startswith("vendor/"):
            named |= set(re.findall(r"[\"'`](/v1/[a-z/]+)", asset.body.decode("utf-8")))
    assert named, "the scripts name no API path"
    for path in named:
        assert path.rstrip("/") in routes or path.rstrip("/") + "/{id}" in routes, path
