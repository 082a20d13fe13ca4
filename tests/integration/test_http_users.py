"""Users inside a project over real HTTP: the `user` of a body or a query, refused
when it breaks the rule (changing nothing), echoed by a recall, and what each request
sees (the shared memory and its own user's, never another user's)."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from taisce.adapters.dynamodb.codec import pending_erasure_attributes
from taisce.adapters.dynamodb.keys import (
    aliases_pk,
    entity_pk,
    erased_vectors_pk,
    erasing_pk,
    fact_pk,
    item_key,
    listing_pks,
    message_pk,
    vector_mark_pks,
)
from taisce.credentials import new_credential_id, new_secret, secret_hash
from taisce.domain.erasure import user_tombstone
from taisce.domain.model import Credential, PendingErasure
from taisce.domain.scope import Scope, user_erasure_names
from taisce.local.export import export_records
from tests.moto_server import MotoDynamoDb, shared_moto
from tests.server import LocalServer, start_server, wait_for_worker

BAD_USERS: list[Any] = ["", "a b", "a/b", "é", "x" * 129, 7, True, ["u"], {"u": 1}, "a#b"]
FACT = {"subject": "Atlas", "predicate": "likes", "object": "tea", "source_role": "user"}
MESSAGE = {"role": "user", "content": "Atlas likes tea."}


def _held(server: LocalServer, project: str) -> list[Any]:
    with sqlite3.connect(server.data_dir / "taisce.sqlite3") as db:
        rows = db.execute(
            "SELECT 'f', id FROM facts WHERE project LIKE ? || '%' UNION ALL "
            "SELECT 'm', id FROM messages WHERE project LIKE ? || '%'",
            (project, project),
        )
        return sorted(rows.fetchall())


@pytest.fixture
def project(server: LocalServer) -> Iterator[tuple[httpx.Client, str]]:
    name = f"users-{uuid.uuid4().hex[:12]}"
    with server.client(server.new_credential(name)) as http:
        yield http, name


def _names_user(r: httpx.Response) -> None:
    assert r.status_code == 400, r.text
    error = r.json()["error"]
    assert error["code"] == "invalid_request", error
    assert "user" in error["message"], error


@pytest.mark.parametrize("user", BAD_USERS)
def test_a_wrong_user_is_refused_naming_it_and_changes_nothing(
    server: LocalServer, project: tuple[httpx.Client, str], user: Any
) -> None:
    http, name = project
    before = _held(server, name)
    _names_user(http.post("/v1/facts", json={"facts": [FACT], "user": user}))
    _names_user(http.post("/v1/messages", json={"messages": [MESSAGE], "user": user}))
    _names_user(http.post("/v1/recalls", json={"question": "Atlas?", "user": user}))
    _names_user(http.post("/v1/erasures", json={"subject": "Atlas", "user": user}))
    _names_user(http.post("/v1/entities/merges", json={"alias": "A", "into": "B", "user": user}))
    if isinstance(user, str):
        for path in ("/v1/facts?subject=Atlas", "/v1/messages", "/v1/entities"):
            _names_user(http.get(path, params={"user": user}))
        _names_user(http.delete("/v1/facts/f1", params={"user": user}))
    assert _held(server, name) == before


def test_a_recall_echoes_the_user_only_when_sent(project: tuple[httpx.Client, str]) -> None:
    http, _ = project
    sent = http.post("/v1/recalls", json={"question": "Atlas?", "user": "u-1@x.io"})
    assert sent.status_code == 200, sent.text
    assert sent.json()["user"] == "u-1@x.io"
    unsent = http.post("/v1/recalls", json={"question": "Atlas?"})
    assert "user" not in unsent.json()
    assert set(unsent.json()) | {"user"} == set(sent.json())


def test_erasing_a_user_removes_their_scope_and_nothing_else(
    server: LocalServer, embedded_scoped: tuple[httpx.Client, str]
) -> None:
    http, name = embedded_scoped
    r = http.post("/v1/erasures", json={"user": "alice"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["status"] == "done"
    assert body["erased"]["facts"] == 2 and body["erased"]["messages"] == 1
    status = http.get(body["status_url"])
    assert status.status_code == 200 and status.json()["erased"] == body["erased"]
    assert _recall(http, "What does Mom like?", "alice")["facts"] == []
    assert _objects(_recall(http, "What does Mom like?", "bob")) == {"black coffee"}
    assert _objects(_recall(http, "Acme Corp?", "alice")) == {"Dublin"}
    assert http.get("/v1/messages", params={"user": "alice"}).json()["messages"][0]["id"] == "m-s"
    with sqlite3.connect(server.data_dir / "taisce.sqlite3") as db:
        partition = f"{name}\x1falice"
        for table in ("facts", "messages", "passages", "entities", "entity_roles"):
            count = db.execute(f"SELECT count(*) FROM {table} WHERE project = ?", (partition,))
            assert count.fetchone()[0] == 0, table
        # The audit record names the project and a hash, never the user.
        audit = db.execute("SELECT * FROM erasures WHERE id = ?", (body["id"],)).fetchone()
        assert audit is not None and "alice" not in repr(audit)
    raw = (server.data_dir / "taisce.sqlite3").read_bytes()
    assert b"green tea" not in raw and b"Alice here" not in raw


@pytest.fixture
def dynamodb_scoped(dynamodb_server: LocalServer) -> Iterator[tuple[httpx.Client, str]]:
    """The same on DynamoDB (moto's server)."""
    name = f"users-{uuid.uuid4().hex[:12]}"
    secret = new_secret()
    made = Credential(new_credential_id(), name, "test", "2026-01-01T00:00:00Z")
    _moto_table().store().add_credential(made, secret_hash(secret))
    with dynamodb_server.client(secret) as http:
        yield _fill(http, name)


def test_erasing_a_user_on_dynamodb_removes_every_item_of_their_scope(
    dynamodb_scoped: tuple[httpx.Client, str],
) -> None:
    http, name = dynamodb_scoped
    # A report, an alias and a pending vector of Alice's too: all go.
    merge = {"alias": "Mom", "into": "Atlas", "user": "alice"}
    assert http.post("/v1/entities/merges", json=merge).status_code == 200
    r = http.post("/v1/erasures", json={"user": "alice"})
    assert r.status_code == 202, r.text
    body = r.json()
    assert body["status"] == "pending" and body["status_url"].endswith("?user=alice")
    wait_for_worker(http)
    status = http.get(body["status_url"]).json()
    assert status["status"] == "done", status
    assert status["erased"]["facts"] == 2 and status["erased"]["messages"] == 1
    assert status["erased"]["passages"] == 1
    assert http.get(f"/v1/erasures/{body['id']}").json()["erased"] == status["erased"]
    assert _recall(http, "What does Mom like?", "alice")["facts"] == []
    assert _objects(_recall(http, "What does Mom like?", "bob")) == {"black coffee"}
    assert _objects(_recall(http, "Acme Corp?", "alice")) == {"Dublin"}
    assert http.get("/v1/messages", params={"user": "alice"}).json()["messages"][0]["id"] == "m-s"
    assert http.get("/v1/entities/aliases", params={"user": "alice"}).json()["aliases"] == []
    # No item is left under Alice's keys (read by key prefix, partition by partition).
    store = _moto_table().store()
    partition = Scope(name, "alice")
    pks = [entity_pk(partition, k) for k in ("mom", "atlas", "acme corp", "green tea")]
    pks += [fact_pk(partition, i) for i in ("a1", "a2")] + [message_pk(partition, "m-a")]
    pks += [pk for kind in "FEM" for pk in listing_pks(partition, kind)]
    pks += [aliases_pk(partition), erased_vectors_pk(partition), *vector_mark_pks(partition)]
    for pk in pks:
        left = store.client.query(
            TableName=store.table_name,
            KeyConditionExpression="PK = :pk",
            ExpressionAttributeValues={":pk": {"S": pk}},
        )["Items"]
        assert left == [], (pk, left)
    # Bob's memory and the shared memory are as they were.
    assert _objects(_recall(http, "Acme Corp?", "bob")) == {"Dublin", "well"}
    # The audit record names the project and a hash, never the user.
    audits = [e for e in store.erasures(name) if e.id == body["id"]]
    assert len(audits) == 1 and "alice" not in repr(audits[0])


def test_while_a_users_erasure_is_pending_they_read_shared_memory_and_cannot_write(
    dynamodb_scoped: tuple[httpx.Client, str],
) -> None:
    http, name = dynamodb_scoped
    assert _objects(_recall(http, "What does Mom like?", "alice")) == {"green tea"}
    # Alice's erasure as its request leaves it (the pending record under the project),
    # without its work entry, so that this server's worker leaves it pending.
    pending = PendingErasure(
        id=f"era_{uuid.uuid4().hex}",
        project=name,
        subject_hash=user_tombstone(name, "alice"),
        names=user_erasure_names("alice"),
        requested_at="2026-01-01T00:00:00.000000Z",
    )
    store = _moto_table().store()
    key = item_key(erasing_pk(name), pending.id)
    item = key | pending_erasure_attributes(pending)
    store.client.put_item(TableName=store.table_name, Item=item)
    try:
        assert _recall(http, "What does Mom like?", "alice")["facts"] == []
        assert _objects(_recall(http, "Acme Corp?", "alice")) == {"Dublin"}
        listed = http.get("/v1/facts", params={"subject": "Mom", "user": "alice"}).json()
        assert listed["facts"] == []
        for path, body in (
            ("/v1/facts", {"facts": [FACT]}),
            ("/v1/messages", {"messages": [MESSAGE]}),
            ("/v1/entities/merges", {"alias": "Ma", "into": "Mom"}),
        ):
            r = http.post(path, json=body | {"user": "alice"})
            assert r.status_code == 409, r.text
            assert r.json()["error"]["code"] == "erasure_pending"
        # Bob, and requests without a user, read and write as before.
        assert _objects(_recall(http, "What does Mom like?", "bob")) == {"black coffee"}
        r = http.post("/v1/facts", json={"facts": [FACT], "user": "bob"})
        assert r.status_code == 201, r.text
    finally:
        store.client.delete_item(TableName=store.table_name, Key=key)


def test_an_erasure_names_a_subject_or_a_user(project: tuple[httpx.Client, str]) -> None:
    http, _ = project
    for body in ({}, {"subject": None}, {"user": None}):
        r = http.post("/v1/erasures", json=body)
        assert r.status_code == 400, r.text
        assert r.json()["error"]["message"] == "subject (a name) or user is required"


def test_a_user_is_a_field_of_the_request_never_of_an_item(
    project: tuple[httpx.Client, str],
) -> None:
    http, _ = project
    r = http.post("/v1/facts", json={"facts": [{**FACT, "user": "u1"}]})
    assert r.status_code == 400 and "unknown field 'user' in facts[0]" in r.text
    r = http.post("/v1/messages", json={"messages": [{**MESSAGE, "user": "u1"}]})
    assert r.status_code == 400 and "unknown field 'user' in messages[0]" in r.text


# -- what each request sees ----------------------------------------------------------------


def _fact(subject: str, predicate: str, obj: str, *, entity: bool = False, **more: Any) -> Any:
    kind = {"object_kind": "entity"} if entity else {}
    return {"subject": subject, "predicate": predicate, "object": obj, "source_role": "user"} | (
        kind | more
    )


def _moto_table() -> MotoDynamoDb:
    return shared_moto().table_named("taisce-users")


@pytest.fixture(scope="module")
def dynamodb_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    """`taisce serve` on DynamoDB (moto's server), for this module's tests."""
    running = start_server(Path(tmp_path_factory.mktemp("users-dynamodb")), _moto_table().env)
    yield running
    running.stop()


@pytest.fixture(params=["embedded", "dynamodb"])
def any_project(
    request: pytest.FixtureRequest, server: LocalServer
) -> Iterator[tuple[httpx.Client, str]]:
    """A project of this test's own on the embedded store (the session's server) and
    on DynamoDB."""
    name = f"users-{uuid.uuid4().hex[:12]}"
    if request.param == "embedded":
        running, secret = server, server.new_credential(name)
    else:
        running = request.getfixturevalue("dynamodb_server")
        secret = new_secret()
        made = Credential(new_credential_id(), name, "test", "2026-01-01T00:00:00Z")
        _moto_table().store().add_credential(made, secret_hash(secret))
    with running.client(secret) as http:
        yield http, name


@pytest.fixture
def scoped(any_project: tuple[httpx.Client, str]) -> tuple[httpx.Client, str]:
    """A project with shared memory and two users who both have a "Mom", on each store."""
    return _fill(*any_project)


@pytest.fixture
def embedded_scoped(project: tuple[httpx.Client, str]) -> tuple[httpx.Client, str]:
    """The same on the embedded store (the session's server)."""
    return _fill(*project)


def _fill(http: httpx.Client, name: str) -> tuple[httpx.Client, str]:
    shared = [_fact("Acme Corp", "is based in", "Dublin", id="s1")]
    alice = [
        _fact("Mom", "likes", "green tea", id="a1"),
        _fact("Atlas", "works at", "Acme Corp", entity=True, id="a2"),
    ]
    bob = [_fact("Mom", "likes", "black coffee", id="b1"), _fact("Acme Corp", "pays", "well")]
    bodies = [{"facts": shared}, {"facts": alice, "user": "alice"}, {"facts": bob, "user": "bob"}]
    for body in bodies:
        assert http.post("/v1/facts", json=body).status_code == 201
    messages = [
        ({"messages": [{"id": "m-s", "role": "user", "content": "Shared handbook."}]}),
        ({"messages": [{"id": "m-a", "role": "user", "content": "Alice here."}], "user": "alice"}),
        ({"messages": [{"id": "m-b", "role": "user", "content": "Bob here."}], "user": "bob"}),
    ]
    for body in messages:
        assert http.post("/v1/messages", json=body).status_code == 202
    return http, name


def _recall(http: httpx.Client, question: str, user: str | None = None, **controls: Any) -> Any:
    body = {"question": question, **controls} | ({"user": user} if user else {})
    r = http.post("/v1/recalls", json=body)
    assert r.status_code == 200, r.text
    return r.json()


def _objects(answer: Any) -> set[str]:
    return {f["object"] for f in answer["facts"]}


def test_each_user_has_their_own_mom_and_shared_only_has_none(
    scoped: tuple[httpx.Client, str],
) -> None:
    http, _ = scoped
    assert _objects(_recall(http, "What does Mom like?", "alice")) == {"green tea"}
    assert _objects(_recall(http, "What does Mom like?", "bob")) == {"black coffee"}
    assert _recall(http, "What does Mom like?")["facts"] == []
    assert _recall(http, "What does Mom like?", "carol")["facts"] == []


def test_a_hop_from_a_users_fact_reaches_shared_facts_and_never_another_users(
    scoped: tuple[httpx.Client, str],
) -> None:
    http, _ = scoped
    answer = _recall(http, "Where is Atlas based?", "alice", hops=2)
    assert "Dublin" in _objects(answer)
    hop2 = [f for f in answer["facts"] if f["object"] == "Dublin"]
    assert hop2[0]["path"] == ["Atlas", "Acme Corp"]
    # Atlas is Alice's: neither Bob nor a shared-only request finds it, nor its hop.
    assert _recall(http, "Where is Atlas based?", "bob", hops=2)["facts"] == []
    assert _recall(http, "Where is Atlas based?", None, hops=2)["facts"] == []
    # Bob's fact about the shared entity is Bob's: his recall holds it, the others' not.
    assert _objects(_recall(http, "Acme Corp?", "bob")) == {"Dublin", "well"}
    # Alice's recall holds her own fact linking to it, not Bob's.
    assert _objects(_recall(http, "Acme Corp?", "alice")) == {"Dublin", "Acme Corp"}
    assert _objects(_recall(http, "Acme Corp?")) == {"Dublin"}


def test_listings_and_reads_see_shared_and_the_users_own(
    scoped: tuple[httpx.Client, str],
) -> None:
    http, _ = scoped

    def facts(user: str | None) -> set[str]:
        params = {"subject": "Mom"} | ({"user": user} if user else {})
        return {f["object"] for f in http.get("/v1/facts", params=params).json()["facts"]}

    assert (facts("alice"), facts("bob"), facts(None)) == ({"green tea"}, {"black coffee"}, set())

    def entities(user: str | None) -> dict[str, Any]:
        params = {"user": user} if user else {}
        listed = http.get("/v1/entities", params=params).json()["entities"]
        return {e["key"]: e["facts"]["user"] for e in listed}

    # Acme Corp is one entity in Bob's view: the shared fact and his own.
    shared = {"acme corp": 1, "dublin": 1}
    assert entities("bob") == shared | {"acme corp": 2, "mom": 1, "black coffee": 1, "well": 1}
    assert entities("alice") == shared | {"acme corp": 2, "atlas": 1, "mom": 1, "green tea": 1}
    assert entities(None) == shared

    def messages(user: str | None) -> list[str]:
        params = {"user": user} if user else {}
        return [m["id"] for m in http.get("/v1/messages", params=params).json()["messages"]]

    assert sorted(messages("alice")) == ["m-a", "m-s"]
    assert messages(None) == ["m-s"]
    assert http.get("/v1/messages/m-a", params={"user": "alice"}).status_code == 200
    for user in ("bob", None):
        params = {"user": user} if user else {}
        r = http.get("/v1/messages/m-a", params=params)
        assert r.status_code == 404, r.text
        assert "Alice" not in r.text
    graph = http.get(
        "/v1/entities/neighbourhood", params={"name": "Atlas", "hops": 2, "user": "alice"}
    ).json()
    assert {e["id"] for e in graph["edges"]} == {"a2", "s1"}
    graph = http.get("/v1/entities/neighbourhood", params={"name": "Acme Corp"}).json()
    assert {e["id"] for e in graph["edges"]} == {"s1"}


def test_writes_act_in_the_requests_own_scope(scoped: tuple[httpx.Client, str]) -> None:
    http, _ = scoped
    # Bob cannot delete Alice's fact, nor a shared one.
    assert http.delete("/v1/facts/a1", params={"user": "bob"}).status_code == 404
    assert http.delete("/v1/facts/s1", params={"user": "bob"}).status_code == 404
    assert _objects(_recall(http, "What does Mom like?", "alice")) == {"green tea"}
    # Alice's merge is hers: Bob's Mom stays Mom.
    merge = {"alias": "Mom", "into": "Atlas", "user": "alice"}
    assert http.post("/v1/entities/merges", json=merge).status_code == 200
    aliases = http.get("/v1/entities/aliases", params={"user": "alice"}).json()["aliases"]
    assert [(a["alias"], a["into"]) for a in aliases] == [("Mom", "Atlas")]
    assert http.get("/v1/entities/aliases", params={"user": "bob"}).json()["aliases"] == []
    assert _objects(_recall(http, "What does Mom like?", "bob")) == {"black coffee"}
    # Alice may merge her name into a shared entity; shared memory is unchanged.
    merge = {"alias": "Atlas", "into": "Acme Corp", "user": "alice"}
    assert http.post("/v1/entities/merges", json=merge).status_code == 200
    assert _objects(_recall(http, "Acme Corp?")) == {"Dublin"}
    assert http.get("/v1/entities/aliases").json()["aliases"] == []
    assert "green tea" in _objects(_recall(http, "Acme Corp?", "alice"))
    assert http.delete("/v1/facts/a1", params={"user": "alice"}).status_code == 204
    assert "green tea" not in _objects(_recall(http, "Acme Corp?", "alice"))


def test_an_export_holds_what_the_user_sees_each_record_with_its_owner(
    server: LocalServer, embedded_scoped: tuple[httpx.Client, str]
) -> None:
    _, name = embedded_scoped
    path = server.data_dir / "taisce.sqlite3"
    alice = [(r["id"], r.get("user")) for r in export_records(path, name, "alice")]
    assert sorted(alice) == sorted(
        [("m-s", None), ("m-a", "alice"), ("s1", None), ("a1", "alice"), ("a2", "alice")]
    )
    assert sorted(r["id"] for r in export_records(path, name)) == ["m-s", "s1"]
