"""What a recall costs on DynamoDB: round trips and read capacity units, counted through
botocore's event hooks on the adapter's client (the port exposes nothing for it).

Read units are computed from the items each call returns, by DynamoDB's rules: a Query
costs the total size of the items it reads rounded up to 4 KB; a BatchGetItem costs
each key's item rounded up to 4 KB, and a key with no item still costs one unit. A
strongly consistent unit is 1 read request unit on demand, an eventually consistent
one 0.5. moto answers ReturnConsumedCapacity with placeholders (1.0 per Query, one per
BatchGetItem key), so those are not used.

Run as a script for the figures of docs/dynamodb-recall.md (the bench's synthetic graph, through the
domain as the recall handler runs it):

    .venv/bin/python -m tests.contract.test_dynamodb_costs [--facts 1000] [--recalls 200]
                                                           [--latency-ms 5]

The recall's time is given three ways, per question in one run: on moto as is, on moto
with the latency slept before every call, and replayed: moto's recorded answers served
after the latency, requests at once (tests/dynamodb_replay.py), since moto answers one
request at a time and its own time per call is several times an in-region round trip.
Replayed, it is timed three ways in turn: as the adapter sends the recall's reads
(directly, adapters/dynamodb/reads.py), through botocore's client (the adapter before),
and through the client with botocore's own parsing (before that).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import threading
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from botocore.config import Config

from taisce.adapters.dynamodb.client import client_config
from taisce.adapters.dynamodb.codec import item_size
from taisce.adapters.dynamodb.items import _HANDLER_ID, _ITEMS
from taisce.adapters.dynamodb.keys import LISTING_SHARDS
from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.api import bodies
from taisce.domain import passage_step
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.filters import MessageFilter
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.model import ROLES
from taisce.domain.names import MAX_CANDIDATES, candidate_keys
from taisce.domain.recall import Semantic
from taisce.service.memory import Memory
from tests.contract.factories import unique
from tests.dynamodb_replay import ReplayDynamoDb
from tests.moto_server import MotoDynamoDb, shared_moto

READ_UNIT = 4096
# On-demand price of read request units in us-east-1 (2025): $0.25 per million.
DOLLARS_PER_MILLION_READ_UNITS = 0.25


# Every recall also reads the project's pending erasures (one strongly consistent Query
# of a small partition, sent beside its first wave: 1 read unit), to hide their names.
PENDING_ERASURES = 1
# That Query's partition key ends so (adapters/dynamodb/keys.py, erasing_pk).
ERASING_PARTITION = "ERASING"


class Meter:
    """Counts one client's round trips (HTTP requests, retries included) per operation,
    the read units its reads consume (from the items they return), and the waves: calls
    whose spans overlap in time went out together (the adapter's parallel reads), so a
    recall's waves are its sequential steps. The pending-erasures Query goes out on a
    thread of its own beside the first wave and is waited for only at the end, so it is
    kept out of the waves (on a loaded machine it can outlast the first wave and would
    join two of them); `beside_first_wave` says whether it started before the first
    wave ended. `latency` (seconds) is slept before every request is sent, as an
    in-region round trip would add (calls made in parallel sleep at once)."""

    def __init__(self, client: Any, latency: float = 0.0) -> None:
        self.sent: Counter[str] = Counter()
        self.read_units = 0.0  # strongly consistent
        self.latency = latency
        self._asked = threading.local()  # keys asked by this thread's BatchGetItem
        self._spans: list[tuple[float, float]] = []
        self._beside: list[tuple[float, float]] = []  # the pending-erasures Queries
        self._started = threading.local()
        self._lock = threading.Lock()
        events = client.meta.events
        events.register("before-call.dynamodb", self._begin)
        events.register("before-send.dynamodb", self._send)
        events.register("provide-client-params.dynamodb.BatchGetItem", self._batch_params)
        events.register("provide-client-params.dynamodb.Query", self._query_params)
        events.register("after-call.dynamodb", self._after)

    def reset(self) -> None:
        with self._lock:
            self.sent.clear()
            self.read_units = 0.0
            self._spans.clear()
            self._beside.clear()

    def wave_sizes(self) -> list[int]:
        """How many calls each wave held, in order."""
        sizes: list[int] = []
        end = -1.0
        for start, stop in sorted(self._spans):
            if start > end:
                sizes.append(0)
            sizes[-1] += 1
            end = max(end, stop)
        return sizes

    def waves(self) -> int:
        """Groups of calls whose spans overlap: one per sequential step."""
        count, end = 0, -1.0
        for start, stop in sorted(self._spans):
            if start > end:
                count += 1
            end = max(end, stop)
        return count

    def beside_first_wave(self) -> bool:
        """Every pending-erasures Query started before the first wave's calls ended."""
        if not self._spans or not self._beside:
            return False
        first, end = sorted(self._spans), -1.0
        for start, stop in first:
            if end >= 0 and start > end:
                break
            end = max(end, stop)
        return all(start <= end for start, _ in self._beside)

    def _begin(self, **_: Any) -> None:
        self._started.at = time.perf_counter()

    def _query_params(self, params: dict[str, Any], **_: Any) -> None:
        values = params.get("ExpressionAttributeValues", {})
        key = values.get(":pk", {}).get("S", "")
        self._started.beside = key.endswith(ERASING_PARTITION)

    def _send(self, request: Any, **_: Any) -> None:
        target = request.headers.get("X-Amz-Target", b"")
        name = target.decode() if isinstance(target, bytes) else target
        with self._lock:
            self.sent[name.rpartition(".")[2]] += 1
        if self.latency:
            time.sleep(self.latency)

    def _batch_params(self, params: dict[str, Any], **_: Any) -> None:
        self._asked.keys = sum(len(t["Keys"]) for t in params["RequestItems"].values())

    def _after(self, parsed: dict[str, Any], model: Any, **_: Any) -> None:
        span = (self._started.at, time.perf_counter())
        beside = model.name == "Query" and getattr(self._started, "beside", False)
        with self._lock:
            (self._beside if beside else self._spans).append(span)
            self._count(parsed, model)

    def _count(self, parsed: dict[str, Any], model: Any) -> None:
        if model.name == "Query":
            size = sum(item_size(i) for i in parsed.get("Items", []))
            self.read_units += max(1, math.ceil(size / READ_UNIT))
        elif model.name == "GetItem":
            item = parsed.get("Item")
            self.read_units += max(1, math.ceil(item_size(item) / READ_UNIT)) if item else 1
        elif model.name == "BatchGetItem":
            found = [i for items in parsed.get("Responses", {}).values() for i in items]
            asked = getattr(self._asked, "keys", len(found))
            self.read_units += sum(max(1, math.ceil(item_size(i) / READ_UNIT)) for i in found)
            self.read_units += asked - len(found)  # a key with no item costs one unit

    def round_trips(self) -> int:
        return sum(self.sent.values())


@pytest.fixture
def metered(moto: MotoDynamoDb) -> Iterator[tuple[Memory, Meter]]:
    store = DynamoDbStore(moto.table, client=moto.client(), direct_reads=False)
    # 20 ms slept before each call: a wave then lasts far longer than a thread waits
    # for a core on a loaded machine, so waves and what runs beside them are told
    # apart by the code's order, not by the scheduler's (one failed at load 6 with none).
    meter = Meter(store.client, latency=0.02)
    yield Memory(store, Limits(bundle_characters=16_000, max_rows=200)), meter
    store.client.close()


def _facts(*triples: tuple[str, str, str]) -> FactsRequest:
    return FactsRequest.model_validate(
        {
            "facts": [
                {"subject": s, "predicate": p, "object": o, "source_role": "user"}
                for s, p, o in triples
            ]
        }
    )


def unlift_items(client: Any) -> None:
    """Leave this client's answers to botocore's parsing again (the figures' baseline:
    the adapter before adapters/dynamodb/items.py lifted them)."""
    events = client.meta.events
    for operation in _ITEMS:
        events.unregister(
            f"before-parse.dynamodb.{operation}", unique_id=f"{_HANDLER_ID}-{operation}"
        )


def _recall(memory: Memory, project: str, question: str, hops: int) -> dict[str, Any]:
    request = RecallRequest.model_validate(
        {"question": question, "hops": hops, "source_roles": list(ROLES)}
    )
    return bodies.recall(memory.recall(project, request))


def test_hop_1_is_one_batch_get_and_one_query_per_matched_entity(
    metered: tuple[Memory, Meter],
) -> None:
    memory, meter = metered
    project = unique("cost")
    memory.store_facts(
        project,
        _facts(
            ("Atlas", "works at", "Acme Corp"),
            ("Acme Corp", "is based in", "Dublin"),
            ("Atlas", "lives in", "Dublin"),
            ("Bob", "knows", "Atlas"),
            ("Dublin", "is in", "Ireland"),
        ),
    )
    meter.reset()
    body = _recall(memory, project, "Where does Atlas work?", hops=1)
    # All three facts of Atlas are read as candidates; the one that bears on "work"
    # comes first, then the other two (three facts are all that is known of Atlas).
    assert [f["predicate"] for f in body["facts"]] == ["works at", "lives in", "knows"]
    assert meter.sent == {"BatchGetItem": 1, "Query": 1 + PENDING_ERASURES}
    # A unit per candidate name (15 spans of 5 tokens) + one Query of 3 small items.
    assert len(candidate_keys("Where does Atlas work?")) == 15
    assert meter.read_units == 15 + 1 + PENDING_ERASURES

    meter.reset()
    body = _recall(memory, project, "Where does Atlas work?", hops=2)
    assert body["facts"][0]["predicate"] == "works at"
    # Hop 2 reads each linked entity's partition once: Acme Corp, Dublin, Bob.
    assert meter.sent == {"BatchGetItem": 1, "Query": 1 + 3 + PENDING_ERASURES}

    meter.reset()
    body = _recall(memory, project, "How are Atlas and Bob connected?", hops=1)
    assert meter.sent == {"BatchGetItem": 1, "Query": 2 + PENDING_ERASURES}


def test_candidate_names_cost_one_batch_get_per_100(metered: tuple[Memory, Meter]) -> None:
    memory, meter = metered
    project = unique("cost")
    memory.store_facts(project, _facts(("Atlas", "works at", "Acme Corp")))
    question = "Tell me about Atlas, " + " ".join(f"word{n}" for n in range(25))
    spans = len(candidate_keys(question))
    assert spans > 200
    meter.reset()
    meter.latency = 0.02  # so that calls sent together surely overlap
    _recall(memory, project, question, hops=1)
    assert meter.sent == {
        "BatchGetItem": math.ceil(spans / 100),
        "Query": 1 + PENDING_ERASURES,
    }
    assert meter.read_units == spans + 1 + PENDING_ERASURES
    # The BatchGetItem calls go out together: one wave for the names, one for the facts.
    assert meter.waves() == 2
    assert meter.beside_first_wave()


def test_a_long_question_costs_at_most_ten_batch_gets(metered: tuple[Memory, Meter]) -> None:
    # 10,000 characters of distinct words once gave 14,885 candidate names: ~150
    # sequential BatchGetItem calls. The candidates are capped (shortest runs first).
    memory, meter = metered
    project = unique("cost")
    memory.store_facts(project, _facts(("Atlas", "works at", "Acme Corp")))
    # "works": a word the fact holds, so that step 1's ranking keeps it.
    question = ("Where Atlas works " + " ".join(f"word{n}" for n in range(2_000)))[:10_000]
    meter.reset()
    body = _recall(memory, project, question, hops=1)
    assert [f["subject"] for f in body["facts"]] == ["Atlas"]
    assert meter.sent == {
        "BatchGetItem": MAX_CANDIDATES // 100,
        "Query": 1 + PENDING_ERASURES,
    }
    assert meter.read_units == MAX_CANDIDATES + 1 + PENDING_ERASURES


def test_a_hops_2_recall_with_hubs_goes_out_in_three_waves(
    metered: tuple[Memory, Meter],
) -> None:
    # Atlas has 60 facts and links to Acme Corp, a hub of 81: with pages of 50 (as
    # before), each was read on page after page, 5 waves in all. Now: the names, Atlas,
    # then its 60 neighbours at once.
    memory, meter = metered
    project = unique("waves")
    triples = [("Atlas", "works at", "Acme Corp")]
    triples += [("Atlas", "knows", f"Person {n}") for n in range(59)]
    triples += [(f"Worker {n}", "works at", "Acme Corp") for n in range(80)]
    for start in range(0, len(triples), 100):
        memory.store_facts(project, _facts(*triples[start : start + 100]))
    meter.reset()
    meter.latency = 0.02  # so that calls sent together surely overlap
    body = _recall(memory, project, "Who works at the same place as Atlas?", hops=2)
    assert body["facts"]
    # + 1 Query: the project's pending erasures, read beside the first wave.
    assert meter.sent == {"BatchGetItem": 1, "Query": 1 + 60 + 1}
    assert meter.waves() <= 3
    assert meter.beside_first_wave()


class _Embedder:
    """A stand-in model (the fact-vector path, not a model's quality, is tested): a
    text's vector says whether it is about work, living or neither."""

    name = "test"
    dimensions = 3

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float("work" in t), float("live" in t), 0.1 + float("Dublin" in t)] for t in texts]


class _CountingIndex(SqliteVectorIndex):
    """The embedded vector index standing for OpenSearch, counting what recall asks it
    (each of these is one OpenSearch request for up to 500 ids: adapters/opensearch/index.py)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, _Embedder.dimensions)
        self.calls: Counter[str] = Counter()

    def search(self, project, kind, vector, k, roles=None):  # type: ignore[no-untyped-def]
        self.calls[f"search {kind}"] += 1
        return super().search(project, kind, vector, k, roles)

    def search_text(self, project, kind, text, k, roles=None):  # type: ignore[no-untyped-def]
        self.calls[f"search_text {kind}"] += 1
        return super().search_text(project, kind, text, k, roles)

    def similarities(self, project, kind, vector, ids):  # type: ignore[no-untyped-def]
        self.calls[f"similarities {kind}"] += 1
        return super().similarities(project, kind, vector, ids)


def test_with_a_model_fact_vectors_rank_on_dynamodb_and_their_calls_are_counted(
    moto: MotoDynamoDb, tmp_path: Path
) -> None:
    store = DynamoDbStore(moto.table, client=moto.client(), direct_reads=False)
    meter = Meter(store.client)
    index = _CountingIndex(tmp_path / "vectors.sqlite3")
    memory = Memory(store, Limits(), semantic=Semantic(_Embedder(), index))
    project = unique("model")
    memory.store_facts(
        project,
        _facts(
            ("Atlas", "works at", "Acme Corp"),
            ("Atlas", "lives in", "Dublin"),
            ("Acme Corp", "is based in", "Dublin"),
        ),
    )
    message = {"role": "user", "content": "Atlas said the office moves next year."}
    memory.store_messages(project, MessagesRequest.model_validate({"messages": [message]}))
    # The worker's pass: facts, names and passages get vectors, marked on DynamoDB.
    assert memory.index_pending(project) >= 4
    index.calls.clear()
    meter.reset()
    meter.latency = 0.02  # so that calls sent together surely overlap
    request = RecallRequest.model_validate(
        {"question": "Where does Atlas work?", "hops": 2, "explain": True}
    )
    body = bodies.recall(memory.recall(project, request))
    assert body["degraded"] == []
    # The facts are ranked by meaning too: each had a vector to compare.
    assert body["facts"] and all(f["why"]["similarity"] is not None for f in body["facts"])
    assert body["facts"][0]["predicate"] == "works at"
    # Two index requests for the facts' similarities (with the question, and with the
    # question without its names for the paths' hop-2 facts: Acme Corp's), three for
    # passages (meaning, meaning without the written name "Atlas", words) and one for the
    # facts nearest the question, which point at their messages.
    assert index.calls == {
        "similarities fact": 2,
        "search passage": 2,
        "search_text passage": 1,
        "search fact": 1,
    }
    # DynamoDB: the names, Atlas, its neighbours (Acme Corp, Dublin); then the passages
    # found (a Query per message they come from); beside the first wave, the project's
    # pending erasures. The facts nearest the question are all facts steps 1 read
    # (hops 1 and 2), so following them to their messages reads nothing more. Last, the
    # passages' messages, for their occurred_at and recorded_at (one BatchGetItem).
    assert meter.sent == {"BatchGetItem": 2, "Query": 1 + 2 + 1 + 1}
    assert meter.waves() == 5
    assert meter.beside_first_wave()


def test_a_dated_recall_reads_no_message_times(
    moto: MotoDynamoDb, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A question naming a month reorders every candidate by its message's time: each
    # passage's hit carries it (the index keeps it with the vector), so the recall reads
    # passages in the known order, a Query per message, and no message's time at all.
    store = DynamoDbStore(moto.table, client=moto.client(), direct_reads=False)
    meter = Meter(store.client)
    index = _CountingIndex(tmp_path / "vectors.sqlite3")
    memory = Memory(store, Limits(), semantic=Semantic(_Embedder(), index))
    project = unique("dated")
    given = [
        {
            "role": "user",
            "content": f"Atlas will live near x{n}a x{n}b x{n}c.",  # no two alike
            "occurred_at": f"2024-{1 + n % 12:02d}-03T10:00:00Z",
        }
        for n in range(100)
    ]
    memory.store_messages(project, MessagesRequest.model_validate({"messages": given}))
    assert memory.index_pending(project) == 100
    request = RecallRequest.model_validate(
        {
            "question": "Where did Atlas live in March 2024?",
            "surfaces": ["passages"],
            "max_rows": 10,
        }
    )
    meter.reset()
    body = bodies.recall(memory.recall(project, request))
    assert body["degraded"] == [] and len(body["passages"]) == 10
    fast = dict(meter.sent)
    # Entries indexed before times were kept: the same answer, with the passages read
    # with their messages' times (one BatchGetItem per 100 messages).
    monkeypatch.setattr(passage_step, "_hit_times", lambda *_: None)
    meter.reset()
    assert bodies.recall(memory.recall(project, request)) == body
    lazy = dict(meter.sent)
    # Both read the first chunk of 64 passages, a Query per message (and the same reads
    # of the steps before); only the lazy path reads their messages' times as well.
    assert fast["Query"] == lazy["Query"] >= 64
    assert lazy["BatchGetItem"] == fast.get("BatchGetItem", 0) + 1
    store.client.close()


def test_passages_of_many_messages_are_read_in_one_wave(metered: tuple[Memory, Meter]) -> None:
    # A recall's passages come from up to 200 messages: their Queries (and with a
    # message filter, the messages' times) once went out one after another.
    memory, meter = metered
    store = memory.store
    project = unique("passages")
    given = [{"role": "user", "content": f"Note {n} about the harbour."} for n in range(12)]
    ids = memory.store_messages(project, MessagesRequest.model_validate({"messages": given}))
    wanted = [f"{i}#0" for i in reversed(ids)]
    meter.reset()
    meter.latency = 0.02
    assert [p.id for p in store.passages_by_ids(project, wanted)] == wanted
    assert meter.sent == {"Query": 12}
    assert meter.waves() == 1
    meter.reset()
    admits_all = MessageFilter(None, None, None)
    assert [p.id for p in store.passages_by_ids(project, wanted, admits_all)] == wanted
    assert meter.sent == {"Query": 12, "BatchGetItem": 1}
    assert meter.waves() == 1
    later = MessageFilter(None, "2999-01-01T00:00:00Z", None)  # recorded after: none
    assert store.passages_by_ids(project, wanted, later) == []
    store.client.close()


def test_the_times_of_many_messages_are_one_batch_get_per_100(
    metered: tuple[Memory, Meter],
) -> None:
    # A question naming a month reads every candidate passage with its message's time:
    # a GetItem per message once (hundreds at depth 400), now 100 messages a call.
    memory, meter = metered
    store = memory.store
    project = unique("times")
    ids: list[str] = []
    for start in (0, 100):
        given = [
            {
                "role": "user",
                "content": f"Note {n} about the harbour.",
                "occurred_at": f"2024-{1 + n % 12:02d}-0{1 + n % 9}T10:00:00Z",
            }
            for n in range(start, start + 100 if start == 0 else start + 30)
        ]
        ids += memory.store_messages(project, MessagesRequest.model_validate({"messages": given}))
    wanted = [f"{i}#0" for i in ids]
    meter.reset()
    meter.latency = 0.02
    found = store.passages_by_ids(project, wanted, times=True)
    assert [p.id for p in found] == wanted
    assert [(p.occurred_at or "")[:7] for p in found] == [
        f"2024-{1 + n % 12:02d}" for n in range(130)
    ]
    assert meter.sent == {"Query": 130, "BatchGetItem": 2}
    assert meter.waves() == 1
    store.client.close()


# -- figures ---------------------------------------------------------------------------


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def _one_call_ms(store: DynamoDbStore, project: str, times: int = 50) -> list[float]:
    """p50/p95 of one small call (a BatchGetItem of one name) through this store."""
    single: list[float] = []
    for _ in range(times):
        started = time.perf_counter()
        store.known_names(project, ["x"])
        single.append((time.perf_counter() - started) * 1000)
    return [round(_percentile(single, q), 1) for q in (0.5, 0.95)]


def _p50_p95(values: list[float]) -> list[float]:
    return [round(_percentile(values, q), 1) for q in (0.5, 0.95)]


def figures(
    moto: MotoDynamoDb, n_facts: int, n_recalls: int, latency: float = 0.005, seed: int = 7
) -> dict[str, Any]:
    """Per recall, hops 1 and 2, on the bench's graph: round trips, waves and read
    units; and the recall's time (p50/p95) in three ways, question by question in one
    run: on moto as is; on moto with `latency` seconds slept before every call (waves
    are counted there: calls of one wave then surely overlap); and replayed
    (tests/dynamodb_replay.py): moto's recorded answers served after `latency`, requests
    at once, so the database's own time is the fixed delay and not moto's."""
    from bench.corpus import make_corpus, make_questions

    limits = Limits(bundle_characters=16_000, max_rows=200)
    corpus = make_corpus(n_facts, 0, seed)
    loader = DynamoDbStore(moto.table, client=moto.client())
    project = unique("figures")
    for start in range(0, len(corpus.facts), 100):
        request = FactsRequest.model_validate({"facts": corpus.facts[start : start + 100]})
        Memory(loader, limits).store_facts(project, request)
    loader.client.close()
    # The recalls go through clients configured as the adapter's own; the metered one
    # sends every read through the client, whose hooks count it (the same requests).
    store = DynamoDbStore(moto.table, client=moto.client(client_config()), direct_reads=False)
    memory = Memory(store, limits)
    questions = make_questions(random.Random(seed), corpus.known(), n_recalls)
    meter = Meter(store.client)
    # The replayed recalls ask at a fixed time (the filters hold it), so that each
    # request is the one recorded.
    replay = ReplayDynamoDb(moto.endpoint, latency)
    replay_view = MotoDynamoDb(moto.process, replay.endpoint, moto.table, moto.log)
    replay_store = DynamoDbStore(moto.table, client=replay_view.client(client_config()))
    fixed = datetime.now(UTC)
    replayed = Memory(replay_store, limits, clock=lambda: fixed)
    # The baselines, timed beside it: the recall's reads through botocore's client (the
    # adapter before its direct reads, adapters/dynamodb/reads.py); and through the
    # client before botocore's parsing was bypassed (items walked against the model,
    # requests validated).
    client_store = DynamoDbStore(
        moto.table, client=replay_view.client(client_config()), direct_reads=False
    )
    through_client = Memory(client_store, limits, clock=lambda: fixed)
    plain_config = client_config().merge(Config(parameter_validation=True))
    plain_store = DynamoDbStore(
        moto.table, client=replay_view.client(plain_config), direct_reads=False
    )
    unlift_items(plain_store.client)
    plain = Memory(plain_store, limits, clock=lambda: fixed)
    for hops in (1, 2):
        for question in questions:
            _recall(replayed, project, question, hops)
            _recall(through_client, project, question, hops)
    replay_store.known_names(project, ["x"])
    client_store.known_names(project, ["x"])
    replay.replay()
    rows = []
    for hops in (1, 2):
        trips: list[int] = []
        units: list[float] = []
        waves: list[int] = []
        by_operation: Counter[str] = Counter()
        returned: list[int] = []
        timings: dict[float, list[float]] = {0.0: [], latency: []}
        replay_ms: list[float] = []
        # CPU of this process during a replayed recall: the domain and botocore on
        # every thread (the endpoint runs in its own process).
        replay_cpu_ms: list[float] = []
        plain_ms: list[float] = []
        plain_cpu_ms: list[float] = []
        client_ms: list[float] = []
        client_cpu_ms: list[float] = []
        per_call_cpu_ms: list[float] = []
        wave_sizes: list[list[int]] = []
        truncated = 0
        names = []
        for question in questions:
            for injected in timings:
                meter.latency = injected
                meter.reset()
                started = time.perf_counter()
                body = _recall(memory, project, question, hops)
                timings[injected].append((time.perf_counter() - started) * 1000)
            started, cpu = time.perf_counter(), time.process_time()
            again = _recall(replayed, project, question, hops)
            replay_ms.append((time.perf_counter() - started) * 1000)
            replay_cpu_ms.append((time.process_time() - cpu) * 1000)
            started, cpu = time.perf_counter(), time.process_time()
            before = _recall(through_client, project, question, hops)
            client_ms.append((time.perf_counter() - started) * 1000)
            client_cpu_ms.append((time.process_time() - cpu) * 1000)
            started, cpu = time.perf_counter(), time.process_time()
            baseline = _recall(plain, project, question, hops)
            plain_ms.append((time.perf_counter() - started) * 1000)
            plain_cpu_ms.append((time.process_time() - cpu) * 1000)
            ids = [f["id"] for f in body["facts"]]
            if any([f["id"] for f in b["facts"]] != ids for b in (again, before, baseline)):
                raise RuntimeError(f"the replayed recall answered otherwise: {question!r}")
            per_call_cpu_ms.append(replay_cpu_ms[-1] / meter.round_trips())
            wave_sizes.append(meter.wave_sizes())
            waves.append(meter.waves())
            trips.append(meter.round_trips())
            units.append(meter.read_units)
            by_operation.update(meter.sent)
            returned.append(len(body["facts"]))
            truncated += body["truncated"]
            names.append(len(candidate_keys(question)))
        mean_units = statistics.fmean(units)
        rows.append(
            {
                "hops": hops,
                "waves_mean": round(statistics.fmean(waves), 2),
                "waves_max": max(waves),
                "waves_histogram": dict(sorted(Counter(waves).items())),
                "round_trips_mean": round(statistics.fmean(trips), 2),
                "round_trips_max": max(trips),
                "per_operation_mean": {
                    op: round(n / len(questions), 2) for op, n in sorted(by_operation.items())
                },
                "read_units_mean": round(mean_units, 1),
                "read_units_max": max(units),
                "candidate_names_mean": round(statistics.fmean(names), 1),
                "facts_returned_mean": round(statistics.fmean(returned), 1),
                "truncated_share": round(truncated / len(questions), 3),
                "ms_p50_p95_moto": _p50_p95(timings[0.0]),
                f"ms_p50_p95_moto_plus_{latency * 1000:g}ms_per_call": _p50_p95(timings[latency]),
                f"ms_p50_p95_replayed_{latency * 1000:g}ms_per_call": _p50_p95(replay_ms),
                "cpu_ms_p50_p95_replayed": _p50_p95(replay_cpu_ms),
                "cpu_ms_per_call_p50_p95_replayed": [
                    round(_percentile(per_call_cpu_ms, q), 2) for q in (0.5, 0.95)
                ],
                "calls_per_wave_mean": [
                    round(statistics.fmean(s[n] for s in wave_sizes if len(s) > n), 2)
                    for n in range(max(map(len, wave_sizes)))
                ],
                "ms_p50_p95_replayed_through_client": _p50_p95(client_ms),
                "cpu_ms_p50_p95_replayed_through_client": _p50_p95(client_cpu_ms),
                "ms_p50_p95_replayed_botocore_parsing": _p50_p95(plain_ms),
                "cpu_ms_p50_p95_replayed_botocore_parsing": _p50_p95(plain_cpu_ms),
                "dollars_per_million_recalls_strong": round(
                    mean_units * DOLLARS_PER_MILLION_READ_UNITS, 2
                ),
                "dollars_per_million_recalls_eventual": round(
                    mean_units * DOLLARS_PER_MILLION_READ_UNITS / 2, 2
                ),
            }
        )
    # What one call costs here, to read the timings against: moto's own time (and the
    # client's), and the replay's with and without its fixed delay.
    meter.latency = 0.0
    moto_call = _one_call_ms(store, project)
    replay_call = _one_call_ms(replay_store, project)
    client_call = _one_call_ms(client_store, project)
    replay.set_latency(0.0)
    replay_overhead = _one_call_ms(replay_store, project)
    misses = replay.misses
    replay.stop()
    store.client.close()
    replay_store.close()
    replay_store.client.close()
    client_store.client.close()
    plain_store.client.close()
    degrees = sorted(corpus.degree.values())
    return {
        "facts": n_facts,
        "entities": len(degrees),
        "degree_median_max": [degrees[len(degrees) // 2], degrees[-1]],
        "recalls_per_row": n_recalls,
        "settings": "source_roles all four, bundle 16000 characters, max_rows 200",
        "latency_injected_ms": latency * 1000,
        "one_call_ms_p50_p95_moto": moto_call,
        f"one_call_ms_p50_p95_replayed_{latency * 1000:g}ms": replay_call,
        f"one_call_ms_p50_p95_replayed_{latency * 1000:g}ms_through_client": client_call,
        "one_call_ms_p50_p95_replayed_no_delay": replay_overhead,
        "replay_misses": misses,
        "price": f"${DOLLARS_PER_MILLION_READ_UNITS} per million read request units "
        "(on demand, us-east-1, 2025)",
        "rows": rows,
    }


def test_figures_on_a_small_graph(moto: MotoDynamoDb) -> None:
    # 20 ms a call keeps the calls of one wave overlapping on a loaded machine.
    result = figures(moto, n_facts=200, n_recalls=10, latency=0.02)
    hop1, hop2 = result["rows"]
    assert hop1["per_operation_mean"]["BatchGetItem"] == 1
    # Questions name 1 or 2 entities; and the pending erasures' Query.
    assert 1 + PENDING_ERASURES <= hop1["per_operation_mean"]["Query"] <= 2 + PENDING_ERASURES
    assert hop2["round_trips_mean"] > hop1["round_trips_mean"]
    assert hop1["read_units_mean"] >= hop1["candidate_names_mean"]
    # The names in one wave, the matched entities in one, their neighbours in one.
    assert hop1["waves_max"] <= 2
    assert hop2["waves_max"] <= 3
    # Every replayed call was one recorded from moto (and the answers agreed).
    assert result["replay_misses"] == 0


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=1000)
    parser.add_argument("--recalls", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=5.0)
    args = parser.parse_args(argv)
    from taisce.evaluation.machine import describe_machine

    moto = shared_moto()
    try:
        load_before = os.getloadavg()[0]
        result = figures(moto, args.facts, args.recalls, args.latency_ms / 1000)
        result["date"] = datetime.now(UTC).isoformat(timespec="seconds")
        result["machine"] = describe_machine()
        result["load_average_1min"] = {"before": load_before, "after": os.getloadavg()[0]}
        print(json.dumps(result, indent=2))
    finally:
        moto.stop()


if __name__ == "__main__":
    main()


def test_with_a_model_a_memory_of_messages_skips_the_spans_on_dynamodb(
    moto: MotoDynamoDb, tmp_path: Path
) -> None:
    """No entity name is held: step 2 reads the entity listing (for spelling) and stops
    there, with no model call for the question's name-like spans, no entity search and
    no name item read for what they found."""
    store = DynamoDbStore(moto.table, client=moto.client(), direct_reads=False)
    meter = Meter(store.client)
    index = _CountingIndex(tmp_path / "vectors.sqlite3")
    embedded: list[list[str]] = []

    class Model(_Embedder):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            embedded.append(list(texts))
            return super().embed(texts)

    memory = Memory(store, Limits(), semantic=Semantic(Model(), index))
    project = unique("messages")
    message = {"role": "user", "content": "Atlas said the office moves to Dublin next year."}
    memory.store_messages(project, MessagesRequest.model_validate({"messages": [message]}))
    memory.index_pending(project)
    index.calls.clear()
    embedded.clear()
    meter.reset()
    meter.latency = 0.02  # so that calls sent together surely overlap
    question = "Where does Atlas Moren work?"
    body = bodies.recall(
        memory.recall(project, RecallRequest.model_validate({"question": question}))
    )
    assert body["degraded"] == [] and body["facts"] == [] and body["passages"]
    # One model call: the question's vector and its twin's without the written names
    # (step 4's topic ranking), none for its spans.
    assert embedded == [[question, "Where does someone someone work?"]]
    assert "search entity" not in index.calls
    # DynamoDB: the question's names (one BatchGetItem), the entity listing (a Query per
    # shard, in parallel), then the passages found and their messages' times (one
    # BatchGetItem); beside the first wave, the project's pending erasures. No
    # BatchGetItem confirms a similar name.
    assert meter.sent["BatchGetItem"] == 2
    assert meter.sent["Query"] >= LISTING_SHARDS + PENDING_ERASURES
    assert meter.beside_first_wave()
