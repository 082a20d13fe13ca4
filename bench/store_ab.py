"""Storing before and after a change, interleaved in one process on one store: another
revision's use cases against this tree's, batch by batch.

    python -m bench.store_ab --base REV [--batches 100] [--embeddings local]

The base revision's package is imported as `taisce_base` (bench/recall_ab.py says how).
Both open the same embedded store in a fresh folder; each writes its own project, and
the sides alternate which goes first every batch, so both see the same load and the
same growing file. Each batch is 100 facts (a contradiction key on half of them, so the
validity prelude runs) and 20 messages, stored through Memory.store_facts and
store_messages: the domain and the adapter, not the gateway, which both share. Prints
p50 / p95 ms a batch and facts and messages a second of both sides. With
`--embeddings local` a side that embeds on write (read your writes) pays for its
model calls in the batch; a side that leaves them to the worker does not (no worker
runs here).
"""

from __future__ import annotations

import argparse
import importlib
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.recall_ab import _import_base
from bench.recall_speed import _percentiles
from taisce.evaluation.harness import embedded_run

SIDES = ("before", "after")
FACTS = 100
MESSAGES = 20


def _facts(batch: int, count: int = FACTS) -> dict[str, Any]:
    return {
        "facts": [
            {
                "subject": f"Person {batch}-{n % 37}",
                "predicate": "works at" if n % 2 else f"likes thing {n}",
                "object": f"Company {n % 11}",
                "source_role": ("user", "assistant", "tool")[n % 3],
            }
            for n in range(count)
        ]
    }


def _messages(batch: int, count: int = MESSAGES) -> dict[str, Any]:
    return {
        "messages": [
            {
                "role": ("user", "assistant")[n % 2],
                "content": f"Message {n} of batch {batch}: Person {batch}-{n} met Company "
                f"{n % 11} about the plan for week {n}. " * 3,
                "source": f"chat-{batch}",
            }
            for n in range(count)
        ]
    }


def run(args: argparse.Namespace) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {side: [] for side in SIDES}
    with tempfile.TemporaryDirectory(prefix="taisce-base-") as base_folder:
        _import_base(args.base, Path(base_folder))
        with embedded_run("taisce-store-ab-", args.embeddings, 16_000):
            after = importlib.import_module("taisce.api.wiring").services()
            before = importlib.import_module("taisce_base.api.wiring").services()
            sides = {
                "before": (before.memory, "taisce_base"),
                "after": (after.memory, "taisce"),
            }
            for batch in range(args.batches):
                order = SIDES if batch % 2 == 0 else SIDES[::-1]
                for side in order:
                    memory, package = sides[side]
                    ingest = importlib.import_module(f"{package}.domain.ingest")
                    facts = ingest.FactsRequest.model_validate(_facts(batch, args.facts))
                    given = _messages(batch, args.messages)
                    messages = ingest.MessagesRequest.model_validate(given)
                    began = time.perf_counter()
                    memory.store_facts(f"ab-{side}", facts)
                    memory.store_messages(f"ab-{side}", messages)
                    times[side].append((time.perf_counter() - began) * 1000)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", required=True, help="the revision measured as before")
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--embeddings", default="none", help="none (default) or local")
    parser.add_argument("--facts", type=int, default=FACTS, help="facts a batch")
    parser.add_argument("--messages", type=int, default=MESSAGES, help="messages a batch")
    args = parser.parse_args(argv)
    times = run(args)
    print(
        f"- {args.batches} batches a side of {args.facts} facts and {args.messages} messages, "
        f"embeddings {args.embeddings}"
    )
    print("\n| side | p50 / p95 ms a batch | facts + messages a second |")
    print("|---|---:|---:|")
    for side in SIDES:
        cuts = _percentiles(times[side])
        p50, p95 = cuts["p50"], cuts["p95"]
        rate = (args.facts + args.messages) * len(times[side]) / (sum(times[side]) / 1000)
        print(f"| {side} | {p50:.2f} / {p95:.2f} | {rate:,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
