"""The recall's reads sent directly (adapters/dynamodb/reads.py): their answers must be
the client's, on moto's server over HTTP, and anything but a clean answer must go
through the client (its retries, errors and parsing)."""

from __future__ import annotations

import json
import zlib
from typing import Any

import pytest
import urllib3
from botocore.exceptions import ClientError

from taisce.adapters.dynamodb.client import client_config
from taisce.adapters.dynamodb.reads import DirectReads, usable
from taisce.adapters.dynamodb.store import DynamoDbStore
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


class _NoFallback:
    """A client that must not be asked: the direct read was to be answered as sent."""

    def query(self, **_: Any) -> dict[str, Any]:
        raise AssertionError("the direct read was refused and fell back to the client")


def test_the_signature_is_what_a_service_that_checks_it_accepts() -> None:
    # moto's server checks SigV4 signatures (and IAM) once INITIAL_NO_AUTH_ACTION_COUNT
    # requests have passed: the first five set up a user, its key, a role and their
    # policies. Then a direct read signed with the user's key, and one with a role's
    # temporary credentials (a session token, as Lambda's role has), are answered as
    # sent; one signed with a wrong secret is refused (so the check is really made).
    import boto3

    from tests.moto_server import launch_moto, table_definition

    process, endpoint, _ = launch_moto({"INITIAL_NO_AUTH_ACTION_COUNT": "5"})
    everything = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}],
        }
    )
    trust = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}
            ],
        }
    )
    opened: list[Any] = []

    def client(service: str, key: str, secret: str, token: str | None = None) -> Any:
        made = boto3.session.Session(
            aws_access_key_id=key,
            aws_secret_access_key=secret,
            aws_session_token=token,
            region_name="us-east-1",
        ).client(service, endpoint_url=endpoint, config=client_config())
        opened.append(made)
        return made

    try:
        iam = client("iam", "testing", "testing")
        iam.create_user(UserName="reader")
        key = iam.create_access_key(UserName="reader")["AccessKey"]
        iam.put_user_policy(UserName="reader", PolicyName="all", PolicyDocument=everything)
        iam.create_role(RoleName="recall", AssumeRolePolicyDocument=trust)
        iam.put_role_policy(RoleName="recall", PolicyName="all", PolicyDocument=everything)
        user = client("dynamodb", key["AccessKeyId"], key["SecretAccessKey"])
        user.create_table(**table_definition(name="signed"))
        sts = client("sts", key["AccessKeyId"], key["SecretAccessKey"])
        role = sts.assume_role(RoleArn="arn:aws:iam::123456789012:role/recall", RoleSessionName="t")
        temporary = role["Credentials"]
        lambda_like = client(
            "dynamodb",
            temporary["AccessKeyId"],
            temporary["SecretAccessKey"],
            temporary["SessionToken"],
        )
        wrong = client("dynamodb", key["AccessKeyId"], "not-the-secret")
        query = {
            "TableName": "signed",
            "KeyConditionExpression": "PK = :pk",
            "ExpressionAttributeValues": {":pk": {"S": "P#signed#E#atlas"}},
        }
        answered = []
        for signer in (user, lambda_like, wrong):
            reads = _direct(signer)
            reads.client = _NoFallback()
            try:
                answered.append(reads.call("Query", query)["Count"] == 0)
            except AssertionError:
                answered.append(False)
            reads.close()
        assert answered == [True, True, False]
    finally:
        for made in opened:
            made.close()
        process.terminate()
        process.wait(timeout=10)
