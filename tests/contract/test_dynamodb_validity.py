"""What only the DynamoDB adapter has to get right about closing facts: the closings
of a batch that spans transactions are undone with it, a fact closed or stored by
another writer meanwhile makes the batch plan again, and stored times compare as
times in a FilterExpression. On moto's server over HTTP, failures injected through
botocore's events as in test_dynamodb_store.py."""

from __future__ import annotations

from typing import Any

import pytest

from taisce.adapters.dynamodb.keys import entity_pk
from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.domain.filters import FactFilter
from taisce.domain.names import normalize_name
from tests.contract.factories import fact, unique
from tests.contract.test_dynamodb_store import fail_call
from tests.moto_server import MotoDynamoDb

T0 = "2020-01-01T00:00:00Z"
T1 = "2021-01-01T00:00:00Z"
T2 = "2022-01-01T00:00:00Z"


@pytest.fixture
def project() -> str:
    return unique("time")


def validity(store: DynamoDbStore, project: str, subject: str) -> dict[str, Any]:
    return {
        f.id: (f.valid_from, f.valid_to)
        for f in store.facts_with_subject(project, normalize_name(subject))
    }


def test_a_failed_later_transaction_undoes_the_closings_of_earlier_ones(
    dynamo: DynamoDbStore, project: str
) -> None:
    dynamo.put_facts(project, [fact("Ada", "lives in", "Gothenburg", id="g", valid_from=T0)])
    # The closing rides with the first fact; 60 more facts need a second transaction.
    batch = [fact("Ada", "lives in", "Cork", id="c", valid_from=T2)]
    batch += [fact(f"P{n}", "knows", f"Q{n}") for n in range(60)]
    fail_call(dynamo.client, "TransactWriteItems", "InternalServerError", on=lambda n: n == 2)
    with pytest.raises(Exception):  # noqa: B017 - the injected failure
        dynamo.put_facts(project, batch)
    assert validity(dynamo, project, "Ada") == {"g": (T0, None)}
    # Both copies were restored: the object side sees it open too.
    (copy,) = dynamo.facts_about(project, ["gothenburg"], ["user"], 10)
    assert copy.valid_to is None


def test_a_fact_closed_meanwhile_makes_the_batch_plan_again(
    dynamo: DynamoDbStore, moto: MotoDynamoDb, project: str
) -> None:
    other = DynamoDbStore(moto.table, client=moto.shared_client)
    dynamo.put_facts(project, [fact("Ada", "lives in", "Gothenburg", id="g", valid_from=T0)])
    meanwhile = fact("Ada", "lives in", "Oslo", id="o", valid_from=T1)

    def store_meanwhile(**_: Any) -> None:
        if "o" not in validity(other, project, "Ada"):
            other.put_facts(project, [meanwhile])

    dynamo.client.meta.events.register("before-call.dynamodb.TransactWriteItems", store_meanwhile)
    dynamo.put_facts(project, [fact("Ada", "lives in", "Cork", id="c", valid_from=T2)])
    # Planned again on what the other writer stored: one timeline, one open fact.
    assert validity(dynamo, project, "Ada") == {
        "g": (T0, T1),
        "o": (T1, T2),
        "c": (T2, None),
    }


def test_fact_times_are_stored_fixed_width_and_read_back_as_sent(
    dynamo: DynamoDbStore, project: str
) -> None:
    sent = fact("Ada", "knows", "Bo", valid_from=T0, recorded_at="2021-01-01T00:00:00.250000Z")
    dynamo.put_facts(project, [sent])
    item = dynamo.client.query(
        TableName=dynamo.table_name,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": entity_pk(project, "ada")}},
    )["Items"]
    copy = next(i for i in item if i["SK"]["S"].startswith("F#"))
    assert copy["vf"]["S"] == "2020-01-01T00:00:00.000000Z"
    assert copy["ra"]["S"] == "2021-01-01T00:00:00.250000Z"
    assert dynamo.facts_with_subject(project, "ada") == [sent]
    # "...:00Z" is earlier than "...:00.25Z" as a time, though not as text.
    late = FactFilter(recorded_after=T1)
    assert list(dynamo.facts_about(project, ["ada"], ["user"], 10, (), late)) == [sent]
