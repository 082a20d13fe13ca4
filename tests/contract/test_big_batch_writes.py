"""Long messages on DynamoDB (moto's server): a message too long for one transaction
keeps its passages in pages (up to 64 a page) with one vector mark a page, written by
BatchWriteItem in parallel and then its claim. A maximum-size request (10 messages of
99,000 characters) was 540 BatchWriteItem in a row, then 990 in 5 waves; it is now a
few dozen calls in a few waves."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from taisce.adapters.dynamodb.codec import PAGE_PASSAGES
from taisce.adapters.dynamodb.keys import message_pk, vector_mark_pks
from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.domain.controls import Limits
from taisce.domain.ingest import MessagesRequest
from taisce.service.memory import Memory
from tests.contract.factories import unique
from tests.contract.test_dynamodb_costs import Meter
from tests.moto_server import MotoDynamoDb

LONGEST = 99_000
SENTENCE = "Atlas wrote a long note about the plan, the budget and the Galway office today. "


@pytest.fixture
def metered(moto: MotoDynamoDb) -> Iterator[tuple[Memory, Meter, DynamoDbStore]]:
    store = DynamoDbStore(moto.table, client=moto.client(), direct_reads=False)
    # 100 ms before each call: waves are told apart by the code's order, not the load
    # (with 20 ms, a loaded CI machine started a thread of one wave after the others
    # had ended, and counted 8 waves for 6).
    meter = Meter(store.client, latency=0.1)
    yield Memory(store, Limits(bundle_characters=16_000, max_rows=200)), meter, store
    store.client.close()


def _partition(store: DynamoDbStore, pk: str) -> list[dict]:
    return list(
        store.table._query(
            KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": {"S": pk}}
        )
    )


def test_long_messages_are_written_in_pages_in_a_few_parallel_waves(
    metered: tuple[Memory, Meter, DynamoDbStore],
) -> None:
    memory, meter, store = metered
    project = unique("long-batch")
    content = (SENTENCE * (LONGEST // len(SENTENCE) + 1))[:LONGEST].strip()
    request = MessagesRequest.model_validate(
        {"messages": [{"role": "user", "content": content} for _ in range(3)]}
    )
    ids = memory.store_messages(project, request)
    assert len(ids) == 3
    passages = store.passages_of(project, ids[0])
    assert len(passages) > 1_000
    # Each message: its pages, their marks and its listing item, 25 a BatchWriteItem;
    # a passage an item and a mark a passage was 3 x 2 x 1,222 items (294 calls).
    pages = -(-len(passages) // PAGE_PASSAGES)
    assert meter.sent["BatchWriteItem"] <= -(-3 * (2 * pages + 2) // 25) + 3, meter.sent
    assert meter.round_trips() <= 30, meter.sent
    assert meter.waves() <= 6, (meter.waves(), meter.sent)
    # The message's partition: its claim and its pages.
    items = _partition(store, message_pk(project, ids[0]))
    assert len(items) == 1 + pages
    assert "".join(p.quote for p in passages).replace(" ", "") == content.replace(" ", "")
    # One vector mark a page, over the project's mark partitions.
    marks = [i for pk in vector_mark_pks(project) for i in _partition(store, pk)]
    assert len(marks) == 3 * pages
    assert {m["kind"]["S"] for m in marks} == {"page"}
    assert sum(len(m["ps"]["L"]) for m in marks) == 3 * len(passages)
    assert len({m["PK"]["S"] for m in marks}) > 1


def test_a_message_that_fits_one_transaction_keeps_a_passage_an_item(
    metered: tuple[Memory, Meter, DynamoDbStore],
) -> None:
    memory, meter, store = metered
    project = unique("short-batch")
    content = SENTENCE * 10
    request = MessagesRequest.model_validate({"messages": [{"role": "user", "content": content}]})
    (message_id,) = memory.store_messages(project, request)
    passages = store.passages_of(project, message_id)
    assert len(passages) == 10
    assert len(_partition(store, message_pk(project, message_id))) == 1 + 10
    assert meter.sent["TransactWriteItems"] == 1 and "BatchWriteItem" not in meter.sent
