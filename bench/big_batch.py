"""A maximum-size POST /v1/messages on DynamoDB (moto's server over HTTP): 10 messages
of 99,000 characters stored as the messages function stores them, with `--latency-ms`
slept before every call (an in-region round trip); prints the calls, the sequential
waves (calls whose spans overlap went out together), the items written and the write
units DynamoDB would bill for them (1 KB or part an item written, twice in a
transaction), and the time.

    .venv/bin/python -m bench.big_batch [--latency-ms 5] [--messages 10]
"""

from __future__ import annotations

import argparse
import math
import sys
import threading
import time
from datetime import UTC, datetime
from typing import Any

from taisce.adapters.dynamodb.codec import item_size
from taisce.adapters.dynamodb.store import DynamoDbStore
from taisce.domain.controls import Limits
from taisce.domain.ingest import MessagesRequest
from taisce.evaluation.machine import describe_machine
from taisce.service.memory import Memory
from tests.contract.test_dynamodb_costs import Meter
from tests.moto_server import start_moto

LONGEST = 99_000
SENTENCE = "Atlas wrote a long note about the plan, the budget and the Galway office today. "


class WriteUnits:
    """The items a client's writes put or delete and the write units they bill, from
    each call's parameters (a retry of a call counts again, as DynamoDB bills it)."""

    def __init__(self, client: Any) -> None:
        self.items = 0
        self.units = 0
        self._lock = threading.Lock()
        events = client.meta.events
        for operation in ("BatchWriteItem", "PutItem", "UpdateItem", "TransactWriteItems"):
            events.register(f"provide-client-params.dynamodb.{operation}", self._params)

    def _params(self, params: dict[str, Any], model: Any, **_: Any) -> None:
        writes: list[tuple[dict[str, Any] | None, int]] = []
        if model.name == "BatchWriteItem":
            for requests in params["RequestItems"].values():
                writes += [(r.get("PutRequest", {}).get("Item"), 1) for r in requests]
        elif model.name == "TransactWriteItems":
            writes += [(op.get("Put", {}).get("Item"), 2) for op in params["TransactItems"]]
        else:  # PutItem, UpdateItem (an update is counted as one unit)
            writes.append((params.get("Item"), 1))
        with self._lock:
            for item, factor in writes:
                self.items += 1
                size = item_size(item) if item is not None else 1
                self.units += factor * max(1, math.ceil(size / 1024))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency-ms", type=float, default=5.0)
    parser.add_argument("--messages", type=int, default=10)
    args = parser.parse_args(argv)
    content = (SENTENCE * (LONGEST // len(SENTENCE) + 1))[:LONGEST].strip()
    request = MessagesRequest.model_validate(
        {"messages": [{"role": "user", "content": content} for _ in range(args.messages)]}
    )
    moto = start_moto()
    try:
        store = DynamoDbStore(moto.table, client=moto.client(), direct_reads=False)
        meter = Meter(store.client, latency=args.latency_ms / 1000)
        written = WriteUnits(store.client)
        memory = Memory(store, Limits(bundle_characters=16_000, max_rows=200))
        started = time.perf_counter()
        memory.store_messages("bench-big-batch", request)
        seconds = time.perf_counter() - started
    finally:
        moto.stop()
    print(f"date: {datetime.now(UTC).isoformat(timespec='seconds')}")
    print(f"machine: {describe_machine()}")
    calls = ", ".join(f"{k} {v:,}" for k, v in sorted(meter.sent.items()))
    print(
        f"{args.messages} x {LONGEST:,} characters, {args.latency_ms:g} ms a call: "
        f"{meter.round_trips():,} calls ({calls}), {meter.waves()} waves, "
        f"{written.items:,} items, {written.units:,} write units, {seconds:.2f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
