"""What only the DynamoDB adapter has to get right: its table, its keys, its transactions.

The shared contract (test_store.py) runs on it too; these tests add what DynamoDB's
limits make hard: batches larger than one transaction, failures between transactions,
conflicts, long messages, long names, key injectivity and lazy paging. They run on
moto's server over HTTP (tests/moto_server.py), with failures injected through
botocore's `before-call` event (a handler that returns a response short-circuits the
call), so the adapter meets the errors exactly as botocore raises them.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from taisce.adapters.dynamodb.client import TRANSACTION_ITEMS
from taisce.adapters.dynamodb.codec import item_size
from taisce.adapters.dynamodb.keys import entity_pk
from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.domain.ingest import split_passages
from taisce.domain.names import normalize_name
from taisce.local.routes import load_template
from tests.contract.factories import fact, message, placed, unique
from tests.moto_server import TEMPLATE, MotoDynamoDb

ALL_ROLES = ("user", "assistant", "system", "tool")


@pytest.fixture
def project() -> str:
    return unique("proj")


def about(store: DynamoDbStore, project: str, *names: str, roles=ALL_ROLES, limit=10_000):
    return list(store.facts_about(project, [normalize_name(n) for n in names], roles, limit))


class Calls:
    """Counts the HTTP requests a client sends, per operation (retries included)."""

    def __init__(self, client: Any) -> None:
        self.sent: Counter[str] = Counter()
        self.params: list[tuple[str, dict[str, Any]]] = []
        client.meta.events.register("before-send.dynamodb", self._send)
        client.meta.events.register("provide-client-params.dynamodb", self._params)

    def _send(self, request: Any, **_: Any) -> None:
        target = request.headers.get("X-Amz-Target", b"")
        name = target.decode() if isinstance(target, bytes) else target
        self.sent[name.rpartition(".")[2]] += 1

    def _params(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        self.params.append((model.name, params))

    def total(self) -> int:
        return sum(self.sent.values())


def fail_call(
    client: Any, operation: str, code: str, *, on: Callable[[int], bool], reasons=None
) -> list[int]:
    """Make calls of `operation` fail with `code` when on(n) is true (n counts from 1)."""
    seen = [0]

    def handler(**_: Any) -> Any:
        seen[0] += 1
        if not on(seen[0]):
            return None
        error: dict[str, Any] = {"Error": {"Code": code, "Message": "injected by the test"}}
        if reasons is not None:
            error["CancellationReasons"] = reasons
        response = type("Http", (), {"status_code": 400, "headers": {}})()
        return response, error

    client.meta.events.register(f"before-call.dynamodb.{operation}", handler)
    return seen


# -- the table ----------------------------------------------------------------------------


def test_the_test_table_is_the_template_table(moto: MotoDynamoDb) -> None:
    described = moto.shared_client.describe_table(TableName=moto.table)["Table"]
    props = load_template(TEMPLATE)["Resources"]["Table"]["Properties"]
    assert described["KeySchema"] == props["KeySchema"]
    assert sorted(described["AttributeDefinitions"], key=str) == sorted(
        props["AttributeDefinitions"], key=str
    )
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"] is True
    assert props["SSESpecification"]["SSEEnabled"] is True


def test_the_client_is_built_on_first_use(moto: MotoDynamoDb, monkeypatch) -> None:
    for name, value in moto.env.items():
        if name.startswith("AWS_"):
            monkeypatch.setenv(name, value)
    store = DynamoDbStore(moto.table, endpoint_url=moto.endpoint)
    assert store.table._client is None  # nothing built, nothing sent, at construction
    assert store.known_names(unique("p"), {"atlas"}) == set()
    assert store.table._client is not None
    store.close()
    assert store.table._client is None


# -- writes: several transactions, all or nothing ----------------------------------------------


def test_a_batch_of_100_facts_spans_transactions_and_keeps_its_order(
    dynamo: DynamoDbStore, project: str
) -> None:
    batch = [
        fact(f"Person {n}", "works with", f"Person {n + 1}", id=f"f{99 - n:02d}")
        for n in range(100)
    ]
    calls = Calls(dynamo.client)
    dynamo.put_facts(project, batch)
    # 100 claims + 100 subject copies + 100 object copies + 101 name items.
    assert calls.sent["TransactWriteItems"] >= 401 / TRANSACTION_ITEMS
    for name, params in calls.params:
        if name == "TransactWriteItems":
            assert len(params["TransactItems"]) <= TRANSACTION_ITEMS
    keys = [normalize_name(f"Person {n}") for n in range(101)]
    assert list(dynamo.facts_about(project, keys, ALL_ROLES, 1000)) == batch
    assert dynamo.known_names(project, keys, ["user"]) == set(keys)
    # Stored again (a retried request): nothing is stored twice.
    dynamo.put_facts(project, batch)
    assert list(dynamo.facts_about(project, keys, ALL_ROLES, 1000)) == batch


def test_a_failure_between_transactions_leaves_nothing_and_a_retry_stores_once(
    dynamo: DynamoDbStore, project: str
) -> None:
    kept = fact("Atlas", "works at", "Acme", id="kept")
    dynamo.put_facts(project, [kept])
    batch = [fact("Atlas", "knows", f"Person {n}", role="tool") for n in range(60)]
    # The second transaction of the batch fails: the first has been stored by then.
    fail_call(dynamo.client, "TransactWriteItems", "InternalServerError", on=lambda n: n == 2)
    with pytest.raises(Exception, match="injected"):
        dynamo.put_facts(project, batch)
    # What the first transaction stored was removed again, and its counts with it.
    assert about(dynamo, project, "Atlas") == [kept]
    assert dynamo.known_names(project, {"atlas", "person 0"}, ["tool"]) == set()
    assert dynamo.known_names(project, {"atlas", "acme"}, ["user"]) == {"atlas", "acme"}
    dynamo.put_facts(project, batch)
    assert about(dynamo, project, "Atlas") == [kept, *batch]
    assert dynamo.known_names(project, {"atlas", "person 0"}, ["tool"]) == {"atlas", "person 0"}


def test_a_batch_cut_short_by_a_crash_is_completed_by_its_retry(
    dynamo: DynamoDbStore, project: str
) -> None:
    """A process that dies between transactions cannot undo: the retry completes it."""
    batch = [fact("Hermes", "knows", f"God {n}", id=f"g{n}") for n in range(60)]
    dynamo.table._undo = lambda units: None  # type: ignore[method-assign]  # as if it had died
    fail_call(dynamo.client, "TransactWriteItems", "InternalServerError", on=lambda n: n == 2)
    with pytest.raises(Exception, match="injected"):
        dynamo.put_facts(project, batch)
    partial = about(dynamo, project, "Hermes")
    assert 0 < len(partial) < len(batch)
    assert partial == batch[: len(partial)]
    dynamo.put_facts(project, batch)  # the client retries the same request
    assert about(dynamo, project, "Hermes") == batch
    counts = dynamo.client.get_item(
        TableName=dynamo.table_name,
        Key={"PK": {"S": entity_pk(project, "hermes")}, "SK": {"S": "N"}},
    )["Item"]
    assert counts["c_user"] == {"N": "60"}  # each fact counted once


def test_a_conflicting_transaction_is_retried(dynamo: DynamoDbStore, project: str) -> None:
    reasons = [{"Code": "None"}, {"Code": "TransactionConflict", "Message": "conflict"}]
    seen = fail_call(
        dynamo.client,
        "TransactWriteItems",
        "TransactionCanceledException",
        on=lambda n: n <= 2,
        reasons=reasons,
    )
    f = fact("Atlas", "works at", "Acme")
    dynamo.put_facts(project, [f])
    assert seen[0] == 3
    assert about(dynamo, project, "Atlas") == [f]


def test_a_fact_stored_meanwhile_by_another_writer_keeps_the_first_copy(
    dynamo: DynamoDbStore, moto: MotoDynamoDb, project: str
) -> None:
    other = DynamoDbStore(moto.table, client=moto.shared_client)
    first = fact("Atlas", "works at", "Acme", id="race")
    mine = [
        dataclasses.replace(first, object="Globex", object_key="globex"),
        fact("Atlas", "is", "here"),
    ]

    def store_first_meanwhile(**_: Any) -> None:
        if not about(other, project, "Atlas"):
            other.put_facts(project, [first])

    dynamo.client.meta.events.register(
        "before-call.dynamodb.TransactWriteItems", store_first_meanwhile
    )
    dynamo.put_facts(project, mine)
    # Storing order is fixed when a batch starts: this one started first.
    assert about(dynamo, project, "Atlas") == [mine[1], first]
    assert dynamo.known_names(project, {"globex", "acme"}) == {"acme"}


def test_delete_fact_takes_back_its_counts(dynamo: DynamoDbStore, project: str) -> None:
    said = fact("Atlas", "admires", "ATLAS", role="tool")  # counts twice on one item
    other = fact("Atlas", "works at", "Acme", role="user")
    dynamo.put_facts(project, [said, other])
    assert dynamo.known_names(project, {"atlas"}, ["tool"]) == {"atlas"}
    assert dynamo.delete_fact(project, said.id)
    assert dynamo.known_names(project, {"atlas"}, ["tool"]) == set()
    assert dynamo.known_names(project, {"atlas"}, ["user"]) == {"atlas"}
    assert dynamo.known_names(project, {"atlas"}) == {"atlas"}  # ever named
    assert about(dynamo, project, "Atlas") == [other]


# -- keys -----------------------------------------------------------------------------------


def test_keys_cannot_collide_across_projects(dynamo: DynamoDbStore) -> None:
    """'#' in a project cannot reach into another project's keys."""
    base = unique("p")
    mine = fact("x#E#y", "p", "o", id="i#1")
    theirs = fact("y", "p", "o", id="1")
    dynamo.put_facts(base, [mine])
    dynamo.put_facts(f"{base}#E#x", [theirs])
    assert entity_pk(base, "x#e#y") != entity_pk(f"{base}#E#x", "y")
    assert dynamo.facts_with_subject(base, "x#e#y") == [mine]
    assert dynamo.facts_with_subject(f"{base}#E#x", "y") == [theirs]
    assert dynamo.known_names(base, {"y"}) == set()


def test_long_names_and_ids_are_kept_whole(dynamo: DynamoDbStore, project: str) -> None:
    long_name = "Ó " * 500  # 1,500 UTF-8 bytes: longer than a key part may be
    f = fact(long_name, "is", "long", id="i" * 128, quote="q" * 4000, statement="s" * 4000)
    dynamo.put_facts(project, [f])
    key = normalize_name(long_name)
    assert dynamo.facts_with_subject(project, key) == [f]
    assert dynamo.known_names(project, {key, "long"}) == {key, "long"}
    assert len(entity_pk(project, key).encode()) < 1024
    assert dynamo.delete_fact(project, f.id)
    assert dynamo.facts_with_subject(project, key) == []


# -- messages ---------------------------------------------------------------------------------


def test_a_message_longer_than_one_transaction_is_stored_whole_once(
    dynamo: DynamoDbStore, project: str
) -> None:
    long = message("A sentence about Zoë and 北京. " * 3000, id="long", role="tool")
    passages = split_passages(long)
    assert len(passages) > TRANSACTION_ITEMS
    short = message("Short.", id="short")
    new = dynamo.put_messages(project, [long, short], passages + split_passages(short))
    assert new == {"long", "short"}
    assert dynamo.passages_of(project, "long") == placed(passages, 1)
    again = message("Other text. " * 500, id="long")
    assert dynamo.put_messages(project, [again], split_passages(again)) == set()
    assert dynamo.passages_of(project, "long") == placed(passages, 1)
    wanted = [passages[150].id, "nope#1", passages[3].id, "short#0"]
    assert [p.id for p in dynamo.passages_by_ids(project, wanted)] == [
        passages[150].id,
        passages[3].id,
        "short#0",
    ]


def test_an_item_too_large_for_dynamodb_fails_the_batch_before_any_write(
    dynamo: DynamoDbStore, project: str
) -> None:
    huge = message("🚀" * 100_000 + "x" * 10_000, id="huge")
    small = message("Small.", id="small")
    calls = Calls(dynamo.client)
    with pytest.raises(ValueError, match="too large"):
        dynamo.put_messages(project, [small, huge], split_passages(small) + split_passages(huge))
    assert calls.total() == 0
    assert dynamo.passages_of(project, "small") == []


# -- reads: a hub in one page ------------------------------------------------------------


def test_facts_about_asks_a_hub_for_the_callers_limit_in_one_page(
    dynamo: DynamoDbStore, project: str
) -> None:
    hub = [fact("Hub", "links", f"Spoke {n}") for n in range(300)]
    for start in range(0, len(hub), 100):
        dynamo.put_facts(project, hub[start : start + 100])
    calls = Calls(dynamo.client)
    # A recall takes up to its pool: the hub's facts come in one Query (one wave), not
    # in pages that grow one after another.
    assert list(dynamo.facts_about(project, ["hub"], ALL_ROLES, 201)) == hub[:201]
    assert calls.sent == {"Query": 1}
    ((_, params),) = calls.params
    assert params["Limit"] == 201
    # A larger limit: still one Query for the whole hub.
    calls.sent.clear()
    assert about(dynamo, project, "Hub") == hub
    assert calls.sent["Query"] == 1


def test_facts_about_reads_on_when_a_filter_leaves_the_page_short(
    dynamo: DynamoDbStore, project: str
) -> None:
    # DynamoDB's Limit counts the items read before the filter: 30 assistant facts
    # behind 30 user facts need a second page when the page asked for 20.
    said = [fact("Hub", "links", f"Spoke {n}", role="user") for n in range(30)]
    said += [fact("Hub", "links", f"Other {n}", role="assistant") for n in range(30)]
    dynamo.put_facts(project, said)
    calls = Calls(dynamo.client)
    found = list(dynamo.facts_about(project, ["hub"], ["assistant"], 20))
    assert found == said[30:50]
    assert calls.sent["Query"] == 2


def test_role_filters_and_items_are_small(dynamo: DynamoDbStore, project: str) -> None:
    f = fact("Atlas", "works at", "Acme Corp", role="assistant")
    dynamo.put_facts(project, [f])
    assert about(dynamo, project, "Acme Corp", roles=["user"]) == []
    assert about(dynamo, project, "Acme Corp", roles=["assistant"]) == [f]
    item = dynamo.client.query(
        TableName=dynamo.table_name,
        KeyConditionExpression="PK = :pk",
        ExpressionAttributeValues={":pk": {"S": entity_pk(project, "atlas")}},
    )["Items"][0]
    # A typical fact copy, attribute names included, is well under the 4 KB of a read unit.
    assert item_size(item) < 400
