"""Every route of the Python client against a real `taisce serve`, plus its errors,
its settings from the environment, and its retries (against a small real HTTP server
that answers what a test tells it to)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from taisce_client import (
    AsyncClient,
    Client,
    ConfigurationError,
    ErasedCounts,
    Erasure,
    Fact,
    Forbidden,
    Health,
    InvalidRecallControls,
    InvalidRequest,
    NewFact,
    NewMessage,
    NotFound,
    RateLimited,
    RequestTimeout,
    ServerError,
    TaisceConnectionError,
    Unauthorized,
)

from tests.server import LocalServer

ATLAS = [
    NewFact("Atlas", "works at", "Acme Corp", "user", id="r1"),
    NewFact("Acme Corp", "is based in", "Dublin", "user", id="r2"),
    {"subject": "Atlas", "predicate": "likes", "object": "tea", "source_role": "tool"},
]


@pytest.fixture
def taisce(server: LocalServer, request: pytest.FixtureRequest) -> Iterator[Client]:
    with Client(server.url, server.new_credential(f"routes-{request.node.name}")) as client:
        yield client


def test_facts_are_stored_listed_recalled_and_deleted(taisce: Client) -> None:
    ids = taisce.store_facts(ATLAS)
    assert ids[:2] == ["r1", "r2"]
    # A fact sent without an id gets one from the client, so a retry stores it once.
    assert ids[2].startswith("fact_")

    facts = taisce.facts_about("atlas")
    assert [f.id for f in facts] == ["r1", ids[2]]
    assert all(isinstance(f, Fact) for f in facts)
    assert facts[0].statement == "Atlas works at Acme Corp" and facts[0].source_role == "user"
    assert facts[0].recorded_at and facts[0].path is None

    bundle = taisce.recall("What about Atlas?", hops=2, source_roles=["user"])
    assert [f.id for f in bundle.facts] == ["r1", "r2"]
    assert bundle.facts[1].path == ["Atlas", "Acme Corp"]
    assert bundle.controls.hops == 2 and bundle.controls.source_roles == ["user"]
    assert bundle.characters > 0 and bundle.truncated is False

    # Storing the same ids again keeps what is there.
    assert taisce.store_facts(ATLAS[:2]) == ["r1", "r2"]
    assert len(taisce.facts_about("Atlas")) == 2

    taisce.delete_fact("r1")
    assert [f.id for f in taisce.facts_about("Atlas")] == [ids[2]]
    with pytest.raises(NotFound) as gone:
        taisce.delete_fact("r1")
    assert gone.value.status == 404 and gone.value.code == "not_found"


# More facts about one subject than the server's default page (50) holds.
MANY = 120


def test_facts_about_follows_the_pages_to_the_end(taisce: Client) -> None:
    sent = [
        NewFact("Atlas", "visited", f"Town {i:03d}", "user", id=f"v{i:03d}") for i in range(MANY)
    ]
    for start in range(0, MANY, 100):
        taisce.store_facts(sent[start : start + 100])
    first = taisce.facts_page("Atlas")
    assert 0 < len(first.facts) < MANY and first.next_cursor is not None
    every = [f"v{i:03d}" for i in range(MANY)]
    assert [f.id for f in taisce.facts_about("Atlas")] == every
    # A page size of the caller's own, and a start from a cursor the caller holds.
    assert [f.id for f in taisce.facts_about("Atlas", limit=7)] == every
    rest = taisce.facts_about("Atlas", cursor=first.next_cursor)
    assert [f.id for f in first.facts + rest] == every
    own = taisce.facts_page("Atlas", limit=100, cursor=first.next_cursor)
    assert [f.id for f in own.facts] == every[len(first.facts) : len(first.facts) + 100]


def test_aliases_follow_the_pages_to_the_end(server: LocalServer) -> None:
    secret = server.new_credential("routes-aliases-pages")
    names = [f"Atlas {c}" for c in "ABCDE"]
    with server.client(secret) as http, Client(server.url, secret) as taisce:
        taisce.store_facts([NewFact(n, "works at", "Acme Corp", "user") for n in ["Atlas", *names]])
        for name in names:  # the client has no merge: the route itself
            r = http.post("/v1/entities/merges", json={"alias": name, "into": "Atlas"})
            assert r.status_code == 200, r.text
        _all_aliases(taisce, names)


def _all_aliases(taisce: Client, names: list[str]) -> None:
    page = taisce.alias_page(limit=2)
    assert len(page.aliases) == 2 and page.next_cursor is not None
    found = taisce.aliases(limit=2)
    assert [(a.alias, a.into) for a in found] == [(n, "Atlas") for n in names]
    assert taisce.aliases() == found


def test_messages_are_stored_once_and_recalled_as_passages(taisce: Client) -> None:
    messages = [
        NewMessage("user", "Orla keeps bees in Galway.", id="m1", source="chat:1"),
        {"role": "tool", "content": "Handbook: hives are checked weekly."},
    ]
    ids = taisce.store_messages(messages)
    assert ids[0] == "m1" and ids[1].startswith("msg_")
    assert taisce.store_messages(messages[:1]) == ["m1"]
    # Without an embedding model, passages cannot run: the bundle says so.
    bundle = taisce.recall("bees", surfaces=["passages"])
    assert bundle.degraded == ["passages"] and bundle.passages == []


def test_a_refused_control_raises_with_its_code_and_control(taisce: Client) -> None:
    with pytest.raises(InvalidRecallControls) as refused:
        taisce.recall("Where does Atlas work?", max_characters=0)
    error = refused.value
    assert (error.status, error.code, error.control) == (
        400,
        "invalid_recall_controls",
        "max_characters",
    )
    assert str(error).startswith("invalid_recall_controls (max_characters): ")
    assert "\n" not in str(error)
    # A control this client does not name is sent as given, and the server names it.
    with pytest.raises(InvalidRecallControls) as unknown:
        taisce.recall("Where does Atlas work?", max_tokens=10)  # type: ignore[call-arg]
    assert unknown.value.control == "max_tokens"


def test_a_refused_fact_raises_invalid_request_without_a_control(taisce: Client) -> None:
    with pytest.raises(InvalidRequest) as refused:
        taisce.store_facts([{"subject": "Atlas", "predicate": "is", "object": "tall"}])
    assert refused.value.code == "invalid_request" and refused.value.control is None
    assert refused.value.message


def test_filters_are_sent_only_when_given(scripted: Any) -> None:
    fake = scripted((200, RECALL, {}), (200, RECALL, {}))
    with Client(fake.url, "tsk_x") as client:
        client.recall("Atlas", hops=None)
        client.recall("Atlas", subjects=["Atlas"], as_of="2026-01-01T00:00:00Z")
    assert fake.bodies[0] == {"question": "Atlas"}
    assert fake.bodies[1] == {
        "question": "Atlas",
        "subjects": ["Atlas"],
        "as_of": "2026-01-01T00:00:00Z",
    }


def test_an_unknown_credential_is_unauthorized(server: LocalServer) -> None:
    with Client(server.url, "tsk_not-a-real-credential") as client, pytest.raises(Unauthorized):
        client.recall("Atlas")


def test_url_and_credential_come_from_the_environment(
    server: LocalServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TAISCE_URL", server.url)
    monkeypatch.setenv("TAISCE_API_KEY", server.new_credential("routes-env"))
    with Client() as client:
        assert client.recall("Atlas").facts == []
    monkeypatch.delenv("TAISCE_API_KEY")
    with Client() as client:
        # Health needs no credential; everything else says what is missing.
        assert client.health().status == "ok"
        with pytest.raises(ConfigurationError, match="TAISCE_API_KEY"):
            client.recall("Atlas")


def test_status_reports_the_server_settings_and_health_only_liveness(taisce: Client) -> None:
    status = taisce.status()
    assert status.embeddings == "none" and status.store == "embedded"
    assert status.bundle_characters == 16000 and status.max_rows == 200
    assert taisce.health() == Health(status="ok")


def test_erasure_removes_everything_about_a_subject(taisce: Client) -> None:
    taisce.store_facts(ATLAS)
    erased = taisce.erase("Atlas")
    assert isinstance(erased, Erasure) and isinstance(erased.erased, ErasedCounts)
    assert erased.erased.facts == 2, erased
    assert erased.status == "done"  # the embedded store erases in the request
    assert erased.finished_at is not None
    assert taisce.erasure(erased.id) == erased
    assert erased.wire()["erased"]["facts"] == 2 and erased["status_url"] == erased.status_url
    assert taisce.facts_about("Atlas") == []
    assert taisce.recall("What about Atlas?", source_roles=["user", "tool"]).facts == []
    with pytest.raises(NotFound):
        taisce.erasure("era_" + "0" * 32)


def test_the_async_client_covers_the_same_routes(server: LocalServer) -> None:
    import anyio

    async def run() -> None:
        secret = server.new_credential("routes-async")
        async with AsyncClient(server.url, secret) as client:
            assert await client.store_facts(ATLAS[:2]) == ["r1", "r2"]
            assert [f.id for f in await client.facts_about("Atlas")] == ["r1"]
            more = [NewFact("Atlas", "visited", f"Town {i}", "user", id=f"v{i}") for i in range(4)]
            await client.store_facts(more)
            page = await client.facts_page("Atlas", limit=2)
            assert [f.id for f in page.facts] == ["r1", "v0"] and page.next_cursor
            followed = await client.facts_about("Atlas", limit=2)
            assert [f.id for f in followed] == ["r1", "v0", "v1", "v2", "v3"]
            assert await client.aliases(limit=1) == []
            for i in range(4):
                await client.delete_fact(f"v{i}")
            bundle = await client.recall("Atlas", hops=2)
            assert [f.id for f in bundle.facts] == ["r1", "r2"]
            await client.delete_fact("r2")
            with pytest.raises(NotFound):
                await client.delete_fact("r2")
            assert (await client.health()).status == "ok"
            assert await client.store_facts([NewFact("Zed", "likes", "tea", "user")], user="ana")
            assert [f.object for f in await client.facts_about("Zed", user="ana")] == ["tea"]
            assert await client.facts_about("Zed") == []
            with pytest.raises(Forbidden):
                await client.credentials()

    anyio.run(run)


def test_a_user_per_client_and_per_call(server: LocalServer) -> None:
    with (
        Client(server.url, server.new_credential("routes-users"), user="ana") as ana,
        Client(server.url, server.new_credential("routes-users")) as shared,
    ):
        assert ana.store_facts(ATLAS[:1]) == ["r1"]  # ana's, by the client's user
        assert [f.id for f in ana.facts_about("Atlas")] == ["r1"]
        assert shared.facts_about("Atlas") == []
        # A call's own user wins over the client's.
        assert [f.id for f in shared.facts_about("Atlas", user="ana")] == ["r1"]
        assert ana.facts_about("Atlas", user="bo") == []
        assert [f.id for f in shared.recall("Atlas", user="ana").facts] == ["r1"]
        assert shared.recall("Atlas").facts == []
        with pytest.raises(NotFound):
            shared.delete_fact("r1")  # not in the shared memory
        ana.delete_fact("r1")
        assert shared.facts_about("Atlas", user="ana") == []


def test_an_admin_mints_lists_and_revokes_through_the_client(server: LocalServer) -> None:
    with Client(server.url, server.new_credential("routes-admin", "admin")) as admin:
        minted = admin.create_credential(user="ana", label="ana's phone")
        assert (minted.kind, minted.user, minted.label) == ("user", "ana", "ana's phone")
        assert minted.secret and minted.secret.startswith("tsk_")
        page = admin.credentials(limit=1)
        assert len(page.credentials) == 1 and page.next_cursor
        rest = admin.credentials(cursor=page.next_cursor)
        listed = {c.id: c for c in page.credentials + rest.credentials}
        assert listed[minted.id].kind == "user" and listed[minted.id].secret is None
        with Client(server.url, minted.secret) as ana:
            ana.store_facts(ATLAS[:1])  # acts as ana
            with pytest.raises(Forbidden):
                ana.facts_about("Atlas", user="bo")
            with pytest.raises(Forbidden):
                ana.credentials()
            admin.revoke_credential(minted.id)
            with pytest.raises(Unauthorized):
                ana.facts_about("Atlas")
        assert [f.id for f in admin.facts_about("Atlas", user="ana")] == ["r1"]


# -- retries -----------------------------------------------------------------------------


Answer = tuple[int, dict[str, Any] | None, dict[str, str]]
FAILED = {"error": {"code": "internal", "message": "it broke", "request_id": "r-1"}}
RECALL = {
    "controls": {
        "max_characters": 16000,
        "max_rows": 200,
        "source_roles": ["user"],
        "hops": 1,
        "surfaces": ["facts"],
        "themes": False,
    },
    "characters": 0,
    "truncated": False,
    "degraded": [],
    "facts": [],
    "reports": [],
    "passages": [],
}


class Scripted(ThreadingHTTPServer):
    """Answers each request with the next (status, body, headers) of its script (a
    body of None echoes the ids of the messages sent), and keeps the bodies sent."""

    def __init__(self, script: list[Answer]) -> None:
        super().__init__(("127.0.0.1", 0), _ScriptedHandler)
        self.script = script
        self.bodies: list[Any] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _ScriptedHandler(BaseHTTPRequestHandler):
    server: Scripted

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        self.server.bodies.append(json.loads(self.rfile.read(length)))
        status, body, headers = self.server.script.pop(0)
        if body is None:
            body = {"messages": [{"id": m["id"]} for m in self.server.bodies[-1]["messages"]]}
        payload = json.dumps(body).encode()
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass


@pytest.fixture
def scripted() -> Iterator[Any]:
    servers: list[Scripted] = []

    def start(*script: Answer) -> Scripted:
        running = Scripted(list(script))
        threading.Thread(target=running.serve_forever, daemon=True).start()
        servers.append(running)
        return running

    yield start
    for running in servers:
        running.shutdown()
        running.server_close()


def test_429_and_5xx_are_retried_with_the_same_ids(scripted: Any) -> None:
    fake = scripted((503, FAILED, {}), (429, FAILED, {"Retry-After": "0"}), (202, None, {}))
    with Client(fake.url, "tsk_x", backoff=0.01) as client:
        ids = client.store_messages([{"role": "user", "content": "hello"}])
    assert len(fake.bodies) == 3
    # Every attempt sent the same id, so a batch stored before a failure is stored once.
    assert {body["messages"][0]["id"] for body in fake.bodies} == set(ids)


def test_retries_stop_and_raise_the_last_error(scripted: Any) -> None:
    fake = scripted((500, FAILED, {}), (500, FAILED, {}))
    client = Client(fake.url, "tsk_x", retries=1, backoff=0.01)
    with client, pytest.raises(ServerError) as failed:
        client.store_messages([{"role": "user", "content": "hello"}])
    assert failed.value.code == "internal" and failed.value.request_id == "r-1"
    assert len(fake.bodies) == 2

    limited = scripted((429, {}, {"Retry-After": "0"}))
    with Client(limited.url, "tsk_x", retries=0) as client, pytest.raises(RateLimited):
        client.store_messages([{"role": "user", "content": "hello"}])


def test_a_slow_request_is_retried_and_an_unserved_http_version_is_not(scripted: Any) -> None:
    slow = {"error": {"code": "request_timeout", "message": "the body did not arrive"}}
    fake = scripted((408, slow, {}), (503, FAILED, {"Retry-After": "0"}), (202, None, {}))
    with Client(fake.url, "tsk_x", backoff=0.01) as client:
        client.store_messages([{"role": "user", "content": "hello"}])
    assert len(fake.bodies) == 3

    version = {"error": {"code": "http_version_not_supported", "message": "use HTTP/1.1"}}
    fake = scripted((505, version, {}), (202, None, {}))
    with Client(fake.url, "tsk_x", backoff=0.01) as client, pytest.raises(ServerError) as refused:
        client.store_messages([{"role": "user", "content": "hello"}])
    assert refused.value.code == "http_version_not_supported" and len(fake.bodies) == 1

    fake = scripted((408, slow, {}))
    with Client(fake.url, "tsk_x", retries=0) as client, pytest.raises(RequestTimeout):
        client.store_messages([{"role": "user", "content": "hello"}])


def test_other_refusals_are_not_retried(scripted: Any) -> None:
    refused = {"error": {"code": "invalid_request", "message": "no"}}
    fake = scripted((400, refused, {}), (202, None, {}))
    with Client(fake.url, "tsk_x", backoff=0.01) as client, pytest.raises(InvalidRequest):
        client.store_messages([{"role": "user", "content": "hello"}])
    assert len(fake.bodies) == 1


def test_an_unreachable_server_is_one_clear_error(scripted: Any) -> None:
    fake = scripted()
    url = fake.url
    fake.shutdown()
    fake.server_close()
    with Client(url, "tsk_x") as client, pytest.raises(TaisceConnectionError) as failed:
        client.recall("Atlas")
    assert url in str(failed.value) and "\n" not in str(failed.value)
