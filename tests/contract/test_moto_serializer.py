"""The tests' moto server writes an item's plain attribute values out as they are
(tests/moto_server.py, _attribute_values_as_they_are): the same JSON as moto's own
serializer, checked on a server that serializes every value both ways and fails the
request on a difference, over every kind of attribute value and the operations that
return items; and the shortcut is really taken for a plain value (not for a binary one)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.moto_server import CHECK_SERIALIZER, MotoDynamoDb, _plain_value, start_moto

ITEM: dict[str, Any] = {
    "PK": {"S": "P#serializer"},
    "SK": {"S": "item"},
    "text": {"S": "Atlas works at Acme Corp ✓"},
    "empty": {"S": ""},
    "count": {"N": "-12.5e3"},
    "names": {"SS": ["atlas", "bea"]},
    "numbers": {"NS": ["1", "2.5"]},
    "flag": {"BOOL": False},
    "nothing": {"NULL": True},
    "nested": {
        "M": {
            "list": {"L": [{"S": "a"}, {"N": "1"}, {"M": {"deep": {"BOOL": True}}}]},
            "map": {"M": {}},
        }
    },
    "raw": {"B": b"\x00\x01binary"},
    "raws": {"BS": [b"one", b"two"]},
}


@pytest.fixture(scope="module")
def checking() -> Iterator[MotoDynamoDb]:
    moto = start_moto(table="taisce-serializer", env={CHECK_SERIALIZER: "1"})
    yield moto
    moto.stop()


def test_every_kind_of_value_reads_back_as_written(checking: MotoDynamoDb) -> None:
    client = checking.client()
    table = checking.table
    key = {"PK": ITEM["PK"], "SK": ITEM["SK"]}
    client.put_item(TableName=table, Item=ITEM)
    assert client.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"] == ITEM
    queried = client.query(
        TableName=table,
        KeyConditionExpression="PK = :p",
        ExpressionAttributeValues={":p": ITEM["PK"]},
    )
    assert queried["Items"] == [ITEM]
    batch = client.batch_get_item(RequestItems={table: {"Keys": [key]}})
    assert batch["Responses"][table] == [ITEM]
    updated = client.update_item(
        TableName=table,
        Key=key,
        UpdateExpression="SET #c = :c",
        ExpressionAttributeNames={"#c": "count"},
        ExpressionAttributeValues={":c": {"N": "7"}},
        ReturnValues="ALL_NEW",
    )
    assert updated["Attributes"] == {**ITEM, "count": {"N": "7"}}
    client.transact_write_items(
        TransactItems=[{"Put": {"TableName": table, "Item": {**key, "text": {"S": "moved"}}}}]
    )
    gone = client.delete_item(TableName=table, Key=key, ReturnValues="ALL_OLD")
    assert gone["Attributes"] == {**key, "text": {"S": "moved"}}


def test_only_plain_values_take_the_shortcut() -> None:
    plain = [v for k, v in ITEM.items() if k not in ("raw", "raws")]
    assert all(_plain_value(v) for v in plain)
    assert not _plain_value(ITEM["raw"]) and not _plain_value(ITEM["raws"])
    assert not _plain_value({"L": [{"S": "a"}, {"B": b"x"}]})
    assert not _plain_value({"S": "a", "N": "1"}) and not _plain_value({"N": 1})
