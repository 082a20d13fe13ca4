"""Erasure of a name made of repeated words: how its cost grows with the text.

    .venv/bin/python -m bench.erasure_repeats [--words 10000 20000 40000]
                                              [--name-words 160] [--messages 2] [--repeat 3]

The costliest text for an erasure: a message of `--words` copies of one word ("xy"),
and a name of `--name-words` copies of it, which occurs at every word of the run
(thousands of overlapping spans). In a fresh embedded store per run, `--messages` such
messages are stored (each ending in a sentence that does not name it) and the name is
erased as its request runs it (`Memory.erase_now`, embeddings off). Prints the median,
fastest and slowest of `--repeat` runs per size and the time per thousand words, which
stays level when the cost is linear in the text. Asserts nothing: timings belong to
the machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from taisce.adapters.sqlite.store import SqliteStore
from taisce.domain.controls import Limits
from taisce.domain.ingest import split_passages
from taisce.domain.model import Message
from taisce.evaluation.machine import describe_machine
from taisce.service.memory import Memory

PROJECT = "bench-repeats"
NOW = "2026-01-01T00:00:00Z"
WORD = "xy"


def erase_once(
    folder: Path, words: int, name_words: int, count: int = 2
) -> tuple[float, dict[str, int]]:
    store = SqliteStore(folder / "r.sqlite3")
    try:
        text = " ".join([WORD] * words) + ". Maya lives in Galway."
        messages = [Message(f"m{i}", "user", text, "chat", NOW, NOW) for i in range(count)]
        store.put_messages(PROJECT, messages, [p for m in messages for p in split_passages(m)])
        memory = Memory(store, Limits(bundle_characters=16_000, max_rows=200))
        name = " ".join([WORD] * name_words)
        # A name that is no entity and masks most messages needs its preview's token
        # (the guard against erasing a common word); the preview is not timed.
        token = memory.preview_erasure(PROJECT, name).token
        started = time.perf_counter()
        counts = memory.erase_now(PROJECT, name, token=token)
        return time.perf_counter() - started, counts
    finally:
        store.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--words", type=int, nargs="+", default=[10_000, 20_000, 40_000])
    parser.add_argument("--name-words", type=int, default=160)
    parser.add_argument("--messages", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    print(f"date: {datetime.now(UTC).isoformat(timespec='seconds')}")
    print(f"machine: {describe_machine()}")
    print(
        f"{args.messages} messages of N repeated words; a name of {args.name_words} of them; "
        "embedded store"
    )
    print()
    print("| words a message | runs | erase s (median / min / max) | ms per 1k words | passages |")
    print("|---:|---:|---:|---:|---:|")
    for words in args.words:
        times: list[float] = []
        counts: dict[str, int] = {}
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as folder:
                seconds, counts = erase_once(Path(folder), words, args.name_words, args.messages)
                times.append(seconds)
        median = statistics.median(times)
        print(
            f"| {words:,} | {len(times)} | {median:.2f} / {min(times):.2f} / {max(times):.2f} | "
            f"{1000 * median / (args.messages * words / 1000):.1f} | "
            f"{counts.get('passages', 0):,} |",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
