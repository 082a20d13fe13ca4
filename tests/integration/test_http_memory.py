"""Memory over real HTTP: facts and messages stored, listed, deleted, kept apart by
source role, and still there after the server restarts."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server import LocalServer, start_server

FACT_KEYS = {
    "id",
    "subject",
    "predicate",
    "object",
    "object_kind",
    "statement",
    "source_role",
    "quote",
    "context",
    "message_id",
    "valid_from",
    "valid_to",
    "recorded_at",
    # Set only on extracted facts, where the server located the quote itself.
    "quote_start",
    "quote_end",
}


@pytest.fixture
def project() -> str:
    """A project of this test's own."""
    return f"memory-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def http(server: LocalServer, project: str) -> Iterator[httpx.Client]:
    with server.client(server.new_credential(project)) as client:
        yield client


def rows(server: LocalServer, table: str, project: str, **where: str) -> list[dict[str, Any]]:
    clause = "".join(f" AND {column} = ?" for column in where)
    db = sqlite3.connect(server.data_dir / "taisce.sqlite3", timeout=30)
    db.row_factory = sqlite3.Row
    try:
        found = db.execute(
            f"SELECT * FROM {table} WHERE project = ?{clause}", (project, *where.values())
        ).fetchall()
    finally:
        db.close()
    return [dict(r) for r in found]


def fact(
    subject: str, predicate: str, obj: str, role: str = "user", **extra: Any
) -> dict[str, Any]:
    return {"subject": subject, "predicate": predicate, "object": obj, "source_role": role, **extra}


def store(http: httpx.Client, *facts: dict[str, Any]) -> list[str]:
    r = http.post("/v1/facts", json={"facts": list(facts)})
    assert r.status_code == 201, r.text
    return [f["id"] for f in r.json()["facts"]]


def listed(http: httpx.Client, subject: str) -> list[dict[str, Any]]:
    r = http.get("/v1/facts", params={"subject": subject})
    assert r.status_code == 200, r.text
    facts: list[dict[str, Any]] = r.json()["facts"]
    return facts


def recall(http: httpx.Client, question: str, **controls: Any) -> dict[str, Any]:
    r = http.post("/v1/recalls", json={"question": question, **controls})
    assert r.status_code == 200, r.text
    body: dict[str, Any] = r.json()
    return body


def parse_utc(text: str) -> datetime:
    assert text.endswith("Z"), text
    moment = datetime.fromisoformat(text.removesuffix("Z") + "+00:00")
    assert moment.utcoffset() == timedelta(0)
    return moment


# -- facts round trip ------------------------------------------------------------------------


def test_a_fact_comes_back_with_every_field(http: httpx.Client) -> None:
    sent = {
        "id": "atlas-email",
        "subject": "Atlas",
        "predicate": "prefers",
        "object": "email to calls",
        "object_kind": "value",
        "statement": "Atlas would rather get an email than a call",
        "source_role": "assistant",
        "quote": "It sounds like Atlas prefers email to calls",
        "context": "since 2021",
        "message_id": "chat-42:7",
        "valid_from": "2026-03-01T10:00:00+02:00",
        "valid_to": "2026-12-31T19:30:00.250-05:00",
    }
    before = datetime.now(UTC)
    assert store(http, sent) == ["atlas-email"]
    after = datetime.now(UTC)

    [got] = listed(http, "Atlas")
    assert set(got) == FACT_KEYS
    for key in FACT_KEYS - {"valid_from", "valid_to", "recorded_at", "quote_start", "quote_end"}:
        assert got[key] == sent[key], key
    assert got["quote_start"] is None and got["quote_end"] is None
    # Times come back in UTC with a Z, the same instants.
    assert got["valid_from"] == "2026-03-01T08:00:00Z"
    assert parse_utc(got["valid_to"]) == datetime(2027, 1, 1, 0, 30, 0, 250_000, tzinfo=UTC)
    recorded = parse_utc(got["recorded_at"])
    assert before - timedelta(seconds=5) <= recorded <= after + timedelta(seconds=5)


def test_a_fact_gets_defaults_and_an_id(http: httpx.Client) -> None:
    ids = store(http, fact("Maya Okafor", "lives in", "Galway"))
    [got] = listed(http, "Maya Okafor")
    assert set(got) == FACT_KEYS
    assert got["id"] == ids[0] and got["id"]
    assert got["statement"] == "Maya Okafor lives in Galway"
    assert got["object_kind"] == "entity"
    for key in ("quote", "context", "message_id", "valid_from", "valid_to"):
        assert got[key] is None, key
    parse_utc(got["recorded_at"])


def test_the_server_sets_recorded_at_in_utc_whatever_the_client_sends(
    http: httpx.Client,
) -> None:
    r = http.post(
        "/v1/facts",
        json={"facts": [fact("Clock Person", "is", "here", recorded_at="2000-01-01T00:00:00Z")]},
    )
    assert r.status_code == 400  # recorded_at is the server's, not a client field
    store(http, fact("Clock Person", "is", "here", valid_from="2026-06-01T00:00:00-09:30"))
    [got] = listed(http, "Clock Person")
    assert got["valid_from"] == "2026-06-01T09:30:00Z"
    assert parse_utc(got["recorded_at"]).year >= 2024


def test_ids_come_back_in_request_order_and_are_distinct(http: httpx.Client) -> None:
    facts = [
        fact("Order Person", "step", str(i), id=f"order-{i}" if i % 2 else None) for i in range(6)
    ]
    facts = [{k: v for k, v in f.items() if v is not None} for f in facts]
    ids = store(http, *facts)
    assert len(ids) == 6 and len(set(ids)) == 6
    assert ids[1] == "order-1" and ids[3] == "order-3" and ids[5] == "order-5"
    # Listed in storing order.
    assert [f["id"] for f in listed(http, "Order Person")] == ids
    assert [f["object"] for f in listed(http, "Order Person")] == [str(i) for i in range(6)]


# -- listing by subject ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "asked",
    [
        "Zoë Ångström",
        "zoë ångström",
        "ZOË ÅNGSTRÖM",
        "  Zoë \t  Ångström ",
        "Zoe\u0308 A\u030angstro\u0308m",  # decomposed accents
        "\uff3a\uff4f\u00eb \u00c5ngstr\u00f6m",  # fullwidth Z and o
    ],
)
def test_facts_are_listed_by_subject_case_and_unicode_insensitively(
    http: httpx.Client, asked: str
) -> None:
    store(
        http,
        fact("Zoë Ångström", "works at", "Acme Corp"),
        fact("Zoë Ångström", "likes", "tea", object_kind="value", role="tool"),
        fact("Maya Okafor", "manages", "Zoë Ångström"),  # Zoë as object: not listed
        fact("Zoë", "is", "someone else"),
    )
    got = listed(http, asked)
    assert [(f["predicate"], f["object"]) for f in got] == [
        ("works at", "Acme Corp"),
        ("likes", "tea"),
    ]
    assert {f["subject"] for f in got} == {"Zoë Ångström"}  # spelled as stored


def test_case_folding_is_full_not_just_lowercase(http: httpx.Client) -> None:
    store(http, fact("Straße Holdings", "is based in", "Berlin"))
    assert [f["object"] for f in listed(http, "STRASSE HOLDINGS")] == ["Berlin"]
    assert listed(http, "Strasse") == []


def test_listing_an_unknown_subject_is_empty(http: httpx.Client) -> None:
    assert listed(http, "Nobody At All") == []


# -- delete --------------------------------------------------------------------------------------


def test_a_deleted_fact_is_gone_from_listing_and_recall(http: httpx.Client) -> None:
    gone, kept = store(
        http,
        fact("Delia", "works at", "Acme Corp", id="delia-works"),
        fact("Delia", "lives in", "Cork"),
    )
    assert gone == "delia-works"
    assert len(recall(http, "What about Delia?")["facts"]) == 2

    r = http.delete(f"/v1/facts/{gone}")
    assert r.status_code == 204
    assert r.content == b""

    assert [f["id"] for f in listed(http, "Delia")] == [kept]
    assert [f["id"] for f in recall(http, "What about Delia?")["facts"]] == [kept]
    # The object side is gone too: Acme Corp no longer reaches the fact.
    assert recall(http, "What about Acme Corp?")["facts"] == []
    again = http.delete(f"/v1/facts/{gone}")
    assert again.status_code == 404
    assert again.json()["error"]["code"] == "not_found"


def test_a_deleted_id_can_be_stored_again(http: httpx.Client) -> None:
    store(http, fact("Phoenix", "is", "old", id="phoenix-1"))
    assert http.delete("/v1/facts/phoenix-1").status_code == 204
    store(http, fact("Phoenix", "is", "new", id="phoenix-1"))
    assert [f["object"] for f in listed(http, "Phoenix")] == ["new"]


@pytest.mark.parametrize("fact_id", ["a:b@c.d-e_f", "x.y-z"])
def test_ids_with_allowed_punctuation_can_be_deleted(http: httpx.Client, fact_id: str) -> None:
    store(http, fact("Punct", "has", "an id", id=fact_id))
    assert http.delete(f"/v1/facts/{fact_id}").status_code == 204
    assert listed(http, "Punct") == []


def test_an_id_with_a_hash_is_refused(http: httpx.Client) -> None:
    # "#" is kept out of ids (passage ids are "<message id>#<n>").
    r = http.post("/v1/facts", json={"facts": [fact("Hash Person", "has", "an id", id="note#1")]})
    assert r.status_code == 400, r.text
    assert r.json()["error"]["code"] == "invalid_request"
    assert listed(http, "Hash Person") == []


def test_a_percent_encoded_id_can_be_deleted(http: httpx.Client) -> None:
    store(http, fact("Colon Person", "has", "an id", id="note:1"))
    assert http.delete("/v1/facts/note%3A1").status_code == 204
    assert listed(http, "Colon Person") == []


# -- idempotent ids ------------------------------------------------------------------------------


def test_the_same_fact_id_twice_in_one_batch_is_stored_once(
    server: LocalServer, http: httpx.Client, project: str
) -> None:
    one = fact("Twice Person", "works at", "Acme Corp", id="twice-1")
    r = http.post("/v1/facts", json={"facts": [one, one]})
    assert r.status_code == 201, r.text
    assert {f["id"] for f in r.json()["facts"]} == {"twice-1"}
    assert len(listed(http, "Twice Person")) == 1
    assert len(rows(server, "facts", project, id="twice-1")) == 1


def test_the_same_fact_id_across_requests_keeps_the_first(
    server: LocalServer, http: httpx.Client, project: str
) -> None:
    store(http, fact("Again Person", "works at", "Acme Corp", id="again-1"))
    [first] = listed(http, "Again Person")
    r = http.post(
        "/v1/facts",
        json={
            "facts": [
                fact("Again Person", "works at", "Globex", id="again-1"),
                fact("Again Person", "lives in", "Cork"),
            ]
        },
    )
    assert r.status_code == 201, r.text
    assert r.json()["facts"][0] == {"id": "again-1"}
    got = listed(http, "Again Person")
    assert got[0] == first  # kept as it was, recorded_at included
    assert [f["object"] for f in got] == ["Acme Corp", "Cork"]
    assert len(rows(server, "facts", project, id="again-1")) == 1


def test_messages_are_accepted_with_ids(
    server: LocalServer, http: httpx.Client, project: str
) -> None:
    r = http.post(
        "/v1/messages",
        json={
            "messages": [
                {"role": "user", "content": "Atlas started at Acme Corp."},
                {
                    "id": "chat-1:2",
                    "role": "assistant",
                    "content": "Noted.",
                    "source": "chat:1",
                    "occurred_at": "2026-11-02T09:15:05+01:00",
                },
                {
                    "role": "tool",
                    "content": "Acme Corp was founded in 2009.",
                    "source": "docs/a.md",
                },
            ]
        },
    )
    assert r.status_code == 202, r.text
    assert set(r.json()) == {"messages"}
    ids = [m["id"] for m in r.json()["messages"]]
    assert len(ids) == 3 and len(set(ids)) == 3 and all(ids)
    assert ids[1] == "chat-1:2"
    [stored] = rows(server, "messages", project, id="chat-1:2")
    assert stored["occurred_at"] == "2026-11-02T08:15:05Z"
    assert len(rows(server, "messages", project)) == 3


def test_the_same_message_id_twice_in_one_batch_is_stored_once(
    server: LocalServer, http: httpx.Client, project: str
) -> None:
    message = {"id": "dup-msg", "role": "user", "content": "Hello there. How are you?"}
    r = http.post("/v1/messages", json={"messages": [message, message]})
    assert r.status_code == 202, r.text
    assert {m["id"] for m in r.json()["messages"]} == {"dup-msg"}
    assert len(rows(server, "messages", project, id="dup-msg")) == 1


def test_the_same_message_id_across_requests_keeps_the_first(
    server: LocalServer, http: httpx.Client, project: str
) -> None:
    first = {"id": "again-msg", "role": "user", "content": "The first words."}
    assert http.post("/v1/messages", json={"messages": [first]}).status_code == 202
    passages = rows(server, "passages", project, message_id="again-msg")
    second = {**first, "content": "Other words entirely. And more of them."}
    r = http.post("/v1/messages", json={"messages": [second]})
    assert r.status_code == 202, r.text
    assert r.json() == {"messages": [{"id": "again-msg"}]}
    [kept] = rows(server, "messages", project, id="again-msg")
    assert kept["content"] == "The first words."
    assert rows(server, "passages", project, message_id="again-msg") == passages


# -- source roles ----------------------------------------------------------------------------------


def test_each_fact_keeps_its_own_source_role(http: httpx.Client) -> None:
    store(
        http,
        fact("Nadia", "lives in", "Cork", "user"),
        fact("Nadia", "lives in", "Mars Base", "tool"),
        fact("Nadia", "likes", "tea", "assistant", object_kind="value"),
        fact("Nadia", "is", "an admin", "system", object_kind="value"),
    )
    by_default = recall(http, "What about Nadia?")
    assert [(f["object"], f["source_role"]) for f in by_default["facts"]] == [("Cork", "user")]
    assert by_default["controls"]["source_roles"] == ["user"]

    only_user = recall(http, "What about Nadia?", source_roles=["user"])
    assert [f["object"] for f in only_user["facts"]] == ["Cork"]
    assert "Mars Base" not in str(only_user)

    only_tool = recall(http, "What about Nadia?", source_roles=["tool"])
    assert [(f["object"], f["source_role"]) for f in only_tool["facts"]] == [("Mars Base", "tool")]

    both = recall(http, "What about Nadia?", source_roles=["tool", "user"])
    assert sorted((f["object"], f["source_role"]) for f in both["facts"]) == [
        ("Cork", "user"),
        ("Mars Base", "tool"),
    ]
    everyone = recall(
        http, "What about Nadia?", source_roles=["user", "assistant", "system", "tool"]
    )
    assert sorted((f["object"], f["source_role"]) for f in everyone["facts"]) == [
        ("Cork", "user"),
        ("Mars Base", "tool"),
        ("an admin", "system"),
        ("tea", "assistant"),
    ]
    # Listing shows every fact, each with its own role.
    assert sorted((f["object"], f["source_role"]) for f in listed(http, "Nadia")) == sorted(
        (f["object"], f["source_role"]) for f in everyone["facts"]
    )


def test_a_tool_claim_is_not_walked_when_only_user_is_asked(http: httpx.Client) -> None:
    store(
        http,
        fact("Oisin", "works at", "Tool Corp", "tool"),
        fact("Tool Corp", "is based in", "Sligo", "user"),
        fact("Oisin", "lives in", "Ennis", "user"),
    )
    user_only = recall(http, "What about Oisin?", hops=2)
    assert [f["object"] for f in user_only["facts"]] == ["Ennis"]
    assert "Sligo" not in str(user_only) and "Tool Corp" not in str(user_only)

    with_tool = recall(http, "What about Oisin?", hops=2, source_roles=["user", "tool"])
    hop2 = [f for f in with_tool["facts"] if "path" in f]
    assert [(f["object"], f["source_role"], f["path"]) for f in hop2] == [
        ("Sligo", "user", ["Oisin", "Tool Corp"])
    ]
    assert {(f["object"], f["source_role"]) for f in with_tool["facts"]} == {
        ("Tool Corp", "tool"),
        ("Sligo", "user"),
        ("Ennis", "user"),
    }


# -- restart ------------------------------------------------------------------------


def test_memory_survives_a_restart(tmp_path: Path) -> None:
    first = start_server(tmp_path)
    try:
        secret = first.new_credential("restart")
        with first.client(secret) as http:
            ids = store(
                http,
                fact(
                    "Atlas", "works at", "Acme Corp", id="r-1", quote="Atlas started at Acme Corp."
                ),
                fact("Acme Corp", "is based in", "Dublin", "tool"),
                fact("Atlas", "is", "gone soon", id="r-3"),
            )
            before = listed(http, "Atlas")
            r = http.post(
                "/v1/messages",
                json={
                    "messages": [
                        {"id": "r-m1", "role": "user", "content": "Atlas started at Acme Corp."}
                    ]
                },
            )
            assert r.status_code == 202
    finally:
        first.stop()

    second = start_server(tmp_path)
    try:
        with second.client(secret) as http:
            assert listed(http, "Atlas") == before
            assert len(listed(http, "Acme Corp")) == 1
            answer = recall(http, "What about Atlas?", hops=2, source_roles=["user", "tool"])
            assert {f["id"] for f in answer["facts"]} == set(ids)
            # Ids stay idempotent after the restart, and delete still works.
            store(http, fact("Atlas", "works at", "Elsewhere", id="r-1"))
            assert listed(http, "Atlas")[0]["object"] == "Acme Corp"
            again = http.post(
                "/v1/messages",
                json={"messages": [{"id": "r-m1", "role": "user", "content": "Different."}]},
            )
            assert again.status_code == 202
            assert [m["content"] for m in rows(second, "messages", "restart")] == [
                "Atlas started at Acme Corp."
            ]
            assert http.delete("/v1/facts/r-3").status_code == 204
    finally:
        second.stop()

    third = start_server(tmp_path)
    try:
        with third.client(secret) as http:
            assert [f["id"] for f in listed(http, "Atlas")] == ["r-1"]
    finally:
        third.stop()


def test_explain_says_why_each_item_came_back_and_changes_nothing_else(
    http: httpx.Client,
) -> None:
    store(
        http,
        fact("Ronan", "works at", "Initrode"),
        fact("Ronan", "lives in", "Sligo"),
        fact("Initrode", "is based in", "Galway"),
    )
    for question in ("Where does Ronan work?", "What about Ronan?"):
        plain = recall(http, question, hops=2)
        told = recall(http, question, hops=2, explain=True)
        assert told["controls"] == {**plain["controls"], "explain": True}
        assert "explain" not in plain["controls"]  # echoed only when sent
        # The same items, the same count: `why` is not counted and chooses nothing.
        assert [{k: v for k, v in f.items() if k != "why"} for f in told["facts"]] == plain["facts"]
        assert (told["characters"], told["truncated"]) == (plain["characters"], plain["truncated"])
        assert told["facts"] and all("why" not in f for f in plain["facts"])
        for f in told["facts"]:
            why = f["why"]
            assert why["step"] == "exact_name" and why["matched"] == "ronan"
            assert why["hop"] == (2 if "path" in f else 1)
    asked = recall(http, "Where does Ronan work?", explain=True)
    [works, lives] = asked["facts"]
    assert works["statement"] == "Ronan works at Initrode"
    assert works["why"]["words"] > 0 and works["why"]["similarity"] is None  # no model here
    # The numbers in plain words: the name, and the question's words it holds.
    assert works["why"]["reason"] == "named ronan exactly; word 'work' matched"
    # Ronan holds two facts, all that is known of him: the other comes back after.
    assert lives["statement"] == "Ronan lives in Sligo" and lives["why"]["words"] == 0
    assert lives["why"]["reason"] == "named ronan exactly; ronan has few facts: all come back"
    r = http.post("/v1/recalls", json={"question": "q", "explain": "yes"})
    assert r.status_code == 400
    assert r.json()["error"]["control"] == "explain"
