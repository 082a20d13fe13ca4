"""The recall's reads sent directly (adapters/dynamodb_reads.py): their answers must be
the client's, on moto's server over HTTP, and anything but a clean answer must go
through the client (its retries, errors and parsing)."""

from __future__ import annotations

import json
import zlib
from typing import Any

import pytest
import urllib3
from botocore.exceptions import ClientError

from taisce.adapters.dynamodb_reads import DirectReads, usable
from taisce.adapters.dynamodb_store import DynamoDbStore, client_config
from taisce.domain.names import normalize_name
from tests.contract.factories import fact, unique
from tests.moto_server import MotoDynamoDb


def _direct(client: Any) -> DirectReads:
    reads = DirectReads.of(client, client.meta.config)
    assert reads is not None
    return reads


def _item(pk: str, sk: str, **more: Any) -> dict[str, Any]:
    return {"PK": {"S": pk}, "SK": {"S": sk}, **more}


def test_direct_answers_equal_the_clients(moto: MotoDynamoDb) -> None:
    client = moto.client(client_config())
    reads = _direct(client)
    pk = f"P#{unique('direct')}#E#atlas"
    items = [
        _item(pk, f"F#{n:03d}", s={"S": 'Atlas "the" {"B": 1} ünïcode'}, qs={"N": str(n)})
        for n in range(7)
    ]
    items.append(_item(pk, "N", l={"L": [{"S": "a"}, {"N": "1"}]}, m={"M": {"k": {"BOOL": True}}}))
    for item in items:
        client.put_item(TableName=moto.table, Item=item)
    query = {
        "TableName": moto.table,
        "KeyConditionExpression": "PK = :pk AND begins_with(SK, :f)",
        "ExpressionAttributeValues": {":pk": {"S": pk}, ":f": {"S": "F#"}},
        "ConsistentRead": True,
        "Limit": 3,
    }
    # Page by page: items, counts and the key the next page starts from.
    start: dict[str, Any] | None = None
    pages = 0
    while True:
        extra = {"ExclusiveStartKey": start} if start else {}
        direct = reads.call("Query", {**query, **extra})
        through = client.query(**query, **extra)
        through.pop("ResponseMetadata")
        assert direct == through
        pages += 1
        start = direct.get("LastEvaluatedKey")
        if not start:
            break
    assert pages == 3
    keys = [{"PK": {"S": pk}, "SK": {"S": sk}} for sk in ("N", "F#000", "F#999")]
    batch = {"RequestItems": {moto.table: {"Keys": keys, "ConsistentRead": True}}}
    direct = reads.call("BatchGetItem", batch)
    through = client.batch_get_item(**batch)
    found = sorted(direct["Responses"][moto.table], key=lambda i: i["SK"]["S"])
    assert found == sorted(through["Responses"][moto.table], key=lambda i: i["SK"]["S"])
    assert found == [items[0], items[-1]]
    reads.close()
    client.close()


def test_an_error_goes_through_the_client_and_raises_as_it_does(moto: MotoDynamoDb) -> None:
    client = moto.client(client_config())
    sent: list[str] = []
    client.meta.events.register("before-send.dynamodb.Query", lambda **_: sent.append("Query"))
    reads = _direct(client)
    query = {
        "TableName": "no-such-table",
        "KeyConditionExpression": "PK = :pk",
        "ExpressionAttributeValues": {":pk": {"S": "x"}},
    }
    with pytest.raises(ClientError) as refused:
        reads.call("Query", query)
    assert refused.value.response["Error"]["Code"] == "ResourceNotFoundException"
    # The direct request was refused; the client's own request then raised.
    assert sent == ["Query"]
    reads.close()
    client.close()


def test_a_request_that_cannot_be_sent_goes_through_the_client(moto: MotoDynamoDb) -> None:
    client = moto.client(client_config())
    reads = _direct(client)
    # Nothing listens on the discard port: the connection is refused at once.
    reads._http = urllib3.connection_from_url("http://127.0.0.1:9", retries=False)
    pk = f"P#{unique('direct')}#E#atlas"
    client.put_item(TableName=moto.table, Item=_item(pk, "N"))
    batch = {"RequestItems": {moto.table: {"Keys": [{"PK": {"S": pk}, "SK": {"S": "N"}}]}}}
    assert reads.call("BatchGetItem", batch)["Responses"][moto.table] == [_item(pk, "N")]
    reads.close()
    client.close()


def test_only_a_clean_answer_is_taken_as_sent() -> None:
    body = json.dumps({"Items": [{"PK": {"S": 'a "B": b'}}], "Count": 1}).encode()
    crc = {"x-amz-crc32": str(zlib.crc32(body))}
    assert usable(200, crc, body)
    assert usable(200, {}, body)  # no checksum sent: nothing to check
    assert not usable(400, crc, body)
    assert not usable(500, crc, body)
    assert not usable(200, {"x-amz-crc32": str(zlib.crc32(body) ^ 1)}, body)
    binary = json.dumps({"Items": [{"b": {"B": "AAE="}}]}).encode()
    assert not usable(200, {}, binary)  # bytes once parsed: left to botocore


def test_the_store_sends_the_recall_reads_directly(moto: MotoDynamoDb) -> None:
    # Through the client's hooks nothing of the recall's reads is seen; with
    # direct_reads=False every one is. The answers are the same.
    project = unique("direct")
    writer = DynamoDbStore(moto.table, client=moto.client())
    facts = [fact("Atlas", "works at", "Acme Corp"), fact("Acme Corp", "is in", "Dublin")]
    writer.put_facts(project, facts)
    answers = []
    for direct in (True, False):
        client = moto.client(client_config())
        sent: list[str] = []
        client.meta.events.register("before-send.dynamodb", lambda sent=sent, **_: sent.append("x"))
        store = DynamoDbStore(moto.table, client=client, direct_reads=direct)
        keys = [normalize_name(n) for n in ("Atlas", "Acme Corp", "Nobody")]
        answers.append(
            (
                store.resolve_names(project, keys, ["user"]),
                store.known_names(project, keys, None),
                list(store.facts_about(project, keys, ["user"], 10)),
                store.pending_erasures(project),
            )
        )
        assert len(sent) == (0 if direct else 6)
        store.close()
        client.close()
    assert answers[0] == answers[1]
    assert answers[0][0] == {"atlas": "atlas", "acme corp": "acme corp"}
    assert answers[0][2] == [facts[0], facts[1]]
