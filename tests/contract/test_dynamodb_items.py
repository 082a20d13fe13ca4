"""The adapter's read answers lift their items out of DynamoDB's JSON
(adapters/dynamodb/items.py) instead of botocore's walk of the model: the answers must
be what botocore's own parsing gives, on moto's server over HTTP."""

from __future__ import annotations

from typing import Any

from taisce.adapters.dynamodb.items import lift_items
from taisce.adapters.dynamodb.store import DynamoDbStore
from tests.contract.factories import unique
from tests.moto_server import MotoDynamoDb


def _item(pk: str, sk: str, **more: Any) -> dict[str, Any]:
    return {"PK": {"S": pk}, "SK": {"S": sk}, **more}


def _pages(client: Any, query: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """Every page of a Query (LastEvaluatedKey, counts and capacity parsed too)."""
    pages, start = [], None
    while True:
        extra = {"ExclusiveStartKey": start} if start else {}
        reply = client.query(**query, **extra)
        pages.append(reply["Items"])
        assert reply["Count"] == len(reply["Items"])
        assert "ConsumedCapacity" in reply
        start = reply.get("LastEvaluatedKey")
        if not start:
            return pages


def test_lifted_answers_equal_botocores(moto: MotoDynamoDb) -> None:
    plain, lifted = moto.client(), moto.client()
    lift_items(lifted)
    lift_items(lifted)  # a second registration changes nothing
    pk = f"P#{unique('items')}#E#atlas"
    writer = moto.client()
    items = [
        _item(pk, f"F#{n:03d}", s={"S": 'Atlas "the" {"B": 1}'}, qs={"N": str(n)})
        for n in range(25)
    ]
    items.append(
        _item(
            pk,
            "N",
            c_user={"N": "3"},
            names={"L": [{"S": "Atlas"}, {"N": "-1.5"}]},
            m={"M": {"k": {"BOOL": True}, "z": {"NULL": True}, "ss": {"SS": ["a", "b"]}}},
        )
    )
    for item in items:
        writer.put_item(TableName=moto.table, Item=item)
    query = {
        "TableName": moto.table,
        "KeyConditionExpression": "PK = :pk",
        "ExpressionAttributeValues": {":pk": {"S": pk}},
        "Limit": 10,
        "ReturnConsumedCapacity": "TOTAL",
    }
    pages = _pages(lifted, query)
    assert pages == _pages(plain, query)
    assert [len(p) for p in pages] == [10, 10, 6]
    assert sorted(i["SK"]["S"] for p in pages for i in p) == sorted(i["SK"]["S"] for i in items)

    keys = [{"PK": {"S": pk}, "SK": {"S": sk}} for sk in ("N", "F#001", "F#missing")]
    request = {moto.table: {"Keys": keys, "ConsistentRead": True}}
    got = [c.batch_get_item(RequestItems=request)["Responses"][moto.table] for c in (plain, lifted)]
    assert sorted(got[0], key=lambda i: i["SK"]["S"]) == sorted(got[1], key=lambda i: i["SK"]["S"])
    assert len(got[1]) == 2
    for client in (plain, lifted, writer):
        client.close()


def test_a_binary_value_is_left_to_botocore(moto: MotoDynamoDb) -> None:
    # Binary is the one type whose parsed form (bytes) differs from its JSON (base64).
    lifted = moto.client()
    lift_items(lifted)
    pk = f"P#{unique('items')}#BIN"
    lifted.put_item(TableName=moto.table, Item=_item(pk, "X", b={"B": b"\x00\xffraw"}))
    reply = lifted.query(
        TableName=moto.table,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": pk}},
    )
    assert reply["Items"] == [_item(pk, "X", b={"B": b"\x00\xffraw"})]
    found = lifted.batch_get_item(
        RequestItems={moto.table: {"Keys": [{"PK": {"S": pk}, "SK": {"S": "X"}}]}}
    )
    assert found["Responses"][moto.table][0]["b"] == {"B": b"\x00\xffraw"}
    lifted.close()


def test_the_store_lifts_its_clients_reads(moto: MotoDynamoDb) -> None:
    # The store registers the lifting on the client it is given (and on its own): every
    # read that goes through the client (here all of them: the recall's reads are
    # otherwise sent directly, adapters/dynamodb/reads.py) is lifted.
    client = moto.client()
    store = DynamoDbStore(moto.table, client=client, direct_reads=False)
    seen: list[str] = []

    def lifted(customized_response_dict: dict[str, Any], **_: Any) -> None:
        seen.extend(customized_response_dict)

    # Registered after the store's handler, so it sees what that handler lifted.
    client.meta.events.register_last("before-parse.dynamodb.Query", lifted)
    client.meta.events.register_last("before-parse.dynamodb.BatchGetItem", lifted)
    project = unique("items")
    assert store.known_names(project, ["atlas"]) == set()
    assert list(store.facts_about(project, ["atlas"], ["user"], limit=10)) == []
    assert seen == ["Responses", "Items"]
    client.close()
