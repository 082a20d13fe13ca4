"""The benchmarks' way to fill moto with many users or messages (tests/moto_server.py,
clone_partitions): a copy reads back through the adapter as its own memory, with the
template's word replaced everywhere, and nothing outside what was asked is copied."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator

import pytest

from taisce.adapters.dynamodb.keys import project_prefix
from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.ingest import FactsRequest
from taisce.domain.scope import scope
from taisce.service.memory import Memory
from tests.moto_server import CLONE_PATH, CLONES, MotoDynamoDb, start_moto


@pytest.fixture(scope="module")
def cloning() -> Iterator[MotoDynamoDb]:
    moto = start_moto(env={CLONES: "1"})
    yield moto
    moto.stop()


def _clone(moto: MotoDynamoDb, body: dict[str, object]) -> int:
    request = urllib.request.Request(
        moto.endpoint + CLONE_PATH,
        data=json.dumps({"table": moto.table, **body}).encode(),
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=60) as answer:
        return int(json.loads(answer.read())["put"])


def _items(moto: MotoDynamoDb) -> list[dict[str, object]]:
    return moto.observer_client().scan(TableName=moto.table)["Items"]


def test_a_cloned_user_reads_back_as_its_own_memory(cloning: MotoDynamoDb) -> None:
    memory = Memory(DynamoDbStore(cloning.table, client=cloning.client()), Limits(16_000, 200))
    facts = [
        {"subject": "tplword person", "predicate": "likes", "object": "Shared Cafe"},
        {"subject": "Shared Cafe", "predicate": "is in", "object": "Galway"},
    ]
    for fact, user in ((facts[0], "tplword"), (facts[1], None)):
        body = {"facts": [{**fact, "source_role": "user"}]}
        memory.store_facts(scope("clones", user), FactsRequest.model_validate(body))
    before = {json.dumps(i, sort_keys=True) for i in _items(cloning)}
    prefix = project_prefix(str(scope("clones", "tplword")))
    put = _clone(cloning, {"prefix": prefix, "template": "tplword", "names": ["u1", "u2"]})
    items = _items(cloning)
    copies = [i for i in items if json.dumps(i, sort_keys=True) not in before]
    assert put > 0 and len(copies) == put
    for user in ("u1", "u2"):
        question = RecallRequest.model_validate({"question": f"What does {user} person like?"})
        found = memory.recall(scope("clones", user), question)
        assert [f.fact.statement for f in found.facts] == [f"{user} person likes Shared Cafe"]
    # The template's word is in no copy; the shared memory was not copied.
    assert not [i for i in copies if "tplword" in json.dumps(i)]
    shared = [i for i in items if str(i["PK"]["S"]).startswith(project_prefix("clones") + "E#")]
    assert len({json.dumps(i, sort_keys=True) for i in shared}) == len(shared)


def test_holding_copies_only_the_items_that_hold_the_word(cloning: MotoDynamoDb) -> None:
    client = cloning.client()
    prefix = project_prefix("holding")
    for pk, sk in ((f"{prefix}M#zzw-1", "M"), (f"{prefix}L#M#0", "t#zzw-1"), (f"{prefix}X", "x")):
        client.put_item(TableName=cloning.table, Item={"PK": {"S": pk}, "SK": {"S": sk}})
    put = _clone(cloning, {"prefix": prefix, "template": "zzw", "names": ["k1"], "holding": True})
    keys = {
        (i["PK"]["S"], i["SK"]["S"])
        for i in _items(cloning)
        if str(i["PK"]["S"]).startswith(prefix)
    }
    assert put == 2
    assert {(f"{prefix}M#k1-1", "M"), (f"{prefix}L#M#0", "t#k1-1"), (f"{prefix}X", "x")} <= keys
    assert len(keys) == 5  # three put, two copies: the item without the word is not copied
