"""What a filtered listing costs on DynamoDB, counted on moto's server: a rare role
(`role=tool&limit=5`), or a search few entities match, is one Query per listing shard,
not one per page of items read (DynamoDB applies Limit before the filter)."""

from __future__ import annotations

from collections import Counter

from taisce.adapters.dynamodb.keys import LISTING_SHARDS
from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.domain.controls import Limits
from taisce.service.memory import Memory
from tests.contract.factories import fact, message, unique, with_passages

# The pending erasures' read that every listing makes beside its page.
PENDING_VIEW = 1


def counted(store: DynamoDbStore) -> Counter[str]:
    sent: Counter[str] = Counter()
    store.client.meta.events.register(
        "before-send.dynamodb", lambda event_name, **_: sent.update([event_name.split(".")[-1]])
    )
    return sent


def test_a_rare_role_is_listed_in_one_query_per_shard(dynamo: DynamoDbStore) -> None:
    project = unique("rare-role")
    for batch in range(3):
        made = [
            message(f"Message {batch}-{n}.", role="tool" if n == 7 else "user") for n in range(80)
        ]
        dynamo.put_messages(project, *with_passages(*made))
    memory = Memory(dynamo, Limits(bundle_characters=16_000, max_rows=200))
    sent = counted(dynamo)
    page = memory.list_messages(project, "tool", None, 5, None)
    assert [m.message.role for m in page.messages] == ["tool"] * 3
    assert page.next_cursor is None
    # With Limit 10 on the filtered Queries (as before), 27 Queries, most in a row.
    assert sent["Query"] <= LISTING_SHARDS + PENDING_VIEW, sent


def test_a_narrow_search_is_listed_in_one_query_per_shard(dynamo: DynamoDbStore) -> None:
    project = unique("narrow-search")
    facts = [fact(f"Person {n:03d}", "lives in", "Cork") for n in range(150)]
    facts += [fact("Xanthe Morrow", "lives in", "Cork"), fact("Xanthe Byrne", "likes", "tea")]
    dynamo.put_facts(project, facts)
    memory = Memory(dynamo, Limits(bundle_characters=16_000, max_rows=200))
    sent = counted(dynamo)
    page = memory.list_entities(project, "xanthe", 5, None)
    assert [e.key for e in page.entities] == ["xanthe byrne", "xanthe morrow"]
    assert sent["Query"] <= LISTING_SHARDS + PENDING_VIEW, sent
