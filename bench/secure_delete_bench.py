"""What erasing without leaving bytes costs: the embedded store with SQLite's
`secure_delete` ON and the purge after an erasure (full-text optimize, WAL truncated),
against the same store with `secure_delete` OFF and no purge (as before), in one run.

    .venv/bin/python -m bench.secure_delete_bench [--facts 5000] [--messages 2000]
                                                  [--rounds 3] [--seed 7]

Each round stores the recall benchmark's synthetic memory (bench/corpus.py) in a
fresh data folder through the local gateway (the authorizer, then the Powertools
handler, as `taisce serve` runs them), once per mode, the order alternating between
rounds so that a machine busy with other work weighs on both alike. Then, on the
domain: the worker's report rebuild (it deletes the marks it read), and the erasure of
the most connected entity. "before" turns secure_delete off on the handlers' own
connection and skips the purge; nothing else differs. Embeddings off; but every
passage and name is put in the vector index's tables (random vectors, the real text:
the full-text index is what the purge rewrites), as the worker would with a model.

It prints figures and asserts none: timings belong to the machine.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench.corpus import Corpus, make_corpus
from bench.recall_bench import TEMPLATE, Client, store_all
from taisce.adapters.sqlite.store import SqliteStore
from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.api.wiring import services
from taisce.credentials import new_credential_id, new_secret, secret_hash
from taisce.domain.model import Credential, VectorItem
from taisce.evaluation.machine import describe_machine
from taisce.local.gateway import Gateway
from taisce.local.routes import read_api

PROJECT = "bench"
MODES = ("before", "after")
DIMENSIONS = 384  # the local model's


def _index_everything(store: SqliteStore, index: SqliteVectorIndex, seed: int) -> int:
    """Index what the worker would (every pending passage and name), with random
    vectors in place of the model's; returns how many items."""
    rng = random.Random(seed)
    pending = store.pending_vectors(PROJECT, 10**9)
    by_kind: dict[str, list[VectorItem]] = {}
    for p in pending:
        vector = [rng.gauss(0, 1) for _ in range(DIMENSIONS)]
        by_kind.setdefault(p.kind, []).append(VectorItem(p.id, vector, p.role, p.text))
    for kind, items in by_kind.items():
        for i in range(0, len(items), 256):
            index.upsert(PROJECT, kind, items[i : i + 256])  # type: ignore[arg-type]
    store.clear_pending_vectors(PROJECT, pending)
    return len(pending)


def _most_connected(corpus: Corpus) -> str:
    key = corpus.degree.most_common(1)[0][0]
    for names in corpus.names.values():
        for name in names:
            if name.casefold() == key:
                return name
    return key


def run_once(gateway: Gateway, corpus: Corpus, mode: str) -> dict[str, float]:
    folder = Path(tempfile.mkdtemp(prefix=f"taisce-secdel-{mode}-"))
    os.environ["TAISCE_DATA_DIR"] = str(folder)
    services.cache_clear()
    try:
        memory = services().memory
        store = memory.store
        assert isinstance(store, SqliteStore), "the benchmark measures the embedded store"
        store.mark_vectors = True  # what the worker would index with a model
        index = SqliteVectorIndex(store.path, DIMENSIONS)
        finish = store.finish_erasure
        closing: list[float] = []

        def finish_erasure(record: Any, requested_at: str) -> bool:  # the last step, timed
            started = time.perf_counter()
            finished = finish(record, requested_at)
            closing.append(time.perf_counter() - started)
            return finished

        store.finish_erasure = finish_erasure  # type: ignore[method-assign]
        if mode == "before":
            store.erasure_store._purge_deleted = lambda: None  # type: ignore[method-assign]
            # The handlers run on this thread: its connections are the ones they write on.
            store.file.db().execute("PRAGMA secure_delete=OFF")
            index.file.db().execute("PRAGMA secure_delete=OFF")
        secret = new_secret()
        created = datetime.now(UTC).isoformat().replace("+00:00", "Z")
        store.add_credential(
            Credential(new_credential_id(), PROJECT, "bench", created), secret_hash(secret)
        )
        client = Client(
            gateway, {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
        )
        facts = store_all(client, "/v1/facts", "facts", corpus.facts)
        messages = store_all(client, "/v1/messages", "messages", corpus.messages)
        started = time.perf_counter()
        indexed = _index_everything(store, index, len(corpus.facts))
        indexing = time.perf_counter() - started
        started = time.perf_counter()
        memory.rebuild_reports(PROJECT)
        rebuild = time.perf_counter() - started
        started = time.perf_counter()
        counts = memory.erase_now(PROJECT, _most_connected(corpus))
        erase = time.perf_counter() - started
        wal = (folder / "taisce.sqlite3-wal").stat().st_size / 1e6
        index.close()
        store.close()
        return {
            "facts_per_second": facts["per_second"],
            "messages_per_second": messages["per_second"],
            "indexed_per_second": indexed / indexing,
            "rebuild_seconds": rebuild,
            "erase_seconds": erase,
            "closing_seconds": closing[0],
            "erased_facts": counts["facts"],
            "wal_mb_after_erasure": wal,
        }
    finally:
        services.cache_clear()
        shutil.rmtree(folder, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--facts", type=int, default=5_000)
    parser.add_argument("--messages", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)

    os.environ["TAISCE_EMBEDDINGS"] = "none"
    data_dir = os.environ.get("TAISCE_DATA_DIR")
    gateway = Gateway(read_api(TEMPLATE))
    gateway.warm()
    corpus = make_corpus(args.facts, args.messages, args.seed)
    load_before = os.getloadavg()[0]
    runs: dict[str, list[dict[str, float]]] = {mode: [] for mode in MODES}
    try:
        # Untimed: the first run in a process pays for imports and cold caches.
        for mode in MODES:
            run_once(gateway, make_corpus(200, 50, args.seed), mode)
        for round_ in range(args.rounds):
            for mode in MODES if round_ % 2 == 0 else reversed(MODES):
                print(f"round {round_ + 1}: {mode}", file=sys.stderr, flush=True)
                runs[mode].append(run_once(gateway, corpus, mode))
    finally:
        if data_dir is None:
            os.environ.pop("TAISCE_DATA_DIR", None)
        else:
            os.environ["TAISCE_DATA_DIR"] = data_dir

    print(f"- date: {datetime.now(UTC).isoformat(timespec='seconds')}")
    m = describe_machine()
    print(
        f"- machine: {m['platform']}, {m['cpu']}, {m['cpu_count']} CPUs, "
        f"Python {m['python']}, SQLite {m['sqlite']}"
    )
    print(
        f"- {args.facts:,} facts and {args.messages:,} messages stored in batches of 100 "
        f"through the gateway; {args.rounds} rounds per mode, medians; load average "
        f"(1 min) {load_before:.2f} before, {os.getloadavg()[0]:.2f} after"
    )
    print()
    print("| figure | before (secure_delete off, no purge) | after | after / before |")
    print("|---|---:|---:|---:|")
    for key, label, digits in (
        ("facts_per_second", "facts stored per second", 0),
        ("messages_per_second", "messages stored per second", 0),
        ("indexed_per_second", "items indexed per second (vectors and text)", 0),
        ("rebuild_seconds", "report rebuild, s", 2),
        ("erase_seconds", "erasure of the most connected entity, s", 2),
        ("closing_seconds", "of which the audit record (and the purge, after), s", 2),
        ("wal_mb_after_erasure", "WAL after the erasure, MB", 2),
    ):
        before = statistics.median(r[key] for r in runs["before"])
        after = statistics.median(r[key] for r in runs["after"])
        ratio = f"{after / before:.2f}" if round(before, digits) else "-"
        print(f"| {label} | {before:,.{digits}f} | {after:,.{digits}f} | {ratio} |")
    erased: Any = runs["after"][0]["erased_facts"]
    print(f"\n(the erasure removed {erased:,} facts)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
