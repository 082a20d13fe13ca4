"""Read your writes: store a fact, recall it at once with a question that names its
entity exactly but shares no other word with it, many times over, on both stores.

    python -m bench.read_your_writes [--pairs 1000] [--stores sqlite,dynamodb]

Each pair is a new entity (a name made of two lists) with one fact, stored through
Memory.store_facts, then recalled through Memory.recall with no delay and no worker:
with a local model the request embeds its fact before it answers, so the recall ranks
it by meaning (`why.similarity` set). `--worker-behind` leaves the embedding to a
worker that never runs (as with Bedrock, or a worker behind): the fact is then ranked
by its words and must still come back. DynamoDB is moto's server mode over HTTP.
Prints misses and the time per pair.
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_FIRST = (
    "Aoife Bram Cora Dario Elin Farid Greta Hugo Ines Jonas Kaia Leon Mira Niko Oona "
    "Pavel Quinn Rosa Soren Tilde Ulla Vito Wren Xenia Yusuf Zora Anouk Bodhi Cian Dagny"
)
FIRST = tuple(_FIRST.split())
_LAST = (
    "Okafor Lindqvist Moreau Tanaka Brennan Kowalski Haddad Varga Silva Novak Achterberg "
    "Ferreira Gallagher Ishikawa Jovanovic Kaminski Laurent Mbeki Nakamura Olsen Petrov "
    "Quintero Rasmussen Szabo Thorsen Umarov Valdez Whelan Yilmaz Zielinski Abara Castell "
    "Dunleavy"
)
LAST = tuple(_LAST.split())
# (statement's predicate, object, question): the question shares no word with the
# fact but the name (the local model puts each pair over the cosine floor).
TEMPLATES = (
    ("works at", ("Halcyon Labs", "Brightwater", "Norvell Systems"), "Where is {n} employed?"),
    ("lives in", ("Lisbon", "Tromso", "Cork"), "Which city is {n}'s home?"),
    ("plays", ("the cello", "the violin", "the oboe"), "Which instrument does {n} know?"),
)


@dataclass(frozen=True)
class Pair:
    fact: dict[str, str]
    question: str
    statement: str


def pairs(count: int, salt: str = "") -> Iterator[Pair]:
    """`count` pairs, each a new entity (distinct names up to len(FIRST) * len(LAST) *
    len(TEMPLATES) pairs; `salt` tells runs apart on a shared store)."""
    for n in range(count):
        first = FIRST[n % len(FIRST)]
        last = LAST[(n // len(FIRST)) % len(LAST)]
        predicate, objects, question = TEMPLATES[n % len(TEMPLATES)]
        name = f"{first} {last}"
        if n >= len(FIRST) * len(LAST):
            name += f" {n // (len(FIRST) * len(LAST)) + 1}"
        if salt:
            name = f"{name} {salt}"
        obj = objects[(n // len(TEMPLATES)) % len(objects)]
        fact = {"subject": name, "predicate": predicate, "object": obj, "source_role": "user"}
        yield Pair(fact, question.format(n=name), f"{name} {predicate} {obj}")


def store_then_recall(memory: Any, project: str, pair: Pair) -> dict[str, Any]:
    """Store the pair's fact, then recall its question at once: the fact as recalled
    (None: missed)."""
    from taisce.api import bodies
    from taisce.domain.controls import RecallRequest
    from taisce.domain.ingest import FactsRequest

    memory.store_facts(project, FactsRequest.model_validate({"facts": [pair.fact]}))
    body = {"question": pair.question, "surfaces": ["facts"], "explain": True}
    answer = bodies.recall(memory.recall(project, RecallRequest.model_validate(body)))
    found = [f for f in answer["facts"] if f["statement"] == pair.statement]
    return found[0] if found else {}


def _memory(store_name: str, folder: Path, embed_on_write: bool) -> Any:
    from taisce.adapters.embedders import make_embedder
    from taisce.adapters.sqlite.store import SqliteStore
    from taisce.adapters.sqlite.vectors import SqliteVectorIndex
    from taisce.domain.controls import Limits
    from taisce.domain.semantic import Semantic
    from taisce.service.memory import Memory

    embedder = make_embedder("local")
    assert embedder is not None
    index = SqliteVectorIndex(folder / "vectors.sqlite3", embedder.dimensions)
    if store_name == "dynamodb":
        from tests.moto_server import shared_moto

        store: Any = shared_moto().store()
    else:
        store = SqliteStore(folder / "memory.sqlite3")
    semantic = Semantic(embedder, index, embed_on_write=embed_on_write)
    return Memory(store, Limits(), semantic=semantic)


def run(store_name: str, count: int, embed_on_write: bool) -> tuple[int, int, float]:
    """(misses, ranked without a vector, seconds a pair) over `count` pairs."""
    with tempfile.TemporaryDirectory(prefix="taisce-ryw-") as folder:
        memory = _memory(store_name, Path(folder), embed_on_write)
        project = f"ryw-{uuid.uuid4().hex[:8]}"
        misses = by_words = 0
        began = time.perf_counter()
        for pair in pairs(count):
            found = store_then_recall(memory, project, pair)
            misses += not found
            by_words += bool(found) and found["why"]["similarity"] is None
        return misses, by_words, (time.perf_counter() - began) / count


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--stores", default="sqlite,dynamodb")
    parser.add_argument("--worker-behind", action="store_true")
    args = parser.parse_args(argv)
    print(f"- {args.pairs} store-then-recall pairs a store, no delay, no worker")
    print("\n| store | embedding | misses | ranked by words | ms a pair |")
    print("|---|---|---:|---:|---:|")
    for store_name in args.stores.split(","):
        misses, by_words, seconds = run(store_name, args.pairs, not args.worker_behind)
        mode = "worker (behind)" if args.worker_behind else "on write"
        print(f"| {store_name} | {mode} | {misses} | {by_words} | {seconds * 1000:.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
