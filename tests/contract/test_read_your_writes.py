"""Read your writes, on both stores: a fact stored and recalled at once, with no worker,
comes back, by meaning where the model is local (the request embeds it) and by its
words where it is not (left to a worker that has not run). The full 1,000 pairs are
bench/read_your_writes.py's (docs/benchmarks.md); here a few dozen, kept quick."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.read_your_writes import pairs, store_then_recall
from taisce.adapters.sqlite.vectors import SqliteVectorIndex
from taisce.api import bodies
from taisce.domain.controls import Limits, RecallRequest
from taisce.domain.ingest import FactsRequest, MessagesRequest
from taisce.domain.semantic import Semantic
from taisce.service.background import EMBED_ON_WRITE_MAX
from taisce.service.memory import Memory
from tests.contract.factories import unique

PAIRS = 20


def _memory(store: Any, embedder: Any, place: Path, embed_on_write: bool) -> Iterator[Memory]:
    index = SqliteVectorIndex(place / f"vectors-{embed_on_write}.sqlite3", embedder.dimensions)
    semantic = Semantic(embedder, index, embed_on_write=embed_on_write)
    yield Memory(store, Limits(), semantic=semantic)
    index.close()


@pytest.fixture
def local_memory(store: Any, local_embedder: Any, tmp_path: Path) -> Iterator[Memory]:
    """A local model: the request embeds what it stores."""
    yield from _memory(store, local_embedder, tmp_path, True)


@pytest.fixture
def behind_memory(store: Any, local_embedder: Any, tmp_path: Path) -> Iterator[Memory]:
    """The embedding left to a worker that has not run (Bedrock, or a worker behind)."""
    yield from _memory(store, local_embedder, tmp_path, False)


def test_a_fact_is_recalled_by_meaning_as_soon_as_it_is_stored(local_memory: Memory) -> None:
    project = unique("ryw")
    found = [store_then_recall(local_memory, project, p) for p in pairs(PAIRS)]
    assert all(found), [p.question for p, f in zip(pairs(PAIRS), found, strict=True) if not f]
    # Ranked by its vector, written before the POST answered: nothing is left pending.
    assert all(f["why"]["similarity"] is not None for f in found)
    assert local_memory.store.pending_vectors(project, 10) == []


def test_a_bulk_write_is_left_to_the_worker(local_memory: Memory) -> None:
    """A write with more texts than EMBED_ON_WRITE_MAX does not wait for the model."""
    project = unique("bulk")
    facts = [
        {"subject": f"Person {n}", "predicate": "lives in", "object": f"Town {n}"}
        for n in range(EMBED_ON_WRITE_MAX)  # each fact: its statement and two new names
    ]
    for f in facts:
        f["source_role"] = "user"
    local_memory.store_facts(project, FactsRequest.model_validate({"facts": facts}))
    assert len(local_memory.store.pending_vectors(project, 1000)) == 3 * EMBED_ON_WRITE_MAX
    assert local_memory.index_pending(project) == 3 * EMBED_ON_WRITE_MAX


def test_a_fact_not_yet_embedded_is_ranked_by_its_words_not_dropped(
    behind_memory: Memory,
) -> None:
    project = unique("behind")
    found = [store_then_recall(behind_memory, project, p) for p in pairs(PAIRS)]
    assert all(found)
    assert all(f["why"]["similarity"] is None for f in found)
    # The worker embeds them later; then they are ranked by meaning.
    assert behind_memory.index_pending(project) > 0
    again = store_then_recall(behind_memory, project, next(pairs(1)))
    assert again["why"]["similarity"] is not None


def test_a_new_fact_beside_embedded_ones_is_not_crowded_out(behind_memory: Memory) -> None:
    project = unique("crowd")
    older = [
        {"subject": "Atlas Moran", "predicate": "works at", "object": f"Acme branch {n}"}
        for n in range(5)
    ]
    for f in older:
        f["source_role"] = "user"
    behind_memory.store_facts(project, FactsRequest.model_validate({"facts": older}))
    behind_memory.index_pending(project)
    new = {"subject": "Atlas Moran", "predicate": "commutes by", "object": "bicycle"}
    new["source_role"] = "user"
    behind_memory.store_facts(project, FactsRequest.model_validate({"facts": [new]}))
    body = {"question": "Where is Atlas Moran employed?", "surfaces": ["facts"]}
    answer = bodies.recall(behind_memory.recall(project, RecallRequest.model_validate(body)))
    statements = [f["statement"] for f in answer["facts"]]
    # The embedded facts that bear on the question first, then the one not yet embedded.
    assert statements[-1] == "Atlas Moran commutes by bicycle"
    assert any("works at" in s for s in statements[:-1])


def test_a_message_is_recalled_by_meaning_as_soon_as_it_is_stored(local_memory: Memory) -> None:
    project = unique("ryw-message")
    said = "Orla finally booked the ferry to Inis Mor for the first week of June."
    message = {"role": "user", "content": said, "source": "chat:1"}
    local_memory.store_messages(project, MessagesRequest.model_validate({"messages": [message]}))
    body = {"question": "When is the island boat trip?", "surfaces": ["passages"]}
    answer = bodies.recall(local_memory.recall(project, RecallRequest.model_validate(body)))
    assert [p["quote"] for p in answer["passages"]] == [said]
    assert local_memory.store.pending_vectors(project, 10) == []
