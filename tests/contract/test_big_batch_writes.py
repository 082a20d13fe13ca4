"""Long messages on DynamoDB (moto's server): a message too long for one transaction is
written as its items and marks, then its claim; a batch of them goes out in a few waves
of parallel calls, not one BatchWriteItem after another (a maximum-size request, 10
messages of 99,000 characters, was 540 in a row), and its passages' vector marks are
spread over the project's mark partitions rather than one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest

from taisce.adapters.dynamodb.keys import VECTOR_MARK_SHARDS, vector_mark_pks
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
    # 20 ms before each call: waves are told apart by the code's order, not the load.
    meter = Meter(store.client, latency=0.02)
    yield Memory(store, Limits(bundle_characters=16_000, max_rows=200)), meter, store
    store.client.close()


def test_long_messages_are_written_in_a_few_parallel_waves(
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
    writes = meter.sent["BatchWriteItem"]
    assert writes >= 3 * 2 * 600 // 25  # each message's passages and their marks
    # Before: 3 x 53 BatchWriteItem one after another.
    assert meter.waves() <= 12, (meter.waves(), meter.sent)
    stored = store.passages_of(project, ids[0])
    assert "".join(p.quote for p in stored).replace(" ", "") == content.replace(" ", "")
    # The marks are spread over the mark partitions, none holding most of them.
    marks = Counter(
        i["PK"]["S"]
        for pk in vector_mark_pks(project)
        for i in store.table._query(
            KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": {"S": pk}}
        )
    )
    assert len(marks) == VECTOR_MARK_SHARDS
    assert max(marks.values()) < 2 * sum(marks.values()) / VECTOR_MARK_SHARDS
