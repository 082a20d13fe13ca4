"""Never twice, over real HTTP: a fact identical to a stored one is answered with the
stored id, the same message posted again keeps its passages once, and a recall never
holds two items with the same text."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.server import LocalServer

ATLAS = {
    "subject": "Atlas",
    "predicate": "works at",
    "object": "Acme Corp",
    "source_role": "user",
}


@pytest.fixture
def http(server: LocalServer) -> Iterator[httpx.Client]:
    with server.client(server.new_credential(f"twice-{uuid.uuid4().hex[:12]}")) as client:
        yield client


def post(http: httpx.Client, path: str, body: dict[str, Any]) -> dict[str, Any]:
    r = http.post(path, json=body)
    # Messages are 202: their facts are extracted later.
    assert r.status_code == (201 if path == "/v1/facts" else 202), r.text
    answer: dict[str, Any] = r.json()
    return answer


def fact_ids(http: httpx.Client, *facts: dict[str, Any]) -> list[str]:
    return [f["id"] for f in post(http, "/v1/facts", {"facts": list(facts)})["facts"]]


def test_a_fact_posted_three_times_is_stored_once(http: httpx.Client) -> None:
    first = fact_ids(http, ATLAS)
    assert fact_ids(http, ATLAS) == first
    assert fact_ids(http, ATLAS, ATLAS) == first * 2
    listed = http.get("/v1/facts", params={"subject": "Atlas"}).json()["facts"]
    assert [f["id"] for f in listed] == first
    r = http.post("/v1/recalls", json={"question": "Where does Atlas work?"})
    assert [f["statement"] for f in r.json()["facts"]] == ["Atlas works at Acme Corp"]


def test_an_id_sent_with_a_copy_is_answered_with_the_stored_id(http: httpx.Client) -> None:
    first = fact_ids(http, ATLAS)
    assert fact_ids(http, {**ATLAS, "id": "mine-1"}) == first
    assert http.delete("/v1/facts/mine-1").status_code == 404


def test_concurrent_posts_of_one_fact_store_it_once(http: httpx.Client) -> None:
    with ThreadPoolExecutor(max_workers=6) as pool:
        answers = list(pool.map(lambda _: fact_ids(http, ATLAS)[0], range(6)))
    assert len(set(answers)) == 1
    listed = http.get("/v1/facts", params={"subject": "Atlas"}).json()["facts"]
    assert [f["id"] for f in listed] == answers[:1]


def test_a_fact_deleted_can_be_stored_again(http: httpx.Client) -> None:
    (first,) = fact_ids(http, ATLAS)
    assert http.delete(f"/v1/facts/{first}").status_code == 204
    (again,) = fact_ids(http, ATLAS)
    assert again != first


def message_ids(http: httpx.Client, *messages: dict[str, Any]) -> list[str]:
    body = post(http, "/v1/messages", {"messages": list(messages)})
    return [m["id"] for m in body["messages"]]


def listed_messages(http: httpx.Client) -> list[dict[str, Any]]:
    r = http.get("/v1/messages")
    assert r.status_code == 200, r.text
    found: list[dict[str, Any]] = r.json()["messages"]
    return found


def test_a_message_with_its_time_posted_twice_is_one_message(http: httpx.Client) -> None:
    said = {"role": "user", "content": "Lunch is at noon.", "occurred_at": "2024-05-03T09:00:00Z"}
    first = message_ids(http, said)
    assert message_ids(http, said) == first
    assert [m["id"] for m in listed_messages(http)] == first
    shown = http.get(f"/v1/messages/{first[0]}").json()
    assert len(shown["passages"]) == 1


def test_a_message_without_its_time_is_a_new_message_each_time(http: httpx.Client) -> None:
    said = {"role": "user", "content": "ok"}
    first, second = message_ids(http, said) + message_ids(http, said)
    assert first != second
    # Another role or time is another message too.
    dated = {**said, "occurred_at": "2024-05-03T09:00:00Z"}
    assert len(set(message_ids(http, dated, {**dated, "role": "assistant"}))) == 2
