"""The DynamoDB store's batches, failed at every call they make: nothing half-stored,
and a retry with the same ids stores them once.

A batch larger than one transaction is written in several, undone if a later one
fails (test_dynamodb_store.py fails one chosen call); here the Nth call of the batch
fails, for every N, on moto's server over HTTP: reads, transactions, and the calls
made while planning contradictions. The failure comes from botocore's `before-call`
event, so the adapter meets it exactly as botocore raises it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest

from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.domain.ingest import split_passages
from taisce.domain.names import normalize_name
from tests.contract.factories import fact, message, unique
from tests.moto_server import MotoDynamoDb

ROLES = ("user", "assistant", "system", "tool")


class FailNth:
    """Fails the Nth DynamoDB call of the client (any operation); counts them all."""

    def __init__(self, client: Any) -> None:
        self.calls = 0
        self.fail_at: int | None = None
        # The operation and update expression of the call failed (None until one is).
        self.failed: tuple[str, str | None] | None = None
        client.meta.events.register("before-call.dynamodb.*", self._before)

    def _before(self, model: Any = None, params: Any = None, **_: Any) -> Any:
        self.calls += 1
        if self.calls != self.fail_at:
            return None
        # The request as serialised for the wire: its JSON body holds the expression.
        body = params.get("body", b"") if isinstance(params, dict) else b""
        found = json.loads(body).get("UpdateExpression") if body else None
        self.failed = (getattr(model, "name", "?"), found)
        error = {"Error": {"Code": "InternalServerError", "Message": "injected by the test"}}
        return type("Http", (), {"status_code": 500, "headers": {}})(), error


def _normal(item: dict[str, Any]) -> dict[str, Any] | None:
    """An item as what it means. An undo leaves a name's count item at zero, as a
    deleted fact does, rather than deleting it: a zero count names nothing
    (known_names needs one above zero), so zero counts, and a name item left with
    none, are dropped here."""
    if item["PK"]["S"].endswith("#ENTS"):
        # The entity listing (docs/dynamodb.md, "Listing partitions") names an entity only
        # while its name item counts a live fact, as a name item at zero names nothing:
        # an undo leaves both, so both are compared through the name item.
        return None
    if item["SK"] != {"S": "N"}:
        return item
    kept = {k: v for k, v in item.items() if not (k.startswith("c_") and v == {"N": "0"})}
    return kept if any(k.startswith("c_") for k in kept) else None


def items_of(store: DynamoDbStore, project: str) -> list[str]:
    """Every stored record of the project, as text, in a stable order (read through
    the observer's client, so the reads are neither counted nor failed).

    Work marks (the P#<p>#WORK partition, and P#<p>#WORK#<n> for vector marks) are left
    out: an undone batch leaves them on purpose, since a mark without its record only
    costs the worker a rebuild or an embedding it did not need (docs/dynamodb.md, "Work
    marks"). So are the project's entity listing items (P#<p>#L#E#<n>): an undo cannot
    know whether another fact names the entity, and a listed key whose name item is
    gone is skipped by readers."""
    found: list[str] = []
    for page in store.client.get_paginator("scan").paginate(
        TableName=store.table_name,
        FilterExpression="contains(PK, :p)",
        ExpressionAttributeValues={":p": {"S": project}},
        ConsistentRead=True,
    ):
        found += [
            repr(sorted(n.items()))
            for i in page["Items"]
            if not re.search(r"#WORK(#\d+)?$", i["PK"]["S"])
            and "#L#E#" not in i["PK"]["S"]
            and (n := _normal(i))
        ]
    return sorted(found)


# (name, seed, batch): a batch spans at least two transactions.
def _links(project: str) -> tuple[Callable[[DynamoDbStore], None], Callable[..., None]]:
    seed = [fact("Atlas", "works at", "Acme", id="kept")]
    batch = [fact("Atlas", "knows", f"Person {n}", id=f"k{n}", role="tool") for n in range(30)]
    return (lambda s: s.put_facts(project, seed)), (lambda s: s.put_facts(project, batch))


def _closing(project: str) -> tuple[Callable[[DynamoDbStore], None], Callable[..., None]]:
    seed = [fact("Atlas", "lives in", "Dublin", id="home")]
    batch = [
        fact("Atlas", "lives in", "Cork", id="moved", valid_from="2026-01-01T00:00:00Z"),
        *[fact("Atlas", "met", f"Person {n}", id=f"m{n}") for n in range(30)],
    ]
    return (lambda s: s.put_facts(project, seed)), (lambda s: s.put_facts(project, batch))


def _messages(project: str) -> tuple[Callable[[DynamoDbStore], None], Callable[..., None]]:
    seed_message = message("Already here.", id="m0")
    long = [
        message(f"Message {n}. " + "Atlas met Bea at the office again. " * 40, id=f"m{n}")
        for n in range(1, 4)
    ]
    batch = [*long, seed_message]

    def seed(s: DynamoDbStore) -> None:
        s.put_messages(project, [seed_message], split_passages(seed_message))

    def write(s: DynamoDbStore) -> None:
        s.put_messages(project, batch, [p for m in batch for p in split_passages(m)])

    return seed, write


CASES = {"facts": _links, "closing facts": _closing, "messages": _messages}


def _read(store: DynamoDbStore, project: str) -> tuple[Any, ...]:
    keys = [normalize_name(n) for n in ["Atlas", "Acme", *[f"Person {n}" for n in range(30)]]]
    return (
        list(store.facts_about(project, keys, ROLES, 10_000)),
        store.known_names(project, keys, ROLES),
        [store.passages_of(project, f"m{n}") for n in range(4)],
    )


def _tables(
    moto: MotoDynamoDb, name: str, code: Any, observer: Any
) -> tuple[DynamoDbStore, DynamoDbStore]:
    """The code's store and the test's observer, through these clients, on a table of
    their own: the test looks at a project by Scan, and a Scan reads the whole table (on
    the shared one, every other test's items; on one table for every attempt, all the
    attempts before it: two thirds of this file's time)."""
    table = moto.table_named(name).table
    return (
        DynamoDbStore(table, client=code, direct_reads=False),
        DynamoDbStore(table, client=observer),
    )


@pytest.mark.parametrize("case", CASES)
def test_a_batch_failing_at_any_call_is_all_or_nothing(
    moto_dynamodb: MotoDynamoDb, case: str
) -> None:
    slug = case.replace(" ", "-")
    # The failures are injected into the code's client; the observer's Scans are the
    # test's look at the table, recorded apart (tests/conftest.py).
    clients = moto_dynamodb.client(), moto_dynamodb.observer_client()
    dynamo, observer = _tables(moto_dynamodb, f"taisce-batch-faults-{slug}", *clients)
    faults = FailNth(dynamo.client)

    clean = unique("clean")
    seed, write = CASES[case](clean)
    seed(dynamo)
    faults.calls = 0
    write(dynamo)
    calls = faults.calls
    expected = _read(observer, clean)
    expected_items = len(items_of(observer, clean))
    assert calls >= 2  # more than one call: there is a "part-way"

    for n in range(1, calls + 1):
        dynamo, observer = _tables(moto_dynamodb, f"taisce-batch-faults-{slug}-{n}", *clients)
        project = unique(f"fail{n}")
        seed, write = CASES[case](project)
        seed(dynamo)
        before = items_of(observer, project)
        faults.calls, faults.fail_at, faults.failed = 0, n, None
        try:
            write(dynamo)
        except Exception as error:
            assert "injected" in str(error)
            faults.fail_at = None
            assert items_of(observer, project) == before, f"call {n} of {calls} left a part"
        else:
            # Only the best-effort give-back of unused message positions (a duplicate's,
            # dynamodb/messages.py, _release_positions) may fail without failing the batch:
            # the batch is stored, the counter merely stays ahead (a gap, no loss).
            faults.fail_at = None
            assert faults.failed == ("UpdateItem", "SET #n = :keep"), faults.failed
            assert _read(observer, project) == expected
            continue
        write(dynamo)  # the retry, same ids
        assert _read(observer, project) == expected, f"retry after call {n}"
        assert len(items_of(observer, project)) == expected_items
        write(dynamo)  # a duplicate delivery
        assert _read(observer, project) == expected
        assert len(items_of(observer, project)) == expected_items
