"""Extraction benchmark: storing throughput with extraction off and on, and the delay
from storing a message to recalling its extracted facts.

    .venv/bin/python -m bench.extraction_bench [--messages 2000] [--delays 60] [--json FILE]

Everything goes through the local gateway (the Lambda authorizer, then the Powertools
handler, as `taisce serve` runs them) on a fresh embedded store, embeddings off.

1. Storing: messages in batches of 100, once with TAISCE_EXTRACTOR=none and once with
   TAISCE_EXTRACTOR=openai (each message then also writes its pending mark; the worker
   is not running, so only storing is timed).
2. Delay: with the server's background worker running (poll interval 0.2 s, as `taisce
   serve` runs it), one message at a time is stored and a recall naming its subject is
   repeated every 5 ms until the extracted fact comes back. The model is a local
   OpenAI-compatible endpoint (tests/openai_replay.py) answering each message at once
   with a recorded-shape answer, so the figure is Taisce's own delay: a real model's
   answer time adds to it.

It prints figures and asserts none: timings belong to the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from taisce.api.wiring import services
from taisce.credentials import new_credential_id, new_secret, secret_hash
from taisce.domain.model import Credential
from taisce.evaluation.machine import describe_machine
from taisce.local.gateway import Gateway
from taisce.local.routes import read_api
from taisce.local.worker import Worker
from tests.openai_replay import ChatReplay

TEMPLATE = Path(__file__).resolve().parents[1] / "template.yaml"
BATCH = 100
PROJECT = "bench"
MODEL = "bench-model"
POLL_SECONDS = 0.005


def _content(n: int) -> str:
    return (
        f"Quick update from Person {n}. I work at Org {n} as an analyst, on the billing "
        f"team, and I have been there since 20{n % 25:02d}. The weather was fine today."
    )


def _answer(n: int) -> dict[str, Any]:
    """An answer in the shape an OpenAI-compatible endpoint gives for message n."""
    facts = {
        "facts": [
            {
                "subject": f"Person {n}",
                "predicate": "works at",
                "object": f"Org {n}",
                "object_kind": "entity",
                "statement": f"Person {n} works at Org {n}.",
                "quote": f"I work at Org {n}",
                "context": None,
            },
            {
                "subject": f"Person {n}",
                "predicate": "works as",
                "object": "analyst",
                "object_kind": "value",
                "statement": f"Person {n} works as an analyst.",
                "quote": "as an analyst",
                "context": None,
            },
        ]
    }
    return {
        "status": 200,
        "headers": {"Content-Type": "application/json"},
        "body": {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "model": MODEL,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": json.dumps(facts)},
                    "finish_reason": "stop",
                }
            ],
        },
    }


def percentiles(values: Sequence[float]) -> dict[str, float]:
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50": statistics.median(values), "p95": cuts[94], "max": max(values)}


class Client:
    def __init__(self, gateway: Gateway, secret: str) -> None:
        self.gateway = gateway
        self.headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}

    def post(self, target: str, payload: dict[str, Any], expect: int) -> dict[str, Any]:
        reply = self.gateway.handle(
            "POST", target, self.headers, json.dumps(payload).encode(), "127.0.0.1"
        )
        if reply.status != expect:
            raise RuntimeError(f"POST {target}: {reply.status} {reply.body[:300]!r}")
        return json.loads(reply.body)


def _open(folder: Path, extractor: str, replay: ChatReplay | None) -> Client:
    """Fresh services on `folder` with these settings, and a credential."""
    os.environ.update({"TAISCE_DATA_DIR": str(folder), "TAISCE_EMBEDDINGS": "none"})
    os.environ["TAISCE_EXTRACTOR"] = extractor
    # Extraction alone: report summaries by the model would ask the replay endpoint
    # for answers it does not hold.
    os.environ["TAISCE_REPORT_SUMMARIES"] = "statements"
    if replay is not None:
        os.environ["TAISCE_EXTRACTOR_MODEL"] = MODEL
        os.environ["TAISCE_EXTRACTOR_BASE_URL"] = replay.base_url
    services.cache_clear()
    secret = new_secret()
    services().credentials.add_credential(
        Credential(new_credential_id(), PROJECT, "bench", datetime.now(UTC).isoformat()),
        secret_hash(secret),
    )
    return Client(Gateway(read_api(TEMPLATE)), secret)


def store_throughput(client: Client, count: int, offset: int) -> dict[str, float]:
    messages = [
        {"id": f"m-{n}", "role": "user", "content": _content(n)}
        for n in range(offset, offset + count)
    ]
    # One batch first, untimed: the handler's imports and the file's first pages.
    warm = [{"id": f"w-{n}", "role": "user", "content": _content(n)} for n in range(BATCH)]
    client.post("/v1/messages", {"messages": warm}, 202)
    times = []
    for i in range(0, count, BATCH):
        started = time.perf_counter()
        client.post("/v1/messages", {"messages": messages[i : i + BATCH]}, 202)
        times.append(time.perf_counter() - started)
    return {
        "messages": count,
        "per_second": count / sum(times),
        "batch_p50_ms": statistics.median(times) * 1000,
    }


def delays(client: Client, count: int, offset: int) -> dict[str, float]:
    worker = Worker(services().memory)
    worker.start()
    measured = []
    try:
        for n in range(offset, offset + count):
            message = {"id": f"d-{n}", "role": "user", "content": _content(n)}
            started = time.perf_counter()
            client.post("/v1/messages", {"messages": [message]}, 202)
            question = {"question": f"Where does Person {n} work?", "surfaces": ["facts"]}
            while not client.post("/v1/recalls", question, 200)["facts"]:
                if time.perf_counter() - started > 30:
                    raise RuntimeError(f"message {n}: no facts after 30 s")
                time.sleep(POLL_SECONDS)
            measured.append(time.perf_counter() - started)
            # Spread the stores over the worker's cycle, as independent clients would.
            time.sleep(0.037 * (n % 7))
    finally:
        # Not joined: it is a daemon and ends within one interval.
        worker.stop()
    return {"messages": count, **{k: v * 1000 for k, v in percentiles(measured).items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=2_000, help="messages stored per mode")
    parser.add_argument("--delays", type=int, default=60, help="messages timed for the delay")
    parser.add_argument("--json", help="write the figures to this file too")
    args = parser.parse_args(argv)

    load_before = os.getloadavg()[0]
    total_started = time.perf_counter()
    first = args.messages
    with tempfile.TemporaryDirectory(prefix="taisce-xbench-") as tmp, ChatReplay() as replay:
        replay.matched = [
            {"match": f"Person {n}. ", "response": _answer(n)}
            for n in range(first, first + args.delays)
        ]
        off = store_throughput(_open(Path(tmp) / "off", "none", None), args.messages, 0)
        client = _open(Path(tmp) / "on", "openai", replay)
        on = store_throughput(client, args.messages, 0)
        # The worker would extract the throughput run's messages first: clear them.
        memory = services().memory
        with memory.store.file.write() as db:  # type: ignore[attr-defined]
            db.execute("DELETE FROM pending_extractions")
        delay = delays(client, args.delays, first)
    services.cache_clear()

    figures = {
        "date": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": describe_machine(),
        "load_average_before_after": [load_before, os.getloadavg()[0]],
        "storing_extraction_off": off,
        "storing_extraction_on": on,
        "store_to_recall_ms": delay,
        "seconds": time.perf_counter() - total_started,
    }
    print(
        f"date: {figures['date']}; load average {load_before:.2f} before, "
        f"{os.getloadavg()[0]:.2f} after; {figures['seconds']:.1f} s in all"
    )
    machine = figures["machine"]
    print(f"machine: {machine['platform']}, {machine['cpu']}, {machine['cpu_count']} CPUs")
    print()
    print("| extraction | messages | messages/s | batch of 100, p50 ms |")
    print("|---|---:|---:|---:|")
    for name, row in (("off (none)", off), ("on (marks written)", on)):
        print(
            f"| {name} | {row['messages']:,} | {row['per_second']:,.0f} | "
            f"{row['batch_p50_ms']:.2f} |"
        )
    print()
    print("| store → recallable facts | messages | p50 ms | p95 ms | max ms |")
    print("|---|---:|---:|---:|---:|")
    print(
        f"| worker every 0.2 s, replayed model | {delay['messages']} | {delay['p50']:.0f} | "
        f"{delay['p95']:.0f} | {delay['max']:.0f} |"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
