"""Erasure benchmark: how long erasing one well-known entity takes.

    .venv/bin/python -m bench.erasure_bench [--facts 1000] [--passages 10000]
                                            [--background 10000] [--repeat 3] [--dynamodb]
                                            [--latency-ms 5]

In a fresh store per run, one entity ("Atlas Example") gets `--facts` facts (half as
subject, half as entity object, across all four roles) and `--passages` passages
naming it (four to a message); the rest of the project holds `--background` facts
and as many passages that do not name it, so the scans have something to read past.
Reports are built (as the worker would) before the erasure, so it drops them too.
Then, with embeddings off, the embedded store's erasure is timed as its request runs
it (`Memory.erase_now`, answered 200). `--dynamodb` also runs it once on DynamoDB through
moto's server over HTTP, as AWS runs it: the request is accepted (`request_erasure`,
deferred: tombstones and the pending record, answered 202) and the worker completes
it (`complete_erasure`, in bounded steps), each timed with its DynamoDB calls counted,
`--latency-ms` slept before every call (5 ms: about an in-region round trip; moto
answers in well under that, but serves one request at a time, so its own time adds
too). API Gateway gives a synchronous route 30 s; the worker has 900 s a message,
and an erasure that needs more goes on in the next message.

It prints figures and asserts none: timings belong to the machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from taisce.adapters.sqlite.store import SqliteStore
from taisce.domain.controls import Limits
from taisce.domain.ingest import split_passages
from taisce.domain.model import ROLES, Fact, Message
from taisce.domain.names import normalize_name
from taisce.evaluation.machine import describe_machine
from taisce.service.memory import Memory

NAME = "Atlas Example"
PROJECT = "bench-erasure"
NOW = "2026-01-01T00:00:00Z"
SENTENCE = (
    "{name} wrote note {n} about the quarterly plan, the budget review and the "
    "follow-up meeting with the team in the Galway office, as agreed in spring."
)


def _fact(n: int, subject: str, obj: str, role: str) -> Fact:
    return Fact(
        id=f"f{n}",
        subject=subject,
        subject_key=normalize_name(subject),
        predicate="knows",
        object=obj,
        object_kind="entity",
        object_key=normalize_name(obj),
        statement=f"{subject} knows {obj}",
        source_role=role,  # type: ignore[arg-type]
        quote=None,
        context=None,
        message_id=None,
        valid_from=None,
        valid_to=None,
        recorded_at=NOW,
    )


def _messages(prefix: str, name: str, passages: int) -> list[Message]:
    messages = []
    for m in range(0, passages, 4):
        text = " ".join(SENTENCE.format(name=name, n=m + i) for i in range(4))
        messages.append(Message(f"{prefix}{m}", ROLES[m % 4], text, "chat", NOW, NOW))  # type: ignore[arg-type]
    return messages


def load(store: Any, facts: int, passages: int, background: int) -> None:
    held: list[Fact] = []
    for n in range(facts):
        other = f"Person {n % 300}"
        pair = (NAME, other) if n % 2 else (other, NAME)
        held.append(_fact(n, *pair, ROLES[n % 4]))
    for n in range(background):
        held.append(_fact(facts + n, f"Person {n % 997}", f"Place {n % 211}", ROLES[n % 4]))
    for i in range(0, len(held), 100):
        store.put_facts(PROJECT, held[i : i + 100])
    for prefix, name, count in (("m", NAME, passages), ("b", "Someone Else", background)):
        messages = _messages(prefix, name, count)
        for i in range(0, len(messages), 50):
            batch = messages[i : i + 50]
            store.put_messages(PROJECT, batch, [p for m in batch for p in split_passages(m)])


class _Calls:
    """Counts the store's DynamoDB calls, and sleeps `latency` seconds before each is
    sent (an in-region round trip; calls made in parallel sleep at once): those sent
    through the client (its hook) and the reads the adapter sends directly
    (adapters/dynamodb/reads.py), which the client's hooks do not see."""

    def __init__(self, store: Any, latency: float) -> None:
        from taisce.adapters.dynamodb.reads import DirectReads

        self.count = 0
        self.latency = latency
        self._lock = threading.Lock()
        store.client.meta.events.register("before-send.dynamodb", self._send)
        # The store's direct reader, made now and counted on this instance only.
        reads = DirectReads.of(store.client, store.client.meta.config)
        if reads is not None and store.table.direct_reads:
            sent = reads.call

            def counted(operation: str, params: dict[str, Any]) -> dict[str, Any]:
                self._send()
                return sent(operation, params)

            reads.call = counted  # type: ignore[method-assign]
            store.table._direct = reads

    def _send(self, **_: Any) -> None:
        with self._lock:
            self.count += 1
        if self.latency:
            time.sleep(self.latency)


def run(open_store: Callable[[], Any], args: argparse.Namespace) -> dict[str, Any]:
    """One erasure in a fresh store. The embedded store erases in the request
    (`Memory.erase_now`); on DynamoDB the request is accepted (`request_erasure`, deferred,
    as the erasures function runs it) and then completed as the worker does
    (`complete_erasure`, its bounded steps), each timed and its calls counted."""
    store = open_store()
    memory = Memory(store, Limits(bundle_characters=16_000, max_rows=200))
    load(store, args.facts, args.passages, args.background)
    memory.rebuild_reports(PROJECT)
    result: dict[str, Any] = {}
    if hasattr(store, "client"):
        calls = _Calls(store, args.latency_ms / 1000)
        started = time.perf_counter()
        accepted = memory.request_erasure(PROJECT, NAME, defer=True)
        result["accept_s"] = time.perf_counter() - started
        result["accept_calls"] = calls.count
        calls.count = 0
        started = time.perf_counter()
        done = memory.complete_erasure(PROJECT, accepted.id)
        result["complete_s"] = time.perf_counter() - started
        result["complete_calls"] = calls.count
        assert done is not None and done.status == "done"
        result["counts"] = done.counts
    else:
        started = time.perf_counter()
        result["counts"] = memory.erase_now(PROJECT, NAME)
        result["complete_s"] = time.perf_counter() - started
    close = getattr(store, "close", None)
    if close:
        close()
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=1_000)
    parser.add_argument("--passages", type=int, default=10_000)
    parser.add_argument("--background", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dynamodb", action="store_true", help="also once on moto's server")
    parser.add_argument(
        "--latency-ms",
        type=float,
        default=5.0,
        help="on DynamoDB, slept before every call of the erasure (an in-region round trip)",
    )
    parser.add_argument("--no-sqlite", action="store_true", help="skip the embedded store")
    args = parser.parse_args(argv)

    print(f"date: {datetime.now(UTC).isoformat(timespec='seconds')}")
    print(f"machine: {describe_machine()}")
    print(
        f"entity: {args.facts:,} facts, {args.passages:,} passages naming it; background: "
        f"{args.background:,} facts, {args.background:,} passages; embeddings none"
    )
    print()
    print(
        "| store | runs | accept s | accept calls | complete s (median / min / max) | "
        "complete calls | facts | passages | messages | reports |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    results: list[dict[str, Any]] = []
    for _ in range(0 if args.no_sqlite else args.repeat):
        with tempfile.TemporaryDirectory() as folder:
            results.append(run(lambda f=folder: SqliteStore(Path(f) / "b.sqlite3"), args))
    if results:
        _row("embedded (SQLite), in the request", results)
    if args.dynamodb:
        from tests.moto_server import start_moto

        moto = start_moto()
        try:
            result = run(moto.store, args)
        finally:
            moto.stop()
        _row(
            f"DynamoDB on moto (HTTP), {args.latency_ms:g} ms a call: 202, then the worker",
            [result],
        )
    return 0


def _row(label: str, results: list[dict[str, Any]]) -> None:
    times = [r["complete_s"] for r in results]
    counts = results[-1]["counts"]
    last = results[-1]
    accept = f"{last['accept_s']:.3f}" if "accept_s" in last else "-"
    accept_calls = f"{last['accept_calls']:,}" if "accept_calls" in last else "-"
    complete_calls = f"{last['complete_calls']:,}" if "complete_calls" in last else "-"
    print(
        f"| {label} | {len(results)} | {accept} | {accept_calls} | "
        f"{statistics.median(times):.2f} / {min(times):.2f} / {max(times):.2f} | "
        f"{complete_calls} | {counts['facts']:,} | {counts['passages']:,} | "
        f"{counts['messages']:,} | {counts['reports']:,} |",
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
