"""DynamoDB throttling: the adapter retries with jittered backoff and gives up bounded.

On a client the adapter makes itself (its own retry configuration), pointed at moto's
server: throttled answers are injected before sending (a botocore hook, so botocore's
parser and retry handler see them as real ones) and the calls let through are answered
by moto over HTTP; botocore's Stubber plays a BatchGetItem that leaves keys
unprocessed, DynamoDB's way of throttling part of a batch.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError
from botocore.stub import Stubber

from taisce.adapters.dynamodb import client as dynamodb_client
from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.credentials import new_secret, secret_hash
from taisce.domain.model import ExtractionFailure
from tests.contract.factories import credential, fact
from tests.moto_server import MotoDynamoDb, shared_moto

THROTTLED = "ProvisionedThroughputExceededException"


@pytest.fixture
def moto() -> MotoDynamoDb:
    return shared_moto()


@pytest.fixture
def store(moto: MotoDynamoDb, monkeypatch: pytest.MonkeyPatch) -> Iterator[DynamoDbStore]:
    for name, value in moto.env.items():
        monkeypatch.setenv(name, value)
    opened = DynamoDbStore(moto.table, endpoint_url=moto.endpoint)
    yield opened
    opened.close()


class _Raw:
    """The raw body botocore reads a response from."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.body


def throttle(store: DynamoDbStore, operation: str, times: int) -> list[int]:
    """Answer the first `times` sends of `operation` as DynamoDB does when throttled (HTTP
    400, ProvisionedThroughputExceededException); later sends reach moto. Returns the
    list the hook counts sends in. The answer goes through botocore's parsing and its
    retry handler, as a real one does."""
    sent: list[int] = []

    def answer(request: Any, **_: Any) -> AWSResponse | None:
        sent.append(1)
        if len(sent) > times:
            return None
        body = json.dumps(
            {
                "__type": f"com.amazonaws.dynamodb.v20120810#{THROTTLED}",
                "message": "The level of configured provisioned throughput was exceeded",
            }
        ).encode()
        headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": "thr"}
        return AWSResponse(request.url, 400, headers, _Raw(body))

    store.client.meta.events.register(f"before-send.dynamodb.{operation}", answer)
    return sent


def test_a_throttled_read_is_retried_by_the_client_and_then_answers(
    moto: MotoDynamoDb, store: DynamoDbStore
) -> None:
    project = f"thr-{uuid.uuid4().hex[:8]}"
    secret = new_secret()
    moto.store().add_credential(credential(project), secret_hash(secret))
    sent = throttle(store, "GetItem", times=2)
    assert store.project_for(secret_hash(secret)) == project
    assert len(sent) == 3  # two throttled answers, then moto's


def test_throttling_that_does_not_stop_fails_after_a_bounded_number_of_tries(
    store: DynamoDbStore,
) -> None:
    sent = throttle(store, "GetItem", times=100)
    with pytest.raises(ClientError) as refused:
        store.project_for("0" * 64)
    assert refused.value.response["Error"]["Code"] == THROTTLED
    # The first try and 4 retries: botocore's `max_attempts: 4` counts retries.
    assert len(sent) == 5


def test_keys_a_batch_read_leaves_unprocessed_are_read_again_after_a_pause(
    store: DynamoDbStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A throttled BatchGetItem answers part of the keys and returns the rest as
    UnprocessedKeys (no error, so the client does not retry): the adapter does."""
    waits: list[int] = []
    backoff = dynamodb_client.backoff
    monkeypatch.setattr(dynamodb_client, "backoff", lambda a: (waits.append(a), backoff(a)))
    keys = [{"PK": {"S": f"K#{n}"}, "SK": {"S": "N"}} for n in range(3)]
    table = store.table_name
    with Stubber(store.client) as stub:
        stub.add_response(
            "batch_get_item",
            {
                "Responses": {table: [keys[0]]},
                "UnprocessedKeys": {table: {"Keys": keys[1:], "ConsistentRead": True}},
            },
        )
        stub.add_response(
            "batch_get_item",
            {"Responses": {table: []}, "UnprocessedKeys": {table: {"Keys": keys[2:]}}},
        )
        stub.add_response("batch_get_item", {"Responses": {table: keys[1:]}})
        found = store.table._batch_get(keys)
        stub.assert_no_pending_responses()
    assert sorted(k["PK"]["S"] for k in found) == ["K#0", "K#1", "K#2"]
    assert waits == [0, 1]


def test_a_transaction_cancelled_by_throttling_is_retried_with_jittered_backoff(
    moto: MotoDynamoDb, store: DynamoDbStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DynamoDB cancels a whole transaction when one of its items is throttled; the
    client does not retry that, the adapter does (with a jittered pause), and the batch
    is then stored once."""
    waits: list[int] = []
    backoff = dynamodb_client.backoff
    monkeypatch.setattr(dynamodb_client, "backoff", lambda a: (waits.append(a), backoff(a)))
    project = f"thr-{uuid.uuid4().hex[:8]}"
    f = fact("Atlas", "knows", "Maya Okafor")
    real = moto.shared_client
    cancelled = 0

    def throttle_first_transactions(**kwargs: Any) -> Any:
        nonlocal cancelled
        if cancelled < 2:
            cancelled += 1
            reasons = [{"Code": "ThrottlingError"}] + [{"Code": "None"}] * (
                len(kwargs["TransactItems"]) - 1
            )
            raise ClientError(
                {
                    "Error": {"Code": "TransactionCanceledException", "Message": "throttled"},
                    "CancellationReasons": reasons,
                },
                "TransactWriteItems",
            )
        return real.transact_write_items(**kwargs)

    monkeypatch.setattr(store.client, "transact_write_items", throttle_first_transactions)
    store.put_facts(project, [f])
    assert cancelled == 2 and waits == [0, 1]
    assert [s.id for s in moto.store().facts_with_subject(project, "atlas")] == [f.id]


def throttle_transactions(
    moto: MotoDynamoDb, store: DynamoDbStore, monkeypatch: pytest.MonkeyPatch, times: int
) -> list[int]:
    """Cancel the next `times` transactions of the store as DynamoDB does when one of
    their items is throttled; the rest reach moto. Returns the pauses taken."""
    waits: list[int] = []
    monkeypatch.setattr(dynamodb_client, "backoff", waits.append)
    real = moto.shared_client
    left = times

    def cancel_then_send(**kwargs: Any) -> Any:
        nonlocal left
        if left > 0:
            left -= 1
            reasons = [{"Code": "None"}] * (len(kwargs["TransactItems"]) - 1)
            raise ClientError(
                {
                    "Error": {"Code": "TransactionCanceledException", "Message": "throttled"},
                    "CancellationReasons": [{"Code": "ThrottlingError"}, *reasons],
                },
                "TransactWriteItems",
            )
        return real.transact_write_items(**kwargs)

    monkeypatch.setattr(store.client, "transact_write_items", cancel_then_send)
    return waits


def test_a_throttled_credential_is_stored_and_revoked_not_called_taken_or_gone(
    moto: MotoDynamoDb, store: DynamoDbStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancellation for throttling is not a failed condition: the credential is sent
    again and stored, not refused as "already stored"; its revocation likewise is sent
    again and happens, not answered "revoked meanwhile"."""
    project = f"thr-{uuid.uuid4().hex[:8]}"
    made = credential(project)
    hashed = secret_hash(new_secret())
    waits = throttle_transactions(moto, store, monkeypatch, 1)
    store.add_credential(made, hashed)
    assert store.project_for(hashed) == project and waits == [0]
    with pytest.raises(ValueError, match="already stored"):
        store.add_credential(made, hashed)
    waits = throttle_transactions(moto, store, monkeypatch, 1)
    assert store.revoke_credential(made.id, "2026-01-02T00:00:00Z") is True
    assert store.project_for(hashed) is None and waits == [0]
    assert store.revoke_credential(made.id, "2026-01-03T00:00:00Z") is False


def test_a_throttled_fact_deletion_and_extraction_record_are_sent_again(
    moto: MotoDynamoDb, store: DynamoDbStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = f"thr-{uuid.uuid4().hex[:8]}"
    f = fact("Atlas", "knows", "Maya Okafor")
    store.put_facts(project, [f])
    waits = throttle_transactions(moto, store, monkeypatch, 1)
    assert store.delete_fact(project, f.id) is True
    assert moto.store().facts_with_subject(project, "atlas") == [] and waits == [0]

    failure = ExtractionFailure(project, "m1", "model timed out", 3, "2026-01-01T00:00:00Z")
    waits = throttle_transactions(moto, store, monkeypatch, 1)
    store.finish_extraction(project, "m1", failure)
    assert store.failed_extractions(project) == [failure] and waits == [0]
    waits = throttle_transactions(moto, store, monkeypatch, 1)
    assert store.replay_extractions(project) == [failure] and waits == [0]
    assert store.failed_extractions(project) == []
    assert store.pending_extractions(project, 10) == ["m1"]
