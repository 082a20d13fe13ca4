"""A user's pages on every store: the facts with one subject and the aliases, a page at
a time, hold the shared memory and the user's own in one order, each item once,
whatever the cursor (items of both partitions interleave), and never another user's."""

from __future__ import annotations

from typing import Any

from taisce.domain.aliases import MergeRequest
from taisce.domain.controls import Limits
from taisce.domain.ingest import FactsRequest
from taisce.domain.scope import scope
from taisce.service.memory import Memory
from tests.contract.factories import unique


def _store(memory: Memory, where: str, facts: list[dict[str, Any]]) -> None:
    given = [{"predicate": "is", "source_role": "user", **f} for f in facts]
    memory.store_facts(where, FactsRequest.model_validate({"facts": given}))


def _all_pages(read: Any) -> list[Any]:
    found: list[Any] = []
    cursor = None
    while True:
        items, cursor = read(cursor)
        found += items
        if cursor is None:
            return found


def test_a_users_pages_hold_shared_and_own_memory_in_order(store: Any) -> None:
    memory = Memory(store, Limits())
    project = unique("user-pages")
    shared, alice, bob = scope(project, None), scope(project, "alice"), scope(project, "bob")
    # One request each, so storing order interleaves the partitions.
    for n in range(9):
        where = (shared, alice, bob)[n % 3]
        _store(memory, where, [{"id": f"f{n}", "subject": "Atlas", "object": f"v{n}"}])

    def facts(where: str) -> list[str]:
        def read(cursor: str | None) -> tuple[list[str], str | None]:
            page = memory.list_facts(where, "Atlas", 2, cursor)
            return [f.id for f in page.facts], page.next_cursor

        return _all_pages(read)

    assert facts(alice) == ["f0", "f1", "f3", "f4", "f6", "f7"]
    assert facts(shared) == ["f0", "f3", "f6"]
    # Aliases: shared b, d, f and Alice's own c, e, g (Bob's h), all into Atlas.
    for where, names in ((shared, "bdf"), (alice, "ceg"), (bob, "h")):
        _store(memory, where, [{"subject": f"{c}name", "object": "x"} for c in names])
        for c in names:
            memory.merge_entities(where, MergeRequest(alias=f"{c}name", into="Atlas"))

    # One name aliased in both: Alice's own alias of it wins in her view.
    _store(memory, alice, [{"subject": "zname", "object": "x"}])
    memory.merge_entities(alice, MergeRequest(alias="zname", into="Atlas"))
    _store(
        memory, shared, [{"subject": "zname", "object": "y"}, {"subject": "Cork", "object": "z"}]
    )
    memory.merge_entities(shared, MergeRequest(alias="zname", into="Cork"))

    def aliases(where: str) -> list[str]:
        def read(cursor: str | None) -> tuple[list[str], str | None]:
            page = memory.alias_page(where, 2, cursor)
            return [f"{a.alias_key}>{a.into_key}" for a in page.aliases], page.next_cursor

        return _all_pages(read)

    assert aliases(alice) == [f"{c}name>atlas" for c in "bcdefg"] + ["zname>atlas"]
    assert aliases(shared) == [f"{c}name>atlas" for c in "bdf"] + ["zname>cork"]
    assert aliases(bob) == [f"{c}name>atlas" for c in "bdfh"] + ["zname>cork"]
    # Each merge moved its own partition's facts into Atlas: Alice sees the shared
    # ones moved (b, d, f) and her own (c, e, g), the shared memory only its own.
    assert len(facts(alice)) == 6 + 3 + 3 + 1 and len(facts(shared)) == 3 + 3
