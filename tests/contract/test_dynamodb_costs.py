"""What a recall costs on DynamoDB: round trips and read capacity units, counted through
botocore's event hooks on the adapter's client (the port exposes nothing for it).

Read units are computed from the items each call returns, by DynamoDB's rules: a Query
costs the total size of the items it reads rounded up to 4 KB; a BatchGetItem costs
each key's item rounded up to 4 KB, and a key with no item still costs one unit. A
strongly consistent unit is 1 read request unit on demand, an eventually consistent
one 0.5. moto answers ReturnConsumedCapacity with placeholders (1.0 per Query, one per
BatchGetItem key), so those are not used.

Run as a script for the README's figures (the bench's synthetic graph, through the
domain as the recall handler runs it):

    .venv/bin/python -m tests.contract.test_dynamodb_costs [--facts 1000] [--recalls 200]
                                                           [--latency-ms 5]
"""

from __future__ import annotations

import argparse
import json
import math
import random
import statistics
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from taisce.adapters.dynamodb_store import DynamoDbStore, item_size
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.ingest import FactsRequest
from taisce.domain.memory import Memory
from taisce.domain.model import ROLES
from taisce.domain.names import MAX_CANDIDATES, candidate_keys
from tests.contract.factories import unique
from tests.moto_server import MotoDynamoDb, shared_moto

READ_UNIT = 4096
# On-demand price of read request units in us-east-1 (2025): $0.25 per million.
DOLLARS_PER_MILLION_READ_UNITS = 0.25


# Every recall also reads the project's pending erasures (one strongly consistent Query
# of a small partition, sent beside its first wave: 1 read unit), to hide their names.
PENDING_ERASURES = 1


class Meter:
    """Counts one client's round trips (HTTP requests, retries included) per operation,
    the read units its reads consume (from the items they return), and the waves: calls
    whose spans overlap in time went out together (the adapter's parallel reads), so a
    recall's waves are its sequential steps. `latency` (seconds) is slept before every
    request is sent, as an in-region round trip would add (calls made in parallel sleep
    at once)."""

    def __init__(self, client: Any, latency: float = 0.0) -> None:
        self.sent: Counter[str] = Counter()
        self.read_units = 0.0  # strongly consistent
        self.latency = latency
        self._asked = threading.local()  # keys asked by this thread's BatchGetItem
        self._spans: list[tuple[float, float]] = []
        self._started = threading.local()
        self._lock = threading.Lock()
        events = client.meta.events
        events.register("before-call.dynamodb", self._begin)
        events.register("before-send.dynamodb", self._send)
        events.register("provide-client-params.dynamodb.BatchGetItem", self._batch_params)
        events.register("after-call.dynamodb", self._after)

    def reset(self) -> None:
        with self._lock:
            self.sent.clear()
            self.read_units = 0.0
            self._spans.clear()

    def waves(self) -> int:
        """Groups of calls whose spans overlap: one per sequential step."""
        count, end = 0, -1.0
        for start, stop in sorted(self._spans):
            if start > end:
                count += 1
            end = max(end, stop)
        return count

    def _begin(self, **_: Any) -> None:
        self._started.at = time.perf_counter()

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
        with self._lock:
            self._spans.append((self._started.at, time.perf_counter()))
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
    store = DynamoDbStore(moto.table, client=moto.client())
    yield Memory(store, Limits(bundle_characters=16_000, max_rows=200)), Meter(store.client)
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


def _recall(memory: Memory, project: str, question: str, hops: int) -> dict[str, Any]:
    request = RecallRequest.model_validate(
        {"question": question, "hops": hops, "source_roles": list(ROLES)}
    )
    return memory.recall(project, request)


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
    # All three facts of Atlas are read as candidates; the one that bears on "work" is kept.
    assert [f["predicate"] for f in body["facts"]] == ["works at"]
    assert meter.sent == {"BatchGetItem": 1, "Query": 1 + PENDING_ERASURES}
    # A unit per candidate name (15 spans of 5 tokens) + one Query of 3 small items.
    assert len(candidate_keys("Where does Atlas work?")) == 15
    assert meter.read_units == 15 + 1 + PENDING_ERASURES

    meter.reset()
    body = _recall(memory, project, "Where does Atlas work?", hops=2)
    assert [f["predicate"] for f in body["facts"]] == ["works at"]
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


# -- figures ---------------------------------------------------------------------------


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def figures(
    moto: MotoDynamoDb, n_facts: int, n_recalls: int, latency: float = 0.005, seed: int = 7
) -> dict[str, Any]:
    """Per recall, hops 1 and 2, on the bench's graph: round trips, waves and read
    units; and the recall's time (p50/p95) as is and with `latency` seconds slept before
    every call (waves are counted there: calls of one wave then surely overlap)."""
    from bench.recall_bench import make_corpus, make_questions

    corpus = make_corpus(n_facts, 0, seed)
    store = DynamoDbStore(moto.table, client=moto.client())
    memory = Memory(store, Limits(bundle_characters=16_000, max_rows=200))
    project = unique("figures")
    for start in range(0, len(corpus.facts), 100):
        request = FactsRequest.model_validate({"facts": corpus.facts[start : start + 100]})
        memory.store_facts(project, request)
    questions = make_questions(random.Random(seed), corpus.known(), n_recalls)
    meter = Meter(store.client)
    rows = []
    for hops in (1, 2):
        trips: list[int] = []
        units: list[float] = []
        waves: list[int] = []
        by_operation: Counter[str] = Counter()
        returned: list[int] = []
        timings: dict[float, list[float]] = {0.0: [], latency: []}
        truncated = 0
        names = []
        for question in questions:
            for injected in timings:
                meter.latency = injected
                meter.reset()
                started = time.perf_counter()
                body = _recall(memory, project, question, hops)
                timings[injected].append((time.perf_counter() - started) * 1000)
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
                "ms_p50_p95_no_latency": [
                    round(_percentile(timings[0.0], q), 1) for q in (0.5, 0.95)
                ],
                f"ms_p50_p95_{latency * 1000:g}ms_per_call": [
                    round(_percentile(timings[latency], q), 1) for q in (0.5, 0.95)
                ],
                "dollars_per_million_recalls_strong": round(
                    mean_units * DOLLARS_PER_MILLION_READ_UNITS, 2
                ),
                "dollars_per_million_recalls_eventual": round(
                    mean_units * DOLLARS_PER_MILLION_READ_UNITS / 2, 2
                ),
            }
        )
    # What one call costs here without injection (moto's own time and the client's), to
    # read the timings against: a BatchGetItem of one name, 50 times.
    single: list[float] = []
    meter.latency = 0.0
    for _ in range(50):
        started = time.perf_counter()
        store.known_names(project, ["x"])
        single.append((time.perf_counter() - started) * 1000)
    store.client.close()
    degrees = sorted(corpus.degree.values())
    return {
        "facts": n_facts,
        "entities": len(degrees),
        "degree_median_max": [degrees[len(degrees) // 2], degrees[-1]],
        "recalls_per_row": n_recalls,
        "settings": "source_roles all four, bundle 16000 characters, max_rows 200",
        "latency_injected_ms": latency * 1000,
        "one_call_ms_p50_p95_no_latency": [round(_percentile(single, q), 1) for q in (0.5, 0.95)],
        "price": f"${DOLLARS_PER_MILLION_READ_UNITS} per million read request units "
        "(on demand, us-east-1, 2025)",
        "rows": rows,
    }


def test_figures_on_a_small_graph(moto: MotoDynamoDb) -> None:
    # 20 ms a call keeps the calls of one wave overlapping on a loaded machine.
    result = figures(moto, n_facts=300, n_recalls=20, latency=0.02)
    hop1, hop2 = result["rows"]
    assert hop1["per_operation_mean"]["BatchGetItem"] == 1
    # Questions name 1 or 2 entities; and the pending erasures' Query.
    assert 1 + PENDING_ERASURES <= hop1["per_operation_mean"]["Query"] <= 2 + PENDING_ERASURES
    assert hop2["round_trips_mean"] > hop1["round_trips_mean"]
    assert hop1["read_units_mean"] >= hop1["candidate_names_mean"]
    # The names in one wave, the matched entities in one, their neighbours in one.
    assert hop1["waves_max"] <= 2
    assert hop2["waves_max"] <= 3


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=1000)
    parser.add_argument("--recalls", type=int, default=200)
    parser.add_argument("--latency-ms", type=float, default=5.0)
    args = parser.parse_args(argv)
    moto = shared_moto()
    try:
        result = figures(moto, args.facts, args.recalls, args.latency_ms / 1000)
        print(json.dumps(result, indent=2))
    finally:
        moto.stop()


if __name__ == "__main__":
    main()
