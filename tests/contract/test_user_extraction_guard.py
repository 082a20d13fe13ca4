"""Extraction in a user's partition, on every store: the facts a worker draws from a
user's message resolve names as the user's requests do (a shared alias applies), and
an extraction of a message recorded before the user's erasure, finishing after it,
writes nothing into the erased scope (the user's tombstone is checked in the write),
while a message recorded after the erasure is extracted as any other."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from taisce.domain.aliases import MergeRequest
from taisce.domain.controls import Limits
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.scope import scope
from taisce.service.memory import Memory
from tests.contract.factories import fact, unique


class _Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 5, 6, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def _message(memory: Memory, where: str, message_id: str) -> Any:
    sent = [{"id": message_id, "role": "user", "content": "Bob moved to Cork."}]
    memory.store_messages(where, MessagesRequest.model_validate({"messages": sent}))
    return memory.store.message(where, message_id)


def test_a_users_extraction_applies_shared_aliases_and_stops_at_their_erasure(
    store: Any,
) -> None:
    memory = Memory(store, Limits(), clock=_Clock())
    project = unique("user-extraction")
    alice = scope(project, "alice")
    shared = [
        {"subject": "Robert", "predicate": "works at", "object": "Acme", "source_role": "user"},
        {"subject": "Bob", "predicate": "plays", "object": "chess", "source_role": "user"},
    ]
    memory.store_facts(project, FactsRequest.model_validate({"facts": shared}))
    memory.merge_entities(project, MergeRequest(alias="Bob", into="Robert"))
    # The worker holds the partition by its name, as its marks give it.
    before = _message(memory, alice, "m1")
    memory.store_extracted_facts(str(alice), [fact("Bob", "moved to", "Cork", id="x1")], before)
    # In her own partition, under the shared alias's entity.
    moved = [f.id for f in store.facts_with_subject(str(alice), "robert")]
    assert moved == ["x1"]
    assert "x1" not in [f.id for f in store.facts_with_subject(project, "robert")]
    # Another message of hers, its extraction still running when she is erased.
    late = _message(memory, alice, "m2")
    status = memory.erase_user(alice)
    if status.status == "pending":  # completed by the worker on DynamoDB
        done = memory.complete_erasure(project, status.id)
        assert done is not None and done.status == "done"
    for made in (fact("Alice", "likes", "tea", id="x2"), fact("Alice", "lives in", "Cork")):
        # (a single-valued predicate: the batch that closes what it contradicts)
        memory.store_extracted_facts(str(alice), [made], late)
    assert store.facts_with_subject(alice, "alice") == []
    assert store.facts_with_subject(str(alice), "robert") == []
    # She comes back: what she says now is extracted as before.
    again = _message(memory, alice, "m3")
    memory.store_extracted_facts(str(alice), [fact("Alice", "likes", "coffee", id="x3")], again)
    assert [f.id for f in store.facts_with_subject(alice, "alice")] == ["x3"]
