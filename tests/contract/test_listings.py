"""The listing part of the Store contract (the memory explorer's pages): entities with
their live facts per role, messages newest first, page by page, run against every
adapter of conftest.STORES. On DynamoDB the listings must read the project's own
partitions only: a Scan fails the test."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.api import bodies
from taisce.domain.controls import Limits
from taisce.domain.errors import InvalidRequest, NotFound
from taisce.domain.names import normalize_name
from taisce.service.memory import Memory
from tests.contract.factories import fact, message, unique, with_passages


@pytest.fixture
def project() -> str:
    return unique("list")


@pytest.fixture
def memory(store: Any) -> Memory:
    return Memory(store, Limits(bundle_characters=16_000, max_rows=200))


@pytest.fixture(autouse=True)
def no_scans(store: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The listings never Scan the table (erasure still does: it is allowed there)."""
    if isinstance(store, DynamoDbStore):
        for name in ("entity_page", "message_page"):
            real = getattr(store, name)

            def guarded(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
                scan = store.client.scan
                store.client.scan = _refuse  # type: ignore[method-assign]
                try:
                    return _real(*args, **kwargs)
                finally:
                    store.client.scan = scan  # type: ignore[method-assign]

            monkeypatch.setattr(store, name, guarded)
    yield


def _refuse(**_: Any) -> None:
    raise AssertionError("a listing scanned the table")


def entities_of(memory: Memory, project: str, **given: Any) -> list[dict[str, Any]]:
    """Every page, following next_cursor."""
    out: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = bodies.entity_list(
            memory.list_entities(project, given.get("search"), given.get("limit"), cursor)
        )
        out += page["entities"]
        cursor = page["next_cursor"]
        if cursor is None:
            return out


def messages_of(memory: Memory, project: str, **given: Any) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = bodies.message_list(
            memory.list_messages(
                project, given.get("role"), given.get("source"), given.get("limit"), cursor
            )
        )
        out += page["messages"]
        cursor = page["next_cursor"]
        if cursor is None:
            return out


def seed_facts(store: Any, project: str) -> None:
    store.put_facts(
        project,
        [
            fact("Atlas", "works at", "Acme Corp", id="l1"),
            fact("Maya Okafor", "manages", "Atlas", id="l2", role="tool"),
            fact("Atlas", "is aged", "41", id="l3", kind="value", role="assistant"),
            fact("Zoë", "lives in", "Dublin", id="l4"),
            fact("Bob", "lives in", "Cork", id="l5", role="system"),
        ],
    )


def test_entities_are_listed_by_key_with_live_facts_per_role(
    store: Any, memory: Memory, project: str
) -> None:
    seed_facts(store, project)
    listed = entities_of(memory, project)
    assert [e["key"] for e in listed] == sorted(
        # Zoë's key has no accent (docs/API.md, "Names"); its name keeps it.
        ["atlas", "acme corp", "maya okafor", "zoe", "dublin", "bob", "cork"],
        key=lambda k: k.encode("utf-8"),
    )
    atlas = next(e for e in listed if e["key"] == "atlas")
    assert atlas == {
        "key": "atlas",
        "name": "Atlas",
        "facts": {"user": 1, "assistant": 1, "system": 0, "tool": 1},
    }
    # Every page size gives the same list, each entity once.
    for size in (1, 2, 3, 100):
        assert entities_of(memory, project, limit=size) == listed


def test_entity_search_matches_the_normalised_name(
    store: Any, memory: Memory, project: str
) -> None:
    seed_facts(store, project)
    assert [e["key"] for e in entities_of(memory, project, search="  ATL ")] == ["atlas"]
    assert [e["key"] for e in entities_of(memory, project, search="o", limit=1)] == [
        "acme corp",
        "bob",
        "cork",
        "maya okafor",
        "zoe",
    ]
    assert entities_of(memory, project, search="nobody") == []


def test_deleted_facts_merged_aliases_and_erased_entities_leave_the_listing(
    store: Any, memory: Memory, project: str
) -> None:
    seed_facts(store, project)
    assert store.delete_fact(project, "l5")
    keys = [e["key"] for e in entities_of(memory, project)]
    assert "bob" not in keys and "cork" not in keys
    store.put_facts(project, [fact("Maya", "likes", "tea", id="l6", kind="value")])
    store.merge_entities(project, "maya", "Maya", "maya okafor", "Maya Okafor")
    keys = [e["key"] for e in entities_of(memory, project)]
    assert "maya" not in keys and "maya okafor" in keys
    memory.erase_now(project, "Atlas")
    listed = entities_of(memory, project)
    assert "atlas" not in [e["key"] for e in listed]
    assert "Atlas" not in repr(listed)


def test_entity_listings_stay_in_their_project(store: Any, memory: Memory, project: str) -> None:
    seed_facts(store, project)
    other = unique("other")
    store.put_facts(other, [fact("Atlas", "works at", "Globex", id="o1")])
    assert [e["key"] for e in entities_of(memory, other)] == ["atlas", "globex"]
    assert next(e for e in entities_of(memory, other) if e["key"] == "atlas")["facts"]["user"] == 1


def test_messages_are_listed_newest_first_by_role_and_source(
    store: Any, memory: Memory, project: str
) -> None:
    made = [
        message("Atlas works at Acme.", id="m1", recorded_at="2024-05-01T12:00:00Z"),
        message("The tool says hi.", id="m2", role="tool", recorded_at="2024-05-02T12:00:00Z"),
        message("Same moment, a.", id="m3a", source="chat:1", recorded_at="2024-05-03T12:00:00Z"),
        message("Same moment, b.", id="m3b", source="chat:1", recorded_at="2024-05-03T12:00:00Z"),
        message("Latest.", id="m4", role="assistant", recorded_at="2024-05-04T12:00:00.5Z"),
    ]
    messages, passages = with_passages(*made, limit=30)
    store.put_messages(project, messages, passages)
    listed = messages_of(memory, project)
    assert [m["id"] for m in listed] == ["m4", "m3b", "m3a", "m2", "m1"]
    assert listed[-1] == {
        "id": "m1",
        "role": "user",
        "content": "Atlas works at Acme.",
        "source": None,
        "occurred_at": made[0].occurred_at,
        "recorded_at": "2024-05-01T12:00:00Z",
    }
    for size in (1, 2, 4):
        assert messages_of(memory, project, limit=size) == listed
    assert [m["id"] for m in messages_of(memory, project, role="user")] == ["m3b", "m3a", "m1"]
    assert [m["id"] for m in messages_of(memory, project, source="chat:1", limit=1)] == [
        "m3b",
        "m3a",
    ]
    assert messages_of(memory, project, role="tool", source="chat:1") == []
    assert messages_of(memory, unique("other")) == []


def test_a_message_comes_with_its_passages_and_erasure_rewrites_the_listing(
    store: Any, memory: Memory, project: str
) -> None:
    m = message("Atlas started at Acme.\nMaya lives in Galway.", id="mx", source="chat:atlas")
    messages, passages = with_passages(m, limit=30)
    store.put_messages(project, messages, passages)
    store.put_facts(project, [fact("Atlas", "works at", "Acme", id="fx")])
    detail = bodies.message_with_passages(memory.message_with_passages(project, "mx"))
    assert detail["message"]["content"] == m.content
    assert [(p["start"], p["end"]) for p in detail["passages"]] == [
        (p.start, p.end) for p in passages
    ]
    with pytest.raises(NotFound):
        bodies.message_with_passages(memory.message_with_passages(project, "missing"))
    with pytest.raises(NotFound):
        bodies.message_with_passages(memory.message_with_passages(unique("other"), "mx"))
    memory.erase_now(project, "Atlas")
    listed = messages_of(memory, project)
    assert [x["id"] for x in listed] == ["mx"]
    assert "Atlas" not in listed[0]["content"]
    # The source named the entity: rewritten, and the old one no longer finds it.
    assert listed[0]["source"] != "chat:atlas"
    assert messages_of(memory, project, source="chat:atlas") == []


def test_bad_cursors_and_limits_are_refused(store: Any, memory: Memory, project: str) -> None:
    seed_facts(store, project)
    page = bodies.entity_list(memory.list_entities(project, None, 2, None))
    with pytest.raises(InvalidRequest):
        bodies.message_list(
            memory.list_messages(project, None, None, 2, page["next_cursor"])
        )  # another route's
    for bad in ("!!", "e30", "W10", "WyJlbnRpdGllcyIsMV0"):
        with pytest.raises(InvalidRequest):
            bodies.entity_list(memory.list_entities(project, None, 2, bad))
    for limit in (0, 101):
        with pytest.raises(InvalidRequest):
            bodies.entity_list(memory.list_entities(project, None, limit, None))


def test_the_neighbourhood_walks_one_or_two_hops(store: Any, memory: Memory, project: str) -> None:
    seed_facts(store, project)
    store.put_facts(project, [fact("Acme Corp", "is based in", "Dublin", id="l7")])
    one = bodies.neighbourhood(memory.neighbourhood(project, "atlas", 1))
    assert one["entity"] == "atlas"
    assert {e["id"] for e in one["edges"]} == {"l1", "l2", "l3"}
    nodes = {n["id"]: n for n in one["nodes"]}
    assert nodes["e:atlas"]["name"] == "Atlas" and nodes["e:atlas"]["hop"] == 0
    assert nodes["v:l3"] == {"id": "v:l3", "key": None, "name": "41", "kind": "value", "hop": 1}
    two = bodies.neighbourhood(memory.neighbourhood(project, "Atlas", 2))
    assert {e["id"] for e in two["edges"]} == {"l1", "l2", "l3", "l7"}
    assert next(e for e in two["edges"] if e["id"] == "l7")["hop"] == 2
    assert {n["id"] for n in two["nodes"]} >= {"e:dublin", "e:acme corp", "e:maya okafor"}
    assert bodies.neighbourhood(memory.neighbourhood(unique("other"), "atlas", 2))["edges"] == []
    assert normalize_name("Atlas") == two["entity"]
