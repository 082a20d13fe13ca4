"""The one TransactWriteItems of the DynamoDB adapter (adapters/dynamodb/client.py): each
caller's rule for a cancelled transaction, against a client that cancels as told."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from botocore.exceptions import ClientError

from taisce.adapters.dynamodb import client as dynamodb_client
from taisce.adapters.dynamodb.client import (
    ATTEMPTS,
    DROP_FAILED,
    DROP_FAILED_AT_ONCE,
    RESEND,
    Members,
    TableClient,
    cancellation,
)

FAILED = "ConditionalCheckFailed"
THROTTLED = "ThrottlingError"


def cancelled(*codes: str) -> ClientError:
    return ClientError(
        {
            "Error": {"Code": "TransactionCanceledException", "Message": "cancelled"},
            "CancellationReasons": [{"Code": c} for c in codes],
        },
        "TransactWriteItems",
    )


class Cancelling:
    """A botocore client stand-in: each call answers with the next error (None: done)."""

    def __init__(self, answers: Sequence[Exception | None]) -> None:
        self.answers = list(answers)
        self.sent: list[dict[str, Any]] = []
        self.meta = SimpleNamespace(events=SimpleNamespace(register=lambda *a, **k: None))

    def transact_write_items(self, **params: Any) -> dict[str, Any]:
        self.sent.append(params)
        answer = self.answers.pop(0) if self.answers else None
        if answer is not None:
            raise answer
        return {}


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    waits: list[int] = []
    monkeypatch.setattr(dynamodb_client, "backoff", waits.append)
    return waits


def table(answers: Sequence[Exception | None]) -> tuple[TableClient, Cancelling]:
    fake = Cancelling(answers)
    return TableClient("t", client=fake), fake


def ops(*names: str) -> list[dict[str, Any]]:
    return [{"Put": {"TableName": "t", "Item": {"PK": {"S": n}}}} for n in names]


def members(names: Sequence[str]) -> Members[str]:
    return Members(names, lambda given: (ops(*given), {n: n for n in range(len(given))}))


def test_cancellation_reads_the_reasons_once() -> None:
    reasons = cancellation(cancelled("None", FAILED, THROTTLED, "None"))
    assert reasons is not None
    assert reasons.failed_checks == {1}
    assert reasons.others == {THROTTLED}
    other = ClientError({"Error": {"Code": "ValidationException"}}, "TransactWriteItems")
    assert cancellation(other) is None


def test_resend_pauses_on_throttling_then_gives_up(pauses: list[int]) -> None:
    store, fake = table([cancelled(THROTTLED)] * (ATTEMPTS + 1))
    with pytest.raises(ClientError):
        store._transact(ops("a"), RESEND)
    assert len(fake.sent) == ATTEMPTS + 1
    assert pauses == list(range(ATTEMPTS))
    assert all(p["ReturnConsumedCapacity"] == "TOTAL" for p in fake.sent)


def test_resend_raises_a_failed_condition_at_once(pauses: list[int]) -> None:
    store, fake = table([cancelled(FAILED, THROTTLED)])
    with pytest.raises(ClientError):
        store._transact(ops("a", "b"), RESEND)
    assert len(fake.sent) == 1 and pauses == []


def test_resend_without_capacity_asks_for_none(pauses: list[int]) -> None:
    store, fake = table([cancelled(THROTTLED), None])
    store._transact(ops("a"), RESEND, consumed=False)
    assert len(fake.sent) == 2 and pauses == [0]
    assert all("ReturnConsumedCapacity" not in p for p in fake.sent)


def test_drop_failed_leaves_out_the_failed_member_and_pauses_only_for_other_reasons(
    pauses: list[int],
) -> None:
    store, fake = table([cancelled("None", FAILED, "None"), cancelled(THROTTLED, "None"), None])
    written = store._transact(members(["a", "b", "c"]), DROP_FAILED)
    assert written == ["a", "c"]
    assert [len(p["TransactItems"]) for p in fake.sent] == [3, 2, 2]
    assert pauses == [0]


def test_drop_failed_raises_a_reason_it_cannot_retry(pauses: list[int]) -> None:
    store, _ = table([cancelled(FAILED, "ValidationError")])
    with pytest.raises(ClientError):
        store._transact(members(["a", "b"]), DROP_FAILED)


def test_drop_failed_at_once_resends_without_a_pause_and_counts_afresh(
    pauses: list[int],
) -> None:
    answers = [cancelled(THROTTLED, "None")] * 2 + [cancelled(FAILED, "ValidationError")]
    answers += [cancelled(THROTTLED)] * ATTEMPTS + [None]
    store, fake = table(answers)
    written = store._transact(members(["a", "b"]), DROP_FAILED_AT_ONCE)
    assert written == ["b"]
    assert pauses == [0, 1, *range(ATTEMPTS)]
    assert len(fake.sent) == len(answers)


def test_every_member_failed_writes_nothing(pauses: list[int]) -> None:
    store, fake = table([cancelled(FAILED, FAILED)])
    assert store._transact(members(["a", "b"]), DROP_FAILED) == []
    assert len(fake.sent) == 1
